#pragma once
// Ring all-gather, reduce-scatter and all-reduce of bf16 tensors, chunked, with or without a
// codec. The engine decides what each rank sends and where each arriving chunk belongs; a
// RingChannel (MPI point-to-point in mpi/, wirezip's own links here) moves the bytes.
// Compression overlaps the ring: a rank compresses its own chunks one by one while earlier ones
// travel, and handles each arriving chunk as soon as it lands: all-gather decompresses it into
// place and forwards the compressed bytes untouched; reduce-scatter decompresses, adds its own
// contribution and recompresses. One thread per rank does all of it; every wait is bounded by the
// timeout.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wirezip/codecs/codec.hpp"
#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/collective/ring_channel.hpp"
#include "wirezip/collective/ring_math.hpp"

namespace wirezip::collective {

struct RingOptions {
  codecs::CodecSpec codec;       // empty: raw bf16 bytes
  std::size_t depth = 8;         // receives posted ahead of the chunk being handled
  std::chrono::milliseconds timeout{10000};
};

// Where one rank's time and bytes went during one collective.
struct RingStats {
  double compress_s = 0, decompress_s = 0, reduce_s = 0;
  std::uint64_t original_sent = 0;  // bytes of tensor this rank sent on
  std::uint64_t wire_sent = 0;      // bytes it put on the wire for them (frames when compressed)
  RingStats& operator+=(const RingStats& other);
};

class Ring {
 public:
  // This is rank `rank` of `ranks`; `channel` carries its chunks to rank + 1 and brings those of
  // rank - 1 (mod ranks). The channel is not owned and must outlive the ring.
  Ring(int rank, int ranks, RingChannel& channel, RingOptions options);
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // shard: this rank's block (layout.shard_bytes); out: every block (layout.total_bytes()).
  RingStats all_gather(const Layout& layout, std::span<const std::byte> shard, std::span<std::byte> out);
  // in: this rank's contribution to every block; out: the sum of block `rank` (layout.shard_bytes).
  RingStats reduce_scatter(const Layout& layout, std::span<const std::byte> in, std::span<std::byte> out);
  // Reduce-scatter, then all-gather of the reduced blocks: out = the sum of every rank's `in`.
  RingStats all_reduce(const Layout& layout, std::span<const std::byte> in, std::span<std::byte> out);

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

 private:
  class Pass;
  int rank_, ranks_;
  RingChannel& channel_;
  RingOptions options_;
  std::unique_ptr<codecs::Codec> codec_;  // null: uncompressed
  bool broken_ = false;                   // a failed pass leaves the channel unusable: no more passes
  std::vector<std::byte> scratch_;        // a reduce-scatter's partial sum on its way to be recompressed
};

}  // namespace wirezip::collective
