#pragma once
// Internal: what codes one byte plane inside a frame. Each implementation owns its library
// context (created once, reused), and is used by one thread at a time, like the Codec that holds it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "wirezip/codecs/bytegroup.hpp"
#include "wirezip/codecs/decoders.hpp"
#include "wirezip/codecs/exponent_split.hpp"
#include "wirezip/codecs/format_ids.hpp"
#include "wirezip/codecs/frame.hpp"

namespace wirezip::codecs {

class PlaneCoder {
 public:
  virtual ~PlaneCoder() = default;
  virtual CoderId id() const = 0;
  // Capacity encode() needs for n input bytes.
  virtual std::size_t bound(std::size_t n) const = 0;
  // Encodes src into dst (dst.size() >= bound(src.size())); returns the bytes written.
  virtual std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) = 0;
  // Decodes exactly dst.size() bytes. Malformed input, or input that decodes to any other size,
  // throws wirezip::Error; nothing is written outside dst.
  virtual void decode(std::span<const std::byte> src, std::span<std::byte> dst) = 0;
  // The same, also feeding the bytes coded (encode) or restored (decode) to `hash`, in order: a
  // coder that reads or writes a whole chunk front to back can hash each block while it is in
  // cache, which saves its frame a pass over the chunk. By default, a pass of its own.
  virtual std::size_t encode_hashed(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream& hash) {
    hash.update(src);
    return encode(src, dst);
  }
  virtual void decode_hashed(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream& hash) {
    decode(src, dst);
    hash.update(dst);
  }
  // Planes of an exponent split (bit k: plane k) that this coder codes given plane 0, the exponents:
  // FramedCodec tries to code them whatever its raw-plane probe says, and codes and decodes them
  // with encode_given and decode_given, plane 0 restored first. By default none.
  virtual std::uint32_t conditioned_planes() const { return 0; }
  virtual std::size_t encode_given(std::span<const std::byte> src, std::span<const std::byte> /*exponents*/,
                                   std::span<std::byte> dst) {
    return encode(src, dst);
  }
  virtual void decode_given(std::span<const std::byte> src, std::span<const std::byte> /*exponents*/,
                            std::span<std::byte> dst) {
    decode(src, dst);
  }
};

// A coder of whole chunks that feeds the frame's checksum as it reads (encode) or writes (decode)
// each block: the plain forms are the hashed ones without a hash.
class HashingChunkCoder : public PlaneCoder {
 public:
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) final {
    return encode_chunk(src, dst, nullptr);
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) final { decode_chunk(src, dst, nullptr); }
  std::size_t encode_hashed(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream& hash) final {
    return encode_chunk(src, dst, &hash);
  }
  void decode_hashed(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream& hash) final {
    decode_chunk(src, dst, &hash);
  }

 protected:
  // Each feeds the chunk's bytes to `hash` (when not null) in order.
  virtual std::size_t encode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) = 0;
  virtual void decode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) = 0;
  // Feeds n bytes at p to `hash`, when the caller asked for one.
  static void feed(ChecksumStream* hash, const std::uint8_t* p, std::size_t n) {
    if (hash) hash->update({reinterpret_cast<const std::byte*>(p), n});
  }
};

// Planes are plain LZ4 blocks; `decoder` (the seam's lz4 backend) decodes them.
std::unique_ptr<PlaneCoder> make_lz4_coder(int acceleration, std::unique_ptr<StreamDecoder> decoder);
// force_literals: Huffman-code literals even at the fast (negative) levels that skip it by default.
std::unique_ptr<PlaneCoder> make_zstd_coder(int level, bool force_literals);
// htscodecs rANS 4x16 (32-way interleaved, SIMD chosen by the library), order 0.
std::unique_ptr<PlaneCoder> make_rans_coder();
// ISA-L igzip deflate at `level`, with Huffman tables built from each plane's histogram; planes are
// raw DEFLATE streams, decoded by `decoder`.
std::unique_ptr<PlaneCoder> make_igzip_coder(int level, std::unique_ptr<StreamDecoder> decoder);
// wirezip's own 4-stream order-0 Huffman coder (huff.cpp), its hot loops from `path`
// (huff_kernels.hpp). Every path writes the same bytes.
std::unique_ptr<PlaneCoder> make_huff_coder(SimdPath path = best_simd_path());
// Literal-only raw DEFLATE streams written by wirezip (deflate_coder.cpp), decoded by `decoder`.
std::unique_ptr<PlaneCoder> make_deflate_coder(std::unique_ptr<StreamDecoder> decoder);
// wirezip's own order-0 tANS coder (ans.cpp): fractional bits per symbol, near the order-0 bound.
std::unique_ptr<PlaneCoder> make_ans_coder();
// ans:context=exponent (ans_context.cpp): order-0 ans planes, and the sign/mantissa plane (plane 1)
// coded given the exponents of `format`.
std::unique_ptr<PlaneCoder> make_exponent_context_coder(FloatFormat format);
// wirezip's Huffman coder of whole bf16 chunks (huff12.cpp): exponent and top 4 mantissa bits as
// one 12-bit symbol, sign and low mantissa bits stored.
std::unique_ptr<PlaneCoder> make_huff12_coder();
// wirezip's fast coder of whole bf16 chunks (huff10.cpp): exponent (in a window) and top 2 mantissa
// bits as one byte symbol coded by huff, sign and low mantissa bits stored.
std::unique_ptr<PlaneCoder> make_huff10_coder();

// Library versions for --list-codecs and the benchmark context.
std::string lz4_version();
std::string zstd_version();
std::string htscodecs_version_string();
std::string isal_version();

}  // namespace wirezip::codecs
