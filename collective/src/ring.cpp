#include "wirezip/collective/ring.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "wirezip/util/clock.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::collective {
namespace {

using Clock = std::chrono::steady_clock;

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
      : ring_(ring), channel_(ring.channel_), layout_(layout), kind_(kind), in_(in), out_(out),
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
    return kind_ == Kind::gather ? all_gather_recv_block(r_, step_of(index), n_)
                                 : reduce_scatter_recv_block(r_, step_of(index), n_);
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
    add_bf16(into, partial, own);
    stats_.reduce_s += seconds_since(start);
  }

  // Step 0: this rank's own block (all-gather: its shard; reduce-scatter: its part of block r-1).
  void send_own(std::size_t chunk) {
    const std::span<const std::byte> own =
        kind_ == Kind::gather ? std::span<const std::byte>(in_).subspan(layout_.chunk_offset(chunk), layout_.chunk_length(chunk))
                              : block(in_, reduce_scatter_send_block(r_, 0, n_), chunk);
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
    // The partial sum comes apart from `sum`: in place, the last step's `sum` is `own`.
    const std::span<std::byte> partial = std::span(ring_.scratch_).first(length);
    decompress(arrived, partial);
    add(sum, partial, own);
    if (!forward) return;
    const std::size_t size = compress(sum, channel_.send_slot(index + k_));
    send(index + k_, channel_.send_slot(index + k_).first(size), length);
  }

  Ring& ring_;
  RingChannel& channel_;
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

Ring::Ring(int rank, int ranks, RingChannel& channel, RingOptions options)
    : rank_(rank), ranks_(ranks), channel_(channel), options_(std::move(options)) {
  if (ranks_ < 1 || rank_ < 0 || rank_ >= ranks_) fail("ring: rank {} of {} ranks does not exist", rank_, ranks_);
  if (options_.depth == 0) fail("ring: depth must be positive");
  if (!options_.codec.empty()) codec_ = options_.codec.make();
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

}  // namespace wirezip::collective
