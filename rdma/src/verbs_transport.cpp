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
#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "protocol.hpp"
#include "transports.hpp"
#include "verbs_endpoint.hpp"

namespace wirezip::rdma::verbs {
namespace {

constexpr std::size_t kRequestBytes = protocol::kHelloSize + protocol::kWelcomeSize;
using RequestData = std::array<std::byte, kRequestBytes>;

void check_options(const LinkOptions& options) {
  if (options.depth == 0 || options.depth > 0xffffffffu) fail("verbs link: depth must be in 1..2^32-1");
  if (options.qps < 1) fail("verbs link: qps must be at least 1");
}

protocol::Hello hello_for(const LinkOptions& options, bool quit) {
  return {.buffer_bytes = options.buffer_bytes, .depth = static_cast<std::uint32_t>(options.depth),
          .pages = options.pages, .quit = quit};
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

// rdma_connect, then ESTABLISHED, whose private data is the passive side's Welcome.
protocol::Welcome connect_one(rdma_cm_id* id, std::span<const std::byte> request, std::chrono::milliseconds timeout,
                              const std::string& where) {
  rdma_conn_param param = connection_param(request);
  if (rdma_connect(id, &param) != 0) fail("rdma_connect({}): {}", where, std::strerror(errno));
  const Event established =
      expect_event(id->channel, id, RDMA_CM_EVENT_ESTABLISHED, timeout, fmt::format("verbs connect to {}", where));
  const rdma_conn_param& reply = established->param.conn;
  return protocol::decode_welcome({static_cast<const std::byte*>(reply.private_data), reply.private_data_len});
}

// A connect request taken off a listener: its id, now ours, and its private data.
struct Request {
  CmId id;
  RequestData data{};
  std::size_t size = 0;
  protocol::Hello hello() const { return protocol::decode_hello(std::span(data).first(size)); }
  protocol::Welcome peer() const {
    if (size < kRequestBytes) fail("verbs accept: the peer described no buffer (is it a wirezip endpoint?)");
    return protocol::decode_welcome(std::span(data).subspan(protocol::kHelloSize));
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
    const protocol::Hello hello = first->hello();
    if (hello.quit) {
      if (rdma_reject(first->id.get(), nullptr, 0) != 0) fail("rdma_reject: {}", std::strerror(errno));
      return nullptr;
    }
    const protocol::Welcome peer = first->peer();
    const std::size_t depth = std::max<std::size_t>(1, hello.depth);
    const EndpointShape shape{.buffer_bytes = hello.buffer_bytes, .pages = hello.pages, .depth = depth,
                              .peer_depth = depth, .qps = options_.qps, .timeout = options_.timeout};
    Channel channel = create_channel();
    migrate(first->id.get(), channel.get());
    rdma_cm_id* id = first->id.get();
    auto endpoint = std::make_unique<VerbsEndpoint>(std::move(channel), std::move(first->id), shape);
    endpoint->set_peer(peer);
    const auto welcome = protocol::encode(endpoint->welcome());
    accept_one(*endpoint, id, welcome, options_.timeout);
    for (int i = 1; i < options_.qps; ++i) {
      std::optional<Request> more = next_request(channel_.get(), options_.timeout);
      if (!more)
        fail("verbs accept: the peer opened {} of {} connections (qps) and no more came within {} ms; "
             "do both sides use the same --qps?", i, options_.qps, options_.timeout.count());
      if (more->size != first->size || more->data != first->data)
        fail("verbs accept: connection {} of {} asked for a different link than the first", i + 1, options_.qps);
      migrate(more->id.get(), endpoint->channel());
      accept_one(*endpoint, endpoint->add_connection(std::move(more->id)), welcome, options_.timeout);
    }
    return endpoint;
  }

 private:
  // Owners: the id is destroyed before its channel.
  Channel channel_;
  CmId id_;
  LinkOptions options_;
};

std::unique_ptr<Endpoint> connect_active(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  check_options(options);
  const std::string where = fmt::format("{}:{}", host, port);
  const SocketAddress address = resolve_address(host, port);
  const EndpointShape shape{.buffer_bytes = options.buffer_bytes, .pages = options.pages, .depth = options.depth,
                            .peer_depth = options.depth, .qps = options.qps, .timeout = options.timeout};
  Channel channel = create_channel();
  std::unique_ptr<VerbsEndpoint> endpoint;
  RequestData request{};
  protocol::Welcome peer;
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
      const auto hello = protocol::encode(hello_for(options, false));
      const auto mine = protocol::encode(endpoint->welcome());
      std::copy(hello.begin(), hello.end(), request.begin());
      std::copy(mine.begin(), mine.end(), request.begin() + protocol::kHelloSize);
    } else {
      endpoint->add_connection(std::move(id));
    }
    const protocol::Welcome welcome = connect_one(raw, request, options.timeout, where);
    if (i == 0) {
      peer = welcome;
      endpoint->set_peer(peer);
    } else if (welcome.address != peer.address || welcome.rkey != peer.rkey) {
      fail("verbs connect to {}: connection {} reached a different peer buffer than the first", where, i + 1);
    }
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
  return connect_active(options, host, port);
}

void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  list_verbs_ports();
  const std::string where = fmt::format("{}:{}", host, port);
  Channel channel = create_channel();
  CmId id = create_id(channel.get());
  resolve(id.get(), resolve_address(host, port), options.timeout, where);
  const auto hello = protocol::encode(hello_for(options, true));
  rdma_conn_param param = connection_param(hello);
  param.qp_num = 1;  // no QP: the listener rejects a quit before any QP matters
  if (rdma_connect(id.get(), &param) != 0) fail("rdma_connect({}): {}", where, std::strerror(errno));
  const Event reply = next_event(channel.get(), options.timeout);
  if (!reply) fail("verbs quit to {}: no reply within {} ms", where, options.timeout.count());
  if (reply->event != RDMA_CM_EVENT_REJECTED)
    fail("verbs quit to {}: {} where a listener rejects", where, rdma_event_str(reply->event));
  if (reply->status == 8) fail("verbs quit to {}: nobody listens there (reject reason 8)", where);
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
      active = connect_active(mine, port.ipv4, listen_port);
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
