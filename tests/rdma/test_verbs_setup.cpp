// Verbs set-ups of several peers at once: a listener challenges every connect request as it comes
// and serves whichever peer authenticates first, so silent strangers (challenged, never answering)
// do not hold an honest peer. Needs an RDMA device with an ACTIVE port (rxe0 in the soft-RoCE
// guest) and skips otherwise, like test_verbs.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "verbs_silent_peer.hpp"
#include "wirezip/rdma/transport.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {
namespace {

using namespace std::chrono_literals;

// The server's set-up deadline is far longer than the honest client's: a server that served the
// strangers first would hold the client past its own deadline, and the client would fail. (No
// timing is measured: the client's 30 s are a bound on a set-up that takes well under one.)
constexpr auto kServerDeadline = 90s;
constexpr auto kClientDeadline = 30s;

LinkOptions options_with(const std::string& secret, std::chrono::milliseconds timeout) {
  LinkOptions options;
  options.buffer_bytes = 1 << 20;
  options.depth = 4;
  options.secret = secret;
  options.timeout = timeout;
  return options;
}

class VerbsConcurrentSetUp : public testing::TestWithParam<int> {};

TEST_P(VerbsConcurrentSetUp, SilentStrangersDoNotHoldAnHonestPeer) {
  if (!verbs_available()) GTEST_SKIP() << "no usable verbs device here";
  const VerbsPort port = pick_verbs_port("");
  if (port.ipv4.empty()) GTEST_SKIP() << port.device << " has no IPv4 address";
  auto listener = listen(TransportKind::verbs, options_with("s3cret", kServerDeadline), port.ipv4, 0);
  std::unique_ptr<Endpoint> passive;
  std::string server_error;
  std::jthread acceptor([&] {
    // Strangers pushed out (beyond 16 pending) end with a PeerError each: the next accept goes on,
    // until the honest peer's deadline has passed.
    const auto until = std::chrono::steady_clock::now() + kClientDeadline;
    while (!passive && std::chrono::steady_clock::now() < until) {
      try {
        passive = listener->accept(kClientDeadline);
      } catch (const PeerError& e) {
        server_error = e.what();
      }
    }
  });
  // Every stranger took its challenge before the honest peer asks: none answers it.
  std::vector<std::unique_ptr<verbs::SetupConnection>> strangers;
  for (int i = 0; i < GetParam(); ++i)
    strangers.push_back(verbs::open_silent_setup(port.ipv4, listener->port(), 64 << 20, verbs::Clock::now() + 30s));
  std::unique_ptr<Endpoint> active;
  EXPECT_NO_THROW(
      active = connect(TransportKind::verbs, options_with("s3cret", kClientDeadline), port.ipv4, listener->port()));
  acceptor.join();
  ASSERT_NE(active, nullptr);
  ASSERT_NE(passive, nullptr) << server_error;
  active->buffer().bytes()[0] = std::byte{42};
  active->post_write(0, 0, 1, 7);
  EXPECT_EQ(passive->wait_arrival().imm, 7u);
  EXPECT_EQ(passive->buffer().bytes()[0], std::byte{42});
}

// One stranger, and more of them than the listener keeps pending (16): the oldest are pushed out.
INSTANTIATE_TEST_SUITE_P(Verbs, VerbsConcurrentSetUp, testing::Values(1, 20));

}  // namespace
}  // namespace wirezip::rdma
