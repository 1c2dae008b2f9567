// The Huffman coder's aarch64 path (the BlueField-3's Cortex-A78 cores). The bit loops are the
// portable ones compiled here: armv8-a already has what x86 needs x86-64-v3 for (shifts by a
// register that leave the flags alone, cheap unaligned 64-bit loads). byte_range is NEON: 32 bytes
// a step in two independent accumulator sets, reduced across lanes with UMINV / UMAXV at the end.
#include <arm_neon.h>

#include "coders/huff_kernels.hpp"

namespace wirezip::codecs::huff {
namespace {

void encode_bulk_neon(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs) {
  encode_bulk_body(lanes, groups, pairs);
}
void decode_bulk_neon(DecodeLane* lanes, const DecodeEntry* table) { decode_bulk_body(lanes, table); }

ByteRange byte_range_neon(const std::uint8_t* src, std::size_t n) {
  const uint8x16_t mask7 = vdupq_n_u8(0x7f), zeros = vdupq_n_u8(0), sign = vdupq_n_u8(0x80);
  uint8x16_t low[2] = {vdupq_n_u8(0xff), vdupq_n_u8(0xff)}, high[2] = {zeros, zeros};
  uint8x16_t low7[2] = {mask7, mask7}, high7[2] = {zeros, zeros};
  uint8x16_t zero[2] = {zeros, zeros}, negative_zero[2] = {zeros, zeros};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 2; ++k) {
      const uint8x16_t b = vld1q_u8(src + i + 16 * k), b7 = vandq_u8(b, mask7);
      const uint8x16_t none = vceqq_u8(b7, zeros);  // all ones where the low 7 bits are zero
      low[k] = vminq_u8(low[k], vorrq_u8(b, none));
      high[k] = vmaxq_u8(high[k], vbicq_u8(b, none));
      low7[k] = vminq_u8(low7[k], vorrq_u8(b7, vandq_u8(none, mask7)));
      high7[k] = vmaxq_u8(high7[k], b7);
      zero[k] = vorrq_u8(zero[k], vceqq_u8(b, zeros));
      negative_zero[k] = vorrq_u8(negative_zero[k], vceqq_u8(b, sign));
    }
  }
  ByteRange range{
      vminvq_u8(vminq_u8(low[0], low[1])),        vmaxvq_u8(vmaxq_u8(high[0], high[1])),
      vminvq_u8(vminq_u8(low7[0], low7[1])),      vmaxvq_u8(vmaxq_u8(high7[0], high7[1])),
      vmaxvq_u8(vorrq_u8(zero[0], zero[1])) != 0, vmaxvq_u8(vorrq_u8(negative_zero[0], negative_zero[1])) != 0};
  // The tail's range, {0xff, 0, 0x7f, 0, false, false} when it is empty, merged in.
  return merge(range, byte_range_body(src + i, n - i));
}

}  // namespace

// window_entries: the portable loop. NEON has no gather, and the loop's table lookups are what it
// is made of.
HuffKernels neon_huff_kernels() { return {encode_bulk_neon, decode_bulk_neon, byte_range_neon, window_entries}; }

}  // namespace wirezip::codecs::huff
