#pragma once
// What the ring collectives compute, without MPI: the bf16 sum of one ring step, the order in which
// a ring adds the ranks' contributions, which block a rank handles at each step, how a shard is
// cut into chunks, and nccl-tests' bus-bandwidth factors.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace wirezip::collective {

enum class Op { all_gather, reduce_scatter, all_reduce };
Op parse_op(std::string_view text);  // "all_gather" | "reduce_scatter" | "all_reduce"
std::string_view op_name(Op op);

// nccl-tests (doc/PERFORMANCE.md): busbw = algbw x (n-1)/n for all-gather and reduce-scatter,
// x 2(n-1)/n for all-reduce, so each reads against the link's own rate whatever n is.
double busbw_factor(Op op, int ranks);

// One reduction: the exact sum of two bf16 values rounded to bf16, to nearest even. (fp32 holds
// 24 bits >= 2 x 8 + 2, so adding in fp32 first and rounding once more is still exact rounding.)
std::uint16_t add_bf16(std::uint16_t a, std::uint16_t b);
// Little-endian bf16 arrays, element by element: out = a + b (out may be a).
void add_bf16(std::span<std::byte> out, std::span<const std::byte> a, std::span<const std::byte> b);

// The ring: rank r sends to r+1 and receives from r-1 (mod n).
// All-gather, step s: sends block (r - s), receives block (r - s - 1).
// Reduce-scatter, step s: sends its partial of block (r - s - 1), receives block (r - s - 2) and adds
// its own contribution, so block b is summed as ((x[b+1] + x[b+2]) + ...) + x[b], and rank r ends
// with block r. These functions are that schedule; the engine and the reference both use it.
int all_gather_send_block(int rank, int step, int ranks);
int all_gather_recv_block(int rank, int step, int ranks);
int reduce_scatter_send_block(int rank, int step, int ranks);
int reduce_scatter_recv_block(int rank, int step, int ranks);
// The order in which the ring adds contributions to block b: b+1, b+2, ..., b (mod n).
std::vector<int> reduction_order(int block, int ranks);

// The straightforward reference: `by_rank[k]` is rank k's contribution to `block`; the sum is
// taken element by element in reduction_order(block), one bf16 rounding per addition.
void reference_sum(std::span<const std::span<const std::byte>> by_rank, int block, std::span<std::byte> out);

// A tensor of `total_bytes` over n ranks, nccl-tests style: each shard holds floor(total / 2 / n)
// bf16 elements, cut into chunks of `chunk_bytes` (the last one shorter).
struct Layout {
  int ranks = 1;
  std::size_t shard_bytes = 0;  // even, >= 2
  std::size_t chunk_bytes = 0;  // even, >= 2
  std::size_t chunks = 0;       // per shard

  static Layout make(std::size_t total_bytes, int ranks, std::size_t chunk_bytes);  // throws on a tensor too small
  std::size_t total_bytes() const { return shard_bytes * static_cast<std::size_t>(ranks); }
  std::size_t chunk_offset(std::size_t chunk) const { return chunk * chunk_bytes; }
  std::size_t chunk_length(std::size_t chunk) const;
};

// "1MiB:256MiB:x2" (from, to, factor, nccl-tests' -b -e -f) or "4KiB,1MiB,..." -> sizes in bytes.
std::vector<std::uint64_t> parse_size_sweep(std::string_view text);

}  // namespace wirezip::collective
