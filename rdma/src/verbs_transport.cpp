// The verbs transport's connections, through rdma_cm: a listener (passive side), the active side,
// the quit message, and both in one process over one device.
//
// A link is set up in two stages (docs/PROTOCOL.md section 1):
// 1. The set-up connection (verbs_setup.hpp). Its connect request carries the Hello followed by a
//    Welcome describing the active side's own buffer (24 + 32 bytes: the 56 an RC connect request
//    can carry); the passive side checks only the hello's magic and accepts with the challenge in
//    the accept's private data, on a QP of fixed, small resources. The active side SENDs its
//    response; only once it authenticates (or the passive side has no secret) does the passive
//    side check the hello against its limits, allocate and register the buffer and SEND the
//    grant: its Welcome, a random token and the accept (proof and host facts), or a refusal.
//    Up to authentication the passive side has several peers' set-ups going at once
//    (verbs_pending.hpp); from the grant on, it serves the one authenticated peer.
// 2. The data connections: N = LinkOptions::qps rdma_cm connections (both sides take N from their
//    own options: they must agree), each requested with a Join carrying the token and its index,
//    one after another. They share the endpoint's buffer, MR and CQ. The set-up connection is
//    closed once they are up.
// A quit is a set-up whose hello says quit: the passive side answers an authenticated one with an
// accept alone and allocates nothing, so with a secret only an authenticated peer stops a server.
#include <arpa/inet.h>
#include <openssl/crypto.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "protocol.hpp"
#include "session.hpp"
#include "transports.hpp"
#include "verbs_endpoint.hpp"
#include "verbs_pending.hpp"
#include "verbs_setup.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip::rdma::verbs {
namespace {

static_assert(session::kMaxGrantSize <= SetupConnection::kSlotBytes &&
              protocol::kRefusalSize <= SetupConnection::kSlotBytes);

void check_options(const LinkOptions& options) {
  if (options.depth == 0 || options.depth > kMaxDepth) fail("verbs link: depth must be in [1, {}]", kMaxDepth);
  if (options.qps < 1 || options.qps > static_cast<int>(protocol::kMaxQps))
    fail("verbs link: qps must be in [1, {}]", protocol::kMaxQps);
  if (options.buffer_bytes < kMinLinkBuffer) fail("verbs link: the buffer must be at least {} bytes", kMinLinkBuffer);
}

protocol::Hello hello_for(const LinkOptions& options, bool quit) {
  return {.buffer_bytes = options.buffer_bytes,
          .depth = static_cast<std::uint32_t>(options.depth),
          .pages = options.pages,
          .quit = quit};
}

LinkOptions minimal_link(const LinkOptions& options) {
  LinkOptions mine = options;
  mine.buffer_bytes = kMinLinkBuffer;
  mine.pages = PagePolicy::small;
  mine.depth = 1;
  return mine;
}

EndpointShape shape_of(const protocol::Hello& hello, const LinkOptions& options) {
  return {.buffer_bytes = hello.buffer_bytes,
          .pages = hello.pages,
          .depth = hello.depth,
          .peer_depth = hello.depth,
          .qps = options.qps,
          .timeout = options.timeout};
}

bool same_token(const protocol::Token& a, const protocol::Token& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// Connection parameters of data connections. Responder resources let the peer RDMA READ this
// buffer (read_remote); rnr_retry 7 retries forever, so a receiver short of posted receives
// stalls the writer (and its wait times out) instead of breaking the link.
rdma_conn_param data_param(std::span<const std::byte> private_data) {
  rdma_conn_param param{};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  param.responder_resources = RDMA_MAX_RESP_RES;
  param.initiator_depth = RDMA_MAX_INIT_DEPTH;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  return param;
}

// A data connection: rdma_connect with its join, then ESTABLISHED. A reject carrying a refusal
// says why.
void connect_data(rdma_cm_id* id, const protocol::Join& join, Clock::time_point deadline, const std::string& where) {
  const auto request = protocol::encode(join);
  rdma_conn_param param = data_param(request);
  if (rdma_connect(id, &param) != 0) fail("rdma_connect({}): {}", where, std::strerror(errno));
  Event event = next_event(id->channel, left_until(deadline));
  if (event && event->event == RDMA_CM_EVENT_REJECTED) {
    const rdma_conn_param& reply = event->param.conn;
    const std::span<const std::byte> data{static_cast<const std::byte*>(reply.private_data), reply.private_data_len};
    if (protocol::is_refusal(data))
      fail("the server refused data connection {}: {}", join.index + 1, protocol::decode_refusal(data));
  }
  if (!event || event->event != RDMA_CM_EVENT_ESTABLISHED || event->status != 0 || event->id != id)
    fail("verbs connect to {}: data connection {}: {} where ESTABLISHED was expected", where, join.index + 1,
         event ? rdma_event_str(event->event) : "no event within the set-up deadline");
}

class VerbsListener final : public Listener {
 public:
  VerbsListener(const LinkOptions& options, const std::string& host, std::uint16_t port)
      : channel_(create_channel()),
        id_(create_id(channel_.get())),
        options_(options),
        pending_(channel_.get(), options.secret, options.timeout) {
    check_options(options);
    const std::string where = fmt::format("{}:{}", host.empty() ? "*" : host, port);
    SocketAddress address = resolve_address(host, port);
    if (rdma_bind_addr(id_.get(), address.get()) != 0) fail("rdma_bind_addr({}): {}", where, std::strerror(errno));
    if (rdma_listen(id_.get(), 16) != 0) fail("rdma_listen({}): {}", where, std::strerror(errno));
  }

  std::uint16_t port() const override { return ntohs(rdma_get_src_port(id_.get())); }

  std::unique_ptr<Endpoint> accept(std::chrono::milliseconds idle) override {
    std::optional<Authenticated> peer = pending_.next(Clock::now() + idle);
    if (!peer) return nullptr;
    try {
      return grant(*peer);
    } catch (const std::exception& e) {
      throw PeerError(fmt::format("peer {}: {}", peer->who, e.what()));
    }
  }

 private:
  // Stage 2, for an authenticated peer: its request against this side's limits, the buffer, the
  // grant, then the data connections.
  std::unique_ptr<Endpoint> grant(Authenticated& authenticated) {
    SetupConnection& setup = *authenticated.setup;
    const std::span<const std::byte> request = authenticated.request;
    const session::Nonce& challenge = authenticated.challenge;
    const session::Response& response = authenticated.response;
    const Clock::time_point deadline = authenticated.deadline;
    protocol::Hello hello;
    protocol::Welcome peer;
    std::unique_ptr<VerbsEndpoint> endpoint;
    try {
      hello = protocol::decode_hello(request, options_.limits);
      if (!hello.quit) {
        peer = protocol::decode_peer_buffer(request.subspan(protocol::kHelloSize), options_.limits);
        endpoint = std::make_unique<VerbsEndpoint>(create_channel(), setup.id()->verbs, setup.id()->port_num,
                                                   shape_of(hello, options_));
      }
    } catch (const Error& e) {
      refuse(setup, e.what(), deadline);
    }
    if (hello.quit) {
      setup.send(session::encode(session::make_accept(challenge, response, options_, {request, {}})), deadline,
                 "accept", SetupConnection::Delivery::acked_or_gone);
      return nullptr;
    }
    endpoint->set_peer(peer, peer_address(setup.id()));
    const protocol::Token token = session::random_nonce();
    const auto head = session::encode_grant_head(endpoint->welcome(), token);
    std::vector<std::byte> message(head.begin(), head.end());
    const auto accept = session::encode(session::make_accept(challenge, response, options_, {request, head}));
    message.insert(message.end(), accept.begin(), accept.end());
    setup.send(message, deadline, "grant", SetupConnection::Delivery::acked);
    for (int i = 0; i < options_.qps; ++i) join(*endpoint, token, static_cast<std::uint32_t>(i), deadline);
    return endpoint;
  }

  // Accepts data connection `index` of the link being set up. Other set-ups' requests meanwhile
  // join the pending ones; stray joins are refused; the wait goes on until the deadline.
  void join(VerbsEndpoint& endpoint, const protocol::Token& token, std::uint32_t index, Clock::time_point deadline) {
    while (true) {
      std::optional<Request> more = next_request(channel_.get(), deadline);
      if (!more)
        fail(
            "data connection {} of {} (qps) did not come within the set-up deadline; do both sides use the same --qps?",
            index + 1, options_.qps);
      protocol::Join join;
      try {
        join = protocol::decode_join(more->bytes());
      } catch (const Error&) {
        pending_.take(std::move(*more));  // another peer's set-up: it goes on with the others
        continue;
      }
      if (!same_token(join.token, token) || join.index != index) {
        more->reject("not a data connection of the link being set up");
        continue;
      }
      if (rdma_migrate_id(more->id.get(), endpoint.channel()) != 0) fail("rdma_migrate_id: {}", std::strerror(errno));
      rdma_cm_id* id = endpoint.add_connection(std::move(more->id));
      rdma_conn_param param = data_param({});
      if (rdma_accept(id, &param) != 0) fail("rdma_accept: {}", std::strerror(errno));
      expect_event(endpoint.channel(), id, RDMA_CM_EVENT_ESTABLISHED, left_until(deadline), "verbs accept");
      return;
    }
  }

  // Tells the peer why on the set-up connection (best effort: it may be gone), then fails.
  [[noreturn]] static void refuse(SetupConnection& setup, const std::string& reason, Clock::time_point deadline) {
    try {
      setup.send(protocol::encode_refusal(reason), deadline, "refusal", SetupConnection::Delivery::acked);
    } catch (const std::exception&) {
    }
    throw Error(reason);
  }

  // Owners: pending set-ups (ids of their own channels) first, then the id, then its channel.
  Channel channel_;
  CmId id_;
  LinkOptions options_;
  PendingSetups pending_;
};

std::unique_ptr<Endpoint> connect_active(const LinkOptions& options, const std::string& host, std::uint16_t port,
                                         bool quit) {
  check_options(options);
  const auto deadline = Clock::now() + options.timeout;
  const std::string where = fmt::format("{}:{}", host, port);
  const SocketAddress address = resolve_address(host, port);
  const Channel resolving = create_channel();
  CmId first = create_id(resolving.get());
  resolve(first.get(), address, deadline, where);
  const std::string device = ibv_get_device_name(first->verbs->device);
  if (!options.device.empty() && device != options.device)
    fail("verbs connect to {}: rdma_cm routes it over {}, not the device asked for ({})", where, device,
         options.device);

  SetupConnection setup(std::move(first));
  // The request: what we ask for, and our own buffer (none for a quit).
  std::unique_ptr<VerbsEndpoint> endpoint;
  const protocol::Hello hello = hello_for(options, quit);
  if (!quit)
    endpoint = std::make_unique<VerbsEndpoint>(create_channel(), setup.id()->verbs, setup.id()->port_num,
                                               shape_of(hello, options));
  RequestData request{};
  const auto hello_bytes = protocol::encode(hello);
  std::copy(hello_bytes.begin(), hello_bytes.end(), request.begin());
  if (endpoint) {
    const auto mine = protocol::encode(endpoint->welcome());
    std::copy(mine.begin(), mine.end(), request.begin() + protocol::kHelloSize);
  }

  session::Grant grant;
  try {
    const auto reply = setup.connect(request, deadline, where);
    const session::Challenge challenge = session::decode_challenge(reply);
    const session::Response response = session::answer(challenge, options, {request, {}});
    setup.send(session::encode(response), deadline, "response", SetupConnection::Delivery::posted);
    const auto answer = setup.receive(deadline, quit ? "accept" : "grant");
    if (protocol::is_refusal(answer)) fail("the server refused the link: {}", protocol::decode_refusal(answer));
    if (quit) {
      session::check_accept(session::decode_accept(answer), challenge.nonce, response, options, {request, {}});
      return nullptr;
    }
    grant = session::decode_grant(answer, options.buffer_bytes);
    session::check_accept(grant.accept, challenge.nonce, response, options,
                          {request, answer.first(session::kGrantHeadSize)});
  } catch (const Error& e) {
    fail("verbs link to {}: {}", where, e.what());
  }
  endpoint->set_peer(grant.welcome, where);
  endpoint->set_peer_context(std::move(grant.accept.context));
  for (int i = 0; i < options.qps; ++i) {
    CmId id = create_id(endpoint->channel());
    resolve(id.get(), address, deadline, where);
    rdma_cm_id* raw = endpoint->add_connection(std::move(id));
    connect_data(raw, {.index = static_cast<std::uint32_t>(i), .token = grant.token}, deadline, where);
  }
  return endpoint;
}

}  // namespace

std::unique_ptr<Listener> listen(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  list_verbs_ports();  // NoDeviceError, before anything is made
  return std::make_unique<VerbsListener>(options, host, port);
}

std::unique_ptr<Endpoint> connect(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  list_verbs_ports();
  return connect_active(options, host, port, false);
}

void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  list_verbs_ports();
  connect_active(minimal_link(options), host, port, true);
}

LinkPair connect_loopback(const LinkOptions& options) {
  const VerbsPort port = pick_verbs_port(options.device);  // NoDeviceError, before anything is made
  if (port.ipv4.empty())
    fail("device {} has no IPv4 address on its netdev{}; rdma_cm needs one", port.device,
         port.netdev.empty() ? "" : " " + port.netdev);
  LinkOptions mine = options;
  mine.device = port.device;
  VerbsListener listener(mine, port.ipv4, 0);
  const std::uint16_t listen_port = listener.port();

  // The passive side accepts in a thread while this one connects. If connecting fails early,
  // the join waits until the accept gives up (options.timeout).
  std::unique_ptr<Endpoint> passive;
  std::exception_ptr passive_error;
  std::exception_ptr active_error;
  std::unique_ptr<Endpoint> active;
  {
    std::jthread acceptor([&] {
      try {
        passive = listener.accept(mine.timeout);
      } catch (...) {
        passive_error = std::current_exception();
      }
    });
    threads::name_thread(acceptor, "wz-verbs-accept");
    try {
      active = connect_active(mine, port.ipv4, listen_port, false);
    } catch (...) {
      active_error = std::current_exception();
    }
  }
  // The passive side's reason comes first: the active one then only says it was rejected.
  if (passive_error) std::rethrow_exception(passive_error);
  if (active_error) std::rethrow_exception(active_error);
  if (!passive) fail("verbs loopback on {}: the listener accepted no connection", port.device);
  return {std::move(active), std::move(passive)};
}

}  // namespace wirezip::rdma::verbs
