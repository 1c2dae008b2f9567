#pragma once
// Internal: how ans.cpp and ans_context.cpp lay out their tables and streams in a plane.
//   frequencies: 32-byte bitmap of the symbols that have one | u16 LE frequency of each, in order
//   streams:     a pad byte per stream | sizes of streams 0-2 (u32 LE) | the streams back to back
// Readers check every size against the bytes there are and throw wirezip::Error.
#include <array>
#include <cstdint>

#include "coders/ans_lanes.hpp"

namespace wirezip::codecs::ans {

constexpr std::size_t kMaxFreqsSize = 32 + 2 * 256;

// The counts a plane's table is built from: exact for planes under 64 KiB, else from 256 of every
// 1024 bytes (frequencies need proportions, not exact counts; contiguous blocks, because a strided
// sample would see one byte position of data with a period of 2 or 4). Every byte value between
// the plane's smallest and largest gets at least 1, so every symbol present has a frequency.
// Returns false, and no counts, when the plane holds one byte value.
bool plane_counts(const std::uint8_t* src, std::size_t n, Counts& counts);
constexpr std::size_t kStreamsHeaderSize = kStreams + 4 * (kStreams - 1);

std::size_t write_freqs(const Freqs& freqs, std::uint8_t* out);
const std::uint8_t* read_freqs(const std::uint8_t* in, const std::uint8_t* end, Freqs& freqs);

std::uint8_t* write_streams(const std::array<EncodedStream, kStreams>& streams, std::uint8_t* out);
// The last stream takes every byte up to `end`.
std::array<EncodedStream, kStreams> read_streams(const std::uint8_t* in, const std::uint8_t* end);

}  // namespace wirezip::codecs::ans
