#include "wirezip/collective/ring_math.hpp"

#include <algorithm>
#include <cstring>

#include "wirezip/datasets/bf16.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::collective {
namespace {

int wrap(int value, int ranks) { return ((value % ranks) + ranks) % ranks; }

}  // namespace

constexpr EnumNames<Op, 3> kOpNames{
    "collective",
    {{{Op::all_gather, "all_gather"}, {Op::reduce_scatter, "reduce_scatter"}, {Op::all_reduce, "all_reduce"}}}};

Op parse_op(std::string_view text) { return kOpNames.parse(text); }

std::string_view op_name(Op op) { return kOpNames.name(op); }

double busbw_factor(Op op, int ranks) {
  const double n = ranks;
  return op == Op::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
}

std::uint16_t add_bf16(std::uint16_t a, std::uint16_t b) {
  return datasets::fp32_to_bf16(datasets::bf16_to_fp32(a) + datasets::bf16_to_fp32(b));
}

void add_bf16(std::span<std::byte> out, std::span<const std::byte> a, std::span<const std::byte> b) {
  if (a.size() != b.size() || out.size() != a.size() || a.size() % 2)
    fail("add_bf16: operands of {}, {} and {} bytes", out.size(), a.size(), b.size());
  // memcpy per element: any alignment, and the compiler turns it into plain loads.
  for (std::size_t i = 0; i < a.size(); i += 2) {
    std::uint16_t x, y;
    std::memcpy(&x, a.data() + i, 2);
    std::memcpy(&y, b.data() + i, 2);
    const std::uint16_t sum = add_bf16(x, y);
    std::memcpy(out.data() + i, &sum, 2);
  }
}

int all_gather_send_block(int rank, int step, int ranks) { return wrap(rank - step, ranks); }
int all_gather_recv_block(int rank, int step, int ranks) { return wrap(rank - step - 1, ranks); }
int reduce_scatter_send_block(int rank, int step, int ranks) { return wrap(rank - step - 1, ranks); }
int reduce_scatter_recv_block(int rank, int step, int ranks) { return wrap(rank - step - 2, ranks); }

std::vector<int> reduction_order(int block, int ranks) {
  std::vector<int> order;
  for (int k = 1; k <= ranks; ++k) order.push_back(wrap(block + k, ranks));
  return order;
}

void reference_sum(std::span<const std::span<const std::byte>> by_rank, int block, std::span<std::byte> out) {
  const int ranks = static_cast<int>(by_rank.size());
  for (const auto& part : by_rank)
    if (part.size() != out.size()) fail("reference_sum: a contribution of {} bytes for {}", part.size(), out.size());
  const std::vector<int> order = reduction_order(block, ranks);
  std::memcpy(out.data(), by_rank[order.front()].data(), out.size());
  for (std::size_t k = 1; k < order.size(); ++k) add_bf16(out, out, by_rank[order[k]]);
}

Layout Layout::make(std::size_t total_bytes, int ranks, std::size_t chunk_bytes) {
  if (ranks < 1) fail("a ring needs at least one rank");
  if (chunk_bytes < 2 || chunk_bytes % 2) fail("chunk size {} must be an even number of bytes >= 2", chunk_bytes);
  Layout layout;
  layout.ranks = ranks;
  layout.shard_bytes = total_bytes / 2 / static_cast<std::size_t>(ranks) * 2;
  if (layout.shard_bytes == 0) fail("size {} is too small for {} ranks (one bf16 element each at least)", total_bytes, ranks);
  layout.chunk_bytes = std::min(chunk_bytes, layout.shard_bytes);
  layout.chunks = (layout.shard_bytes + layout.chunk_bytes - 1) / layout.chunk_bytes;
  return layout;
}

std::size_t Layout::chunk_length(std::size_t chunk) const {
  return std::min(chunk_bytes, shard_bytes - chunk_offset(chunk));
}

std::vector<std::uint64_t> parse_size_sweep(std::string_view text) {
  const std::vector<std::string> parts = split(text, ':');
  if (parts.size() == 1) return parse_size_list(text);
  if (parts.size() != 3 || parts[2].size() < 2 || parts[2][0] != 'x')
    fail("size sweep '{}': expected FROM:TO:xFACTOR (e.g. 1MiB:256MiB:x2) or a list", text);
  const std::uint64_t from = parse_size(parts[0]), to = parse_size(parts[1]);
  const std::uint64_t factor = parse_size(parts[2].substr(1));
  if (from == 0 || to < from || factor < 2) fail("size sweep '{}': needs 0 < FROM <= TO and FACTOR >= 2", text);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = from; size <= to; size *= factor) {
    sizes.push_back(size);
    if (size > to / factor) break;
  }
  return sizes;
}

}  // namespace wirezip::collective
