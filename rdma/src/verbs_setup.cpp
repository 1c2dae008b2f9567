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

SetupConnection::SetupConnection(CmId id) : channel_(create_channel()), id_(std::move(id)), slots_(2 * kSlotBytes) {
  if (rdma_migrate_id(id_.get(), channel_.get()) != 0) fail("rdma_migrate_id: {}", std::strerror(errno));
  ibv_context* context = id_->verbs;
  if (context == nullptr) fail("verbs set-up: rdma_cm bound the connection to no device");
  const char* device = ibv_get_device_name(context->device);
  pd_.reset(ibv_alloc_pd(context));
  if (!pd_) fail("ibv_alloc_pd({}): {}", device, std::strerror(errno));
  const int local_only = IBV_ACCESS_LOCAL_WRITE;  // an int: ibv_reg_mr is a macro that masks the flags
  mr_.reset(ibv_reg_mr(pd_.get(), slots_.data(), slots_.size(), local_only));
  if (!mr_) fail("ibv_reg_mr({} bytes, set-up slots) on {}: {}", slots_.size(), device, std::strerror(errno));
  cq_.reset(ibv_create_cq(context, kCqEntries, nullptr, nullptr, 0));
  if (!cq_) fail("ibv_create_cq({} entries, set-up) on {}: {}", kCqEntries, device, std::strerror(errno));
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_.get();
  attr.recv_cq = cq_.get();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 1;
  attr.cap.max_recv_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id_.get(), pd_.get(), &attr) != 0)
    fail("rdma_create_qp(RC, set-up) on {}: {}", device, std::strerror(errno));
  qp_ = Qp(id_->qp, QpDeleter{id_.get()});
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots_.data()), .length = kSlotBytes, .lkey = mr_->lkey};
  ibv_recv_wr work{};
  work.wr_id = kReceive;
  work.sg_list = &sge;
  work.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (const int rc = ibv_post_recv(qp_.get(), &work, &bad))
    fail("ibv_post_recv(set-up) on {}: {}", device, std::strerror(rc));
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

void SetupConnection::accept(std::span<const std::byte> reply, Clock::time_point deadline) {
  rdma_conn_param param = setup_param(reply);
  if (rdma_accept(id_.get(), &param) != 0) fail("rdma_accept: {}", std::strerror(errno));
  expect_event(channel_.get(), id_.get(), RDMA_CM_EVENT_ESTABLISHED, left_until(deadline), "verbs set-up accept");
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
  if (received_) fail("verbs set-up: a second {} (one receive per connection)", what);
  while (true) {
    const std::optional<ibv_wc> wc = next_completion(deadline, what);
    if (!wc) fail("no {}: the peer disconnected", what);
    if (wc->wr_id == kSend) continue;  // a message of ours that was only posted
    if (wc->wr_id != kReceive || wc->opcode != IBV_WC_RECV)
      fail("verbs set-up: a completion of work {} where the {} was expected", wc->wr_id, what);
    received_ = true;
    return std::span<const std::byte>(slots_).first(std::min<std::size_t>(wc->byte_len, kSlotBytes));
  }
}

std::optional<ibv_wc> SetupConnection::next_completion(Clock::time_point deadline, const char* what) {
  bool peer_gone = false;
  while (true) {
    ibv_wc wc{};
    const int count = ibv_poll_cq(cq_.get(), 1, &wc);
    if (count < 0) fail("verbs set-up: ibv_poll_cq failed ({}) waiting for the {}", count, what);
    if (count == 1) {
      if (wc.status != IBV_WC_SUCCESS)
        fail("no {}: {} of the set-up connection failed: {}", what, wc.wr_id == kSend ? "a SEND" : "the receive",
             ibv_wc_status_str(wc.status));
      return wc;
    }
    // A disconnect is final only once the CQ is empty after it: a message that came first counts.
    if (peer_gone) return std::nullopt;
    if (Event event = poll_event(channel_.get()))
      peer_gone = event->event == RDMA_CM_EVENT_DISCONNECTED || event->event == RDMA_CM_EVENT_DEVICE_REMOVAL;
    if (!peer_gone && Clock::now() >= deadline) fail("no {} within the set-up deadline", what);
    if (!peer_gone) std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace wirezip::rdma::verbs
