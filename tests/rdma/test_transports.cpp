#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <thread>

#include "wirezip/rdma/transport.hpp"
#include "wirezip/util/error.hpp"
#include "../../rdma/src/tcp_socket.hpp"

namespace wirezip::rdma {
namespace {

using namespace std::chrono_literals;

LinkOptions small_options(PagePolicy pages = PagePolicy::small) {
  LinkOptions options;
  options.buffer_bytes = 4 << 20;
  options.pages = pages;
  options.depth = 4;
  options.timeout = 2000ms;
  return options;
}

void fill(std::span<std::byte> bytes, unsigned seed) {
  std::mt19937 rng(seed);
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
}

class Loopback : public ::testing::TestWithParam<TransportKind> {};

// Writes of many sizes and offsets, with and without immediates, arrive byte-exact.
TEST_P(Loopback, MovesDataByteExact) {
  for (PagePolicy pages : {PagePolicy::small, PagePolicy::thp}) {
    LinkPair link = connect_loopback(GetParam(), small_options(pages));
    auto local = link.first->buffer().bytes();
    fill(local, 7);
    std::size_t offset = 0;
    std::uint32_t imm = 100;
    for (std::size_t length : {0, 1, 7, 4096, 65537, 1 << 20}) {
      link.first->post_write(offset, offset, length, imm++);
      offset += length;
    }
    link.first->post_write(offset, offset, 12345, std::nullopt);  // a silent write
    link.first->wait_in_flight_at_most(0);
    offset += 12345;
    auto remote = link.second->buffer().bytes();
    ASSERT_TRUE(std::equal(local.begin(), local.begin() + offset, remote.begin()));

    for (std::uint32_t expected = 100; expected < imm; ++expected) {
      Arrival arrival = link.second->wait_arrival();
      EXPECT_EQ(arrival.imm, expected);
    }
    EXPECT_FALSE(link.second->poll_arrival());  // the silent write made no arrival

    std::vector<std::byte> read_back(offset);
    link.first->read_remote(0, read_back);
    EXPECT_TRUE(std::equal(read_back.begin(), read_back.end(), local.begin()));
  }
}

// A small write behind a large one still in flight (mem delivers small ones from the posting thread
// when nothing is ahead of them) arrives after it, and each arrival finds its bytes in place.
TEST_P(Loopback, SmallWritesKeepTheirPlaceBehindLargeOnes) {
  LinkPair link = connect_loopback(GetParam(), small_options());
  const auto local = link.first->buffer().bytes();
  const auto remote = link.second->buffer().bytes();
  const std::size_t big = 3 << 20, small = 16;
  for (unsigned round = 0; round < 20; ++round) {
    fill(local.first(big + small), round);
    link.first->post_write(0, 0, big, 1);
    link.first->post_write(big, big, small, 2);
    link.first->post_write(0, 0, 0, 3);
    ASSERT_EQ(link.second->wait_arrival().imm, 1u);
    ASSERT_TRUE(std::equal(local.begin(), local.begin() + big, remote.begin())) << "round " << round;
    ASSERT_EQ(link.second->wait_arrival().imm, 2u);
    ASSERT_TRUE(std::equal(local.begin() + big, local.begin() + big + small, remote.begin() + big));
    ASSERT_EQ(link.second->wait_arrival().imm, 3u);
    link.first->wait_in_flight_at_most(0);  // the next round rewrites the source
  }
}

TEST_P(Loopback, CreditsFlowBackAndRangesAreChecked) {
  LinkPair link = connect_loopback(GetParam(), small_options());
  link.second->post_write(0, 0, 0, 42);  // a credit: zero bytes, one immediate
  EXPECT_EQ(link.first->wait_arrival().imm, 42u);
  const std::size_t size = link.first->buffer().bytes().size();
  EXPECT_THROW(link.first->post_write(size - 1, 0, 2, 1), Error);
  EXPECT_THROW(link.first->post_write(0, size, 1, 1), Error);
  std::vector<std::byte> too_far(2);
  EXPECT_THROW(link.first->read_remote(size - 1, too_far), Error);
}

TEST_P(Loopback, NoArrivalIsATimeoutNotAHang) {
  // The options' 2 s timeout also bounds the set-up, which a loaded host can stretch past a
  // shorter one; no arrival is coming either way.
  LinkPair link = connect_loopback(GetParam(), small_options());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(link.second->wait_arrival(), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

// This process's threads by name (/proc/self/task/*/comm).
std::map<std::string, int> thread_names() {
  std::map<std::string, int> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    ++names[name];
  }
  return names;
}

// A scheduler trace (perf sched, top -H) tells each link thread by its name.
TEST_P(Loopback, EachTransportThreadIsNamedForItsJob) {
  const auto before = thread_names();
  LinkPair link = connect_loopback(GetParam(), small_options());
  auto after = thread_names();
  for (const auto& [name, count] : before) after[name] -= count;
  if (GetParam() == TransportKind::tcp) {
    EXPECT_EQ(after["wz-tcp-send"], 2);  // one writer and one reader per endpoint
    EXPECT_EQ(after["wz-tcp-recv"], 2);
  } else {
    EXPECT_EQ(after["wz-mem-copy"], 2);  // one copier per direction
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, Loopback, ::testing::Values(TransportKind::tcp, TransportKind::mem),
                         [](const auto& info) { return std::string(transport_name(info.param)); });

TEST(Tcp, PeerThatDisappearsIsAnErrorWithinTheTimeout) {
  LinkPair link = connect_loopback(TransportKind::tcp, small_options());
  fill(link.first->buffer().bytes(), 3);
  link.second.reset();  // the peer goes away: its socket closes as if its process died
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(
      {
        for (int i = 0; i < 1000; ++i) link.first->post_write(0, 0, 1 << 20, std::nullopt);
        link.first->wait_in_flight_at_most(0);
      },
      Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

// A long message is received with a raised low-water mark (fewer wake-ups while it arrives); the
// mark is one byte again once the message is in, so the next frame's header is not held back.
TEST(Tcp, LowWaterMarkIsOneByteAgainAfterALongMessage) {
  tcp::Socket listener = tcp::listen_on("127.0.0.1", 0);
  tcp::Socket client = tcp::connect_to("127.0.0.1", tcp::local_port(listener), 2000ms);
  ASSERT_TRUE(tcp::wait_readable(listener, 2000ms));  // the connection is queued
  std::string peer;
  bool out_of_descriptors = false;
  tcp::Socket server = tcp::accept_waiting(listener, &peer, &out_of_descriptors);
  ASSERT_TRUE(server);
  std::vector<std::byte> sent(4 << 20), got(sent.size());
  fill(sent, 11);
  std::jthread sender([&] {
    for (std::size_t at = 0; at < sent.size(); at += 64 << 10) {  // in pieces: the reader waits between them
      tcp::send_all(client, std::span(sent).subspan(at, 64 << 10), 2000ms);
      std::this_thread::sleep_for(1ms);
    }
  });
  ASSERT_TRUE(tcp::recv_all(server, got, 2000ms));
  sender.join();
  EXPECT_EQ(sent, got);
  int low_water = 0;
  socklen_t length = sizeof low_water;
  ASSERT_EQ(getsockopt(server.fd(), SOL_SOCKET, SO_RCVLOWAT, &low_water, &length), 0);
  EXPECT_EQ(low_water, 1);
  const std::array<std::byte, 24> header{std::byte{1}};
  tcp::send_all(client, header, 2000ms);
  std::array<std::byte, 24> header_got{};
  ASSERT_TRUE(tcp::recv_all(server, header_got, 2000ms));
  EXPECT_EQ(header, header_got);
}

TEST(Tcp, PeerThatNeverAnswersIsAnErrorWithinTheTimeout) {
  // A listener that accepts (the kernel completes the handshake) but never says anything.
  tcp::Socket silent = tcp::listen_on("127.0.0.1", 0);
  LinkOptions options = small_options();
  options.timeout = 500ms;
  const auto start = std::chrono::steady_clock::now();
  try {
    connect(TransportKind::tcp, options, "127.0.0.1", tcp::local_port(silent));
    FAIL() << "connected to a silent peer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no challenge"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Tcp, RefusedAndBadAddressesAreClearErrors) {
  tcp::Socket probe = tcp::listen_on("127.0.0.1", 0);
  const std::uint16_t free_port = tcp::local_port(probe);
  probe = tcp::Socket();  // closed: nobody listens there now
  try {
    connect(TransportKind::tcp, small_options(), "127.0.0.1", free_port);
    FAIL() << "connected to a closed port";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_host_port("host:0", 1), Error);
  EXPECT_THROW(parse_host_port("host:99999", 1), Error);
  EXPECT_THROW(parse_host_port("", 1), Error);
  EXPECT_EQ(parse_host_port("10.0.0.1", 18515), (std::pair<std::string, std::uint16_t>{"10.0.0.1", 18515}));
  EXPECT_EQ(parse_host_port("h:7", 1).second, 7);
}

TEST(Tcp, PortInUseIsAClearError) {
  auto first = listen(TransportKind::tcp, small_options(), "127.0.0.1", 0);
  try {
    tcp::Socket taken = tcp::listen_on("127.0.0.1", first->port());
    // SO_REUSEADDR lets a second bind succeed on some kernels only when not listening.
    FAIL() << "bound a port that is in use";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen"), std::string::npos) << e.what();
  }
}

TEST(Tcp, ListenerQuitsWhenAskedAndIdlesOut) {
  auto listener = listen(TransportKind::tcp, small_options(), "127.0.0.1", 0);
  EXPECT_EQ(listener->accept(100ms), nullptr);  // nobody came
  std::jthread quitter([&] { send_quit(TransportKind::tcp, small_options(), "127.0.0.1", listener->port()); });
  EXPECT_EQ(listener->accept(2000ms), nullptr);
}

TEST(Mem, CannotServeAcrossProcesses) {
  EXPECT_THROW(listen(TransportKind::mem, small_options(), "", 0), Error);
  EXPECT_THROW(parse_transport("udp"), Error);
}

}  // namespace
}  // namespace wirezip::rdma
