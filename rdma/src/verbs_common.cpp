#include "verbs_common.hpp"

#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "wirezip/util/error.hpp"

namespace wirezip::rdma::verbs {
namespace {

// Teardown cannot throw; a failure is worth a line on stderr (it usually means a leak).
void log_failure(const char* what, int error) noexcept {
  std::fprintf(stderr, "wirezip verbs teardown: %s: %s\n", what, std::strerror(error));
}

// What an event's status means: a reject reason for REJECTED, a negative errno otherwise.
std::string describe_status(const rdma_cm_event& event) {
  if (event.event == RDMA_CM_EVENT_REJECTED) {
    switch (event.status) {
      case 8: return "reject reason 8: no listener on that port";
      case 28: return "reject reason 28: refused by the peer";
      default: return fmt::format("reject reason {}", event.status);
    }
  }
  if (event.status < 0) return std::strerror(-event.status);
  return event.status == 0 ? "status 0" : fmt::format("status {}", event.status);
}

}  // namespace

void DeviceListDeleter::operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }

void ContextDeleter::operator()(ibv_context* context) const noexcept {
  if (ibv_close_device(context) != 0) log_failure("ibv_close_device", errno);
}

void ChannelDeleter::operator()(rdma_event_channel* channel) const noexcept { rdma_destroy_event_channel(channel); }

void CmIdDeleter::operator()(rdma_cm_id* id) const noexcept {
  if (rdma_destroy_id(id) != 0) log_failure("rdma_destroy_id", errno);
}

void EventDeleter::operator()(rdma_cm_event* event) const noexcept {
  if (rdma_ack_cm_event(event) != 0) log_failure("rdma_ack_cm_event", errno);
}

void PdDeleter::operator()(ibv_pd* pd) const noexcept {
  if (const int rc = ibv_dealloc_pd(pd)) log_failure("ibv_dealloc_pd", rc);
}

void MrDeleter::operator()(ibv_mr* mr) const noexcept {
  if (const int rc = ibv_dereg_mr(mr)) log_failure("ibv_dereg_mr", rc);
}

void CompChannelDeleter::operator()(ibv_comp_channel* channel) const noexcept {
  if (const int rc = ibv_destroy_comp_channel(channel)) log_failure("ibv_destroy_comp_channel", rc);
}

void CqDeleter::operator()(ibv_cq* cq) const noexcept {
  if (const int rc = ibv_destroy_cq(cq)) log_failure("ibv_destroy_cq", rc);
}

void QpDeleter::operator()(ibv_qp* qp) const noexcept {
  if (const int rc = ibv_destroy_qp(qp)) log_failure("ibv_destroy_qp", rc);
  if (id != nullptr) id->qp = nullptr;
}

Channel create_channel() {
  Channel channel(rdma_create_event_channel());
  if (!channel) fail("rdma_create_event_channel: {}", std::strerror(errno));
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0)
    fail("fcntl(rdma_cm event channel, O_NONBLOCK): {}", std::strerror(errno));
  return channel;
}

CmId create_id(rdma_event_channel* channel) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) fail("rdma_create_id(RDMA_PS_TCP): {}", std::strerror(errno));
  return CmId(id);
}

CompChannel create_comp_channel(ibv_context* context) {
  CompChannel channel(ibv_create_comp_channel(context));
  if (!channel) fail("ibv_create_comp_channel: {}", std::strerror(errno));
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0)
    fail("fcntl(completion channel, O_NONBLOCK): {}", std::strerror(errno));
  return channel;
}

Event poll_event(rdma_event_channel* channel) {
  rdma_cm_event* event = nullptr;
  if (rdma_get_cm_event(channel, &event) == 0) return Event(event);
  if (errno != EAGAIN && errno != EWOULDBLOCK) fail("rdma_get_cm_event: {}", std::strerror(errno));
  return nullptr;
}

Event next_event(rdma_event_channel* channel, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (Event event = poll_event(channel)) return event;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return nullptr;
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, timeout_ms(left)) < 0 && errno != EINTR)
      fail("poll(rdma_cm event channel): {}", std::strerror(errno));
  }
}

Event expect_event(rdma_event_channel* channel, rdma_cm_id* id, rdma_cm_event_type wanted,
                   std::chrono::milliseconds timeout, std::string_view what) {
  Event event = next_event(channel, timeout);
  if (!event) fail("{}: no {} within {} ms", what, rdma_event_str(wanted), timeout.count());
  if (event->event != wanted || event->status != 0)
    fail("{}: {} ({}) while waiting for {}", what, rdma_event_str(event->event), describe_status(*event),
         rdma_event_str(wanted));
  if (event->id != id) fail("{}: {} arrived for another connection", what, rdma_event_str(event->event));
  return event;
}

// The IPv4 address of the other end of a connection, for messages ("?" where it has none).
std::string peer_address(rdma_cm_id* id) {
  const sockaddr* address = rdma_get_peer_addr(id);
  char text[INET6_ADDRSTRLEN] = "?";
  if (address && address->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  return text;
}

SocketAddress resolve_address(const std::string& host, std::uint16_t port) {
  SocketAddress address;
  if (host.empty()) {  // all IPv4 addresses, as bench --serve expects
    auto& any = reinterpret_cast<sockaddr_in&>(address.storage);
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    any.sin_port = htons(port);
    return address;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found))
    fail("getaddrinfo({}): {}", host, gai_strerror(rc));
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, &freeaddrinfo);
  std::memcpy(&address.storage, found->ai_addr, found->ai_addrlen);
  return address;
}

int timeout_ms(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(timeout.count(), 0, INT_MAX));
}

}  // namespace wirezip::rdma::verbs
