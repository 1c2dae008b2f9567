// The ring's channel over wirezip's links (collective/ring_channel.hpp): immediates, the checks
// on what a neighbour sends, and two "ranks" in one process passing chunks around a ring of two
// over tcp and mem links, pass after pass; a hostile or silent neighbour fails with one message.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "error_of.hpp"
#include "wirezip/collective/ring_channel.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::collective {
namespace {

using namespace std::chrono_literals;
using rdma::Arrival;

using testing::error_of;

TEST(RingImmediates, KeepApartFromSetUpAndEachOther) {
  EXPECT_EQ(ring_chunk_imm(5), 0x80000005u);
  EXPECT_EQ(ring_ready_imm(3), 0x40000003u);
  EXPECT_EQ(ring_chunk_imm(kRingMaxChunks - 1) & 0xe0000000u, kRingChunkImm);
  EXPECT_EQ(ring_ready_imm(kRingMaxChunks + 2), ring_ready_imm(2));  // pass numbers wrap
  EXPECT_THROW(ring_chunk_imm(kRingMaxChunks), Error);
  EXPECT_EQ(rdma::kKeepaliveImm & 0xe0000000u, 0u);  // set-up and keepalive: top bits 000
}

TEST(RingArrivals, EachFieldIsChecked) {
  const PassShape shape{.total = 4, .capacity = 100};
  std::vector<std::optional<std::size_t>> arrived(4);
  arrived[1] = 10;
  EXPECT_EQ(check_chunk_arrival({ring_chunk_imm(2), 200, 50}, shape, arrived, true), 2u);
  EXPECT_EQ(check_chunk_arrival({ring_chunk_imm(3), 0, 100}, shape, arrived, false), 3u);  // verbs: no offset
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_ready_imm(2), 200, 50}, shape, arrived, true); })
                .find("is not a chunk's"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({rdma::kKeepaliveImm, 0, 0}, shape, arrived, true); })
                .find("is not a chunk's"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_chunk_imm(4), 400, 50}, shape, arrived, true); })
                .find("chunk index 4 is beyond the pass's 4 chunks"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_chunk_imm(1), 100, 50}, shape, arrived, true); })
                .find("arrived twice"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_chunk_imm(2), 200, 101}, shape, arrived, true); })
                .find("length 101 exceeds its slot of 100"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_chunk_imm(2), 200, 0}, shape, arrived, true); })
                .find("length is 0"), std::string::npos);
  EXPECT_NE(error_of([&] { check_chunk_arrival({ring_chunk_imm(2), 0, 50}, shape, arrived, true); })
                .find("offset 0 is not its slot's, 200"), std::string::npos);
  EXPECT_NO_THROW(check_ready_arrival({ring_ready_imm(7), 0, 0}, 7));
  EXPECT_NE(error_of([&] { check_ready_arrival({ring_ready_imm(6), 0, 0}, 7); }).find("ready for pass 7 was due"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_ready_arrival({ring_ready_imm(7), 0, 8}, 7); }).find("has length 8"),
            std::string::npos);
}

rdma::LinkOptions options(std::chrono::milliseconds timeout = 2000ms) {
  rdma::LinkOptions o;
  o.buffer_bytes = 1 << 20;
  o.depth = 4;
  o.timeout = timeout;
  return o;
}

class RingOfTwo : public ::testing::TestWithParam<rdma::TransportKind> {};

// Ranks 0 and 1, each sending 5 chunks of distinct bytes per pass, 3 passes; chunk i of a pass
// lands where the receiver asked (its slot, or a place of its own), byte for byte.
TEST_P(RingOfTwo, PassesChunksPassAfterPass) {
  rdma::LinkPair a_to_b = rdma::connect_loopback(GetParam(), options());
  rdma::LinkPair b_to_a = rdma::connect_loopback(GetParam(), options());
  LinkChannel a(std::move(a_to_b.first), std::move(b_to_a.second), {0, 1, 1}, 2000ms);
  LinkChannel b(std::move(b_to_a.first), std::move(a_to_b.second), {1, 0, 0}, 2000ms);
  constexpr std::size_t kChunks = 5, kCapacity = 1000;
  auto rank = [&](LinkChannel& channel, int me, std::vector<std::string>& errors) {
    try {
      for (int pass = 0; pass < 3; ++pass) {
        channel.begin_pass({.total = kChunks, .capacity = kCapacity, .receive_slots = true, .send_slots = true});
        std::vector<std::vector<std::byte>> places(kChunks);
        for (std::size_t i = 0; i < kChunks; ++i) {
          places[i].resize(kCapacity);
          // Odd chunks into a place of the receiver's own, even ones stay in the channel's slot.
          channel.post_receive(i, i % 2 ? std::span(places[i]) : channel.receive_slot(i));
          std::vector<std::byte> bytes(100 + i, static_cast<std::byte>(me * 64 + pass * 8 + i));
          if (i % 2) {
            channel.send(i, bytes);  // copied into the slot
          } else {
            std::memcpy(channel.send_slot(i).data(), bytes.data(), bytes.size());
            channel.send(i, channel.send_slot(i).first(bytes.size()));
          }
        }
        for (std::size_t i = 0; i < kChunks; ++i) {
          std::optional<std::span<std::byte>> got;
          for (auto deadline = std::chrono::steady_clock::now() + 2s; !got; std::this_thread::yield()) {
            got = channel.test_receive(i);
            if (std::chrono::steady_clock::now() > deadline) throw Error("no chunk");
          }
          if (got->size() != 100 + i) throw Error(fmt::format("chunk {} has {} bytes", i, got->size()));
          for (std::byte b : *got)
            if (b != static_cast<std::byte>((1 - me) * 64 + pass * 8 + i)) throw Error(fmt::format("chunk {} differs", i));
          if (i % 2 && got->data() != places[i].data()) throw Error("not in its place");
        }
        channel.end_pass();
      }
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  };
  std::vector<std::string> errors_a, errors_b;
  std::jthread other([&] { rank(b, 1, errors_b); });
  rank(a, 0, errors_a);
  other.join();
  EXPECT_TRUE(errors_a.empty()) << errors_a.front();
  EXPECT_TRUE(errors_b.empty()) << errors_b.front();
  EXPECT_FALSE(a.broken());
}

// The right neighbour never says ready: begin_pass fails within the timeout, naming the wait.
TEST_P(RingOfTwo, ASilentNeighbourFailsWithinTheTimeout) {
  rdma::LinkPair to_right = rdma::connect_loopback(GetParam(), options());
  rdma::LinkPair from_left = rdma::connect_loopback(GetParam(), options());
  LinkChannel channel(std::move(to_right.first), std::move(from_left.second), {0, 2, 1}, 300ms);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = error_of([&] { channel.begin_pass({.total = 2, .capacity = 64}); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_NE(error.find("rank 0 waited 300 ms for rank 1 to begin pass 1 (a rank died or stalls)"), std::string::npos)
      << error;
  EXPECT_TRUE(channel.broken());
  EXPECT_NE(error_of([&] { channel.begin_pass({.total = 2, .capacity = 64}); }).find("unusable"), std::string::npos);
}

// A left neighbour that writes a chunk index beyond the pass: the receiver fails naming it.
TEST_P(RingOfTwo, AHostileChunkFailsTheReceiverWithTheField) {
  rdma::LinkPair to_right = rdma::connect_loopback(GetParam(), options());
  rdma::LinkPair from_left = rdma::connect_loopback(GetParam(), options());
  LinkChannel channel(std::move(to_right.first), std::move(from_left.second), {1, 0, 2}, 2000ms);
  to_right.second->post_write(0, 0, 0, ring_ready_imm(1));  // the right neighbour: ready for pass 1
  channel.begin_pass({.total = 2, .capacity = 64, .receive_slots = true});
  channel.post_receive(0, channel.receive_slot(0));
  from_left.first->post_write(0, 0, 8, kRingChunkImm | 99);
  std::string error;
  for (auto deadline = std::chrono::steady_clock::now() + 2s; error.empty() && std::chrono::steady_clock::now() < deadline;) {
    try {
      if (channel.test_receive(0)) error = "a chunk was accepted";
    } catch (const Error& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("chunk arrival from rank 0: chunk index 99 is beyond the pass's 2 chunks"), std::string::npos)
      << error;
  EXPECT_TRUE(channel.broken());
}

// A right neighbour whose ready names another pass: begin_pass fails naming it.
TEST_P(RingOfTwo, AReadyForAnotherPassIsRefused) {
  rdma::LinkPair to_right = rdma::connect_loopback(GetParam(), options());
  rdma::LinkPair from_left = rdma::connect_loopback(GetParam(), options());
  LinkChannel channel(std::move(to_right.first), std::move(from_left.second), {1, 0, 2}, 2000ms);
  to_right.second->post_write(0, 0, 0, ring_ready_imm(7));
  const std::string error = error_of([&] { channel.begin_pass({.total = 2, .capacity = 64}); });
  EXPECT_NE(error.find("from rank 2: immediate 0x40000007 where ready for pass 1 was due"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Transports, RingOfTwo, ::testing::Values(rdma::TransportKind::tcp, rdma::TransportKind::mem),
                         [](const auto& info) { return std::string(rdma::transport_name(info.param)); });

}  // namespace
}  // namespace wirezip::collective
