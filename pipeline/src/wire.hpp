#pragma once
// Internal: what travels besides the data. Immediates name what a write means; a chunk header
// leads every compressed slot; the case record tells the receiver how to decode; the run report
// comes back with "finished". The readers here are the pipeline's trust boundary: each checks
// every field against the reading side's own limits (sizes with overflow-checked arithmetic) and
// throws wirezip::Error naming the field and its value. docs/PROTOCOL.md has the layouts.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wirezip/pipeline/pipeline.hpp"

namespace wirezip::pipeline::wire {

// Immediate: kind (3 bits) | slot (8 bits) | value (21 bits: chunk index, or a seed). Kind 0 is
// the link's own session layer (keepalives), never the pipeline's.
enum class Kind : std::uint32_t {
  chunk = 1,     // sender -> receiver: slot holds a chunk (raw: sent once, with the last chunk,
                 // which means every chunk is in place; value is its index)
  start = 2,     // sender -> receiver: with bytes, offset 0 holds a case record; without, a run
                 // begins: fill the destination with the pattern of seed `value`
  credit = 3,    // receiver -> sender: slot is free again, and slot + 1 + i for each bit i of value
  finished = 4,  // receiver -> sender: run complete; the bytes are its RunReport
  failed = 5,    // receiver -> sender: a chunk failed; value = its index
  ready = 6,     // receiver -> sender: case record accepted, or destination filled
  stop = 7,      // sender -> receiver: no more cases; serve() returns
};
inline constexpr std::size_t kMaxSlots = 256;
inline constexpr std::uint32_t kMaxValue = (1u << 21) - 1;

std::uint32_t imm(Kind kind, std::size_t slot, std::size_t value);
Kind kind_of(std::uint32_t imm);
std::size_t slot_of(std::uint32_t imm);
std::size_t value_of(std::uint32_t imm);

// Credits: one message frees every slot that is free at once, up to kCreditSpan of them in a row
// starting at its slot (fewer messages, fewer wake-ups of the sender).
inline constexpr std::size_t kCreditSpan = 22;  // the slot, plus one per bit of the value
// The credit messages that free `slots` (each < kMaxSlots), in as few as a greedy fit allows.
std::vector<std::uint32_t> credit_imms(std::vector<std::size_t> slots);
// The sender's parser: the slots a credit frees, each within the case's `depth` slots.
std::vector<std::size_t> credited_slots(std::uint32_t imm, std::size_t depth);

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
ChunkHeader read_header(std::span<const std::byte> in);  // checks the magic; the case checks the rest

std::uint32_t codec_tag(const codecs::CodecSpec& spec);  // XXH3 of spec.text()
std::uint64_t checksum(std::span<const std::byte> bytes);

struct CaseRecord {
  Config config;
  std::size_t data_bytes = 0;
};
inline constexpr std::size_t kCaseRecordMax = 512;
inline constexpr std::size_t kMaxCodecSpec = 256;
std::size_t write_case(const CaseRecord& record, std::span<std::byte> out);  // returns bytes used
// The receiver's parser: mode, chunk size, depth, workers and timeout within `limits`; the codec
// spec printable and at most kMaxCodecSpec bytes; the tensor plus its slots within `buffer_bytes`.
CaseRecord read_case(std::span<const std::byte> in, const ServeLimits& limits, std::size_t buffer_bytes);

// What the receiver measured during a run, sent with "finished" into the sender's slot 0.
struct RunReport {
  std::uint64_t decode_ns = 0;      // time spent decompressing (all workers together)
  std::uint64_t decoded_bytes = 0;  // original bytes restored and checked
  std::uint64_t cpu_ns = 0;         // the receiving process's CPU time during the run
  std::uint64_t hash_ns = 0;        // checksumming restored chunks (0 where the codec's frame did it)
  std::uint64_t wait_ns = 0;        // the receiving thread blocked, waiting for an arrival or a decoded slot
  std::uint64_t credit_ns = 0;      // posting credits
  std::uint32_t switches = 0;       // the receiving process's context switches (voluntary + not)
  std::uint32_t threads = 0;        // the receiving process's threads while the run went on
  std::uint64_t decode_cpu_ns = 0;  // decoding workers' thread CPU time while decoding
};
inline constexpr std::size_t kRunReportSize = 72;
void write_report(const RunReport& report, std::span<std::byte> out);
// What the sender accepts of a report: the receiver's clocks ran inside the run as the sender
// timed it, so no time can exceed that wall time (times the threads that add to it).
struct ReportLimits {
  std::size_t data_bytes = 0;  // decoded_bytes must be this (or 0 when raw: nothing decoded, raw or link mode)
  bool raw = false;
  std::uint64_t wall_ns = 0;  // the run so far, on the sender's clock, with room for the two clocks' rates
  int workers = 1;            // the case's decoding workers: decode_ns, hash_ns and decode_cpu_ns add theirs
};
// Linux's bounds on one process: CPUs (NR_CPUS at its largest) and tasks (PID_MAX_LIMIT).
inline constexpr std::uint64_t kMaxReceiverCpus = 8192;
inline constexpr std::uint64_t kMaxReceiverThreads = std::uint64_t{1} << 22;
// The sender's parser: every field within `limits`, or an error naming it.
RunReport read_report(std::span<const std::byte> in, const ReportLimits& limits);

// Chunks of a tensor; slot size and the buffer a case needs. Overflow-checked: they throw.
std::size_t chunk_count(std::size_t data_bytes, std::size_t chunk_bytes);
std::size_t slot_bytes(const Config& config);
std::size_t buffer_bytes(const Config& config, std::size_t data_bytes);

// The pattern a destination is filled with before a run (never equal to real data by chance).
void fill_pattern(std::span<std::byte> bytes, std::uint32_t seed);

}  // namespace wirezip::pipeline::wire
