#pragma once
// Internal to the verbs transport: one owner type per ibv / rdma_cm object, the rdma_cm event
// helpers every connection step uses, and the port facts an endpoint records.
//
// Every deleter is noexcept and logs a failure to stderr instead of throwing: teardown runs in
// destructors, often while an exception is already in flight.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "wirezip/rdma/verbs_devices.hpp"

namespace wirezip::rdma::verbs {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const noexcept;
};
struct ContextDeleter {
  void operator()(ibv_context* context) const noexcept;
};
struct ChannelDeleter {
  void operator()(rdma_event_channel* channel) const noexcept;
};
// Destroying an id waits until every event reported for it was acked: ack (destroy Event) first.
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const noexcept;
};
struct EventDeleter {  // rdma_ack_cm_event
  void operator()(rdma_cm_event* event) const noexcept;
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const noexcept;
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const noexcept;
};
struct CompChannelDeleter {
  void operator()(ibv_comp_channel* channel) const noexcept;
};
// A CQ with a completion channel must go before the channel, with every event it got acked.
struct CqDeleter {
  void operator()(ibv_cq* cq) const noexcept;
};
// A QP made by rdma_create_qp hangs off its cm id (id->qp), which rdma_cm uses for the
// INIT -> RTR -> RTS transitions of accept/connect; destroying it clears that link too.
struct QpDeleter {
  rdma_cm_id* id = nullptr;
  void operator()(ibv_qp* qp) const noexcept;
};

using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using Context = std::unique_ptr<ibv_context, ContextDeleter>;
using Channel = std::unique_ptr<rdma_event_channel, ChannelDeleter>;
using CmId = std::unique_ptr<rdma_cm_id, CmIdDeleter>;
using Event = std::unique_ptr<rdma_cm_event, EventDeleter>;
using Pd = std::unique_ptr<ibv_pd, PdDeleter>;
using Mr = std::unique_ptr<ibv_mr, MrDeleter>;
using CompChannel = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using Cq = std::unique_ptr<ibv_cq, CqDeleter>;
using Qp = std::unique_ptr<ibv_qp, QpDeleter>;

// An event channel whose fd is non-blocking: waits poll() it with a deadline, and an endpoint
// can look for DISCONNECTED without blocking.
Channel create_channel();
CmId create_id(rdma_event_channel* channel);
// A completion channel whose fd is non-blocking, like the event channel's.
CompChannel create_comp_channel(ibv_context* context);

// The next event on `channel` within `timeout`, or null when none came.
Event next_event(rdma_event_channel* channel, std::chrono::milliseconds timeout);
// An event already queued on `channel`, or null; never blocks.
Event poll_event(rdma_event_channel* channel);
// The next event, which must be `wanted` and for `id`. Otherwise throws "<what>: <event> ...",
// naming the event (rdma_event_str) and its status (a reject reason, or an errno).
Event expect_event(rdma_event_channel* channel, rdma_cm_id* id, rdma_cm_event_type wanted,
                   std::chrono::milliseconds timeout, std::string_view what);

// A socket address for rdma_cm: "host" resolved by getaddrinfo (empty = any address), and port.
struct SocketAddress {
  sockaddr_storage storage{};
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
};
SocketAddress resolve_address(const std::string& host, std::uint16_t port);

// The IPv4 address of the other end of a connection, for messages ("?" where it has none).
std::string peer_address(rdma_cm_id* id);

// rdma_cm takes timeouts as int milliseconds.
int timeout_ms(std::chrono::milliseconds timeout);

// The facts of `port` on an open device (defined in verbs_devices.cpp).
VerbsPort describe_port(ibv_context* context, int port);

}  // namespace wirezip::rdma::verbs
