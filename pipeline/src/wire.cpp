#include "wire.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::pipeline::wire {
namespace {

constexpr std::uint32_t kChunkMagic = 0x4b4e4843;   // "CHNK"
constexpr std::uint32_t kCaseMagic = 0x33534143;    // "CAS3"
constexpr std::uint32_t kReportMagic = 0x54504552;  // "REPT"
constexpr std::size_t kCaseFixed = 48;

template <typename T>
void in_range(const char* field, T value, T low, T high) {
  if (value < low || value > high) fail("case.{} = {} is outside [{}, {}]", field, value, low, high);
}

}  // namespace

std::uint32_t imm(Kind kind, std::size_t slot, std::size_t value) {
  if (slot >= kMaxSlots || value > kMaxValue) fail("pipeline: immediate out of range (slot {}, value {})", slot, value);
  return (static_cast<std::uint32_t>(kind) << 29) | (static_cast<std::uint32_t>(slot) << 21) |
         static_cast<std::uint32_t>(value);
}
Kind kind_of(std::uint32_t imm) { return static_cast<Kind>(imm >> 29); }
std::size_t slot_of(std::uint32_t imm) { return (imm >> 21) & (kMaxSlots - 1); }
std::size_t value_of(std::uint32_t imm) { return imm & kMaxValue; }

std::vector<std::uint32_t> credit_imms(std::vector<std::size_t> slots) {
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < slots.size();) {
    const std::size_t first = slots[i++];
    std::size_t bits = 0;
    for (; i < slots.size() && slots[i] - first < kCreditSpan; ++i) bits |= std::size_t{1} << (slots[i] - first - 1);
    out.push_back(imm(Kind::credit, first, bits));
  }
  return out;
}

std::vector<std::size_t> credited_slots(std::uint32_t imm, std::size_t depth) {
  const std::size_t first = slot_of(imm), bits = value_of(imm);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < kCreditSpan; ++i) {
    if (i > 0 && ((bits >> (i - 1)) & 1) == 0) continue;
    if (first + i >= depth)
      fail("the receiver's credit (slot {}, value {:#x}) names slot {}, past the case's {} slots", first, bits,
           first + i, depth);
    out.push_back(first + i);
  }
  return out;
}

void write_header(const ChunkHeader& header, std::span<std::byte> out) {
  store_le<std::uint32_t>(out, 0, kChunkMagic);
  store_le<std::uint32_t>(out, 4, header.index);
  store_le<std::uint32_t>(out, 8, header.original_bytes);
  store_le<std::uint32_t>(out, 12, header.compressed_bytes);
  store_le<std::uint32_t>(out, 16, header.codec_tag);
  store_le<std::uint64_t>(out, 24, header.checksum);
}

ChunkHeader read_header(std::span<const std::byte> in) {
  if (in.size() < kChunkHeaderSize) fail("chunk header: {} bytes, expected {}", in.size(), kChunkHeaderSize);
  if (const auto magic = load_le<std::uint32_t>(in, 0); magic != kChunkMagic)
    fail("chunk header.magic = {:#010x}: the slot holds no chunk", magic);
  return {load_le<std::uint32_t>(in, 4), load_le<std::uint32_t>(in, 8),
          load_le<std::uint32_t>(in, 12), load_le<std::uint32_t>(in, 16), load_le<std::uint64_t>(in, 24)};
}

std::uint32_t codec_tag(const codecs::CodecSpec& spec) {
  return static_cast<std::uint32_t>(XXH3_64bits(spec.text().data(), spec.text().size()));
}

std::uint64_t checksum(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::size_t write_case(const CaseRecord& record, std::span<std::byte> out) {
  const Config& c = record.config;
  const std::string& spec = c.codec_spec.text();
  const std::size_t used = kCaseFixed + spec.size();
  if (spec.size() > kMaxCodecSpec || out.size() < used) fail("pipeline: codec spec too long for the case record");
  store_le<std::uint32_t>(out, 0, kCaseMagic);
  store_le<std::uint32_t>(out, 4, static_cast<std::uint64_t>(c.mode));
  store_le<std::uint64_t>(out, 8, c.chunk_bytes);
  store_le<std::uint64_t>(out, 16, c.depth);
  store_le<std::uint32_t>(out, 24, static_cast<std::uint64_t>(c.workers));
  store_le<std::uint64_t>(out, 28, static_cast<std::uint64_t>(c.timeout.count()));
  store_le<std::uint64_t>(out, 36, record.data_bytes);
  store_le<std::uint32_t>(out, 44, spec.size());
  std::memcpy(out.data() + kCaseFixed, spec.data(), spec.size());
  return used;
}

CaseRecord read_case(std::span<const std::byte> in, const ServeLimits& limits, std::size_t buffer) {
  if (in.size() < kCaseFixed) fail("case record: {} bytes, at least {} expected", in.size(), kCaseFixed);
  if (const auto magic = load_le<std::uint32_t>(in, 0); magic != kCaseMagic)
    fail("case.magic = {:#010x} is not a case record of this wirezip version", magic);
  CaseRecord record;
  Config& c = record.config;
  const auto mode = load_le<std::uint32_t>(in, 4);
  in_range<std::uint32_t>("mode", mode, 0, static_cast<std::uint32_t>(Mode::link));
  c.mode = static_cast<Mode>(mode);
  c.chunk_bytes = load_le<std::uint64_t>(in, 8);
  in_range<std::size_t>("chunk_bytes", c.chunk_bytes, 1, limits.max_chunk);
  c.depth = load_le<std::uint64_t>(in, 16);
  in_range<std::size_t>("depth", c.depth, 1, kMaxSlots);
  const auto workers = load_le<std::uint32_t>(in, 24);
  in_range<std::uint32_t>("workers", workers, 1, static_cast<std::uint32_t>(limits.workers_allowed()));
  c.workers = static_cast<int>(workers);
  const auto timeout = load_le<std::uint64_t>(in, 28);
  in_range<std::uint64_t>("timeout_ms", timeout, 1, static_cast<std::uint64_t>(limits.max_timeout.count()));
  c.timeout = std::chrono::milliseconds(timeout);
  record.data_bytes = load_le<std::uint64_t>(in, 36);
  in_range<std::size_t>("data_bytes", record.data_bytes, 1, buffer);
  const std::size_t spec_size = load_le<std::uint32_t>(in, 44);
  in_range<std::size_t>("codec_spec_length", spec_size, 0, std::min(kMaxCodecSpec, in.size() - kCaseFixed));
  const std::string_view spec(reinterpret_cast<const char*>(in.data()) + kCaseFixed, spec_size);
  if (!std::all_of(spec.begin(), spec.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; }))
    fail("case.codec_spec has bytes that are not printable");
  if (c.mode != Mode::raw && spec.empty()) fail("case.codec_spec is empty in {} mode", mode_name(c.mode));
  try {
    c.codec_spec = spec.empty() ? codecs::CodecSpec() : codecs::parse_codec_spec(spec);  // refused now, not mid-run
  } catch (const Error& e) {
    fail("case.codec_spec: {}", e.what());
  }
  const std::size_t chunks = chunk_count(record.data_bytes, c.chunk_bytes);
  if (chunks > kMaxValue) fail("case: {} chunks, at most {} per run", chunks, kMaxValue);
  if (const std::size_t needed = buffer_bytes(c, record.data_bytes); needed > buffer)
    fail("case: the tensor and {} slots need {} bytes, the link buffer has {}", c.depth, needed, buffer);
  return record;
}

void write_report(const RunReport& report, std::span<std::byte> out) {
  store_le<std::uint32_t>(out, 0, kReportMagic);
  store_le<std::uint64_t>(out, 8, report.decode_ns);
  store_le<std::uint64_t>(out, 16, report.decoded_bytes);
  store_le<std::uint64_t>(out, 24, report.cpu_ns);
  store_le<std::uint64_t>(out, 32, report.hash_ns);
  store_le<std::uint64_t>(out, 40, report.wait_ns);
  store_le<std::uint64_t>(out, 48, report.credit_ns);
  store_le<std::uint32_t>(out, 56, report.switches);
  store_le<std::uint32_t>(out, 60, report.threads);
  store_le<std::uint64_t>(out, 64, report.decode_cpu_ns);
}

RunReport read_report(std::span<const std::byte> in, const ReportLimits& limits) {
  if (in.size() < kRunReportSize) fail("run report: {} bytes, expected {}", in.size(), kRunReportSize);
  if (const auto magic = load_le<std::uint32_t>(in, 0); magic != kReportMagic) fail("run report.magic = {:#010x}", magic);
  const RunReport report{load_le<std::uint64_t>(in, 8),  load_le<std::uint64_t>(in, 16),
                         load_le<std::uint64_t>(in, 24), load_le<std::uint64_t>(in, 32),
                         load_le<std::uint64_t>(in, 40), load_le<std::uint64_t>(in, 48),
                         load_le<std::uint32_t>(in, 56), load_le<std::uint32_t>(in, 60),
                         load_le<std::uint64_t>(in, 64)};
  const std::size_t decoded = limits.raw ? 0 : limits.data_bytes;
  if (report.decoded_bytes != decoded)
    fail("run report.decoded_bytes = {}, the run moved {}", report.decoded_bytes, decoded);
  // The receiving thread's own clocks; those its decoding workers add to; the whole process's.
  const std::uint64_t wall = limits.wall_ns;
  const std::uint64_t workers =
      checked_mul(wall, static_cast<std::uint64_t>(std::max(limits.workers, 1)), "run report limit");
  const std::uint64_t process = checked_mul(wall, kMaxReceiverCpus, "run report limit");
  const auto at_most = [](const char* field, std::uint64_t value, std::uint64_t limit, const char* why) {
    if (value > limit) fail("run report.{} = {} is over {} ({})", field, value, limit, why);
  };
  at_most("wait_ns", report.wait_ns, wall, "the run's wall time as the sender timed it");
  at_most("credit_ns", report.credit_ns, wall, "the run's wall time as the sender timed it");
  at_most("decode_ns", report.decode_ns, workers, "the run's wall time times its decoding workers");
  at_most("hash_ns", report.hash_ns, workers, "the run's wall time times its decoding workers");
  at_most("decode_cpu_ns", report.decode_cpu_ns, workers, "the run's wall time times its decoding workers");
  at_most("cpu_ns", report.cpu_ns, process, "the run's wall time times the most CPUs Linux runs");
  at_most("switches", report.switches, process, "one per nanosecond of every CPU");
  at_most("threads", report.threads, kMaxReceiverThreads, "the most tasks Linux allows");
  return report;
}

std::size_t chunk_count(std::size_t data_bytes, std::size_t chunk_bytes) {
  if (chunk_bytes == 0) fail("pipeline: chunk size 0");
  return data_bytes / chunk_bytes + (data_bytes % chunk_bytes != 0);
}

std::size_t slot_bytes(const Config& config) {
  // Raw cases stage only the case record in a slot; the rest of their chunks go in place.
  std::size_t payload = kCaseRecordMax;
  if (!config.codec_spec.empty()) {
    if (config.chunk_bytes > (std::size_t{1} << 32) - 1)
      fail("pipeline: chunk size {} is over what a chunk header can describe", config.chunk_bytes);
    payload = std::max(config.codec_spec.max_compressed_size(config.chunk_bytes), payload);
  }
  return checked_add(kChunkHeaderSize, payload, "slot size") / 64 * 64 + 64;
}

std::size_t buffer_bytes(const Config& config, std::size_t data_bytes) {
  return checked_add(slots_offset(data_bytes), checked_mul(config.depth, slot_bytes(config), "slots"), "link buffer");
}

void fill_pattern(std::span<std::byte> bytes, std::uint32_t seed) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 0x51ed27ull);
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: cheap, and no tensor looks like it
    std::memcpy(bytes.data() + i, &x, std::min<std::size_t>(8, bytes.size() - i));
  }
}

}  // namespace wirezip::pipeline::wire

namespace wirezip::pipeline {

std::size_t slots_offset(std::size_t data_bytes) { return checked_add(data_bytes, 4095, "tensor size") / 4096 * 4096; }

std::size_t link_buffer_bytes(const Config& config, std::size_t data_bytes) { return wire::buffer_bytes(config, data_bytes); }

int ServeLimits::workers_allowed() const {
  return max_workers > 0 ? max_workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace wirezip::pipeline
