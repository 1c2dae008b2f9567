// The verbs transport's connections, through rdma_cm: a listener (passive side), the active side,
// the quit message, and both in one process over one device.
//
// Set-up messages ride in rdma_cm private data. The active side's connect request carries its
// Hello followed by a Welcome describing its own buffer (24 + 32 bytes: exactly the 56 an RC
// connect request can carry), so the passive side can write back and read_remote too. The accept
// carries the passive side's Welcome.
//
// A link of N QPs is N rdma_cm connections. The active side opens them one after another, each
// once the previous is ESTABLISHED, all with the same private data; the passive side accepts the
// first, then N - 1 more identical requests from its listener into the same endpoint (one buffer,
// one MR, one CQ). Both sides take N from their own LinkOptions::qps: they must agree.
//
// The passive side checks the request against its limits (protocol::decode_hello) and refuses
// one beyond them in the reject's private data, which the active side prints. Once every QP is
// up, both run the session handshake (session.hpp) over the link itself: the connect request has
// no room left for nonces. A quit is a minimal link whose hello says quit, handshake included,
// so with a secret only an authenticated peer can stop a server.
#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "protocol.hpp"
#include "session.hpp"
#include "transports.hpp"
#include "verbs_endpoint.hpp"

namespace wirezip::rdma::verbs {
namespace {

constexpr std::size_t kRequestBytes = protocol::kHelloSize + protocol::kWelcomeSize;
using RequestData = std::array<std::byte, kRequestBytes>;

using WelcomeData = std::array<std::byte, protocol::kWelcomeSize>;

void check_options(const LinkOptions& options) {
  if (options.depth == 0 || options.depth > kMaxDepth) fail("verbs link: depth must be in [1, {}]", kMaxDepth);
  if (options.qps < 1 || options.qps > 64) fail("verbs link: qps must be in [1, 64]");
  if (options.buffer_bytes < kMinLinkBuffer) fail("verbs link: the buffer must be at least {} bytes", kMinLinkBuffer);
}

protocol::Hello hello_for(const LinkOptions& options, bool quit) {
  return {.buffer_bytes = options.buffer_bytes, .depth = static_cast<std::uint32_t>(options.depth),
          .pages = options.pages, .quit = quit};
}

LinkOptions minimal_link(const LinkOptions& options) {
  LinkOptions mine = options;
  mine.buffer_bytes = kMinLinkBuffer;
  mine.pages = PagePolicy::small;
  mine.depth = 1;  // qps stay: the passive side expects its own number of connections
  return mine;
}

// Connection parameters both sides use. Responder resources let the peer RDMA READ this buffer
// (read_remote); rnr_retry 7 retries forever, so a receiver short of posted receives stalls the
// writer (and its wait times out) instead of breaking the link.
rdma_conn_param connection_param(std::span<const std::byte> private_data) {
  rdma_conn_param param{};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  param.responder_resources = RDMA_MAX_RESP_RES;
  param.initiator_depth = RDMA_MAX_INIT_DEPTH;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  return param;
}

// ADDR_RESOLVED, then ROUTE_RESOLVED: after this the id is bound to a device and port.
void resolve(rdma_cm_id* id, SocketAddress address, std::chrono::milliseconds timeout, const std::string& where) {
  const std::string what = fmt::format("verbs connect to {}", where);
  if (rdma_resolve_addr(id, nullptr, address.get(), timeout_ms(timeout)) != 0)
    fail("rdma_resolve_addr({}): {}", where, std::strerror(errno));
  expect_event(id->channel, id, RDMA_CM_EVENT_ADDR_RESOLVED, timeout, what);
  if (rdma_resolve_route(id, timeout_ms(timeout)) != 0) fail("rdma_resolve_route({}): {}", where, std::strerror(errno));
  expect_event(id->channel, id, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout, what);
}

// rdma_connect, then ESTABLISHED, whose private data is the passive side's Welcome (returned as
// sent: the handshake's proofs cover it). A reject carrying a refusal says why.
WelcomeData connect_one(rdma_cm_id* id, std::span<const std::byte> request, std::chrono::milliseconds timeout,
                        const std::string& where) {
  rdma_conn_param param = connection_param(request);
  if (rdma_connect(id, &param) != 0) fail("rdma_connect({}): {}", where, std::strerror(errno));
  Event event = next_event(id->channel, timeout);
  if (event && event->event == RDMA_CM_EVENT_REJECTED) {
    const rdma_conn_param& reply = event->param.conn;
    const std::span<const std::byte> data{static_cast<const std::byte*>(reply.private_data), reply.private_data_len};
    if (protocol::is_refusal(data)) fail("verbs connect to {}: the server refused the link: {}", where, protocol::decode_refusal(data));
  }
  if (!event || event->event != RDMA_CM_EVENT_ESTABLISHED || event->status != 0 || event->id != id)
    fail("verbs connect to {}: {} where ESTABLISHED was expected", where,
         event ? rdma_event_str(event->event) : "no event within the timeout");
  const rdma_conn_param& reply = event->param.conn;
  if (reply.private_data_len < protocol::kWelcomeSize) fail("verbs connect to {}: the server sent no welcome", where);
  WelcomeData welcome;
  std::memcpy(welcome.data(), reply.private_data, welcome.size());
  return welcome;
}

// A connect request taken off a listener: its id, now ours, and its private data.
struct Request {
  CmId id;
  RequestData data{};
  std::size_t size = 0;
  protocol::Hello hello(const ServerLimits& limits) const { return protocol::decode_hello(std::span(data).first(size), limits); }
  protocol::Welcome peer(const ServerLimits& limits) const {
    if (size < kRequestBytes) fail("verbs accept: the peer described no buffer (is it a wirezip endpoint?)");
    return protocol::decode_peer_buffer(std::span(data).subspan(protocol::kHelloSize), limits);
  }
  std::string who() const {
    const sockaddr* address = rdma_get_peer_addr(id.get());
    char text[INET6_ADDRSTRLEN] = "?";
    if (address && address->sa_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
    return text;
  }
};

// The next CONNECT_REQUEST within `idle`; other listener events are acked and passed over.
std::optional<Request> next_request(rdma_event_channel* channel, std::chrono::milliseconds idle) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + idle;
  while (true) {
    Request request;  // declared first: the event is acked before the id could be destroyed
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    Event event = next_event(channel, std::max(left, std::chrono::milliseconds(0)));
    if (!event) return std::nullopt;
    if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
    request.id.reset(event->id);
    const rdma_conn_param& param = event->param.conn;
    request.size = std::min<std::size_t>(param.private_data_len, kRequestBytes);
    if (request.size > 0) std::memcpy(request.data.data(), param.private_data, request.size);
    event.reset();
    return request;
  }
}

void migrate(rdma_cm_id* id, rdma_event_channel* channel) {
  if (rdma_migrate_id(id, channel) != 0) fail("rdma_migrate_id: {}", std::strerror(errno));
}

// rdma_accept with our Welcome, then ESTABLISHED (the peer's RTU).
void accept_one(VerbsEndpoint& endpoint, rdma_cm_id* id, std::span<const std::byte> welcome,
                std::chrono::milliseconds timeout) {
  rdma_conn_param param = connection_param(welcome);
  if (rdma_accept(id, &param) != 0) fail("rdma_accept: {}", std::strerror(errno));
  expect_event(endpoint.channel(), id, RDMA_CM_EVENT_ESTABLISHED, timeout, "verbs accept");
}

class VerbsListener final : public Listener {
 public:
  VerbsListener(const LinkOptions& options, const std::string& host, std::uint16_t port)
      : channel_(create_channel()), id_(create_id(channel_.get())), options_(options) {
    check_options(options);
    const std::string where = fmt::format("{}:{}", host.empty() ? "*" : host, port);
    SocketAddress address = resolve_address(host, port);
    if (rdma_bind_addr(id_.get(), address.get()) != 0) fail("rdma_bind_addr({}): {}", where, std::strerror(errno));
    if (rdma_listen(id_.get(), 16) != 0) fail("rdma_listen({}): {}", where, std::strerror(errno));
  }

  std::uint16_t port() const override { return ntohs(rdma_get_src_port(id_.get())); }

  std::unique_ptr<Endpoint> accept(std::chrono::milliseconds idle) override {
    std::optional<Request> first = next_request(channel_.get(), idle);
    if (!first) return nullptr;
    const std::string who = first->who();
    try {
      return set_up(*first);
    } catch (const std::exception& e) {
      throw PeerError(fmt::format("peer {}: {}", who, e.what()));
    }
  }

 private:
  std::unique_ptr<Endpoint> set_up(Request& first) {
    protocol::Hello hello;
    protocol::Welcome peer;
    try {
      hello = first.hello(options_.limits);
      peer = first.peer(options_.limits);
    } catch (const Error& e) {
      const auto refusal = protocol::encode_refusal(e.what());  // in the reject: the client prints why
      rdma_reject(first.id.get(), refusal.data(), static_cast<std::uint8_t>(refusal.size()));
      throw;
    }
    const EndpointShape shape{.buffer_bytes = hello.buffer_bytes, .pages = hello.pages, .depth = hello.depth,
                              .peer_depth = hello.depth, .qps = options_.qps, .timeout = options_.timeout};
    Channel channel = create_channel();
    migrate(first.id.get(), channel.get());
    rdma_cm_id* id = first.id.get();
    auto endpoint = std::make_unique<VerbsEndpoint>(std::move(channel), std::move(first.id), shape);
    endpoint->set_peer(peer);
    const auto welcome = protocol::encode(endpoint->welcome());
    accept_one(*endpoint, id, welcome, options_.timeout);
    for (int i = 1; i < options_.qps; ++i) {
      std::optional<Request> more = next_request(channel_.get(), options_.timeout);
      if (!more)
        fail("verbs accept: the peer opened {} of {} connections (qps) and no more came within {} ms; "
             "do both sides use the same --qps?", i, options_.qps, options_.timeout.count());
      if (more->size != first.size || more->data != first.data)
        fail("verbs accept: connection {} of {} asked for a different link than the first", i + 1, options_.qps);
      migrate(more->id.get(), endpoint->channel());
      accept_one(*endpoint, endpoint->add_connection(std::move(more->id)), welcome, options_.timeout);
    }
    session::serve_handshake(*endpoint, {std::span(first.data).first(first.size), welcome}, options_);
    return hello.quit ? nullptr : std::move(endpoint);
  }

  // Owners: the id is destroyed before its channel.
  Channel channel_;
  CmId id_;
  LinkOptions options_;
};

std::unique_ptr<Endpoint> connect_active(const LinkOptions& options, const std::string& host, std::uint16_t port,
                                         bool quit) {
  check_options(options);
  const std::string where = fmt::format("{}:{}", host, port);
  const SocketAddress address = resolve_address(host, port);
  const EndpointShape shape{.buffer_bytes = options.buffer_bytes, .pages = options.pages, .depth = options.depth,
                            .peer_depth = options.depth, .qps = options.qps, .timeout = options.timeout};
  Channel channel = create_channel();
  std::unique_ptr<VerbsEndpoint> endpoint;
  RequestData request{};
  protocol::Welcome peer;
  WelcomeData welcome_bytes{};
  for (int i = 0; i < options.qps; ++i) {
    CmId id = create_id(endpoint ? endpoint->channel() : channel.get());
    resolve(id.get(), address, options.timeout, where);
    rdma_cm_id* raw = id.get();
    if (!endpoint) {
      const std::string device = ibv_get_device_name(raw->verbs->device);
      if (!options.device.empty() && device != options.device)
        fail("verbs connect to {}: rdma_cm routes it over {}, not the device asked for ({})", where, device,
             options.device);
      endpoint = std::make_unique<VerbsEndpoint>(std::move(channel), std::move(id), shape);
      const auto hello = protocol::encode(hello_for(options, quit));
      const auto mine = protocol::encode(endpoint->welcome());
      std::copy(hello.begin(), hello.end(), request.begin());
      std::copy(mine.begin(), mine.end(), request.begin() + protocol::kHelloSize);
    } else {
      endpoint->add_connection(std::move(id));
    }
    const WelcomeData reply = connect_one(raw, request, options.timeout, where);
    const protocol::Welcome welcome = protocol::decode_welcome(reply, options.buffer_bytes);
    if (i == 0) {
      peer = welcome;
      welcome_bytes = reply;
      endpoint->set_peer(peer);
    } else if (welcome.address != peer.address || welcome.rkey != peer.rkey) {
      fail("verbs connect to {}: connection {} reached a different peer buffer than the first", where, i + 1);
    }
  }
  try {
    session::client_handshake(*endpoint, {request, welcome_bytes}, options);
  } catch (const Error& e) {
    fail("verbs link to {}: {}", where, e.what());
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
