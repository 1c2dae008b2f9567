#include "rdma_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "repeated_case.hpp"
#include "timed_writes.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;

// A cheap pattern that differs per case, per run of the case and per 8-byte word: what an earlier
// run left in the peer's buffer cannot pass for this run's writes.
void fill_pattern(std::span<std::byte> bytes, std::uint32_t seed, std::uint32_t run) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1) ^ 0xbf58476d1ce4e5b9ull * (run + 1ull);
  for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    x += 0x9e3779b97f4a7c15ull;
    std::memcpy(bytes.data() + i, &x, 8);
  }
}

// Where the next message goes. Each batch continues where the last one stopped and wraps at the
// end, so every message size walks the whole buffer, however many messages fit in a batch.
class BufferWalk {
 public:
  BufferWalk(std::size_t buffer_bytes, std::size_t message_bytes)
      : message_bytes_(message_bytes), slots_(buffer_bytes / message_bytes) {}
  std::size_t slots() const { return slots_; }
  std::size_t next_offset() {
    const std::size_t offset = next_ * message_bytes_;
    next_ = next_ + 1 == slots_ ? 0 : next_ + 1;
    written_ = std::min(written_ + 1, slots_);
    return offset;
  }
  // [0, written_bytes()) has been written at least once.
  std::size_t written_bytes() const { return written_ * message_bytes_; }

 private:
  std::size_t message_bytes_, slots_, next_ = 0, written_ = 0;
};

// Messages per timed batch: enough that posting overhead does not dominate small sizes, few enough
// that an iteration stays short; the walk carries on across batches.
std::size_t batch_messages(std::size_t slots) { return std::clamp<std::size_t>(slots, 64, 4096); }

}  // namespace

rdma::Endpoint& LinkCache::sender(rdma::PagePolicy pages) {
  if (pages_ != pages || !link_.first) {
    link_ = {};  // release the old link (and its memory) before building the next
    pages_.reset();
    rdma::LinkOptions options = run_.options;
    options.pages = pages;
    if (run_.peer_host)
      link_.first = rdma::connect(run_.transport, options, *run_.peer_host, run_.peer_port);
    else
      link_ = rdma::connect_loopback(run_.transport, options);
    pages_ = pages;
  }
  // A server sees plain writes only on tcp: tell it at every case that this link is alive.
  if (run_.peer_host) link_.first->post_write(0, 0, 0, rdma::kKeepaliveImm);
  return *link_.first;
}

std::pair<rdma::PageBuffer, rdma::PageBuffer>& LinkCache::ceiling_buffers(rdma::PagePolicy pages) {
  if (ceiling_pages_ != pages) {
    ceiling_ = {};
    ceiling_pages_.reset();
    ceiling_ = {rdma::PageBuffer::allocate(run_.options.buffer_bytes, pages),
                rdma::PageBuffer::allocate(run_.options.buffer_bytes, pages)};
    ceiling_pages_ = pages;
  }
  return ceiling_;
}

void LinkCache::finish() {
  link_ = {};
  if (!run_.peer_host) return;
  try {
    rdma::send_quit(run_.transport, run_.options, *run_.peer_host, run_.peer_port);
  } catch (const std::exception& e) {
    // The results are written; a server that is already gone needs no quit.
    fmt::print(stderr, "bench_rdma: could not tell the server to quit: {}\n", e.what());
  }
}

void run_rdma_case(benchmark::State& state, const RdmaCase& config) {
  rdma::Endpoint* sender = nullptr;
  std::optional<BufferWalk> walk;
  std::size_t batch = 0;
  try {
    sender = &config.links->sender(config.pages);
    const std::size_t buffer = std::min(sender->buffer().bytes().size(), sender->remote_buffer_bytes());
    if (config.message_bytes == 0 || config.message_bytes > buffer)
      fail("message size {} must be in [1, {}] (the buffer)", config.message_bytes, buffer);
    // Messages walk through the whole buffer, as a training step's tensors do.
    walk.emplace(buffer, config.message_bytes);
    batch = batch_messages(walk->slots());
    fill_pattern(sender->buffer().bytes().first(walk->slots() * config.message_bytes), config.seed,
                 config.runs->fetch_add(1));
  } catch (const std::exception& e) {
    skip_case(state, e.what());
    return;
  }

  double seconds = 0;
  for (auto _ : state) {
    try {
      const double elapsed = time_writes(
          *sender, batch, [&](std::size_t) { return std::pair(walk->next_offset(), config.message_bytes); });
      state.SetIterationTime(elapsed);
      seconds += elapsed;
    } catch (const std::exception& e) {
      skip_case(state, e.what());
      break;
    }
  }
  if (state.error_occurred()) return;

  try {
    std::vector<std::byte> remote(walk->written_bytes());
    sender->read_remote(0, remote);
    const auto local = sender->buffer().bytes();
    if (!std::equal(remote.begin(), remote.end(), local.begin()))
      fail("verification: the peer's buffer differs from what was written (first {} bytes)", remote.size());
  } catch (const std::exception& e) {
    skip_case(state, e.what());
    return;
  }

  const double messages = static_cast<double>(state.iterations()) * static_cast<double>(batch);
  const double bytes = messages * static_cast<double>(config.message_bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["msg_rate"] = benchmark::Counter(messages, benchmark::Counter::kIsRate);
  state.counters["huge_fraction"] = sender->buffer().backing().huge_fraction;
  state.counters["remote_huge_fraction"] = sender->remote_huge_fraction();
  state.counters["first_touch_us"] = sender->buffer().first_touch_us();
  if (auto us = sender->registration_us()) state.counters["mr_reg_us"] = *us;
  if (auto link = sender->link_bytes_per_second(); link && *link > 0 && seconds > 0)
    state.counters["link_fraction"] = bytes / seconds / *link;
}

void run_memcpy_case(benchmark::State& state, const RdmaCase& config) {
  std::pair<rdma::PageBuffer, rdma::PageBuffer>* buffers = nullptr;
  std::optional<BufferWalk> walk;
  std::size_t batch = 0;
  try {
    buffers = &config.links->ceiling_buffers(config.pages);
    const std::size_t buffer = buffers->first.bytes().size();
    if (config.message_bytes == 0 || config.message_bytes > buffer)
      fail("message size {} must be in [1, {}] (the buffer)", config.message_bytes, buffer);
    walk.emplace(buffer, config.message_bytes);
    batch = batch_messages(walk->slots());
    fill_pattern(buffers->first.bytes().first(walk->slots() * config.message_bytes), config.seed,
                 config.runs->fetch_add(1));
  } catch (const std::exception& e) {
    skip_case(state, e.what());
    return;
  }
  std::byte* from = buffers->first.bytes().data();
  std::byte* to = buffers->second.bytes().data();
  for (auto _ : state) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < batch; ++i) {
      const std::size_t offset = walk->next_offset();
      std::memcpy(to + offset, from + offset, config.message_bytes);
    }
    benchmark::ClobberMemory();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (std::memcmp(to, from, walk->written_bytes()) != 0)
    return skip_case(state, "verification: memcpy copy differs");
  const double messages = static_cast<double>(state.iterations()) * static_cast<double>(batch);
  state.SetBytesProcessed(static_cast<std::int64_t>(messages * static_cast<double>(config.message_bytes)));
  state.counters["msg_rate"] = benchmark::Counter(messages, benchmark::Counter::kIsRate);
  state.counters["huge_fraction"] = buffers->first.backing().huge_fraction;
  state.counters["first_touch_us"] = buffers->first.first_touch_us();
}

int serve_links(const RdmaRun& run, const LinkFlags& flags) {
  const auto idle = std::chrono::seconds(flags.idle_s);
  auto listener = rdma::listen(run.transport, run.options, flags.bind, flags.port);
  announce_listening("bench_rdma", run.transport, flags, listener->port());
  int served = 0;
  while (true) {
    std::unique_ptr<rdma::Endpoint> endpoint;
    try {
      endpoint = listener->accept(idle);
    } catch (const rdma::PeerError& e) {
      fmt::print(stderr, "bench_rdma: {}\n", e.what());  // that peer is done; the next one is served
      continue;
    }
    if (!endpoint) break;
    ++served;
    // Writes are one-sided: keep the link up until the peer goes away, says nothing for too long,
    // or sends what a bench_rdma peer never sends.
    try {
      while (true) {
        // Keepalives never arrive as messages (the endpoint absorbs them): anything else is wrong.
        if (auto arrival = endpoint->poll_arrival()) fail("unexpected message {:#x} from the peer", arrival->imm);
        if (std::chrono::steady_clock::now() - endpoint->last_heard() > idle)
          fail("the peer was silent for {} s (--idle-s)", flags.idle_s);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    } catch (const Error& e) {
      fmt::print(stderr, "bench_rdma: link {} ended: {}\n", served, e.what());
    }
  }
  return served;
}

}  // namespace wirezip::harness
