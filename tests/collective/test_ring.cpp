// The ring engine (collective/ring.hpp) without MPI: 2, 3 and 4 ranks on threads, each with its
// LinkChannel over mem or tcp links, run all-gather, reduce-scatter and all-reduce one after
// another on the same links, raw and through codecs; every result must equal the straightforward
// reference (the shards side by side; reference_sum in the ring's order) bit for bit. A channel
// that never delivers, or delivers a chunk of the wrong size, fails the pass with one message.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <tuple>

#include "error_of.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/collective/ring.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::collective {
namespace {

using namespace std::chrono_literals;
using testing::error_of;

// Every wait in these tests is bounded by this: a stalled rank fails its pass, it never hangs.
constexpr std::chrono::milliseconds kTimeout = 5000ms;

// Rank r's contribution: gradient-like bf16 values of mixed magnitude, so that the order of the
// additions changes some sums (the reference must follow the ring's order to match bit for bit).
std::vector<std::byte> contribution(int rank, std::size_t bytes) {
  std::mt19937 random(static_cast<std::uint32_t>(rank + 1));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 4);
  std::vector<std::byte> out(bytes);
  for (std::size_t i = 0; i + 1 < bytes; i += 2) {
    const std::uint16_t bits = datasets::fp32_to_bf16(std::ldexp(normal(random), exponent(random)));
    std::memcpy(out.data() + i, &bits, 2);
  }
  return out;
}

std::span<const std::byte> block_of(const std::vector<std::byte>& tensor, const Layout& layout, int block) {
  return std::span(tensor).subspan(static_cast<std::size_t>(block) * layout.shard_bytes, layout.shard_bytes);
}

// The sum of block `block` over every rank's input, added in the ring's order.
std::vector<std::byte> reference_block(const std::vector<std::vector<std::byte>>& inputs, const Layout& layout, int block) {
  std::vector<std::span<const std::byte>> by_rank;
  for (const auto& input : inputs) by_rank.push_back(block_of(input, layout, block));
  std::vector<std::byte> sum(layout.shard_bytes);
  reference_sum(by_rank, block, sum);
  return sum;
}

// A ring of n LinkChannels: link r carries rank r's writes to rank r + 1.
std::vector<std::unique_ptr<LinkChannel>> ring_of_links(rdma::TransportKind kind, int n) {
  rdma::LinkOptions options;
  options.buffer_bytes = 256 << 10;
  options.depth = 4;
  options.timeout = kTimeout;
  std::vector<rdma::LinkPair> links;
  for (int r = 0; r < n; ++r) links.push_back(rdma::connect_loopback(kind, options));
  std::vector<std::unique_ptr<LinkChannel>> channels;
  for (int r = 0; r < n; ++r) {
    const int left = (r + n - 1) % n, right = (r + 1) % n;
    channels.push_back(std::make_unique<LinkChannel>(std::move(links[static_cast<std::size_t>(r)].first),
                                                     std::move(links[static_cast<std::size_t>(left)].second),
                                                     LinkChannel::Peers{r, left, right}, kTimeout));
  }
  return channels;
}

RingOptions options(const std::string& codec, std::size_t depth, std::chrono::milliseconds timeout) {
  return {.codec = codec.empty() ? codecs::CodecSpec() : codecs::parse_codec_spec(codec), .depth = depth,
          .timeout = timeout};
}

// What one rank ends with after the three collectives.
struct RankResult {
  std::vector<std::byte> gathered, scattered, reduced;
  std::vector<std::byte> gathered_in_place, scattered_in_place, reduced_in_place;
  RingStats gather_stats, scatter_stats, reduce_stats;
  std::string error;
};

using RingCase = std::tuple<rdma::TransportKind, int, std::string>;

class RingEngine : public ::testing::TestWithParam<RingCase> {};

TEST_P(RingEngine, EveryCollectiveEqualsTheReferenceBitForBit) {
  const auto& [kind, n, codec] = GetParam();
  // Shards of 10000 bytes in chunks of 4096: two whole chunks and a short one.
  const Layout layout = Layout::make(10000 * static_cast<std::size_t>(n), n, 4096);
  ASSERT_EQ(layout.chunks, 3u);
  std::vector<std::vector<std::byte>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(contribution(r, layout.total_bytes()));

  auto channels = ring_of_links(kind, n);
  std::vector<RankResult> results(static_cast<std::size_t>(n));
  {
    std::vector<std::jthread> ranks;
    for (int r = 0; r < n; ++r)
      ranks.emplace_back([&, r] {
        RankResult& mine = results[static_cast<std::size_t>(r)];
        const std::vector<std::byte>& input = inputs[static_cast<std::size_t>(r)];
        try {
          // Depth 2 of 3 x (n - 1) chunks: receives are posted as earlier ones are handled.
          Ring ring(r, n, *channels[static_cast<std::size_t>(r)], options(codec, 2, kTimeout));
          mine.gathered.resize(layout.total_bytes());
          mine.gather_stats = ring.all_gather(layout, block_of(input, layout, r), mine.gathered);
          mine.scattered.resize(layout.shard_bytes);
          mine.scatter_stats = ring.reduce_scatter(layout, input, mine.scattered);
          mine.reduced.resize(layout.total_bytes());
          mine.reduce_stats = ring.all_reduce(layout, input, mine.reduced);
          // In place, as nccl-tests' second form: the input lies where the result goes.
          const std::size_t at = static_cast<std::size_t>(r) * layout.shard_bytes;
          mine.gathered_in_place = input;
          ring.all_gather(layout, block_of(mine.gathered_in_place, layout, r), mine.gathered_in_place);
          std::vector<std::byte> tensor = input;
          ring.reduce_scatter(layout, tensor, std::span(tensor).subspan(at, layout.shard_bytes));
          mine.scattered_in_place.assign(tensor.begin() + static_cast<std::ptrdiff_t>(at),
                                         tensor.begin() + static_cast<std::ptrdiff_t>(at + layout.shard_bytes));
          mine.reduced_in_place = input;
          ring.all_reduce(layout, mine.reduced_in_place, mine.reduced_in_place);
        } catch (const std::exception& e) {
          mine.error = e.what();
        }
      });
  }

  std::vector<std::byte> gathered, reduced;
  for (int b = 0; b < n; ++b) {
    const auto shard = block_of(inputs[static_cast<std::size_t>(b)], layout, b);
    gathered.insert(gathered.end(), shard.begin(), shard.end());
    const auto sum = reference_block(inputs, layout, b);
    reduced.insert(reduced.end(), sum.begin(), sum.end());
  }
  const std::uint64_t pass_bytes = static_cast<std::uint64_t>(n - 1) * layout.shard_bytes;
  for (int r = 0; r < n; ++r) {
    SCOPED_TRACE(fmt::format("rank {}", r));
    const RankResult& mine = results[static_cast<std::size_t>(r)];
    ASSERT_EQ(mine.error, "");
    EXPECT_TRUE(mine.gathered == gathered) << "all-gather";
    EXPECT_TRUE(mine.scattered == reference_block(inputs, layout, r)) << "reduce-scatter";
    EXPECT_TRUE(mine.reduced == reduced) << "all-reduce";
    EXPECT_TRUE(mine.gathered_in_place == gathered) << "all-gather in place";
    EXPECT_TRUE(mine.scattered_in_place == reference_block(inputs, layout, r)) << "reduce-scatter in place";
    EXPECT_TRUE(mine.reduced_in_place == reduced) << "all-reduce in place";
    // Each pass sends n - 1 shards of tensor on; all-reduce is two passes.
    EXPECT_EQ(mine.gather_stats.original_sent, pass_bytes);
    EXPECT_EQ(mine.scatter_stats.original_sent, pass_bytes);
    EXPECT_EQ(mine.reduce_stats.original_sent, 2 * pass_bytes);
    if (codec.empty()) EXPECT_EQ(mine.reduce_stats.wire_sent, mine.reduce_stats.original_sent);
    else EXPECT_GT(mine.reduce_stats.wire_sent, 0u);
    EXPECT_FALSE(channels[static_cast<std::size_t>(r)]->broken());
  }
}

// For three ranks or more the order of the additions shows in the result: summing block 0 in rank
// order 0, 1, 2 instead of the ring's 1, 2, 0 gives other bits somewhere, so the bit-for-bit check
// above would catch an engine that added in the wrong order.
TEST(RingReference, TheRingOrderChangesTheSumOfTheseInputs) {
  const Layout layout = Layout::make(30000, 3, 4096);
  std::vector<std::vector<std::byte>> inputs;
  for (int r = 0; r < 3; ++r) inputs.push_back(contribution(r, layout.total_bytes()));
  std::vector<std::byte> in_rank_order(layout.shard_bytes);
  add_bf16(in_rank_order, block_of(inputs[0], layout, 0), block_of(inputs[1], layout, 0));
  add_bf16(in_rank_order, in_rank_order, block_of(inputs[2], layout, 0));
  EXPECT_TRUE(in_rank_order != reference_block(inputs, layout, 0));
}

std::string case_name(const ::testing::TestParamInfo<RingCase>& info) {
  const auto& [kind, n, codec] = info.param;
  std::string name = fmt::format("{}_ranks{}_{}", rdma::transport_name(kind), n, codec.empty() ? "raw" : codec);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Links, RingEngine,
                         ::testing::Combine(::testing::Values(rdma::TransportKind::mem, rdma::TransportKind::tcp),
                                            ::testing::Values(2, 3, 4),
                                            ::testing::Values(std::string(), std::string("bytegroup+lz4"),
                                                              std::string(codecs::kBestCodecSpec))),
                         case_name);

// A channel of one rank's own: sends go nowhere; a receive gets `delivered` (when set) or nothing.
class ScriptedChannel final : public RingChannel {
 public:
  std::optional<std::vector<std::byte>> delivered;
  bool abandoned = false;

  std::string_view name() const override { return "scripted"; }
  void begin_pass(const PassShape& shape) override {
    slots_.assign(shape.total * shape.capacity, std::byte{0});
    capacity_ = shape.capacity;
    into_.assign(shape.total, {});
  }
  std::span<std::byte> receive_slot(std::size_t index) override { return std::span(slots_).subspan(index * capacity_, capacity_); }
  std::span<std::byte> send_slot(std::size_t index) override { return receive_slot(index); }
  void post_receive(std::size_t index, std::span<std::byte> into) override { into_.at(index) = into; }
  std::optional<std::span<std::byte>> test_receive(std::size_t index) override {
    if (!delivered) return std::nullopt;
    std::memcpy(into_.at(index).data(), delivered->data(), delivered->size());
    return into_[index].first(delivered->size());
  }
  void send(std::size_t, std::span<const std::byte>) override {}
  void end_pass() override {}
  void abandon() override { abandoned = true; }

 private:
  std::vector<std::byte> slots_;
  std::size_t capacity_ = 0;
  std::vector<std::span<std::byte>> into_;
};

TEST(RingFailure, ASilentLeftNeighbourFailsThePassWithinTheTimeout) {
  ScriptedChannel channel;
  Ring ring(0, 2, channel, options("", 8, 200ms));
  const Layout layout = Layout::make(64, 2, 64);
  std::vector<std::byte> shard(layout.shard_bytes), out(layout.total_bytes());
  const std::string error = error_of([&] { ring.all_gather(layout, shard, out); });
  EXPECT_NE(error.find("ring all-gather over scripted: rank 0 waited 200 ms for chunk 0 of 1 from rank 1 (a rank died or stalls)"),
            std::string::npos)
      << error;
  EXPECT_TRUE(channel.abandoned);
  EXPECT_NE(error_of([&] { ring.all_gather(layout, shard, out); }).find("ring: unusable after a failed collective"),
            std::string::npos);
}

TEST(RingFailure, ARawChunkOfTheWrongLengthFailsNamingIt) {
  ScriptedChannel channel;
  channel.delivered = std::vector<std::byte>(6);
  Ring ring(1, 3, channel, options("", 8, kTimeout));
  const Layout layout = Layout::make(96, 3, 8);  // shards of 32 bytes, chunks of 8
  std::vector<std::byte> in(layout.total_bytes()), out(layout.shard_bytes);
  const std::string error = error_of([&] { ring.reduce_scatter(layout, in, out); });
  EXPECT_NE(error.find("ring: chunk 0 from rank 0 has 6 bytes, expected 8"), std::string::npos) << error;
  EXPECT_TRUE(channel.abandoned);
}

TEST(RingFailure, ArgumentsThatCannotWorkAreRefused) {
  ScriptedChannel channel;
  EXPECT_NE(error_of([&] { Ring(2, 2, channel, options("", 8, kTimeout)); }).find("rank 2 of 2 ranks does not exist"), std::string::npos);
  EXPECT_NE(error_of([&] { Ring(0, 2, channel, options("", 0, kTimeout)); }).find("depth must be positive"), std::string::npos);
  EXPECT_THROW(Ring(0, 2, channel, options("no-such-codec", 8, kTimeout)), Error);
  Ring ring(0, 2, channel, options("", 8, kTimeout));
  const Layout layout = Layout::make(64, 2, 16);
  std::vector<std::byte> shard(layout.shard_bytes), out(layout.total_bytes());
  EXPECT_NE(error_of([&] { ring.all_gather(layout, shard, std::span(out).first(8)); }).find("do not fit the layout"),
            std::string::npos);
  const Layout other_ranks = Layout::make(64, 4, 16);
  EXPECT_NE(error_of([&] { ring.reduce_scatter(other_ranks, out, shard); }).find("do not fit the layout"),
            std::string::npos);
  EXPECT_FALSE(channel.abandoned);  // refused before any pass began
}

}  // namespace
}  // namespace wirezip::collective
