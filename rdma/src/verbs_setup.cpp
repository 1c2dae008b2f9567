#include "verbs_setup.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "protocol.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma::verbs {
namespace {

enum Work : std::uint64_t { kSend = 1, kReceive = 2 };
constexpr int kCqEntries = 4;  // one send and one receive in flight, at most
// Set-up waits sleep between polls: it runs once per link, and a silent stranger must not cost a core.
constexpr auto kPollInterval = std::chrono::microseconds(200);

rdma_conn_param setup_param(std::span<const std::byte> private_data) {
  rdma_conn_param param{};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  return param;
}

}  // namespace

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()), std::chrono::milliseconds(0));
}

void resolve(rdma_cm_id* id, SocketAddress address, Clock::time_point deadline, const std::string& where) {
  const std::string what = fmt::format("verbs connect to {}", where);
  if (rdma_resolve_addr(id, nullptr, address.get(), timeout_ms(left_until(deadline))) != 0)
    fail("rdma_resolve_addr({}): {}", where, std::strerror(errno));
  expect_event(id->channel, id, RDMA_CM_EVENT_ADDR_RESOLVED, left_until(deadline), what);
  if (rdma_resolve_route(id, timeout_ms(left_until(deadline))) != 0)
    fail("rdma_resolve_route({}): {}", where, std::strerror(errno));
  expect_event(id->channel, id, RDMA_CM_EVENT_ROUTE_RESOLVED, left_until(deadline), what);
}

SetupConnection::SetupConnection(CmId&& id) : channel_(create_channel()), slots_(2 * kSlotBytes) {
  ibv_context* context = id->verbs;
  if (context == nullptr) fail("verbs set-up: rdma_cm bound the connection to no device");
  const char* device = ibv_get_device_name(context->device);
  pd_.reset(ibv_alloc_pd(context));
  if (!pd_) fail("ibv_alloc_pd({}): {}", device, std::strerror(errno));
  const int local_only = IBV_ACCESS_LOCAL_WRITE;  // an int: ibv_reg_mr is a macro that masks the flags
  mr_.reset(ibv_reg_mr(pd_.get(), slots_.data(), slots_.size(), local_only));
  if (!mr_) fail("ibv_reg_mr({} bytes, set-up slots) on {}: {}", slots_.size(), device, std::strerror(errno));
  completions_ = create_comp_channel(context);
  cq_.reset(ibv_create_cq(context, kCqEntries, nullptr, completions_.get(), 0));
  if (!cq_) fail("ibv_create_cq({} entries, set-up) on {}: {}", kCqEntries, device, std::strerror(errno));
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_.get();
  attr.recv_cq = cq_.get();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 1;
  attr.cap.max_recv_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id.get(), pd_.get(), &attr) != 0)
    fail("rdma_create_qp(RC, set-up) on {}: {}", device, std::strerror(errno));
  qp_ = Qp(id->qp, QpDeleter{id.get()});
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots_.data()), .length = kSlotBytes, .lkey = mr_->lkey};
  ibv_recv_wr work{};
  work.wr_id = kReceive;
  work.sg_list = &sge;
  work.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (const int rc = ibv_post_recv(qp_.get(), &work, &bad))
    fail("ibv_post_recv(set-up) on {}: {}", device, std::strerror(rc));
  if (const int rc = ibv_req_notify_cq(cq_.get(), 0))
    fail("ibv_req_notify_cq(set-up) on {}: {}", device, std::strerror(rc));
  // Last: until here a failure leaves the id with the caller, on the channel it came on.
  if (rdma_migrate_id(id.get(), channel_.get()) != 0) fail("rdma_migrate_id: {}", std::strerror(errno));
  id_ = std::move(id);
}

SetupConnection::~SetupConnection() {
  // A DREQ to the peer; it fails, harmlessly, on a connection that never completed.
  rdma_disconnect(id_.get());
}

std::vector<std::byte> SetupConnection::connect(std::span<const std::byte> request, Clock::time_point deadline,
                                                const std::string& where) {
  rdma_conn_param param = setup_param(request);
  if (rdma_connect(id_.get(), &param) != 0) fail("rdma_connect({}): {}", where, std::strerror(errno));
  Event event = next_event(channel_.get(), left_until(deadline));
  const auto data = [&] {
    const rdma_conn_param& reply = event->param.conn;
    return std::span<const std::byte>(static_cast<const std::byte*>(reply.private_data), reply.private_data_len);
  };
  if (event && event->event == RDMA_CM_EVENT_REJECTED && protocol::is_refusal(data()))
    fail("the server refused the link: {}", protocol::decode_refusal(data()));
  if (!event || event->event != RDMA_CM_EVENT_ESTABLISHED || event->status != 0 || event->id != id_.get())
    fail("set-up connection: {} where ESTABLISHED was expected",
         event ? rdma_event_str(event->event) : "no event within the set-up deadline");
  return std::vector<std::byte>(data().begin(), data().end());
}

void SetupConnection::accept(std::span<const std::byte> reply) {
  rdma_conn_param param = setup_param(reply);
  if (rdma_accept(id_.get(), &param) != 0) fail("rdma_accept: {}", std::strerror(errno));
}

void SetupConnection::send(std::span<const std::byte> message, Clock::time_point deadline, const char* what,
                           Delivery delivery) {
  if (message.size() > kSlotBytes) fail("verbs set-up: the {} is {} bytes, over a slot", what, message.size());
  std::copy(message.begin(), message.end(), slots_.begin() + kSlotBytes);
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots_.data() + kSlotBytes),
              .length = static_cast<std::uint32_t>(message.size()),
              .lkey = mr_->lkey};
  ibv_send_wr work{};
  work.wr_id = kSend;
  work.sg_list = &sge;
  work.num_sge = 1;
  work.opcode = IBV_WR_SEND;
  work.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &work, &bad))
    fail("sending the {}: ibv_post_send: {}", what, std::strerror(rc));
  if (delivery == Delivery::posted) return;
  // This side's only receive is done before it sends anything it waits for: the completion is the SEND's.
  if (!next_completion(deadline, what) && delivery == Delivery::acked) fail("no {}: the peer disconnected", what);
}

std::span<const std::byte> SetupConnection::receive(Clock::time_point deadline, const char* what) {
  while (true) {
    if (auto message = try_receive(what)) return *message;
    if (Clock::now() >= deadline) fail("no {} within the set-up deadline", what);
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::optional<std::span<const std::byte>> SetupConnection::try_receive(const char* what) {
  if (received_) fail("verbs set-up: a second {} (one receive per connection)", what);
  bool peer_gone = false;
  while (const std::optional<ibv_wc> wc = try_completion(peer_gone, what)) {
    if (wc->wr_id == kSend) continue;  // a message of ours that was only posted
    if (wc->wr_id != kReceive || wc->opcode != IBV_WC_RECV)
      fail("verbs set-up: a completion of work {} where the {} was expected", wc->wr_id, what);
    received_ = true;
    return std::span<const std::byte>(slots_).first(std::min<std::size_t>(wc->byte_len, kSlotBytes));
  }
  if (peer_gone) fail("no {}: the peer disconnected", what);
  return std::nullopt;
}

bool SetupConnection::try_sent(const char* what) {
  bool peer_gone = false;
  while (const std::optional<ibv_wc> wc = try_completion(peer_gone, what))
    if (wc->wr_id == kSend) return true;
  return peer_gone;
}

std::optional<ibv_wc> SetupConnection::next_completion(Clock::time_point deadline, const char* what) {
  while (true) {
    bool peer_gone = false;
    if (std::optional<ibv_wc> wc = try_completion(peer_gone, what)) return wc;
    if (peer_gone) return std::nullopt;
    if (Clock::now() >= deadline) fail("no {} within the set-up deadline", what);
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::optional<ibv_wc> SetupConnection::try_completion(bool& peer_gone, const char* what) {
  // Notifications first, re-arming after each: a completion that lands after the poll below
  // then wakes a poll() on completion_fd().
  ibv_cq* notified = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(completions_.get(), &notified, &context) == 0) {
    ibv_ack_cq_events(notified, 1);  // at once: the CQ cannot be destroyed with an event unacked
    if (const int rc = ibv_req_notify_cq(cq_.get(), 0)) fail("verbs set-up: ibv_req_notify_cq: {}", std::strerror(rc));
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK) fail("verbs set-up: ibv_get_cq_event: {}", std::strerror(errno));
  const auto poll_one = [&]() -> std::optional<ibv_wc> {
    ibv_wc wc{};
    const int count = ibv_poll_cq(cq_.get(), 1, &wc);
    if (count < 0) fail("verbs set-up: ibv_poll_cq failed ({}) waiting for the {}", count, what);
    if (count == 0) return std::nullopt;
    if (wc.status != IBV_WC_SUCCESS)
      fail("no {}: {} of the set-up connection failed: {}", what, wc.wr_id == kSend ? "a SEND" : "the receive",
           ibv_wc_status_str(wc.status));
    return wc;
  };
  if (auto wc = poll_one()) return wc;
  // Anything but ESTABLISHED on a set-up connection ends it (DISCONNECTED, CONNECT_ERROR, ...).
  while (Event event = poll_event(channel_.get()))
    if (event->event != RDMA_CM_EVENT_ESTABLISHED) peer_gone = true;
  // A disconnect is final only once the CQ is empty after it: a message that came first counts.
  return peer_gone ? poll_one() : std::nullopt;
}

}  // namespace wirezip::rdma::verbs
