#pragma once
// Internal: what travels besides the data. Immediates name what a write means; a chunk header
// leads every compressed slot; the case record tells the receiver how to decode.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "wirezip/pipeline/pipeline.hpp"

namespace wirezip::pipeline::wire {

// Immediate: kind (3 bits) | slot (8 bits) | value (21 bits: chunk index, or a count).
enum class Kind : std::uint32_t {
  chunk = 1,     // sender -> receiver: slot holds a chunk (raw: value is the chunk index)
  start = 2,     // sender -> receiver: slot 0 holds a case record
  credit = 3,    // receiver -> sender: slot is free again
  finished = 4,  // receiver -> sender: run complete; value = decompress busy time in 100 us units
  failed = 5,    // receiver -> sender: a chunk failed; value = its index
  ready = 6,     // receiver -> sender: case record accepted
  stop = 7,      // sender -> receiver: no more cases; serve() returns
};
inline constexpr std::size_t kMaxSlots = 256;
inline constexpr std::uint32_t kMaxValue = (1u << 21) - 1;

std::uint32_t imm(Kind kind, std::size_t slot, std::size_t value);
Kind kind_of(std::uint32_t imm);
std::size_t slot_of(std::uint32_t imm);
std::size_t value_of(std::uint32_t imm);

// Leads each compressed slot: which chunk, its sizes, the codec, and a checksum of the original.
struct ChunkHeader {
  std::uint32_t index = 0;
  std::uint32_t original_bytes = 0;
  std::uint32_t compressed_bytes = 0;
  std::uint32_t codec_tag = 0;  // a hash of the codec spec
  std::uint64_t checksum = 0;   // XXH3-64 of the original chunk
};
inline constexpr std::size_t kChunkHeaderSize = 32;
void write_header(const ChunkHeader& header, std::span<std::byte> out);
ChunkHeader read_header(std::span<const std::byte> in);  // throws on a bad magic

std::uint32_t codec_tag(std::string_view spec);
std::uint64_t checksum(std::span<const std::byte> bytes);

struct CaseRecord {
  Config config;
  std::size_t data_bytes = 0;
};
inline constexpr std::size_t kCaseRecordMax = 512;
std::size_t write_case(const CaseRecord& record, std::span<std::byte> out);  // returns bytes used
CaseRecord read_case(std::span<const std::byte> in);

std::size_t chunk_count(std::size_t data_bytes, std::size_t chunk_bytes);
std::size_t slot_bytes(const Config& config);

}  // namespace wirezip::pipeline::wire
