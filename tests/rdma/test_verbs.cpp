// The verbs transport. VerbsNoDevice* run on hosts without an RDMA device (the default CI host);
// VerbsLoopback* / VerbsDevices* need one with an ACTIVE port (e.g. rxe0 in a soft-RoCE VM) and
// skip cleanly otherwise: --gtest_filter='Verbs*'.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "wirezip/rdma/transport.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kNoDevice = "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem";

// What libibverbs itself says, independent of the code under test.
bool host_has_no_device() {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list != nullptr) ibv_free_device_list(list);
  return list == nullptr || count == 0;
}

#define SKIP_WITH_DEVICE() \
  if (!host_has_no_device()) GTEST_SKIP() << "this host has an RDMA device"

// Empty when the verbs transport can run here; otherwise why not.
std::string unavailable_reason() {
  if (verbs_available()) return {};
  try {
    pick_verbs_port("");
  } catch (const Error& e) {
    return e.what();
  }
  return "verbs_available() is false";
}

#define SKIP_WITHOUT_VERBS() \
  if (const std::string reason = unavailable_reason(); !reason.empty()) GTEST_SKIP() << reason

// Small and quick: soft-RoCE under emulation moves about 100 MB/s. The timeout is also a link's
// whole set-up deadline, which emulation on a loaded host can take seconds of.
LinkOptions small_options(PagePolicy pages = PagePolicy::small, int qps = 1) {
  LinkOptions options;
  options.buffer_bytes = 8 << 20;
  options.pages = pages;
  options.depth = 8;
  options.qps = qps;
  options.timeout = 15000ms;
  return options;
}

void fill(std::span<std::byte> bytes, unsigned seed) {
  std::mt19937 rng(seed);
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// --- no device -------------------------------------------------------------------------------

TEST(VerbsNoDevice, ListingSaysExactlyWhy) {
  SKIP_WITH_DEVICE();
  try {
    list_verbs_ports();
    FAIL() << "list_verbs_ports() returned without a device";
  } catch (const NoDeviceError& e) {
    EXPECT_STREQ(e.what(), kNoDevice);
  }
  EXPECT_THROW(pick_verbs_port(""), NoDeviceError);
  EXPECT_THROW(pick_verbs_port("mlx5_0"), NoDeviceError);
  EXPECT_FALSE(verbs_available());
}

TEST(VerbsNoDevice, EveryEntryPointThrowsNoDeviceQuickly) {
  SKIP_WITH_DEVICE();
  const LinkOptions options = small_options();
  const auto start = Clock::now();
  EXPECT_THROW(connect_loopback(TransportKind::verbs, options), NoDeviceError);
  EXPECT_THROW(listen(TransportKind::verbs, options, "", 0), NoDeviceError);
  EXPECT_THROW(connect(TransportKind::verbs, options, "127.0.0.1", 18515), NoDeviceError);
  EXPECT_THROW(send_quit(TransportKind::verbs, options, "127.0.0.1", 18515), NoDeviceError);
  EXPECT_LT(Clock::now() - start, 1s);  // no hang, no timeout waited out
}

// --- with a device ---------------------------------------------------------------------------

TEST(VerbsDevices, PortsAreDescribed) {
  SKIP_WITHOUT_VERBS();
  const std::vector<VerbsPort> ports = list_verbs_ports();
  ASSERT_FALSE(ports.empty());
  for (const VerbsPort& port : ports) {
    EXPECT_FALSE(port.device.empty());
    EXPECT_FALSE(port.state.empty());
    EXPECT_FALSE(port.link_layer.empty());
    EXPECT_FALSE(port.gid.empty());
  }
  const VerbsPort picked = pick_verbs_port("");
  EXPECT_EQ(picked.state, "ACTIVE");
  EXPECT_GE(picked.active_mtu, 256);
  EXPECT_LE(picked.active_mtu, 4096);
  EXPECT_EQ(pick_verbs_port(picked.device).device, picked.device);
  try {
    pick_verbs_port("no_such_device");
    ADD_FAILURE() << "picked a port of a device that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no device named no_such_device (have: "), std::string::npos) << e.what();
  }
}

class VerbsLoopbackPages : public ::testing::TestWithParam<PagePolicy> {};

// RDMA WRITE WITH IMM: arrivals carry the immediate and length; bytes land byte-exact; the
// buffers' backing is measured and each side knows the other's.
TEST_P(VerbsLoopbackPages, WriteWithImmArrivesByteExact) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options(GetParam()));
  Endpoint& active = *link.first;
  Endpoint& passive = *link.second;
  EXPECT_EQ(active.kind(), TransportKind::verbs);
  EXPECT_EQ(active.remote_buffer_bytes(), passive.buffer().bytes().size());
  EXPECT_EQ(passive.remote_buffer_bytes(), active.buffer().bytes().size());
  ASSERT_TRUE(active.registration_us().has_value());
  EXPECT_GT(*active.registration_us(), 0);
  EXPECT_EQ(active.device_context().at("device"), pick_verbs_port("").device);

  const PageBacking mine = active.buffer().backing();
  const PageBacking theirs = passive.buffer().backing();
  EXPECT_NEAR(active.remote_huge_fraction(), theirs.huge_fraction, 0.05);
  EXPECT_NEAR(passive.remote_huge_fraction(), mine.huge_fraction, 0.05);
  if (GetParam() == PagePolicy::small) {
    EXPECT_EQ(mine.huge_bytes, 0u);
  }
  RecordProperty("registration_us", std::to_string(*active.registration_us()));
  RecordProperty("huge_fraction", std::to_string(mine.huge_fraction));

  auto local = active.buffer().bytes();
  fill(local, 11);
  std::size_t offset = 0;
  std::uint32_t imm = 1000;
  for (std::size_t length : {0, 1, 4095, 4096, 65536, 1 << 20}) {
    active.post_write(offset, offset + 4096, length, imm++);
    offset += length;
  }
  active.wait_in_flight_at_most(0);
  for (std::uint32_t expected = 1000; expected < imm; ++expected) {
    const Arrival arrival = passive.wait_arrival();
    EXPECT_EQ(arrival.imm, expected);
    EXPECT_EQ(arrival.offset, 0u);  // verbs completions do not say where: see transport.hpp
  }
  EXPECT_TRUE(same(local.first(offset), passive.buffer().bytes().subspan(4096, offset)));
  std::vector<std::byte> read_back(offset);
  active.read_remote(4096, read_back);
  EXPECT_TRUE(same(read_back, local.first(offset)));
}

// The instance prefix keeps the full names under --gtest_filter='Verbs*'.
INSTANTIATE_TEST_SUITE_P(VerbsPages, VerbsLoopbackPages, ::testing::Values(PagePolicy::small, PagePolicy::thp),
                         [](const auto& info) { return "pages_" + std::string(page_policy_name(info.param)); });

TEST(VerbsLoopback, PlainWriteIsSilentAndLengthsArrive) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options());
  fill(link.first->buffer().bytes(), 3);
  link.first->post_write(0, 0, 8192, std::nullopt);
  link.first->post_write(8192, 8192, 3000, 77);
  link.first->wait_in_flight_at_most(0);
  const Arrival arrival = link.second->wait_arrival();
  EXPECT_EQ(arrival.imm, 77u);
  EXPECT_EQ(arrival.length, 3000u);
  EXPECT_FALSE(link.second->poll_arrival().has_value());
  EXPECT_TRUE(same(link.first->buffer().bytes().first(11192), link.second->buffer().bytes().first(11192)));
}

// The passive side writes back (credits) and reads the active side's buffer.
TEST(VerbsLoopback, PassiveSideWritesAndReadsBack) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options());
  fill(link.second->buffer().bytes().first(1 << 16), 5);
  link.second->post_write(0, 1 << 20, 1 << 16, 9);
  link.second->post_write(0, 0, 0, 10);  // a credit: just the immediate
  link.second->wait_in_flight_at_most(0);
  EXPECT_EQ(link.first->wait_arrival().imm, 9u);
  const Arrival credit = link.first->wait_arrival();
  EXPECT_EQ(credit.imm, 10u);
  EXPECT_EQ(credit.length, 0u);
  EXPECT_TRUE(same(link.first->buffer().bytes().subspan(1 << 20, 1 << 16), link.second->buffer().bytes().first(1 << 16)));
  fill(link.first->buffer().bytes().first(3 << 20), 6);  // read_remote spans several bounce pieces
  std::vector<std::byte> read_back(3 << 20);
  link.second->read_remote(0, read_back);
  EXPECT_TRUE(same(read_back, link.first->buffer().bytes().first(3 << 20)));
}

// Several QPs share one buffer and MR on each side; writes spread over them all arrive.
TEST(VerbsLoopback, SeveralQpsCarryEveryWrite) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options(PagePolicy::small, 4));
  EXPECT_EQ(link.first->device_context().at("qps"), "4");
  EXPECT_EQ(link.second->device_context().at("qps"), "4");
  constexpr std::size_t kChunk = 32 << 10;
  constexpr std::uint32_t kWrites = 64;
  fill(link.first->buffer().bytes().first(kChunk * kWrites), 8);
  std::vector<std::uint32_t> seen;
  for (std::uint32_t i = 0; i < kWrites; ++i) {
    link.first->post_write(i * kChunk, i * kChunk, kChunk, i);
    EXPECT_LE(link.first->in_flight(), 8u);  // depth
    while (auto arrival = link.second->poll_arrival()) seen.push_back(arrival->imm);
  }
  link.first->wait_in_flight_at_most(0);
  while (seen.size() < kWrites) seen.push_back(link.second->wait_arrival().imm);
  std::sort(seen.begin(), seen.end());  // order holds per QP only
  std::vector<std::uint32_t> expected(kWrites);
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(seen, expected);
  std::vector<std::byte> read_back(kChunk * kWrites);
  link.first->read_remote(0, read_back);
  EXPECT_TRUE(same(read_back, link.first->buffer().bytes().first(kChunk * kWrites)));
}

TEST(VerbsLoopback, BadRangesThrow) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options());
  const std::size_t size = link.first->buffer().bytes().size();
  EXPECT_THROW(link.first->post_write(size - 10, 0, 20, 1), Error);
  EXPECT_THROW(link.first->post_write(0, size - 10, 20, 1), Error);
  std::vector<std::byte> too_far(20);
  EXPECT_THROW(link.first->read_remote(size - 10, too_far), Error);
  EXPECT_EQ(link.first->in_flight(), 0u);
}

TEST(VerbsLoopback, NoArrivalIsATimeoutNotAHang) {
  SKIP_WITHOUT_VERBS();
  LinkPair link = connect_loopback(TransportKind::verbs, small_options());
  const auto start = Clock::now();
  EXPECT_THROW(link.first->wait_arrival(), Error);
  EXPECT_LT(Clock::now() - start, 30s);
}

// Destroying the passive endpoint disconnects; the active side's waits fail within the timeout.
TEST(VerbsLoopback, PeerThatDisappearsFailsTheWait) {
  SKIP_WITHOUT_VERBS();
  const LinkOptions options = small_options();
  LinkPair link = connect_loopback(TransportKind::verbs, options);
  link.second.reset();
  const auto start = Clock::now();
  try {
    link.first->wait_arrival();
    ADD_FAILURE() << "an arrival from a peer that is gone";
  } catch (const Error& e) {
    RecordProperty("reason", e.what());
    EXPECT_NE(std::string(e.what()).find("disconnected"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, options.timeout + 1s);
  EXPECT_THROW(
      {
        link.first->post_write(0, 0, 4096, 1);
        link.first->wait_in_flight_at_most(0);
      },
      Error);
}

TEST(VerbsLoopback, ListenerQuitsWhenAskedAndIdlesOut) {
  SKIP_WITHOUT_VERBS();
  const VerbsPort port = pick_verbs_port("");
  if (port.ipv4.empty()) GTEST_SKIP() << port.device << " has no IPv4 address";
  const LinkOptions options = small_options();
  auto listener = listen(TransportKind::verbs, options, port.ipv4, 0);
  EXPECT_EQ(listener->accept(100ms), nullptr);  // nobody came
  std::unique_ptr<Endpoint> accepted;
  std::thread acceptor([&] { accepted = listener->accept(options.timeout); });
  send_quit(TransportKind::verbs, options, port.ipv4, listener->port());
  acceptor.join();
  EXPECT_EQ(accepted, nullptr);
}

// The two-process entry points, both ends here: connect() to a listen()ing endpoint, two QPs.
TEST(VerbsLoopback, ListenAndConnectMakeALink) {
  SKIP_WITHOUT_VERBS();
  const VerbsPort port = pick_verbs_port("");
  if (port.ipv4.empty()) GTEST_SKIP() << port.device << " has no IPv4 address";
  const LinkOptions options = small_options(PagePolicy::small, 2);
  auto listener = listen(TransportKind::verbs, options, "", 0);
  std::unique_ptr<Endpoint> passive;
  std::thread acceptor([&] { passive = listener->accept(options.timeout); });
  std::unique_ptr<Endpoint> active = connect(TransportKind::verbs, options, port.ipv4, listener->port());
  acceptor.join();
  ASSERT_NE(passive, nullptr);
  fill(active->buffer().bytes().first(4096), 4);
  active->post_write(0, 0, 4096, 5);
  active->post_write(0, 4096, 4096, 6);
  active->wait_in_flight_at_most(0);
  std::vector<std::uint32_t> imms{passive->wait_arrival().imm, passive->wait_arrival().imm};
  std::sort(imms.begin(), imms.end());
  EXPECT_EQ(imms, (std::vector<std::uint32_t>{5, 6}));
  EXPECT_TRUE(same(passive->buffer().bytes().subspan(4096, 4096), active->buffer().bytes().first(4096)));
}

// Link set-up with a secret, both ends here. Each helper call serves one set-up with `server`
// options while a client with `client` options connects (or quits); returns the client's error
// ("" when it connected) and the server's.
LinkOptions secret_options(const std::string& secret, std::size_t buffer_bytes = 64 << 10) {
  LinkOptions options = small_options(PagePolicy::small, 2);
  options.buffer_bytes = buffer_bytes;
  options.secret = secret;
  options.limits.max_buffer = 1 << 20;
  options.context = {{"hostname", "verbs-server-under-test"}};
  return options;
}

std::pair<std::string, std::string> meet(Listener& listener, const std::string& host, const LinkOptions& client,
                                         bool quit = false,
                                         std::map<std::string, std::string>* peer_context = nullptr) {
  std::string server_error;
  std::jthread acceptor([&] {
    try {
      listener.accept(10s);
    } catch (const PeerError& e) {
      server_error = e.what();
    }
  });
  std::string client_error;
  try {
    if (quit) {
      send_quit(TransportKind::verbs, client, host, listener.port());
    } else {
      auto endpoint = connect(TransportKind::verbs, client, host, listener.port());
      if (peer_context) *peer_context = endpoint->peer_context();
    }
  } catch (const Error& e) {
    client_error = e.what();
  }
  acceptor.join();
  return {client_error, server_error};
}

// The server looks at the request (here: a buffer over its --max-buffer) only once the peer
// proved the secret: a stranger asking for too much hears "authentication", never the limit.
TEST(VerbsLoopback, SetUpAuthenticatesBeforeItLooksAtTheRequest) {
  SKIP_WITHOUT_VERBS();
  const VerbsPort port = pick_verbs_port("");
  if (port.ipv4.empty()) GTEST_SKIP() << port.device << " has no IPv4 address";
  auto listener = listen(TransportKind::verbs, secret_options("s3cret"), port.ipv4, 0);
  const std::size_t too_big = 4 << 20;
  {
    const auto [client, server] = meet(*listener, port.ipv4, secret_options("", too_big));
    EXPECT_NE(client.find("requires authentication"), std::string::npos) << client;
    EXPECT_EQ(server.find("outside"), std::string::npos) << server;
  }
  {
    const auto [client, server] = meet(*listener, port.ipv4, secret_options("guess", too_big));
    EXPECT_NE(client.find("authentication failed"), std::string::npos) << client;
    EXPECT_NE(server.find("authentication failed"), std::string::npos) << server;
  }
  {
    const auto [client, server] = meet(*listener, port.ipv4, secret_options("s3cret", too_big));
    EXPECT_NE(client.find("hello.buffer_bytes"), std::string::npos) << client;  // now the limit may be told
    EXPECT_NE(server.find("hello.buffer_bytes"), std::string::npos) << server;
  }
  {
    std::map<std::string, std::string> context;
    const auto [client, server] = meet(*listener, port.ipv4, secret_options("s3cret"), false, &context);
    EXPECT_EQ(client, "");
    EXPECT_EQ(server, "");
    EXPECT_EQ(context["hostname"], "verbs-server-under-test");
  }
  {
    const auto [client, server] = meet(*listener, port.ipv4, secret_options(""), true);
    EXPECT_NE(client.find("requires authentication"), std::string::npos) << client;
  }
  const auto [client, server] = meet(*listener, port.ipv4, secret_options("s3cret"), true);
  EXPECT_EQ(client, "");
  EXPECT_EQ(server, "");
}

// A client with a secret refuses a server that does not prove one.
TEST(VerbsLoopback, AClientWithASecretRefusesAnOpenServer) {
  SKIP_WITHOUT_VERBS();
  const VerbsPort port = pick_verbs_port("");
  if (port.ipv4.empty()) GTEST_SKIP() << port.device << " has no IPv4 address";
  auto listener = listen(TransportKind::verbs, secret_options(""), port.ipv4, 0);
  const auto [client, server] = meet(*listener, port.ipv4, secret_options("s3cret"));
  EXPECT_NE(client.find("does not authenticate"), std::string::npos) << client;
}

}  // namespace
}  // namespace wirezip::rdma
