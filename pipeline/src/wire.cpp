#include "wire.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::pipeline::wire {
namespace {

constexpr std::uint32_t kChunkMagic = 0x4b4e4843;  // "CHNK"
constexpr std::uint32_t kCaseMagic = 0x45534143;   // "CASE"

}  // namespace

std::uint32_t imm(Kind kind, std::size_t slot, std::size_t value) {
  if (slot >= kMaxSlots || value > kMaxValue) fail("pipeline: immediate out of range (slot {}, value {})", slot, value);
  return (static_cast<std::uint32_t>(kind) << 29) | (static_cast<std::uint32_t>(slot) << 21) |
         static_cast<std::uint32_t>(value);
}
Kind kind_of(std::uint32_t imm) { return static_cast<Kind>(imm >> 29); }
std::size_t slot_of(std::uint32_t imm) { return (imm >> 21) & (kMaxSlots - 1); }
std::size_t value_of(std::uint32_t imm) { return imm & kMaxValue; }

void write_header(const ChunkHeader& header, std::span<std::byte> out) {
  store_le<std::uint32_t>(out, 0, kChunkMagic);
  store_le<std::uint32_t>(out, 4, header.index);
  store_le<std::uint32_t>(out, 8, header.original_bytes);
  store_le<std::uint32_t>(out, 12, header.compressed_bytes);
  store_le<std::uint32_t>(out, 16, header.codec_tag);
  store_le<std::uint64_t>(out, 24, header.checksum);
}

ChunkHeader read_header(std::span<const std::byte> in) {
  if (in.size() < kChunkHeaderSize || load_le<std::uint32_t>(in, 0) != kChunkMagic) fail("pipeline: slot holds no chunk header");
  return {load_le<std::uint32_t>(in, 4), load_le<std::uint32_t>(in, 8),
          load_le<std::uint32_t>(in, 12), load_le<std::uint32_t>(in, 16), load_le<std::uint64_t>(in, 24)};
}

std::uint32_t codec_tag(std::string_view spec) { return static_cast<std::uint32_t>(XXH3_64bits(spec.data(), spec.size())); }

std::uint64_t checksum(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::size_t write_case(const CaseRecord& record, std::span<std::byte> out) {
  const Config& c = record.config;
  const std::size_t used = 48 + c.codec_spec.size();
  if (used > kCaseRecordMax || out.size() < used) fail("pipeline: codec spec too long for the case record");
  store_le<std::uint32_t>(out, 0, kCaseMagic);
  store_le<std::uint32_t>(out, 4, static_cast<std::uint64_t>(c.mode));
  store_le<std::uint64_t>(out, 8, c.chunk_bytes);
  store_le<std::uint64_t>(out, 16, c.depth);
  store_le<std::uint32_t>(out, 24, static_cast<std::uint64_t>(c.workers));
  store_le<std::uint64_t>(out, 28, static_cast<std::uint64_t>(c.timeout.count()));
  store_le<std::uint64_t>(out, 36, record.data_bytes);
  store_le<std::uint32_t>(out, 44, c.codec_spec.size());
  std::memcpy(out.data() + 48, c.codec_spec.data(), c.codec_spec.size());
  return used;
}

CaseRecord read_case(std::span<const std::byte> in) {
  if (in.size() < 48 || load_le<std::uint32_t>(in, 0) != kCaseMagic) fail("pipeline: bad case record from the sender");
  CaseRecord record;
  Config& c = record.config;
  const auto mode = load_le<std::uint32_t>(in, 4);
  if (mode > static_cast<std::uint64_t>(Mode::overlap)) fail("pipeline: unknown mode {} in the case record", mode);
  c.mode = static_cast<Mode>(mode);
  c.chunk_bytes = load_le<std::uint64_t>(in, 8);
  c.depth = load_le<std::uint64_t>(in, 16);
  c.workers = static_cast<int>(load_le<std::uint32_t>(in, 24));
  c.timeout = std::chrono::milliseconds(load_le<std::uint64_t>(in, 28));
  record.data_bytes = load_le<std::uint64_t>(in, 36);
  const std::size_t spec_size = load_le<std::uint32_t>(in, 44);
  if (48 + spec_size > std::min(in.size(), kCaseRecordMax)) fail("pipeline: truncated case record");
  c.codec_spec.assign(reinterpret_cast<const char*>(in.data()) + 48, spec_size);
  if (c.chunk_bytes == 0 || c.depth == 0 || c.depth > kMaxSlots || c.workers <= 0)
    fail("pipeline: case record has chunk {} depth {} workers {}", c.chunk_bytes, c.depth, c.workers);
  return record;
}

std::size_t chunk_count(std::size_t data_bytes, std::size_t chunk_bytes) {
  return (data_bytes + chunk_bytes - 1) / chunk_bytes;
}

std::size_t slot_bytes(const Config& config) {
  const auto codec = codecs::make_codec(config.codec_spec);
  const std::size_t payload = std::max(codec->max_compressed_size(config.chunk_bytes), kCaseRecordMax);
  return (kChunkHeaderSize + payload + 63) / 64 * 64;
}

}  // namespace wirezip::pipeline::wire
