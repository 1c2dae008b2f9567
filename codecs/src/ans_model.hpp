#pragma once
// Internal: how ans.cpp and exponent_context.cpp lay out their tables and streams in a plane.
//   frequencies: 32-byte bitmap of the symbols that have one | u16 LE frequency of each, in order
//   streams:     a pad byte per stream | sizes of streams 0-2 (u32 LE) | the streams back to back
// Readers check every size against the bytes there are and throw wirezip::Error.
#include <array>
#include <cstdint>

#include "ans_lanes.hpp"

namespace wirezip::codecs::ans {

constexpr std::size_t kMaxFreqsSize = 32 + 2 * 256;
constexpr std::size_t kStreamsHeaderSize = kStreams + 4 * (kStreams - 1);

std::size_t write_freqs(const Freqs& freqs, std::uint8_t* out);
const std::uint8_t* read_freqs(const std::uint8_t* in, const std::uint8_t* end, Freqs& freqs);

std::uint8_t* write_streams(const std::array<EncodedStream, kStreams>& streams, std::uint8_t* out);
// The last stream takes every byte up to `end`.
std::array<EncodedStream, kStreams> read_streams(const std::uint8_t* in, const std::uint8_t* end);

}  // namespace wirezip::codecs::ans
