// The receiving side: this thread takes arrivals and sends credits (it alone touches the endpoint);
// decompression workers turn arrived slots into the destination, checking every chunk. Every
// immediate and slot header from the sender is checked here before it is used: a slot must be one
// of the case's, not already in use, and hold a header that matches the case.
#include <atomic>
#include <exception>
#include <fmt/format.h>
#include <thread>

#include "process_stats.hpp"
#include "wire.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/thread_name.hpp"
#include "work_queue.hpp"

namespace wirezip::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::microseconds kWait{500}, kIdleWait{20'000};  // see sender.cpp

struct Decoded {
  std::size_t slot;
};

struct ChunkError {
  std::size_t index;
  std::string what;
};

class ReceiverCase {
 public:
  ReceiverCase(rdma::Endpoint& endpoint, wire::CaseRecord record, const std::string& decoder)
      : endpoint_(endpoint),
        record_(std::move(record)),
        config_(record_.config),
        chunks_(wire::chunk_count(record_.data_bytes, config_.chunk_bytes)),
        slots_at_(slots_offset(record_.data_bytes)),
        slot_bytes_(wire::slot_bytes(config_)),
        tag_(wire::codec_tag(config_.codec_spec)),
        decode_spec_(decoder.empty() || !decodes() ? config_.codec_spec : config_.codec_spec.with_decoder(decoder)),
        frames_(decode_spec_.writes_frames()) {}

  // One run: every chunk exactly once, then "finished" with the run's report.
  void run(const rdma::Arrival& first);
  bool decodes() const { return pipeline::decodes(config_.mode); }
  std::span<std::byte> destination() const { return endpoint_.buffer().bytes().first(record_.data_bytes); }
  // The process's threads between runs, for the run reports. Counted here, where no run is timed
  // (the case set up, a destination cleared), not when a run's first chunk arrives: walking
  // /proc/self/task takes 77-250 us on a 2-vCPU VM, which a raw mem run of 64 MiB (about 5 ms)
  // would wait for before its "finished".
  void count_threads_between_runs() { threads_between_runs_ = sample_tasks().threads; }

 private:
  friend class ReceiverRun;
  // Decodes the chunk in `slot`; `index` is set as soon as its header names it. Returns the
  // nanoseconds it spent checksumming (also added to hash_ns_, which other workers add to meanwhile).
  std::int64_t decode(codecs::Codec& codec, std::size_t slot, std::size_t& index);
  // A slot is done with: its credit goes with the next send_credits(), together with every other
  // slot freed by then.
  void credit(std::size_t slot) { credits_due_.push_back(slot); }
  void send_credits() {
    if (credits_due_.empty()) return;
    const auto t0 = Clock::now();
    for (const std::uint32_t imm : wire::credit_imms(credits_due_)) endpoint_.post_write(0, 0, 0, imm);
    // Free for a new chunk only now: a chunk for a slot whose credit has not gone is the sender's error.
    for (const std::size_t slot : credits_due_) slot_busy_[slot] = false;
    credits_due_.clear();
    credit_ns_ += nanoseconds_since(t0);
  }
  // A chunk index (< chunks_) is claimed once per run, before its range is written: a second
  // slot naming it is refused, never decoded over the first. Decoding workers claim concurrently.
  bool claim(std::size_t index) { return claimed_[index].exchange(1) == 0; }
  // A chunk notification's slot: one of the case's, and free (its last chunk credited).
  // The slot a chunk's write names, and what the write itself says: where it landed (tcp and mem
  // report it; a verbs completion does not) and how much it brought, checked against the header
  // when the chunk is decoded. A stale slot or a write elsewhere must not pass for a delivery.
  std::size_t claim_slot(const rdma::Arrival& arrival) {
    const std::size_t slot = wire::slot_of(arrival.imm);
    const std::size_t window = config_.mode == Mode::serial ? 1 : config_.depth;
    if (slot >= window) fail("chunk notification names slot {}, the case has {}", slot, window);
    if (slot_busy_[slot]) fail("chunk notification for slot {} before its credit went back", slot);
    const std::size_t at = slots_at_ + slot * slot_bytes_;
    if (endpoint_.kind() != rdma::TransportKind::verbs && arrival.offset != at)
      fail("chunk notification for slot {} came with a write at offset {}, the slot is at {}", slot, arrival.offset,
           at);
    if (arrival.length < wire::kChunkHeaderSize || arrival.length > slot_bytes_)
      fail("chunk notification for slot {} came with a write of {} bytes ({} to {})", slot, arrival.length,
           wire::kChunkHeaderSize, slot_bytes_);
    slot_busy_[slot] = true;
    slot_length_[slot] = arrival.length;
    return slot;
  }

  rdma::Endpoint& endpoint_;
  wire::CaseRecord record_;
  const Config& config_;
  const std::size_t chunks_, slots_at_, slot_bytes_;
  const std::uint32_t tag_;
  const codecs::CodecSpec decode_spec_;  // the case's codec spec, with the receiver's decoder if it chose one
  const bool frames_;                    // its codec verifies each frame's checksum as it decodes
  std::vector<std::atomic<std::uint8_t>> claimed_;  // per chunk: 1 once a slot named it
  std::vector<bool> slot_busy_;
  std::vector<std::size_t> slot_length_;                     // bytes the write into each busy slot brought
  std::vector<std::size_t> credits_due_;                     // slots done with, whose credits have not gone yet
  std::atomic<std::int64_t> hash_ns_{0}, decode_cpu_ns_{0};  // decoding workers add at once
  std::int64_t credit_ns_ = 0;
  std::uint64_t threads_between_runs_ = 0;
};

std::int64_t ReceiverCase::decode(codecs::Codec& codec, std::size_t slot, std::size_t& index) {
  const auto bytes = endpoint_.buffer().bytes();
  const auto in = bytes.subspan(slots_at_ + slot * slot_bytes_, slot_bytes_);
  const wire::ChunkHeader header = wire::read_header(in);
  if (header.index >= chunks_) fail("chunk header.index = {} of {} chunks", header.index, chunks_);
  index = header.index;
  if (!claim(header.index)) fail("chunk header.index = {} names a chunk another slot brought already", header.index);
  const std::size_t expected = std::min(config_.chunk_bytes, record_.data_bytes - header.index * config_.chunk_bytes);
  if (header.original_bytes != expected) fail("chunk {}: header.original_bytes = {}, expected {}", header.index, header.original_bytes, expected);
  if (header.compressed_bytes > slot_bytes_ - wire::kChunkHeaderSize)
    fail("chunk {}: header.compressed_bytes = {} is over the {}-byte slot", header.index, header.compressed_bytes, slot_bytes_);
  if (header.codec_tag != tag_) fail("chunk {}: header.codec_tag = {:#x} is not this case's codec", header.index, header.codec_tag);
  if (slot_length_[slot] != wire::kChunkHeaderSize + header.compressed_bytes)
    fail("chunk {}: header.compressed_bytes = {}, but the write that brought it held {} bytes", header.index,
         header.compressed_bytes, slot_length_[slot]);
  const auto out = bytes.subspan(header.index * config_.chunk_bytes, expected);
  const auto frame = in.subspan(wire::kChunkHeaderSize, header.compressed_bytes);
  const std::size_t restored = codec.decompress(frame, out);
  if (restored != expected) fail("chunk {}: decompression restored {} bytes, expected {}", header.index, restored, expected);
  // A codec that reads wirezip frames has checked the restored bytes against its frame's XXH3-64
  // (and thrown on a mismatch): the frame's checksum being the header's says the same as hashing
  // the chunk again. Other codecs' chunks are hashed here.
  const auto t0 = Clock::now();
  const std::uint64_t checksum = frames_ ? codecs::read_frame_header(frame).checksum : wire::checksum(out);
  const std::int64_t hashed = nanoseconds_since(t0);
  hash_ns_ += hashed;
  if (checksum != header.checksum) fail("chunk {}: checksum mismatch after decompression", header.index);
  return hashed;
}

// The receiver's view of one run: arrivals taken, chunks completed and credited, the decoding
// workers (overlap with more than one), the first error one of them hit, and the run's clocks.
class ReceiverRun {
 public:
  explicit ReceiverRun(ReceiverCase& c)
      : case_(c),
        config_(c.config_),
        window_(config_.mode == Mode::serial ? 1 : config_.depth),
        inline_decode_(config_.mode == Mode::serial || config_.workers == 1) {
    c.claimed_ = std::vector<std::atomic<std::uint8_t>>(c.chunks_);
    c.slot_busy_.assign(config_.depth, false);
    c.slot_length_.assign(config_.depth, 0);
    c.credits_due_.clear();
    c.hash_ns_ = 0;
    c.decode_cpu_ns_ = 0;
    c.credit_ns_ = 0;
    if (c.decodes()) {
      // One worker decodes on this thread as each chunk arrives: no hand-off, no context switch.
      if (inline_decode_)
        inline_codec_ = c.decode_spec_.make();
      else
        try {
          for (int w = 0; w < config_.workers; ++w) {
            workers_.emplace_back([this] { work(); });
            threads::name_thread(workers_.back(), "wz-decode");
          }
        } catch (...) {
          todo_.close();  // a thread that could not start: those that did return, and are joined
          throw;
        }
    }
    // This run's decoding workers end with it. 0 stays 0: /proc could not be read.
    threads_ = c.threads_between_runs_ == 0 ? 0 : c.threads_between_runs_ + workers_.size();
  }
  ~ReceiverRun() { todo_.close(); }  // the workers see it and return; then workers_ joins them
  ReceiverRun(const ReceiverRun&) = delete;
  ReceiverRun& operator=(const ReceiverRun&) = delete;

  bool complete() const { return completed_ == case_.chunks_; }
  void handle(const rdma::Arrival& arrival);
  void step();
  void send_report();

 private:
  void work();
  // Decoding time without this decode's checksum pass, which is counted on its own.
  void timed_decode(codecs::Codec& codec, std::size_t slot, std::size_t& index) {
    const std::uint64_t cpu0 = thread_cpu_ns();
    const auto t0 = Clock::now();
    const std::int64_t hashed = case_.decode(codec, slot, index);
    busy_ns_ += nanoseconds_since(t0) - hashed;
    case_.decode_cpu_ns_ += static_cast<std::int64_t>(thread_cpu_ns() - cpu0);
  }
  void finish(const Decoded& decoded);
  [[noreturn]] void report_failure(std::size_t index, const std::string& what);

  ReceiverCase& case_;
  const Config& config_;
  const std::uint64_t cpu_at_start_ = process_cpu_ns(), switches_at_start_ = process_switches();
  const std::size_t window_;  // slots the sender uses
  const bool inline_decode_;
  std::unique_ptr<codecs::Codec> inline_codec_;
  std::uint64_t threads_ = 0;
  std::int64_t wait_ns_ = 0;
  std::size_t arrived_ = 0, completed_ = 0;
  Clock::time_point last_progress_ = Clock::now();
  WorkQueue<std::size_t> todo_;  // arrived slots for the workers
  WorkQueue<Decoded> done_;      // decoded slots to credit
  std::atomic<std::int64_t> busy_ns_{0};
  std::mutex error_mutex_;
  std::optional<ChunkError> error_;
  std::vector<std::jthread> workers_;  // last: joined before the queues they use go
};

void ReceiverRun::work() {
  std::unique_ptr<codecs::Codec> codec;
  try {
    codec = case_.decode_spec_.make();
  } catch (const std::exception& e) {  // out of this thread, it would end the process
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = ChunkError{wire::kMaxValue, fmt::format("making the decoder: {}", e.what())};
    done_.close();
    return;
  }
  while (true) {
    std::optional<std::size_t> slot = todo_.pop(std::chrono::milliseconds(100));
    if (!slot) {
      if (todo_.closed()) return;
      continue;
    }
    std::size_t index = wire::kMaxValue;
    try {
      timed_decode(*codec, *slot, index);
      done_.push({*slot});
    } catch (const std::exception& e) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = ChunkError{index, e.what()};
      done_.close();
      return;
    }
  }
}

void ReceiverRun::report_failure(std::size_t index, const std::string& what) {
  // Telling the sender is best effort: on a link that has already failed, the post's own error
  // would replace the one that names what was wrong.
  try {
    case_.endpoint_.post_write(0, 0, 0,
                               wire::imm(wire::Kind::failed, 0, std::min<std::size_t>(index, wire::kMaxValue)));
  } catch (const Error&) {
  }
  // kMaxValue: the failure came before any header or immediate named the chunk.
  if (index >= wire::kMaxValue) fail("pipeline: a chunk notification failed: {}", what);
  fail("pipeline: chunk {} failed: {}", index, what);
}

void ReceiverRun::handle(const rdma::Arrival& arrival) {
  if (wire::kind_of(arrival.imm) != wire::Kind::chunk) {
    fail("pipeline: unexpected message {:#x} in the middle of a run", arrival.imm);
  }
  last_progress_ = Clock::now();
  ++arrived_;
  std::size_t index = wire::kMaxValue;
  try {
    if (config_.mode == Mode::raw) {  // the last chunk's write: every chunk is in place (sender.cpp)
      index = wire::value_of(arrival.imm);
      if (wire::slot_of(arrival.imm) != 0 || index + 1 != case_.chunks_)
        fail("a raw run's notification names slot {} and chunk {}; only the last chunk ({}) notifies, in slot 0",
             wire::slot_of(arrival.imm), index, case_.chunks_ - 1);
      arrived_ = completed_ = case_.chunks_;
      return;
    }
    const std::size_t slot = case_.claim_slot(arrival);
    if (config_.mode == Mode::link) {  // a link-only run: nothing to decode
      index = wire::value_of(arrival.imm);
      if (index >= case_.chunks_ || !case_.claim(index))
        fail("chunk {} arrived twice or is out of range (of {})", index, case_.chunks_);
    } else if (inline_decode_) {
      timed_decode(*inline_codec_, slot, index);
    } else {
      todo_.push(slot);
      return;
    }
    case_.credit(slot);
    ++completed_;
  } catch (const std::exception& e) {
    report_failure(index, e.what());
  }
  // A decoded chunk's credit goes at once, before the next chunk's decoding could hold it back.
  // Link-only chunks cost nothing here: the credits of those that arrived together go together.
  if (config_.mode != Mode::link) case_.send_credits();
}

void ReceiverRun::finish(const Decoded& decoded) {
  case_.credit(decoded.slot);
  ++completed_;
  last_progress_ = Clock::now();
}

void ReceiverRun::step() {
  // Block on what can come next: an arrival while the sender can still send (it holds a free
  // slot and has chunks left), else a decompressed slot to give back.
  const bool arrivals_possible = arrived_ < case_.chunks_ && arrived_ - completed_ < window_;
  const auto t0 = Clock::now();
  if (arrivals_possible) {
    // Without decoding workers only the link can bring what comes next.
    auto first = case_.endpoint_.wait_arrival_for(workers_.empty() ? kIdleWait : kWait);
    wait_ns_ += nanoseconds_since(t0);
    for (auto a = std::move(first); a; a = case_.endpoint_.poll_arrival()) handle(*a);
  } else {
    auto decoded = done_.pop(kWait);
    wait_ns_ += nanoseconds_since(t0);
    if (decoded) finish(*decoded);
  }
  while (auto decoded = done_.try_pop()) finish(*decoded);
  case_.send_credits();  // every slot the workers finished meanwhile, in as few messages as fit
  {
    std::lock_guard lock(error_mutex_);
    if (error_) report_failure(error_->index, error_->what);
  }
  if (Clock::now() - last_progress_ > config_.timeout)
    fail("pipeline: nothing arrived for {} ms ({} of {} chunks done)", config_.timeout.count(), completed_,
         case_.chunks_);
}

void ReceiverRun::send_report() {
  // The report goes into the sender's slot 0, the same offset as ours: free once every chunk is back.
  const wire::RunReport report{.decode_ns = static_cast<std::uint64_t>(busy_ns_.load()),
                               .decoded_bytes = case_.decodes() ? case_.record_.data_bytes : 0,
                               .cpu_ns = process_cpu_ns() - cpu_at_start_,
                               .hash_ns = static_cast<std::uint64_t>(case_.hash_ns_.load()),
                               .wait_ns = static_cast<std::uint64_t>(wait_ns_),
                               .credit_ns = static_cast<std::uint64_t>(case_.credit_ns_),
                               .switches = static_cast<std::uint32_t>(process_switches() - switches_at_start_),
                               .threads = static_cast<std::uint32_t>(threads_),
                               .decode_cpu_ns = static_cast<std::uint64_t>(case_.decode_cpu_ns_.load())};
  rdma::Endpoint& endpoint = case_.endpoint_;
  wire::write_report(report, endpoint.buffer().bytes().subspan(case_.slots_at_, wire::kRunReportSize));
  endpoint.post_write(case_.slots_at_, case_.slots_at_, wire::kRunReportSize, wire::imm(wire::Kind::finished, 0, 0));
}

void ReceiverCase::run(const rdma::Arrival& first) {
  ReceiverRun run(*this);
  run.handle(first);
  send_credits();
  while (!run.complete()) run.step();
  run.send_report();
}

}  // namespace

void serve(rdma::Endpoint& receiver, const ServeLimits& limits) {
  std::optional<ReceiverCase> current;
  const std::size_t buffer = receiver.buffer().bytes().size();
  while (true) {
    std::optional<rdma::Arrival> arrival = receiver.wait_arrival_for(std::chrono::milliseconds(10));
    if (!arrival) {
      if (Clock::now() - receiver.last_heard() > limits.idle)
        fail("pipeline: the sender was silent for {} s (--idle-s)", limits.idle.count() / 1000);
      continue;
    }
    switch (wire::kind_of(arrival->imm)) {
      case wire::Kind::start:
        if (arrival->length == 0) {  // a run begins: stale bytes must not pass for delivered ones
          if (!current) fail("pipeline: a run was announced before any case");
          wire::fill_pattern(current->destination(), static_cast<std::uint32_t>(wire::value_of(arrival->imm)));
          current->count_threads_between_runs();
          receiver.post_write(0, 0, 0, wire::imm(wire::Kind::ready, 0, 0));
          break;
        }
        current.reset();
        try {
          // The record lands at offset 0, a place both sides know before any size is agreed.
          if (arrival->offset != 0 || arrival->length > wire::kCaseRecordMax)
            fail("case record of {} bytes at offset {}", arrival->length, arrival->offset);
          current.emplace(receiver, wire::read_case(receiver.buffer().bytes().first(arrival->length), limits, buffer),
                          limits.decoder);
          current->count_threads_between_runs();
        } catch (const std::exception& e) {
          current.reset();
          fmt::print(stderr, "pipeline receiver: refusing the case: {}\n", e.what());
          receiver.post_write(0, 0, 0, wire::imm(wire::Kind::failed, 0, 0));
          break;
        }
        receiver.post_write(0, 0, 0, wire::imm(wire::Kind::ready, 0, 0));
        break;
      case wire::Kind::chunk:
        if (!current) fail("pipeline: a chunk arrived before any case");
        current->run(*arrival);
        break;
      case wire::Kind::stop:
        return;
      default:
        fail("pipeline: unexpected message {:#x} from the sender", arrival->imm);
    }
  }
}

}  // namespace wirezip::pipeline
