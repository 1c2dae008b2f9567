// The link set-up and session layers as a peer meets them: every field checked against the
// receiving side's limits, refusals that say why, and mutual authentication over tcp loopback.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "error_of.hpp"
#include "wirezip/rdma/transport.hpp"
#include "wirezip/util/error.hpp"
#include "../../rdma/src/protocol.hpp"
#include "../../rdma/src/session.hpp"
#include "../../rdma/src/tcp_frames.hpp"
#include "../../rdma/src/tcp_socket.hpp"

namespace wirezip::rdma {
namespace {

using namespace std::chrono_literals;

using testing::error_of;

TEST(Hello, EveryFieldIsCheckedAgainstTheServersLimits) {
  ServerLimits limits;
  limits.max_buffer = 1 << 20;
  limits.allow_hugetlb = false;
  auto hello = [](std::uint64_t bytes, std::uint32_t depth, PagePolicy pages) {
    return protocol::encode(protocol::Hello{.buffer_bytes = bytes, .depth = depth, .pages = pages});
  };
  EXPECT_EQ(protocol::decode_hello(hello(1 << 20, 256, PagePolicy::thp), limits).buffer_bytes, 1u << 20);
  EXPECT_NE(error_of([&] { protocol::decode_hello(hello(~0ull, 1, PagePolicy::small), limits); })
                .find("hello.buffer_bytes = 18446744073709551615"), std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(hello(0, 1, PagePolicy::small), limits); }).find("buffer_bytes = 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(hello(4096, 0, PagePolicy::small), limits); }).find("hello.depth = 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(hello(4096, 300, PagePolicy::small), limits); }).find("depth = 300"),
            std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(hello(4096, 1, PagePolicy::hugetlb), limits); }).find("--allow-pages"),
            std::string::npos);
  auto bad = hello(4096, 1, PagePolicy::small);
  bad[16] = std::byte{7};
  EXPECT_NE(error_of([&] { protocol::decode_hello(bad, limits); }).find("hello.pages = 7"), std::string::npos);
  bad = hello(4096, 1, PagePolicy::small);
  bad[17] = std::byte{2};
  EXPECT_NE(error_of([&] { protocol::decode_hello(bad, limits); }).find("hello.quit = 2"), std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(std::as_bytes(std::span("GET / HTTP/1.1\r\n\r\n      ", 24)), limits); })
                .find("magic"), std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_hello(std::span(bad).first(10), limits); }).find("10 bytes"), std::string::npos);
}

TEST(Welcome, MustDescribeTheBufferAskedFor) {
  const auto welcome = protocol::encode(protocol::Welcome{.buffer_bytes = 8192, .huge_ppm = 1'000'000});
  EXPECT_EQ(protocol::decode_welcome(welcome, 8192).buffer_bytes, 8192u);
  EXPECT_NE(error_of([&] { protocol::decode_welcome(welcome, 4096); }).find("4096 were asked"), std::string::npos);
  const auto over = protocol::encode(protocol::Welcome{.buffer_bytes = 8192, .huge_ppm = 1'000'001});
  EXPECT_NE(error_of([&] { protocol::decode_welcome(over, 8192); }).find("huge_ppm"), std::string::npos);
  const auto refusal = protocol::encode_refusal("hello.depth = 0 is outside [1, 256]\n\x01");
  EXPECT_NE(error_of([&] { protocol::decode_welcome(refusal, 8192); }).find("refused the link: hello.depth = 0"),
            std::string::npos);
  EXPECT_EQ(protocol::decode_refusal(refusal).find('\n'), std::string::npos);  // control bytes never echoed
}

TEST(TcpFrames, UnknownTypesPaddingAndMisplacedFieldsAreRefused) {
  auto frame = [](std::uint8_t type, std::uint64_t offset, std::uint64_t length) {
    auto bytes = tcp::encode(tcp::Header{.type = tcp::Frame::write, .imm = 0, .offset = offset, .length = length});
    bytes[0] = std::byte{type};
    return bytes;
  };
  EXPECT_EQ(tcp::decode(frame(5, 64, 8)).type, tcp::Frame::notify);
  EXPECT_NE(error_of([&] { tcp::decode(frame(0, 0, 0)); }).find("frame.type = 0"), std::string::npos);
  EXPECT_NE(error_of([&] { tcp::decode(frame(9, 0, 0)); }).find("frame.type = 9"), std::string::npos);
  EXPECT_NE(error_of([&] { tcp::decode(frame(2, 0, 8)); }).find("frame.length = 8 in an ack"), std::string::npos);
  EXPECT_NE(error_of([&] { tcp::decode(frame(4, 8, 8)); }).find("frame.offset = 8"), std::string::npos);
  auto padded = frame(1, 0, 0);
  padded[2] = std::byte{1};
  EXPECT_NE(error_of([&] { tcp::decode(padded); }).find("pad"), std::string::npos);
}

TEST(Session, MessagesRoundTripAndRejectWhatTheyDoNotKnow) {
  const session::Response response{.has_mac = true, .nonce = {std::byte{1}}, .mac = {std::byte{2}}};
  const auto decoded = session::decode_response(session::encode(response));
  EXPECT_TRUE(decoded.has_mac);
  EXPECT_EQ(decoded.mac, response.mac);
  auto flags = session::encode(response);
  flags[5] = std::byte{0x80};
  EXPECT_NE(error_of([&] { session::decode_response(flags); }).find("response.flags"), std::string::npos);
  const session::Accept accept{.has_mac = false, .mac = {}, .context = {{"cpu_model", "Cortex-A78"}, {"host_cpus", "16"}}};
  EXPECT_EQ(session::decode_accept(session::encode(accept)).context, accept.context);
  auto truncated = session::encode(accept);
  truncated.resize(truncated.size() - 1);
  EXPECT_NE(error_of([&] { session::decode_accept(truncated); }).find("context_length"), std::string::npos);
}

// Verbs set-up: a data connection's join and the grant that hands out its token.
TEST(VerbsSetUp, JoinAndGrantRoundTripAndRefuseWhatTheyDoNotKnow) {
  const protocol::Join join{.index = 3, .token = {std::byte{7}, std::byte{9}}};
  const auto bytes = protocol::encode(join);
  EXPECT_TRUE(protocol::is_join(bytes));
  EXPECT_FALSE(protocol::is_join(protocol::encode(protocol::Hello{})));
  EXPECT_EQ(protocol::decode_join(bytes).token, join.token);
  EXPECT_EQ(protocol::decode_join(bytes).index, 3u);
  auto far = bytes;
  far[4] = std::byte{64};
  EXPECT_NE(error_of([&] { protocol::decode_join(far); }).find("join.index = 64"), std::string::npos);
  EXPECT_NE(error_of([&] { protocol::decode_join(std::span(bytes).first(39)); }).find("join: 39 bytes"),
            std::string::npos);

  const protocol::Welcome welcome{.buffer_bytes = 1 << 20, .address = 0x1000, .rkey = 5, .huge_ppm = 0};
  const protocol::Token token{std::byte{1}};
  const auto head = session::encode_grant_head(welcome, token);
  const auto accept = session::encode(session::Accept{.has_mac = false, .mac = {}, .context = {{"host_cpus", "4"}}});
  std::vector<std::byte> grant(head.begin(), head.end());
  grant.insert(grant.end(), accept.begin(), accept.end());
  const session::Grant decoded = session::decode_grant(grant, 1 << 20);
  EXPECT_EQ(decoded.welcome.rkey, 5u);
  EXPECT_EQ(decoded.token, token);
  EXPECT_EQ(decoded.accept.context.at("host_cpus"), "4");
  EXPECT_NE(error_of([&] { session::decode_grant(grant, 2 << 20); }).find("welcome.buffer_bytes"), std::string::npos);
  EXPECT_NE(error_of([&] { session::decode_grant(std::span(grant).first(63), 1 << 20); }).find("grant: 63 bytes"),
            std::string::npos);
  grant.pop_back();
  EXPECT_NE(error_of([&] { session::decode_grant(grant, 1 << 20); }).find("context_length"), std::string::npos);
}

TEST(Session, ContextIsAFlatObjectOfShortStrings) {
  auto parse = [](std::string_view text) { return session::decode_context(std::as_bytes(std::span(text))); };
  EXPECT_EQ(parse(R"({"kernel":"Linux 6.1"})").at("kernel"), "Linux 6.1");
  EXPECT_NE(error_of([&] { parse(std::string(1000, '[')); }).find("context"), std::string::npos);
  EXPECT_NE(error_of([&] { parse(R"({"a":{"b":"c"}})"); }).find("nested"), std::string::npos);
  EXPECT_NE(error_of([&] { parse(R"({"a":5})"); }).find("context.a: a JSON number"), std::string::npos);
  EXPECT_NE(error_of([&] { parse(R"({"a b":"c"})"); }).find("key"), std::string::npos);
  EXPECT_NE(error_of([&] { parse(R"([1,2])"); }).find("a JSON array where an object"), std::string::npos);
  const std::string secret_looking = R"({"x":")" + std::string(300, 'y') + R"("})";
  const std::string error = error_of([&] { parse(secret_looking); });
  EXPECT_EQ(error.find("yyyy"), std::string::npos) << "untrusted input echoed: " << error;
}

// A secret file of mode 600 in the test's temporary directory.
std::string secret_file(const std::string& name, const std::string& secret, mode_t mode = 0600) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << secret << "\n";
  chmod(path.c_str(), mode);
  return path;
}

TEST(Secret, FileMustBePrivateAndNonEmpty) {
  EXPECT_EQ(load_secret(secret_file("wz-secret-ok", "hunter2")), "hunter2");
  EXPECT_NE(error_of([&] { load_secret(secret_file("wz-secret-open", "hunter2", 0644)); }).find("chmod 600"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_secret(secret_file("wz-secret-empty", "")); }).find("1 to 4096"), std::string::npos);
  EXPECT_NE(error_of([&] { load_secret("/nonexistent/secret"); }).find("No such file"), std::string::npos);
}

TEST(Secret, LongerThanTheLimitIsRefusedNotCut) {
  const std::string limit(4096, 's');
  EXPECT_EQ(load_secret(secret_file("wz-secret-4096", limit)), limit);  // 4096 bytes and a newline
  // Two files that share their first 4096 bytes must not both load (they would authenticate each other).
  const std::string error = error_of([&] { load_secret(secret_file("wz-secret-4097", limit + "x")); });
  EXPECT_NE(error.find("4098 bytes, over the 4096-byte limit"), std::string::npos) << error;
}

TEST(Secret, FifoIsRefusedWithoutBlocking) {
  const std::string path = ::testing::TempDir() + "wz-secret-fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { load_secret(path); }).find("not a regular file"), std::string::npos);
  ::unlink(path.c_str());
}

TEST(Secret, EnvironmentSetButEmptyIsAnError) {
  ::setenv("WIREZIP_SECRET_FILE", "", 1);
  EXPECT_NE(error_of([] { secret_file_path(""); }).find("WIREZIP_SECRET_FILE is set but empty"), std::string::npos);
  EXPECT_EQ(secret_file_path("/given"), "/given");  // the flag wins
  ::setenv("WIREZIP_SECRET_FILE", "/from/env", 1);
  EXPECT_EQ(secret_file_path(""), "/from/env");
  ::unsetenv("WIREZIP_SECRET_FILE");
  EXPECT_EQ(secret_file_path(""), "");
}

LinkOptions link_options(const std::string& secret) {
  LinkOptions options;
  options.buffer_bytes = 64 << 10;
  options.depth = 4;
  options.timeout = 2000ms;
  options.secret = secret;
  options.context = {{"hostname", "server-under-test"}};
  return options;
}

// Serves one link with `server` options while a client with `client` options connects. Returns
// the client's error ("" when it connected) and the server's.
std::pair<std::string, std::string> meet(const LinkOptions& server, const LinkOptions& client,
                                         std::map<std::string, std::string>* peer_context = nullptr) {
  auto listener = listen(TransportKind::tcp, server, "127.0.0.1", 0);
  std::string server_error;
  std::jthread acceptor([&] {
    try {
      listener->accept(3000ms);
    } catch (const PeerError& e) {
      server_error = e.what();
    }
  });
  std::string client_error;
  try {
    auto endpoint = connect(TransportKind::tcp, client, "127.0.0.1", listener->port());
    if (peer_context) *peer_context = endpoint->peer_context();
  } catch (const Error& e) {
    client_error = e.what();
  }
  acceptor.join();
  return {client_error, server_error};
}

TEST(Authentication, BothSidesProveTheSecret) {
  std::map<std::string, std::string> context;
  const auto [client, server] = meet(link_options("s3cret"), link_options("s3cret"), &context);
  EXPECT_EQ(client, "");
  EXPECT_EQ(server, "");
  EXPECT_EQ(context.at("hostname"), "server-under-test");
}

TEST(Authentication, AServerWithASecretRefusesOtherPeers) {
  const auto [client, server] = meet(link_options("s3cret"), link_options(""));
  EXPECT_NE(client.find("requires authentication"), std::string::npos) << client;
  const auto [client2, server2] = meet(link_options("s3cret"), link_options("guess"));
  EXPECT_NE(client2.find("authentication failed"), std::string::npos) << client2;
  EXPECT_NE(server2.find("authentication failed"), std::string::npos) << server2;
}

TEST(Authentication, AClientWithASecretRefusesAnOpenServer) {
  const auto [client, server] = meet(link_options(""), link_options("s3cret"));
  EXPECT_NE(client.find("does not authenticate"), std::string::npos) << client;
}

TEST(Authentication, AProofIsBoundToBothNoncesAndTheSetUp) {
  const std::array<std::byte, 24> hello{};
  const std::array<std::byte, 32> welcome{};
  const session::Nonce a{std::byte{1}}, b{std::byte{2}};
  const session::Transcript transcript{hello, welcome};
  const auto mac = session::proof("k", "wirezip-v3 client", a, b, transcript);
  EXPECT_EQ(mac, session::proof("k", "wirezip-v3 client", a, b, transcript));
  EXPECT_NE(mac, session::proof("k", "wirezip-v3 client", b, b, transcript));  // a fresh challenge
  EXPECT_NE(mac, session::proof("k", "wirezip-v3 server", a, b, transcript));  // the other role
  EXPECT_NE(mac, session::proof("K", "wirezip-v3 client", a, b, transcript));
  std::array<std::byte, 24> other_hello{};
  other_hello[4] = std::byte{1};
  EXPECT_NE(mac, session::proof("k", "wirezip-v3 client", a, b, {other_hello, welcome}));
}

TEST(Quit, WithASecretOnlyAnAuthenticatedPeerStopsTheServer) {
  auto listener = listen(TransportKind::tcp, link_options("s3cret"), "127.0.0.1", 0);
  std::jthread intruder([&] {
    EXPECT_THROW(send_quit(TransportKind::tcp, link_options("wrong"), "127.0.0.1", listener->port()), Error);
  });
  EXPECT_THROW(listener->accept(3000ms), PeerError);
  intruder.join();
  std::jthread owner([&] { send_quit(TransportKind::tcp, link_options("s3cret"), "127.0.0.1", listener->port()); });
  EXPECT_EQ(listener->accept(3000ms), nullptr);
}

// What a ring listener (bench_collective --transport=tcp) meets when a local process connects
// first: a silent stranger and one without the job's secret must not keep the real neighbour out.
// The deadline is long (60 s) so that "still pending" below cannot depend on the machine's speed.
TEST(PendingSetUps, StrangersDoNotKeepTheRealPeerOut) {
  LinkOptions server = link_options("job-secret");
  server.timeout = 60000ms;
  auto listener = listen(TransportKind::tcp, server, "127.0.0.1", 0);
  std::unique_ptr<Endpoint> accepted;
  std::vector<std::string> strangers;
  std::jthread ring_accept([&] {  // as the ring's accept does: a PeerError is a stranger, wait on
    while (!accepted) {
      try {
        if (!(accepted = listener->accept(60000ms))) return;
      } catch (const PeerError& e) {
        strangers.push_back(e.what());
      }
    }
  });
  const tcp::Socket silent = tcp::connect_to("127.0.0.1", listener->port(), 2000ms);
  EXPECT_THROW(connect(TransportKind::tcp, link_options("wrong"), "127.0.0.1", listener->port()), Error);
  auto neighbour = connect(TransportKind::tcp, link_options("job-secret"), "127.0.0.1", listener->port());
  ring_accept.join();
  ASSERT_NE(accepted, nullptr);
  ASSERT_EQ(strangers.size(), 1u);
  EXPECT_NE(strangers[0].find("authentication failed"), std::string::npos) << strangers[0];
  EXPECT_FALSE(tcp::wait_readable(silent, 0ms)) << "the silent stranger was answered or dropped first";
  neighbour->post_write(0, 0, 16, 7);  // and the link works
  EXPECT_EQ(accepted->wait_arrival().imm, 7u);
}

}  // namespace
}  // namespace wirezip::rdma
