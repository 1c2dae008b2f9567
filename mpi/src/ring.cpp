#include "wirezip/mpi/ring.hpp"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "wirezip/codecs/registry.hpp"
#include "wirezip/mpi/session.hpp"
#include "wirezip/util/checked.hpp"
#include "wirezip/util/clock.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::mpi {
namespace {

using Clock = std::chrono::steady_clock;
using collective::Layout;

// Consecutive passes use disjoint tags; within a pass, MPI's non-overtaking order keeps two chunks
// with the same tag apart.
constexpr int kTagsPerPass = 16000;

int as_int(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) fail("a chunk of {} bytes exceeds MPI's int count", bytes);
  return static_cast<int>(bytes);
}

// The chunks over MPI point-to-point. Keeps a place per received and per sent chunk between
// passes, so that handling a chunk never waits for a send to finish (which could close a cycle
// around the ring). Owns the requests it posts: abandon() cancels what a failed pass left.
class MpiChannel final : public collective::RingChannel {
 public:
  MpiChannel(MPI_Comm comm, int rank, int ranks, std::chrono::milliseconds timeout)
      : comm_(comm), rank_(rank), left_((rank + ranks - 1) % ranks), right_((rank + 1) % ranks), timeout_(timeout) {}
  ~MpiChannel() override { abandon(); }

  std::string_view name() const override { return "mpi"; }

  void begin_pass(const collective::PassShape& shape) override {
    shape_ = shape;
    ++pass_;
    const std::size_t bytes = checked_mul(shape.total, shape.capacity, "ring staging");
    // Grown, never shrunk: an all-reduce's two passes reuse the places.
    if (shape.receive_slots && received_.size() < bytes) received_.resize(bytes);
    if (shape.send_slots && outgoing_.size() < bytes) outgoing_.resize(bytes);
    receives_.assign(shape.total, MPI_REQUEST_NULL);
    sends_.assign(shape.total, MPI_REQUEST_NULL);
    into_.assign(shape.total, {});
  }
  std::span<std::byte> receive_slot(std::size_t index) override { return slot(received_, index); }
  std::span<std::byte> send_slot(std::size_t index) override { return slot(outgoing_, index); }

  void post_receive(std::size_t index, std::span<std::byte> into) override {
    into_.at(index) = into;
    check(MPI_Irecv(into.data(), as_int(into.size()), MPI_BYTE, left_, tag(index), comm_, &receives_[index]),
          "ring: MPI_Irecv");
  }

  std::optional<std::span<std::byte>> test_receive(std::size_t index) override {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Test(&receives_.at(index), &arrived, &status), "ring: MPI_Test(receive)");
    if (!arrived) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    return into_[index].first(static_cast<std::size_t>(count));
  }

  void send(std::size_t index, std::span<const std::byte> bytes) override {
    check(MPI_Isend(bytes.data(), as_int(bytes.size()), MPI_BYTE, right_, tag(index), comm_, &sends_.at(index)),
          "ring: MPI_Isend");
  }

  void end_pass() override {
    const auto deadline = Clock::now() + timeout_;
    while (true) {
      int done = 0;
      check(MPI_Testall(static_cast<int>(sends_.size()), sends_.data(), &done, MPI_STATUSES_IGNORE),
            "ring: MPI_Testall(sends)");
      if (done) return;
      if (Clock::now() > deadline)
        fail("ring: rank {} waited {} ms for rank {} to take its chunks (a rank died or stalls)", rank_,
             timeout_.count(), right_);
      sched_yield();
    }
  }

  // Only after a failure is anything left: receives are cancelled, sends let go.
  void abandon() override {
    for (MPI_Request& request : receives_)
      if (request != MPI_REQUEST_NULL) {
        MPI_Cancel(&request);
        MPI_Request_free(&request);
      }
    for (MPI_Request& request : sends_)
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  }

 private:
  std::span<std::byte> slot(std::vector<std::byte>& storage, std::size_t index) {
    return std::span(storage).subspan(index * shape_.capacity, shape_.capacity);
  }
  int tag(std::size_t index) const { return static_cast<int>(pass_ % 2) * kTagsPerPass + static_cast<int>(index % kTagsPerPass); }

  MPI_Comm comm_;
  int rank_, left_, right_;
  std::chrono::milliseconds timeout_;
  collective::PassShape shape_;
  std::uint64_t pass_ = 0;
  std::vector<std::byte> received_, outgoing_;
  std::vector<MPI_Request> receives_, sends_;
  std::vector<std::span<std::byte>> into_;
};

}  // namespace

RingStats& RingStats::operator+=(const RingStats& other) {
  compress_s += other.compress_s;
  decompress_s += other.decompress_s;
  reduce_s += other.reduce_s;
  original_sent += other.original_sent;
  wire_sent += other.wire_sent;
  return *this;
}

// One trip around the ring: K own chunks leave first, then each of the (n-1) x K arriving chunks
// is handled in order and, but for the last step's, sent on. A pass that throws makes the channel
// let go of what it left behind.
class Ring::Pass {
 public:
  enum class Kind { gather, reduce };

  Pass(Ring& ring, const Layout& layout, Kind kind, std::span<const std::byte> in, std::span<std::byte> out)
      : ring_(ring), channel_(*ring.channel_), layout_(layout), kind_(kind), in_(in), out_(out),
        n_(ring.ranks_), r_(ring.rank_), k_(layout.chunks),
        total_(static_cast<std::size_t>(n_ - 1) * k_),
        left_((r_ + n_ - 1) % n_),
        capacity_(ring.codec_ ? ring.codec_->max_compressed_size(layout.chunk_bytes) : layout.chunk_bytes) {
    ring.scratch_.resize(layout.chunk_bytes);
    // Raw all-gather receives in place and sends from the result: no slots of the channel's.
    channel_.begin_pass({.total = total_, .capacity = capacity_, .receive_slots = ring.codec_ || kind == Kind::reduce,
                         .send_slots = ring.codec_ != nullptr});
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;
  ~Pass() {
    if (!finished_) channel_.abandon();
  }

  RingStats run() {
    if (kind_ == Kind::gather) {
      // This rank's block of the result is its own shard.
      std::byte* mine = block(out_, r_, 0).data();
      if (mine != in_.data()) std::memcpy(mine, in_.data(), layout_.shard_bytes);
    }
    std::size_t own = 0, posted = 0, handled = 0;
    auto last_progress = Clock::now();
    while (handled < total_ || own < k_) {
      for (; posted < total_ && posted < handled + ring_.options_.depth; ++posted) post_receive(posted);
      bool progress = false;
      if (own < k_) {
        send_own(own++);
        progress = true;
      }
      if (handled < total_) {
        if (const auto arrived = channel_.test_receive(handled)) {
          handle(handled++, *arrived);
          progress = true;
        }
      }
      if (progress) {
        last_progress = Clock::now();
      } else if (Clock::now() - last_progress > ring_.options_.timeout) {
        fail("ring {} over {}: rank {} waited {} ms for chunk {} of {} from rank {} (a rank died or stalls)",
             kind_ == Kind::gather ? "all-gather" : "reduce-scatter", channel_.name(), r_,
             ring_.options_.timeout.count(), handled, total_, left_);
      } else {
        sched_yield();  // ranks may share cores
      }
    }
    channel_.end_pass();
    finished_ = true;
    return stats_;
  }

 private:
  std::span<std::byte> block(std::span<std::byte> tensor, int b, std::size_t chunk) const {
    const std::size_t offset = static_cast<std::size_t>(b) * layout_.shard_bytes + layout_.chunk_offset(chunk);
    return tensor.subspan(offset, layout_.chunk_length(chunk));
  }
  std::span<const std::byte> block(std::span<const std::byte> tensor, int b, std::size_t chunk) const {
    const std::size_t offset = static_cast<std::size_t>(b) * layout_.shard_bytes + layout_.chunk_offset(chunk);
    return tensor.subspan(offset, layout_.chunk_length(chunk));
  }
  int step_of(std::size_t index) const { return static_cast<int>(index / k_); }
  int received_block(std::size_t index) const {
    return kind_ == Kind::gather ? collective::all_gather_recv_block(r_, step_of(index), n_)
                                 : collective::reduce_scatter_recv_block(r_, step_of(index), n_);
  }

  void post_receive(std::size_t index) {
    const std::span<std::byte> into =
        kind_ == Kind::gather && !ring_.codec_
            ? block(out_, received_block(index), index % k_)
            : channel_.receive_slot(index).first(ring_.codec_ ? capacity_ : layout_.chunk_length(index % k_));
    channel_.post_receive(index, into);
  }

  // Send number `index` (own chunks first, then forwards), `original` bytes of tensor in `bytes`.
  void send(std::size_t index, std::span<const std::byte> bytes, std::size_t original) {
    channel_.send(index, bytes);
    stats_.original_sent += original;
    stats_.wire_sent += bytes.size();
  }

  std::size_t compress(std::span<const std::byte> chunk, std::span<std::byte> into) {
    const auto start = Clock::now();
    const std::size_t size = ring_.codec_->compress(chunk, into);
    stats_.compress_s += seconds_since(start);
    return size;
  }

  void decompress(std::span<const std::byte> frame, std::span<std::byte> into) {
    const auto start = Clock::now();
    const std::size_t size = ring_.codec_->decompress(frame, into);
    stats_.decompress_s += seconds_since(start);
    if (size != into.size()) fail("ring: a chunk decompressed to {} bytes, expected {}", size, into.size());
  }

  void add(std::span<std::byte> into, std::span<const std::byte> partial, std::span<const std::byte> own) {
    const auto start = Clock::now();
    collective::add_bf16(into, partial, own);
    stats_.reduce_s += seconds_since(start);
  }

  // Step 0: this rank's own block (all-gather: its shard; reduce-scatter: its part of block r-1).
  void send_own(std::size_t chunk) {
    const std::span<const std::byte> own =
        kind_ == Kind::gather ? std::span<const std::byte>(in_).subspan(layout_.chunk_offset(chunk), layout_.chunk_length(chunk))
                              : block(in_, collective::reduce_scatter_send_block(r_, 0, n_), chunk);
    if (!ring_.codec_) {
      // Raw all-gather sends from the result, where the shard already is.
      send(chunk, kind_ == Kind::gather ? block(out_, r_, chunk) : own, own.size());
      return;
    }
    const std::size_t size = compress(own, channel_.send_slot(chunk));
    send(chunk, channel_.send_slot(chunk).first(size), own.size());
  }

  void handle(std::size_t index, std::span<std::byte> arrived) {
    const std::size_t chunk = index % k_;
    const int b = received_block(index);
    const bool forward = step_of(index) < n_ - 2;
    const std::size_t length = layout_.chunk_length(chunk);
    if (!ring_.codec_ && arrived.size() != length)
      fail("ring: chunk {} from rank {} has {} bytes, expected {}", index, left_, arrived.size(), length);

    if (kind_ == Kind::gather) {
      if (!ring_.codec_) {
        if (forward) send(index + k_, block(out_, b, chunk), length);
        return;
      }
      decompress(arrived, block(out_, b, chunk));
      if (forward) send(index + k_, arrived, length);  // the compressed bytes, as they came
      return;
    }
    const std::span<const std::byte> own = block(in_, b, chunk);
    const std::span<std::byte> sum = forward ? std::span(ring_.scratch_).first(length)
                                             : out_.subspan(layout_.chunk_offset(chunk), length);
    if (!ring_.codec_) {
      if (!forward) return add(sum, arrived, own);
      add(arrived, arrived, own);
      return send(index + k_, arrived, length);
    }
    decompress(arrived, sum);
    add(sum, sum, own);
    if (!forward) return;
    const std::size_t size = compress(sum, channel_.send_slot(index + k_));
    send(index + k_, channel_.send_slot(index + k_).first(size), length);
  }

  Ring& ring_;
  collective::RingChannel& channel_;
  const Layout& layout_;
  Kind kind_;
  std::span<const std::byte> in_;
  std::span<std::byte> out_;
  int n_, r_;
  std::size_t k_, total_;
  int left_;
  std::size_t capacity_;
  bool finished_ = false;
  RingStats stats_;
};

Ring::Ring(MPI_Comm parent, RingOptions options, collective::RingChannel* channel)
    : options_(std::move(options)), channel_(channel) {
  if (options_.depth == 0) fail("ring: depth must be positive");
  if (!options_.codec.empty()) codec_ = codecs::make_codec(options_.codec);
  if (!channel_) {
    check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  MPI_Comm_rank(channel_ ? parent : comm_, &rank_);
  MPI_Comm_size(channel_ ? parent : comm_, &ranks_);
  if (!channel_) channel_ = (own_channel_ = std::make_unique<MpiChannel>(comm_, rank_, ranks_, options_.timeout)).get();
}

Ring::~Ring() {
  own_channel_.reset();  // its requests go before their communicator
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

RingStats Ring::all_gather(const Layout& layout, std::span<const std::byte> shard, std::span<std::byte> out) {
  if (broken_) fail("ring: unusable after a failed collective");
  if (layout.ranks != ranks_ || shard.size() != layout.shard_bytes || out.size() != layout.total_bytes())
    fail("ring all-gather: buffers of {} and {} bytes do not fit the layout", shard.size(), out.size());
  if (ranks_ == 1) {
    std::memmove(out.data(), shard.data(), shard.size());
    return {};
  }
  broken_ = true;  // until the pass returns
  Pass pass(*this, layout, Pass::Kind::gather, shard, out);
  RingStats stats = pass.run();
  broken_ = false;
  return stats;
}

RingStats Ring::reduce_scatter(const Layout& layout, std::span<const std::byte> in, std::span<std::byte> out) {
  if (broken_) fail("ring: unusable after a failed collective");
  if (layout.ranks != ranks_ || in.size() != layout.total_bytes() || out.size() != layout.shard_bytes)
    fail("ring reduce-scatter: buffers of {} and {} bytes do not fit the layout", in.size(), out.size());
  if (ranks_ == 1) {
    std::memmove(out.data(), in.data(), out.size());
    return {};
  }
  broken_ = true;
  Pass pass(*this, layout, Pass::Kind::reduce, in, out);
  RingStats stats = pass.run();
  broken_ = false;
  return stats;
}

RingStats Ring::all_reduce(const Layout& layout, std::span<const std::byte> in, std::span<std::byte> out) {
  if (in.size() != layout.total_bytes() || out.size() != layout.total_bytes())
    fail("ring all-reduce: buffers of {} and {} bytes do not fit the layout", in.size(), out.size());
  // The reduced block lands where the all-gather wants this rank's shard: no copy in between.
  const std::span<std::byte> mine = out.subspan(static_cast<std::size_t>(rank_) * layout.shard_bytes, layout.shard_bytes);
  RingStats stats = reduce_scatter(layout, in, mine);
  stats += all_gather(layout, mine, out);
  return stats;
}

}  // namespace wirezip::mpi
