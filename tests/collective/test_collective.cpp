// The collectives' arithmetic without MPI: the bf16 sum and the ring's order, the schedule, the
// layout, nccl-tests' factors, the model and pairing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "wirezip/collective/model.hpp"
#include "wirezip/collective/pairing.hpp"
#include "wirezip/collective/ring_math.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/util/error.hpp"

namespace {

using namespace wirezip;
using namespace wirezip::collective;

std::vector<std::byte> bf16_bytes(std::initializer_list<float> values) {
  std::vector<std::byte> bytes;
  for (float v : values) {
    const std::uint16_t bits = datasets::fp32_to_bf16(v);
    bytes.resize(bytes.size() + 2);
    std::memcpy(bytes.data() + bytes.size() - 2, &bits, 2);
  }
  return bytes;
}

float first_value(const std::vector<std::byte>& bytes) {
  std::uint16_t bits;
  std::memcpy(&bits, bytes.data(), 2);
  return datasets::bf16_to_fp32(bits);
}

TEST(Bf16Sum, RoundsTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even neighbour, 1, wins.
  EXPECT_EQ(add_bf16(datasets::fp32_to_bf16(1.0f), datasets::fp32_to_bf16(0x1p-8f)), datasets::fp32_to_bf16(1.0f));
  // (1 + 2^-7) + 2^-8 is halfway to 1 + 2^-6: the even one is 1 + 2^-6.
  EXPECT_EQ(add_bf16(datasets::fp32_to_bf16(1.0f + 0x1p-7f), datasets::fp32_to_bf16(0x1p-8f)),
            datasets::fp32_to_bf16(1.0f + 0x1p-6f));
  EXPECT_EQ(add_bf16(datasets::fp32_to_bf16(3.0f), datasets::fp32_to_bf16(-3.0f)), datasets::fp32_to_bf16(0.0f));
}

TEST(Bf16Sum, TheRingOrderDecidesTheResult) {
  // Block 0 of 3 ranks is summed as (x1 + x2) + x0. With x1 = x2 = 2^-8 and x0 = 1 that is
  // 2^-7 + 1 = 1.0078125 exactly; the other order, (x0 + x1) + x2, rounds twice to 1.
  EXPECT_EQ(reduction_order(0, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(reduction_order(2, 4), (std::vector<int>{3, 0, 1, 2}));
  const auto x0 = bf16_bytes({1.0f}), x1 = bf16_bytes({0x1p-8f}), x2 = bf16_bytes({0x1p-8f});
  const std::vector<std::span<const std::byte>> by_rank{x0, x1, x2};
  std::vector<std::byte> sum(2);
  reference_sum(by_rank, 0, sum);
  EXPECT_EQ(first_value(sum), 1.0078125f);
  // Block 1 is (x2 + x0) + x1: 1 + 2^-8 rounds to 1, then 1 + 2^-8 rounds to 1 again.
  reference_sum(by_rank, 1, sum);
  EXPECT_EQ(first_value(sum), 1.0f);
}

TEST(RingSchedule, EachRankEndsWithItsOwnBlockAndSendsWhatItReceived) {
  for (int n : {2, 3, 4, 7})
    for (int r = 0; r < n; ++r) {
      // Reduce-scatter's last receive is the rank's own block; all-gather receives every other block once.
      EXPECT_EQ(reduce_scatter_recv_block(r, n - 2, n), r);
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      seen[static_cast<std::size_t>(r)] = 1;
      for (int s = 0; s < n - 1; ++s) {
        ++seen[static_cast<std::size_t>(all_gather_recv_block(r, s, n))];
        // What the left neighbour sends at step s is what this rank receives at step s.
        EXPECT_EQ(all_gather_send_block((r + n - 1) % n, s, n), all_gather_recv_block(r, s, n));
        EXPECT_EQ(reduce_scatter_send_block((r + n - 1) % n, s, n), reduce_scatter_recv_block(r, s, n));
        // And what this rank forwards at step s + 1 is what it received at step s.
        if (s + 1 < n - 1) {
          EXPECT_EQ(all_gather_send_block(r, s + 1, n), all_gather_recv_block(r, s, n));
          EXPECT_EQ(reduce_scatter_send_block(r, s + 1, n), reduce_scatter_recv_block(r, s, n));
        }
      }
      EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(n), 1));
    }
}

TEST(BusBandwidth, FactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_gather, 3), 2.0 / 3.0);
}

TEST(Layout, WholeElementsPerShardAndAShorterLastChunk) {
  const Layout layout = Layout::make(1000002, 3, 65536);
  EXPECT_EQ(layout.shard_bytes, 333334u);
  EXPECT_EQ(layout.total_bytes(), 1000002u);
  EXPECT_EQ(layout.chunks, 6u);
  EXPECT_EQ(layout.chunk_length(5), 333334u - 5 * 65536u);
  EXPECT_EQ(Layout::make(1 << 20, 3, 1 << 20).shard_bytes, 349524u);  // floor to whole bf16 elements
  EXPECT_THROW(Layout::make(4, 3, 1024), Error);
  EXPECT_THROW(Layout::make(1024, 2, 3), Error);
}

TEST(Sizes, SweepLikeNcclTests) {
  EXPECT_EQ(parse_size_sweep("1MiB:8MiB:x2"), (std::vector<std::uint64_t>{1 << 20, 2 << 20, 4 << 20, 8 << 20}));
  EXPECT_EQ(parse_size_sweep("1000,4KiB"), (std::vector<std::uint64_t>{1000, 4096}));
  EXPECT_THROW(parse_size_sweep("8MiB:1MiB:x2"), Error);
  EXPECT_THROW(parse_size_sweep("1MiB:8MiB:2"), Error);
}

TEST(Model, LinkBoundOrCpuBound) {
  StageRates raw;
  raw.link = 1e9;
  // Raw all-gather over 4 ranks: 3 steps of one shard at the link rate.
  EXPECT_DOUBLE_EQ(model_seconds(Op::all_gather, 4, 1e6, raw), 3e-3);
  StageRates compressed = raw;
  compressed.ratio = 2;
  compressed.compress = compressed.decompress = 4e9;
  compressed.reduce = 8e9;
  // A slow link with a fast codec: each step at R x L.
  EXPECT_DOUBLE_EQ(model_seconds(Op::all_gather, 4, 1e6, compressed), 3 * 1e6 / 2e9);
  // Reduce-scatter recompresses: step 0 costs 1/C + 1/D + 1/A + 1/C = 0.625 ns/B > 0.5 ns/B.
  const double step0 = 1e6 * (1 / 4e9 + 1 / 4e9 + 1 / 8e9 + 1 / 4e9);
  EXPECT_DOUBLE_EQ(model_seconds(Op::reduce_scatter, 3, 1e6, compressed), step0 + 1e6 / 2e9);
}

TEST(Pairing, NeighborAndCrossNode) {
  const std::vector<std::string> one_host(4, "a");
  const auto neighbor = make_pairs(one_host, Pairing::neighbor);
  ASSERT_EQ(neighbor.size(), 2u);
  EXPECT_EQ(neighbor[1].serve, 2);
  EXPECT_EQ(neighbor[1].peer, 3);
  // Ranks 0, 1 on host a and 2, 3 on host b: neighbours would share a host, cross-node must not.
  const std::vector<std::string> two_hosts{"a", "a", "b", "b"};
  for (const RankPair& p : make_pairs(two_hosts, Pairing::cross_node)) EXPECT_NE(two_hosts[p.serve], two_hosts[p.peer]);
  EXPECT_THROW(make_pairs(one_host, Pairing::cross_node), Error);
  EXPECT_THROW(make_pairs(std::vector<std::string>(3, "a"), Pairing::neighbor), Error);
  EXPECT_THROW(parse_pairing("random"), Error);
}

}  // namespace
