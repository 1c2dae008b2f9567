#pragma once
// Ring all-gather, reduce-scatter and all-reduce of bf16 tensors, chunked, with or without a
// codec. The chunks travel over MPI point-to-point (MPI_Isend / MPI_Irecv) or over another
// collective::RingChannel (wirezip's tcp links); the engine is the same. Compression overlaps the ring: a
// rank compresses its own chunks one by one while earlier ones travel, and handles each arriving
// chunk as soon as it lands: all-gather decompresses it into place and forwards the compressed
// bytes untouched; reduce-scatter decompresses, adds its own contribution and recompresses.
// One thread per rank does all of it; every wait is bounded by the timeout.
#include <mpi.h>

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wirezip/codecs/codec.hpp"
#include "wirezip/collective/ring_channel.hpp"
#include "wirezip/collective/ring_math.hpp"

namespace wirezip::mpi {

struct RingOptions {
  std::string codec;             // a registry spec; empty: raw bf16 bytes
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
  // Without `channel`: over MPI, on a duplicate of `parent`, so a failed collective's stray
  // messages can meet nothing else. With one (not owned, outliving the ring): over it; `parent`
  // then only says which rank this is and how many there are.
  Ring(MPI_Comm parent, RingOptions options, collective::RingChannel* channel = nullptr);
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring();

  // shard: this rank's block (layout.shard_bytes); out: every block (layout.total_bytes()).
  RingStats all_gather(const collective::Layout& layout, std::span<const std::byte> shard, std::span<std::byte> out);
  // in: this rank's contribution to every block; out: the sum of block `rank` (layout.shard_bytes).
  RingStats reduce_scatter(const collective::Layout& layout, std::span<const std::byte> in, std::span<std::byte> out);
  // Reduce-scatter, then all-gather of the reduced blocks: out = the sum of every rank's `in`.
  RingStats all_reduce(const collective::Layout& layout, std::span<const std::byte> in, std::span<std::byte> out);

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

 private:
  class Pass;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, ranks_ = 1;
  RingOptions options_;
  std::unique_ptr<codecs::Codec> codec_;  // null: uncompressed
  bool broken_ = false;                   // a failed pass leaves requests behind: no more passes
  std::unique_ptr<collective::RingChannel> own_channel_;  // the MPI one, when none was given
  collective::RingChannel* channel_ = nullptr;
  std::vector<std::byte> scratch_;  // a reduce-scatter's partial sum on its way to be recompressed
};

}  // namespace wirezip::mpi
