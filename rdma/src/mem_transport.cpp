// The memory transport: both endpoints in one process, a peer thread per direction copies each
// write into the receiving buffer (small ones the writer delivers itself when that keeps the
// order). What it measures is the ceiling of what this host can move.
#include <cstring>
#include <deque>
#include <thread>

#include "link_state.hpp"
#include "transports.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip::rdma::mem {
namespace {

struct Job {
  const std::byte* from;
  std::byte* to;
  std::size_t length;
  std::optional<Arrival> arrival;
};

// Writes up to this size are delivered by the posting thread itself when nothing is queued or being
// copied ahead of them. Copying a few bytes costs less than waking the copier, which on a shared
// core then runs in the poster's place. Credits and control messages are this small; the data
// sizes bench_rdma measures (4 KiB and up) all go through the copier.
constexpr std::size_t kInlineBytes = 1024;

// One direction: jobs posted by the writer, copied by this direction's peer thread (or, small and
// with nothing ahead of them, by the writer).
class Direction {
 public:
  Direction(LinkState& writer, LinkState& reader) : writer_(writer), reader_(reader) {
    copier_ = std::jthread([this](std::stop_token stop) { run(stop); });
    threads::name_thread(copier_, "wz-mem-copy");
  }
  void post(const Job& job) {
    std::unique_lock lock(mutex_);
    if (job.length <= kInlineBytes && jobs_.empty() && !copying_) {
      deliver(job);  // still under the lock: a write posted meanwhile queues behind this one
      return;
    }
    jobs_.push_back(job);
    lock.unlock();
    ready_.notify_one();
  }

 private:
  void deliver(const Job& job) {
    if (job.length) std::memcpy(job.to, job.from, job.length);
    writer_.complete_writes(1);
    if (job.arrival) reader_.push_arrival(*job.arrival);
  }
  void run(std::stop_token stop) {
    while (true) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        copying_ = false;  // the previous job is delivered
        if (!ready_.wait(lock, stop, [&] { return !jobs_.empty(); })) return;
        job = jobs_.front();
        jobs_.pop_front();
        copying_ = true;
      }
      deliver(job);
    }
  }

  LinkState& writer_;
  LinkState& reader_;
  std::mutex mutex_;
  std::condition_variable_any ready_;
  std::deque<Job> jobs_;
  bool copying_ = false;  // the copier holds a job it has not delivered yet
  std::jthread copier_;  // last: stopped and joined before the queue it reads goes away
};

// Both buffers, both states and both directions; each endpoint holds a share of it.
struct Link {
  Link(const LinkOptions& options)
      : buffers{PageBuffer::allocate(options.buffer_bytes, options.pages),
                PageBuffer::allocate(options.buffer_bytes, options.pages)},
        states{LinkState("mem link (first)", options.timeout), LinkState("mem link (second)", options.timeout)},
        directions{std::make_unique<Direction>(states[0], states[1]),
                   std::make_unique<Direction>(states[1], states[0])} {}
  std::array<PageBuffer, 2> buffers;
  std::array<LinkState, 2> states;
  std::array<std::unique_ptr<Direction>, 2> directions;  // last: threads stop first
};

class MemEndpoint final : public Endpoint {
 public:
  MemEndpoint(std::shared_ptr<Link> link, int side, std::size_t depth)
      : link_(std::move(link)), side_(side), depth_(depth) {}

  TransportKind kind() const override { return TransportKind::mem; }
  const PageBuffer& buffer() const override { return link_->buffers[side_]; }
  std::size_t remote_buffer_bytes() const override { return peer_buffer().bytes().size(); }
  double remote_huge_fraction() const override { return peer_buffer().backing().huge_fraction; }

  void post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                  std::optional<std::uint32_t> imm) override {
    check_range("local", local_offset, length, buffer().bytes().size());
    check_range("remote", remote_offset, length, remote_buffer_bytes());
    state().wait_in_flight_at_most(depth_ - 1);
    state().add_in_flight();
    link_->directions[side_]->post({buffer().bytes().data() + local_offset,
                                    peer_buffer().bytes().data() + remote_offset, length,
                                    imm ? std::optional(Arrival{*imm, remote_offset, length}) : std::nullopt});
  }
  std::size_t in_flight() const override { return state().in_flight(); }
  std::optional<double> busy_seconds() const override { return state().busy_seconds(); }
  void wait_in_flight_at_most(std::size_t count) override { state().wait_in_flight_at_most(count); }
  Arrival wait_arrival() override { return state().wait_arrival(); }
  std::optional<Arrival> poll_arrival() override { return state().poll_arrival(); }
  std::optional<Arrival> wait_arrival_for(std::chrono::microseconds wait) override {
    return state().wait_arrival_for(wait);
  }

  void read_remote(std::size_t remote_offset, std::span<std::byte> into) override {
    check_range("remote", remote_offset, into.size(), remote_buffer_bytes());
    state().wait_in_flight_at_most(0);  // reads see every write posted before them
    std::memcpy(into.data(), peer_buffer().bytes().data() + remote_offset, into.size());
  }

 private:
  static void check_range(const char* side, std::size_t offset, std::size_t length, std::size_t size) {
    rdma::check_range("mem link", side, offset, length, size);
  }
  LinkState& state() const { return link_->states[side_]; }
  const PageBuffer& peer_buffer() const { return link_->buffers[1 - side_]; }

  std::shared_ptr<Link> link_;
  int side_;
  std::size_t depth_;
};

}  // namespace

LinkPair connect_loopback(const LinkOptions& options) {
  if (options.depth == 0) fail("mem link: depth must be at least 1");
  auto link = std::make_shared<Link>(options);
  return {std::make_unique<MemEndpoint>(link, 0, options.depth), std::make_unique<MemEndpoint>(link, 1, options.depth)};
}

}  // namespace wirezip::rdma::mem
