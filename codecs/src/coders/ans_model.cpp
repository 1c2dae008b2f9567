#include "coders/ans_model.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "coders/bit_reader.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs::ans {
namespace {

// Smallest and largest byte: one pass the compiler vectorises.
WZ_ANS_HOT std::pair<std::uint8_t, std::uint8_t> byte_bounds(const std::uint8_t* src, std::size_t n) {
  std::uint8_t low = 0xff, high = 0;
  for (std::size_t i = 0; i < n; ++i) {
    low = std::min(low, src[i]);
    high = std::max(high, src[i]);
  }
  return {low, high};
}

}  // namespace

bool plane_counts(const std::uint8_t* src, std::size_t n, Counts& counts) {
  const auto [low, high] = byte_bounds(src, n);
  if (low == high) return false;
  constexpr std::size_t kExactBelow = 64 << 10, kBlock = 256, kEvery = 1024;
  const std::size_t block = n < kExactBelow ? n : kBlock, every = n < kExactBelow ? n : kEvery;
  std::array<Counts, 4> sub{};  // four sub-histograms: runs of one symbol do not serialise on one counter
  for (std::size_t start = 0; start < n; start += every) {
    const std::size_t end = std::min(n, start + block);
    std::size_t i = start;
    for (; i + 4 <= end; i += 4) ++sub[0][src[i]], ++sub[1][src[i + 1]], ++sub[2][src[i + 2]], ++sub[3][src[i + 3]];
    for (; i < end; ++i) ++sub[0][src[i]];
  }
  for (unsigned s = 0; s < 256; ++s) {
    counts[s] = sub[0][s] + sub[1][s] + sub[2][s] + sub[3][s];
    if (s >= low && s <= high) counts[s] = std::max<std::uint32_t>(counts[s], 1);
  }
  return true;
}

std::size_t write_freqs(const Freqs& freqs, std::uint8_t* out) {
  std::memset(out, 0, 32);
  std::size_t size = 32;
  for (unsigned s = 0; s < 256; ++s) {
    if (!freqs[s]) continue;
    out[s / 8] = static_cast<std::uint8_t>(out[s / 8] | 1u << (s % 8));
    out[size++] = static_cast<std::uint8_t>(freqs[s]);
    out[size++] = static_cast<std::uint8_t>(freqs[s] >> 8);
  }
  return size;
}

const std::uint8_t* read_freqs(const std::uint8_t* in, const std::uint8_t* end, Freqs& freqs) {
  if (end - in < 32) fail("corrupt frame: ans frequency bitmap is truncated");
  const std::uint8_t* bitmap = in;
  in += 32;
  for (unsigned s = 0; s < 256; ++s) {
    freqs[s] = 0;
    if (!(bitmap[s / 8] >> (s % 8) & 1)) continue;
    if (end - in < 2) fail("corrupt frame: ans frequencies are truncated");
    freqs[s] = static_cast<std::uint16_t>(in[0] | in[1] << 8);
    if (!freqs[s]) fail("corrupt frame: ans symbol {} is marked present with frequency 0", s);
    in += 2;
  }
  return in;
}

std::uint8_t* write_streams(const std::array<EncodedStream, kStreams>& streams, std::uint8_t* out) {
  for (std::size_t s = 0; s < kStreams; ++s) out[s] = static_cast<std::uint8_t>(streams[s].pad);
  for (std::size_t s = 0; s + 1 < kStreams; ++s) store32(out + kStreams + 4 * s, static_cast<std::uint32_t>(streams[s].size));
  out += kStreamsHeaderSize;
  for (const EncodedStream& stream : streams) {
    std::memcpy(out, stream.data, stream.size);
    out += stream.size;
  }
  return out;
}

std::array<EncodedStream, kStreams> read_streams(const std::uint8_t* in, const std::uint8_t* end) {
  if (static_cast<std::size_t>(end - in) < kStreamsHeaderSize) fail("corrupt frame: ans stream sizes are truncated");
  std::array<EncodedStream, kStreams> streams;
  const std::uint8_t* data = in + kStreamsHeaderSize;
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t left = static_cast<std::size_t>(end - data);
    const std::size_t size = s + 1 < kStreams ? load32(in + kStreams + 4 * s) : left;
    if (size > left) fail("corrupt frame: ans stream {} runs past the plane", s);
    if (in[s] > 7) fail("corrupt frame: ans stream {} pad {} (0..7)", s, in[s]);
    streams[s] = {data, size, in[s]};
    data += size;
  }
  return streams;
}

}  // namespace wirezip::codecs::ans
