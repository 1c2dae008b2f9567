// The sending side: compression workers fill free slots, this thread writes finished slots to the
// receiver and turns credits back into free slots. Only this thread touches the endpoint. What the
// receiver sends back is checked before it is used: a credit must name a slot that is out (once),
// "finished" must come after every credit and carry a sound report.
#include <atomic>
#include <exception>
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
// How long a wait for the next event blocks before the loop looks around again. Transports that can
// block (tcp, mem) wake at once when an arrival comes, so this bounds latency only for missed cases.
constexpr std::chrono::microseconds kWait{500};
// The same where only the link can bring what comes next (a credit): waking up just to wait again
// is a context switch per wait longer than kWait, and all it could notice is the run's timeout.
constexpr std::chrono::microseconds kIdleWait{20'000};

struct Finished {
  std::size_t slot, index, bytes;  // bytes: header + frame
};

// Per-chunk stage clocks of the sending side. Compression workers add to the first two at once.
struct SenderClocks {
  std::atomic<std::int64_t> compress_ns{0}, hash_ns{0}, compress_cpu_ns{0};
  std::int64_t post_ns = 0, wait_ns = 0;  // the transport thread's alone
};

// The sender's view of one run: slots, credits and the link-busy clock.
class SenderRun {
 public:
  SenderRun(rdma::Endpoint& endpoint, std::size_t data_bytes, const Config& config)
      : endpoint_(endpoint),
        config_(config),
        data_bytes_(data_bytes),
        chunks_(wire::chunk_count(data_bytes, config.chunk_bytes)),
        raw_(config.mode == Mode::raw),
        slots_at_(slots_offset(data_bytes)),
        slot_bytes_(wire::slot_bytes(config)),
        outstanding_(config.depth, false),
        started_(Clock::now()),
        last_progress_(started_),
        last_sample_(last_progress_),
        busy_at_start_(endpoint.busy_seconds()),
        cpu_at_start_(process_cpu_ns()),
        switches_at_start_(process_switches()),
        queued_at_start_(sample_tasks().queued_ns),
        host_at_start_(host_cpu_seconds()) {
    if (chunks_ > wire::kMaxValue) fail("pipeline: {} chunks is more than one run can count", chunks_);
    const std::size_t needed = wire::buffer_bytes(config, data_bytes);
    if (needed > endpoint.buffer().bytes().size() || needed > endpoint.remote_buffer_bytes())
      fail("pipeline: link buffers are smaller than the tensor plus {} slots", config.depth);
  }

  std::size_t chunks() const { return chunks_; }
  std::size_t chunk_length(std::size_t index) const {
    return std::min(config_.chunk_bytes, data_bytes_ - index * config_.chunk_bytes);
  }
  std::span<std::byte> slot(std::size_t s) const {
    return endpoint_.buffer().bytes().subspan(slots_at_ + s * slot_bytes_, slot_bytes_);
  }
  std::span<const std::byte> chunk(std::size_t index) const {
    return endpoint_.buffer().bytes().subspan(index * config_.chunk_bytes, chunk_length(index));
  }

  SenderClocks& clocks() { return clocks_; }

  void post_slot(std::size_t s, std::size_t index, std::size_t bytes) {
    send_out(s);
    const auto t0 = Clock::now();
    endpoint_.post_write(slots_at_ + s * slot_bytes_, slots_at_ + s * slot_bytes_, bytes,
                         wire::imm(wire::Kind::chunk, s, index));
    clocks_.post_ns += nanoseconds_since(t0);
    wire_bytes_ += bytes;
    ++posted_;
    progress();
  }
  // A raw run's chunk `index`, in place. Only the last write notifies the receiver: when it
  // arrives, every write before it has landed (RC writes, a tcp stream and the mem copier all keep
  // their order). Nothing is decoded, so no slot waits for a credit: the transport's depth alone
  // bounds the writes in flight, as in bench_rdma.
  void post_raw(std::size_t index) {
    const std::size_t at = index * config_.chunk_bytes, length = chunk_length(index);
    const bool last = index + 1 == chunks_;
    const auto t0 = Clock::now();
    endpoint_.post_write(at, at, length, last ? std::optional(wire::imm(wire::Kind::chunk, 0, index)) : std::nullopt);
    clocks_.post_ns += nanoseconds_since(t0);
    wire_bytes_ += length;
    ++posted_;
    progress();
  }

  // Handles whatever the receiver sent; returns the slots it freed. Throws on a receiver failure
  // or when nothing has moved for the timeout (a slot that never comes back).
  template <typename OnCredit>
  bool pump(OnCredit&& on_credit, std::chrono::microseconds wait = kIdleWait) {
    sample_link();
    bool any = false;
    const auto t0 = Clock::now();
    auto first = endpoint_.wait_arrival_for(wait);
    clocks_.wait_ns += nanoseconds_since(t0);
    for (auto arrival = std::move(first); arrival; arrival = endpoint_.poll_arrival()) {
      any = true;
      progress();
      switch (wire::kind_of(arrival->imm)) {
        case wire::Kind::credit:
          if (raw_) fail("pipeline: the receiver sent a credit in a raw run, which has none");
          if (arrival->length != 0)
            fail("pipeline: a credit that wrote {} bytes (credits carry none)", arrival->length);
          for (const std::size_t s : wire::credited_slots(arrival->imm, outstanding_.size())) {
            if (!outstanding_[s]) fail("pipeline: the receiver sent a credit for slot {}, which is not out", s);
            outstanding_[s] = false;
            ++credits_;
            on_credit(s);
          }
          break;
        case wire::Kind::finished:
          // A raw run's chunks are all in place once written; other runs' once credited.
          if (const std::size_t done = raw_ ? posted_ : credits_; done != chunks_ || finished_)
            fail("pipeline: the receiver said finished with {} of {} {}", done, chunks_,
                 raw_ ? "chunks written" : "credits back");
          if (arrival->length != wire::kRunReportSize) fail("pipeline: a run report of {} bytes", arrival->length);
          if (endpoint_.kind() != rdma::TransportKind::verbs && arrival->offset != slots_at_)
            fail("pipeline: a run report written at offset {}, not slot 0 at {}", arrival->offset, slots_at_);
          report_ = wire::read_report(slot(0), report_limits());
          finished_ = true;
          break;
        case wire::Kind::failed:
          fail("pipeline: the receiver failed on chunk {} (its log says why)", wire::value_of(arrival->imm));
        default:
          fail("pipeline: unexpected message {:#x} from the receiver", arrival->imm);
      }
    }
    if (Clock::now() - last_progress_ > config_.timeout) {
      if (raw_)
        fail("pipeline: nothing moved for {} ms ({} of {} chunks written): the receiver never said finished",
             config_.timeout.count(), posted_, chunks_);
      fail("pipeline: nothing moved for {} ms ({} of {} credits back): a slot never came back",
           config_.timeout.count(), credits_, chunks_);
    }
    return any;
  }
  bool done() const { return finished_; }  // taken only after every credit (raw: every write)
  std::size_t credits() const { return credits_; }
  std::size_t posted() const { return posted_; }

  // Counts this process's threads, and their time queued for a CPU, while every worker of the run
  // is still there.
  void count_threads() {
    if (threads_ != 0) return;
    const TaskSample now = sample_tasks();
    threads_ = now.threads;
    queued_at_end_ = now.queued_ns;
  }

  Result result(Clock::time_point start, Clock::time_point end = Clock::now()) {
    Result r;
    r.seconds = std::chrono::duration<double>(end - start).count();
    count_threads();
    r.original_bytes = data_bytes_;
    r.wire_bytes = wire_bytes_;
    const double workers = config_.mode == Mode::overlap ? config_.workers : 1;
    const double compress_busy_seconds = static_cast<double>(clocks_.compress_ns + clocks_.hash_ns) * 1e-9;
    r.compress_busy = compress_busy_seconds / (r.seconds * workers);
    // Exact where the transport tracks it; else the sender's samples between its own waits.
    const auto busy_now = endpoint_.busy_seconds();
    r.link_busy = (busy_now && busy_at_start_ ? *busy_now - *busy_at_start_ : link_busy_seconds_) / r.seconds;
    r.decompress_seconds = static_cast<double>(report_.decode_ns) * 1e-9;
    r.decompress_busy = r.decompress_seconds / (r.seconds * workers);
    r.sender_cpu_seconds = static_cast<double>(process_cpu_ns() - cpu_at_start_) * 1e-9;
    r.receiver_cpu_seconds = static_cast<double>(report_.cpu_ns) * 1e-9;
    r.host_cpu = host_cpu_seconds() - host_at_start_;
    r.chunks = chunks_;
    r.sender = {.compress = static_cast<double>(clocks_.compress_ns) * 1e-9,
                .hash = static_cast<double>(clocks_.hash_ns) * 1e-9,
                .compress_cpu = static_cast<double>(clocks_.compress_cpu_ns) * 1e-9,
                .post = static_cast<double>(clocks_.post_ns) * 1e-9,
                .wait = static_cast<double>(clocks_.wait_ns) * 1e-9,
                .switches = process_switches() - switches_at_start_,
                .queued = static_cast<double>(queued_at_end_ - std::min(queued_at_end_, queued_at_start_)) * 1e-9,
                .threads = threads_};
    r.receiver = {.hash = static_cast<double>(report_.hash_ns) * 1e-9,
                  .wait = static_cast<double>(report_.wait_ns) * 1e-9,
                  .credit = static_cast<double>(report_.credit_ns) * 1e-9,
                  .decode_cpu = static_cast<double>(report_.decode_cpu_ns) * 1e-9,
                  .switches = report_.switches,
                  .threads = report_.threads};
    return r;
  }

 private:
  void progress() { last_progress_ = Clock::now(); }
  // The receiver's run lies inside ours (its first chunk came after we began, its report before
  // we read it); 1/64 more leaves room for two hosts' clocks ticking at slightly other rates.
  wire::ReportLimits report_limits() const {
    const auto wall = static_cast<std::uint64_t>(nanoseconds_since(started_));
    return {.data_bytes = data_bytes_,
            .raw = !decodes(config_.mode),
            .wall_ns = wall + wall / 64,
            .workers = config_.mode == Mode::overlap ? config_.workers : 1};
  }
  void send_out(std::size_t s) {
    if (outstanding_[s]) fail("pipeline: slot {} reused before its credit", s);  // a bug here, not the peer
    outstanding_[s] = true;
  }
  // Link busy, where the transport cannot say: time between samples while a write was in flight
  // at the earlier sample.
  void sample_link() {
    const auto now = Clock::now();
    if (was_in_flight_) link_busy_seconds_ += std::chrono::duration<double>(now - last_sample_).count();
    was_in_flight_ = endpoint_.in_flight() > 0;
    last_sample_ = now;
  }

  rdma::Endpoint& endpoint_;
  const Config& config_;
  const std::size_t data_bytes_, chunks_;
  const bool raw_;
  const std::size_t slots_at_, slot_bytes_;
  std::size_t credits_ = 0, posted_ = 0, wire_bytes_ = 0;
  std::vector<bool> outstanding_;  // slots written and not yet credited
  wire::RunReport report_;
  bool finished_ = false, was_in_flight_ = false;
  double link_busy_seconds_ = 0;
  const Clock::time_point started_;
  Clock::time_point last_progress_, last_sample_;
  const std::optional<double> busy_at_start_;
  const std::uint64_t cpu_at_start_, switches_at_start_, queued_at_start_;
  std::uint64_t queued_at_end_ = 0;
  const Result::HostCpu host_at_start_;
  std::uint64_t threads_ = 0;
  SenderClocks clocks_;
};

// Compresses chunk `index` into slot `s`: header, then frame. Returns header + frame bytes. A codec
// that writes wirezip frames hashed the original while it read it (the same XXH3-64): its frame's
// checksum is the chunk's, without a second pass over the chunk.
std::size_t compress_into(codecs::Codec& codec, SenderRun& run, std::size_t index, std::size_t s,
                          std::uint32_t tag, bool frames) {
  const auto original = run.chunk(index);
  const auto slot = run.slot(s);
  const std::uint64_t cpu0 = thread_cpu_ns();
  const auto t0 = Clock::now();
  const std::size_t frame = codec.compress(original, slot.subspan(wire::kChunkHeaderSize));
  const auto t1 = Clock::now();
  const std::uint64_t checksum = frames ? codecs::read_frame_header(slot.subspan(wire::kChunkHeaderSize, frame)).checksum
                                        : wire::checksum(original);
  const auto t2 = Clock::now();
  // Read last: the CPU clock is a system call, and a thread can be switched out on its way back.
  run.clocks().compress_cpu_ns += static_cast<std::int64_t>(thread_cpu_ns() - cpu0);
  run.clocks().compress_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  run.clocks().hash_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
  wire::write_header({static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(original.size()),
                      static_cast<std::uint32_t>(frame), tag, checksum},
                     slot);
  return wire::kChunkHeaderSize + frame;
}

// Raw runs: no codec, no slots to wait for (post_raw).
Result run_raw(SenderRun& run) {
  const auto no_credits = [](std::size_t) {};  // pump() refuses a credit in a raw run
  const auto start = Clock::now();
  for (std::size_t index = 0; index < run.chunks(); ++index) {
    run.post_raw(index);
    run.pump(no_credits, std::chrono::microseconds(0));  // a receiver's failure ends the run early
  }
  while (!run.done()) run.pump(no_credits);
  return run.result(start);
}

// Link-only runs: a compressed run's chunk sizes through the slots, with its notifications and
// credits, so the link's time and CPU are what a compressed run's link costs; nothing is coded.
Result run_link(SenderRun& run, const Config& config, const std::vector<std::size_t>& wire_sizes) {
  if (wire_sizes.size() != run.chunks())
    fail("pipeline: a link-only run needs one wire size per chunk ({} for {} chunks)", wire_sizes.size(), run.chunks());
  std::vector<std::size_t> free;
  for (std::size_t s = config.depth; s-- > 0;) free.push_back(s);
  const auto on_credit = [&](std::size_t s) { free.push_back(s); };
  const auto start = Clock::now();
  for (std::size_t index = 0; index < run.chunks(); ++index) {
    while (free.empty()) run.pump(on_credit);
    const std::size_t s = free.back();
    free.pop_back();
    run.post_slot(s, index, wire_sizes[index]);
  }
  while (!run.done()) run.pump(on_credit);
  return run.result(start);
}

Result run_serial(SenderRun& run, const Config& config) {
  auto codec = config.codec_spec.make();
  const std::uint32_t tag = wire::codec_tag(config.codec_spec);
  const bool frames = config.codec_spec.writes_frames();
  const auto start = Clock::now();
  for (std::size_t index = 0; index < run.chunks(); ++index) {
    const std::size_t bytes = compress_into(*codec, run, index, 0, tag, frames);
    run.post_slot(0, index, bytes);
    while (run.credits() <= index) run.pump([](std::size_t) {});  // until the receiver is done with it
  }
  while (!run.done()) run.pump([](std::size_t) {});
  return run.result(start);
}

// One worker: this thread compresses the next chunk whenever a slot is free and otherwise waits
// for credits. The transport sends asynchronously, so compression still overlaps the wire and
// the receiver, without a thread hand-off (and its context switches) per chunk.
Result run_overlap_inline(SenderRun& run, const Config& config) {
  auto codec = config.codec_spec.make();
  const std::uint32_t tag = wire::codec_tag(config.codec_spec);
  const bool frames = config.codec_spec.writes_frames();
  std::vector<std::size_t> free;
  for (std::size_t s = config.depth; s-- > 0;) free.push_back(s);
  auto on_credit = [&](std::size_t s) { free.push_back(s); };
  const auto start = Clock::now();
  for (std::size_t index = 0; !run.done();) {
    if (index < run.chunks() && !free.empty()) {
      const std::size_t s = free.back();
      free.pop_back();
      const std::size_t bytes = compress_into(*codec, run, index, s, tag, frames);
        run.post_slot(s, index++, bytes);
      run.pump(on_credit, std::chrono::microseconds(0));
    } else {
      run.pump(on_credit);
    }
  }
  return run.result(start);
}

Result run_overlap(SenderRun& run, const Config& config) {
  if (config.workers == 1) return run_overlap_inline(run, config);
  WorkQueue<std::size_t> free;
  WorkQueue<Finished> ready;
  for (std::size_t s = 0; s < config.depth; ++s) free.push(s);
  std::atomic<std::size_t> next{0};
  std::exception_ptr worker_error;
  std::mutex error_mutex;
  const std::uint32_t tag = wire::codec_tag(config.codec_spec);
  const bool frames = config.codec_spec.writes_frames();

  auto work = [&] {
    try {
      auto codec = config.codec_spec.make();
      for (std::size_t index; (index = next.fetch_add(1)) < run.chunks();) {
        std::optional<std::size_t> s;
        while (!(s = free.pop(config.timeout)))
          if (free.closed()) return;
        const std::size_t bytes = compress_into(*codec, run, index, *s, tag, frames);
        ready.push({*s, index, bytes});
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!worker_error) worker_error = std::current_exception();
      ready.close();
    }
  };

  const auto start = Clock::now();
  std::vector<std::jthread> workers;
  // Closing the queues on every way out wakes the workers, so the joins below never hang.
  struct CloseOnExit {
    WorkQueue<std::size_t>& free;
    WorkQueue<Finished>& ready;
    ~CloseOnExit() { free.close(), ready.close(); }
  };
  try {
    for (int w = 0; w < config.workers; ++w) {
      workers.emplace_back(work);
      threads::name_thread(workers.back(), "wz-compress");
    }
  } catch (...) {
    CloseOnExit closer{free, ready};  // a thread that could not start: those that did return, and are joined
    throw;
  }
  Clock::time_point end;
  {
    CloseOnExit closer{free, ready};
    auto on_credit = [&](std::size_t s) { free.push(s); };
    auto post = [&](const Finished& f) { run.post_slot(f.slot, f.index, f.bytes); };
    while (!run.done()) {
      // Block on what can come next: a credit when every slot is with the receiver (or all is
      // sent), else a compressed slot from a worker.
      const bool credits_only = run.posted() - run.credits() == config.depth || run.posted() == run.chunks();
      if (credits_only) {
        run.pump(on_credit);
      } else {
        const auto t0 = Clock::now();
        auto finished = ready.pop(kWait);
        run.clocks().wait_ns += nanoseconds_since(t0);
        if (finished) post(*finished);
      }
      while (auto finished = ready.try_pop()) post(*finished);
      run.pump(on_credit, std::chrono::microseconds(0));
      std::lock_guard lock(error_mutex);
      if (worker_error) std::rethrow_exception(worker_error);
    }
    end = Clock::now();
    run.count_threads();  // the workers are still there
  }
  workers.clear();
  return run.result(start, end);
}

}  // namespace

namespace {
// The receiver's answer to "start": ready, or failed (it refused, and its log says why).
void expect_ready(rdma::Endpoint& sender, const char* what) {
  const rdma::Arrival reply = sender.wait_arrival();
  if (wire::kind_of(reply.imm) == wire::Kind::failed) fail("pipeline: the receiver refused {}; its log says why", what);
  if (reply.imm != wire::imm(wire::Kind::ready, 0, 0))
    fail("pipeline: the receiver answered {} with {:#x}", what, reply.imm);
}
}  // namespace

void start_case(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config) {
  if (config.depth == 0 || config.depth > wire::kMaxSlots) fail("pipeline: depth must be in [1, {}]", wire::kMaxSlots);
  if (config.workers <= 0 || config.chunk_bytes == 0 || data_bytes == 0)
    fail("pipeline: workers, chunk size and data size must be positive");
  SenderRun run(sender, data_bytes, config);  // checks the buffers are big enough
  // Staged in our slot 0, written to the receiver's offset 0: the one place it knows to look.
  const std::size_t used = wire::write_case({config, data_bytes}, run.slot(0));
  sender.post_write(slots_offset(data_bytes), 0, used, wire::imm(wire::Kind::start, 0, 0));
  expect_ready(sender, "the case");
}

void prepare_run(rdma::Endpoint& sender, std::uint32_t seed) {
  sender.post_write(0, 0, 0, wire::imm(wire::Kind::start, 0, seed & wire::kMaxValue));
  expect_ready(sender, "to clear its destination");
}

void stop_serving(rdma::Endpoint& sender) {
  sender.post_write(0, 0, 0, wire::imm(wire::Kind::stop, 0, 0));
  sender.wait_in_flight_at_most(0);
}

Result run_once(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config,
                const std::vector<std::size_t>* wire_sizes) {
  SenderRun run(sender, data_bytes, config);
  if (config.mode == Mode::raw) return run_raw(run);
  if (config.mode == Mode::link) {
    if (!wire_sizes) fail("pipeline: a link-only run needs the wire sizes of a compressed run");
    return run_link(run, config, *wire_sizes);
  }
  if (config.mode == Mode::serial) return run_serial(run, config);
  return run_overlap(run, config);
}

}  // namespace wirezip::pipeline
