// The receiving side: this thread takes arrivals and sends credits (it alone touches the endpoint);
// decompression workers turn arrived slots into the destination, checking every chunk.
#include <atomic>
#include <exception>
#include <fmt/format.h>
#include <thread>

#include "wire.hpp"
#include "work_queue.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::microseconds kWait{500};  // see sender.cpp

struct Decoded {
  std::size_t slot, index;
};

struct ChunkError {
  std::size_t index;
  std::string what;
};

class ReceiverCase {
 public:
  ReceiverCase(rdma::Endpoint& endpoint, wire::CaseRecord record)
      : endpoint_(endpoint), record_(std::move(record)), config_(record_.config),
        chunks_(wire::chunk_count(record_.data_bytes, config_.chunk_bytes)),
        slots_at_(slots_offset(record_.data_bytes)), slot_bytes_(wire::slot_bytes(config_)),
        tag_(wire::codec_tag(config_.codec_spec)) {
    if (slots_at_ + config_.depth * slot_bytes_ > endpoint.buffer().bytes().size())
      fail("pipeline: this side's buffer is smaller than the tensor plus {} slots", config_.depth);
  }

  // One run: every chunk exactly once, then "finished" with the decompress busy time.
  void run(const rdma::Arrival& first);
  const std::string& codec_spec() const { return config_.codec_spec; }

 private:
  void decode(codecs::Codec& codec, std::size_t slot, std::size_t& index);
  void credit(std::size_t slot) { endpoint_.post_write(0, 0, 0, wire::imm(wire::Kind::credit, slot, 0)); }
  void mark(std::size_t index) {
    if (index >= chunks_ || seen_[index]) fail("pipeline: chunk {} arrived twice or is out of range", index);
    seen_[index] = true;
  }

  rdma::Endpoint& endpoint_;
  wire::CaseRecord record_;
  const Config& config_;
  const std::size_t chunks_, slots_at_, slot_bytes_;
  const std::uint32_t tag_;
  std::vector<bool> seen_;
};

void ReceiverCase::decode(codecs::Codec& codec, std::size_t slot, std::size_t& index) {
  const auto bytes = endpoint_.buffer().bytes();
  const auto in = bytes.subspan(slots_at_ + slot * slot_bytes_, slot_bytes_);
  const wire::ChunkHeader header = wire::read_header(in);
  index = header.index;
  if (header.index >= chunks_) fail("chunk index {} of {}", header.index, chunks_);
  const std::size_t expected = std::min(config_.chunk_bytes, record_.data_bytes - header.index * config_.chunk_bytes);
  if (header.original_bytes != expected || header.compressed_bytes > slot_bytes_ - wire::kChunkHeaderSize ||
      header.codec_tag != tag_)
    fail("chunk {}: header does not match the case (sizes {} / {}, codec tag)", header.index,
         header.original_bytes, header.compressed_bytes);
  const auto out = bytes.subspan(header.index * config_.chunk_bytes, expected);
  codec.decompress(in.subspan(wire::kChunkHeaderSize, header.compressed_bytes), out);
  if (wire::checksum(out) != header.checksum) fail("chunk {}: checksum mismatch after decompression", header.index);
}

void ReceiverCase::run(const rdma::Arrival& first) {
  seen_.assign(chunks_, false);
  WorkQueue<std::size_t> todo;
  WorkQueue<Decoded> done;
  std::atomic<std::int64_t> busy_ns{0};
  std::mutex error_mutex;
  std::optional<ChunkError> error;

  auto work = [&] {
    auto codec = codecs::make_codec(config_.codec_spec);
    while (true) {
      std::optional<std::size_t> slot = todo.pop(std::chrono::milliseconds(100));
      if (!slot) {
        if (todo.closed()) return;
        continue;
      }
      std::size_t index = wire::kMaxValue;
      try {
        const auto t0 = Clock::now();
        decode(*codec, *slot, index);
        busy_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
        done.push({*slot, index});
      } catch (const std::exception& e) {
        std::lock_guard lock(error_mutex);
        if (!error) error = ChunkError{std::min<std::size_t>(index, wire::kMaxValue), e.what()};
        done.close();
        return;
      }
    }
  };

  // One worker decodes on this thread as each chunk arrives: no hand-off, no context switch.
  const bool inline_decode = config_.mode == Mode::serial || config_.workers == 1;
  std::unique_ptr<codecs::Codec> inline_codec;
  if (inline_decode) inline_codec = codecs::make_codec(config_.codec_spec);
  std::vector<std::jthread> workers;
  if (config_.mode != Mode::raw && !inline_decode)
    for (int w = 0; w < config_.workers; ++w) workers.emplace_back(work);
  struct CloseOnExit {
    WorkQueue<std::size_t>& todo;
    ~CloseOnExit() { todo.close(); }
  } closer{todo};

  std::size_t arrived = 0, completed = 0;
  auto last_progress = Clock::now();
  auto handle = [&](const rdma::Arrival& arrival) {
    if (wire::kind_of(arrival.imm) != wire::Kind::chunk)
      fail("pipeline: unexpected message {:#x} in the middle of a run", arrival.imm);
    last_progress = Clock::now();
    ++arrived;
    if (config_.mode == Mode::raw) {  // the bytes are already in place
      mark(wire::value_of(arrival.imm));
      credit(wire::slot_of(arrival.imm));
      ++completed;
    } else if (inline_decode) {
      std::size_t index = wire::kMaxValue;
      try {
        const auto t0 = Clock::now();
        decode(*inline_codec, wire::slot_of(arrival.imm), index);
        busy_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
      } catch (const std::exception& e) {
        endpoint_.post_write(0, 0, 0, wire::imm(wire::Kind::failed, 0, std::min<std::size_t>(index, wire::kMaxValue)));
        fail("pipeline: chunk {} failed: {}", std::min<std::size_t>(index, wire::kMaxValue), e.what());
      }
      mark(index);
      credit(wire::slot_of(arrival.imm));
      ++completed;
    } else {
      todo.push(wire::slot_of(arrival.imm));
    }
  };
  auto finish = [&](const Decoded& decoded) {
    mark(decoded.index);
    credit(decoded.slot);
    ++completed;
    last_progress = Clock::now();
  };
  handle(first);
  const std::size_t window = config_.mode == Mode::serial ? 1 : config_.depth;  // slots the sender uses
  while (completed < chunks_) {
    // Block on what can come next: an arrival while the sender can still send (it holds a free
    // slot and has chunks left), else a decompressed slot to give back.
    const bool arrivals_possible = arrived < chunks_ && arrived - completed < window;
    if (arrivals_possible) {
      for (auto a = endpoint_.wait_arrival_for(kWait); a; a = endpoint_.poll_arrival()) handle(*a);
    } else if (auto decoded = done.pop(kWait)) {
      finish(*decoded);
    }
    while (auto decoded = done.try_pop()) finish(*decoded);
    {
      std::lock_guard lock(error_mutex);
      if (error) {
        endpoint_.post_write(0, 0, 0, wire::imm(wire::Kind::failed, 0, error->index));
        fail("pipeline: chunk {} failed: {}", error->index, error->what);
      }
    }
    if (Clock::now() - last_progress > config_.timeout)
      fail("pipeline: nothing arrived for {} ms ({} of {} chunks done)", config_.timeout.count(), completed, chunks_);
  }
  const auto units = static_cast<std::size_t>(busy_ns.load() / 100'000);
  endpoint_.post_write(0, 0, 0, wire::imm(wire::Kind::finished, 0, std::min<std::size_t>(units, wire::kMaxValue)));
}

}  // namespace

void serve(rdma::Endpoint& receiver) {
  std::optional<ReceiverCase> current;
  while (true) {
    // Idle between cases is unbounded; a failed link throws.
    std::optional<rdma::Arrival> arrival = receiver.wait_arrival_for(std::chrono::milliseconds(10));
    if (!arrival) continue;
    switch (wire::kind_of(arrival->imm)) {
      case wire::Kind::start:
        current.reset();
        try {
          // The record lands at offset 0, a place both sides know before any size is agreed.
          current.emplace(receiver, wire::read_case(receiver.buffer().bytes().first(wire::kCaseRecordMax)));
          codecs::make_codec(current->codec_spec());  // refuse an unknown codec now, not mid-run
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
