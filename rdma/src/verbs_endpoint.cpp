#include "verbs_endpoint.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

#include "wirezip/util/error.hpp"

namespace wirezip::rdma::verbs {
namespace {

constexpr std::size_t kBounceBytes = 1 << 20;     // read_remote moves the peer's buffer in pieces of this
constexpr std::size_t kMinReceives = 256;         // receives kept posted per QP, at least
constexpr unsigned kPollsPerCheck = 1024;          // CQ polls between clock / rdma_cm event checks
constexpr std::size_t kCqMargin = 16;
constexpr std::size_t kMaxQueuedArrivals = 4096;

// A work request id: what kind of work, and for receives which QP to repost on.
enum Work : std::uint64_t { kWrite = 0, kRead = 1, kReceive = 2 };
std::uint64_t work_id(Work work, std::size_t qp) { return work | (static_cast<std::uint64_t>(qp) << 8); }

// On a failed completion only wr_id, status, qp_num and vendor_err are valid, so the kind of work
// comes from wr_id, not wc.opcode.
const char* work_name(std::uint64_t wr_id) {
  switch (wr_id & 0xff) {
    case kWrite: return "RDMA WRITE";
    case kRead: return "RDMA READ";
    case kReceive: return "RECV (of a WRITE WITH IMM)";
    default: return "unknown work request";
  }
}

}  // namespace

VerbsEndpoint::VerbsEndpoint(Channel channel, ibv_context* context, int port, const EndpointShape& shape)
    : channel_(std::move(channel)), shape_(shape) {
  if (shape.depth == 0 || shape.qps <= 0) fail("verbs link: depth and qps must be at least 1");
  if (context == nullptr) fail("verbs link: rdma_cm bound the connection to no device");
  port_ = describe_port(context, port);
  link_name_ = fmt::format("verbs link on {}", port_.device);

  pd_.reset(ibv_alloc_pd(context));
  if (!pd_) fail("ibv_alloc_pd({}): {}", port_.device, std::strerror(errno));

  buffer_ = PageBuffer::allocate(shape.buffer_bytes, shape.pages);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const auto start = std::chrono::steady_clock::now();
  mr_.reset(ibv_reg_mr(pd_.get(), buffer_.bytes().data(), buffer_.bytes().size(), access));
  registration_us_ = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (!mr_)
    fail("ibv_reg_mr({} bytes, pages={}) on {}: {}", buffer_.bytes().size(), page_policy_name(shape.pages),
         port_.device, std::strerror(errno));

  bounce_ = PageBuffer::allocate(kBounceBytes, PagePolicy::small);
  const int local_only = IBV_ACCESS_LOCAL_WRITE;  // an int: ibv_reg_mr is a macro that masks the flags
  bounce_mr_.reset(ibv_reg_mr(pd_.get(), bounce_.bytes().data(), bounce_.bytes().size(), local_only));
  if (!bounce_mr_) fail("ibv_reg_mr({} bytes, read bounce buffer) on {}: {}", kBounceBytes, port_.device, std::strerror(errno));

  // Sizes: every write of this endpoint may sit on one QP (plus one read); each QP keeps enough
  // receives for the peer's writes in flight and then some, so a slow consumer rarely stalls it.
  ibv_device_attr device{};
  if (const int rc = ibv_query_device(context, &device)) fail("ibv_query_device({}): {}", port_.device, std::strerror(rc));
  const auto max_wr = static_cast<std::size_t>(device.max_qp_wr);
  const auto max_cqe = static_cast<std::size_t>(device.max_cqe);
  const auto qps = static_cast<std::size_t>(shape.qps);
  send_depth_ = shape.depth + 1;
  receive_depth_ = std::min({std::max(4 * shape.peer_depth, kMinReceives), max_wr,
                             (max_cqe - std::min(max_cqe, send_depth_ + kCqMargin)) / qps});
  if (send_depth_ > max_wr || receive_depth_ < shape.peer_depth)
    fail("verbs link: depth {} (peer {}) x {} QPs does not fit {} (max_qp_wr {}, max_cqe {})", shape.depth,
         shape.peer_depth, qps, port_.device, max_wr, max_cqe);
  const std::size_t cqe = send_depth_ + qps * receive_depth_ + kCqMargin;
  cq_.reset(ibv_create_cq(context, static_cast<int>(std::min(cqe, max_cqe)), nullptr, nullptr, 0));
  if (!cq_) fail("ibv_create_cq({} entries) on {}: {}", cqe, port_.device, std::strerror(errno));
}

VerbsEndpoint::~VerbsEndpoint() {
  // Tell the peer first (a DREQ; our QPs go to ERR), then the members tear down in reverse order.
  // It fails, harmlessly, on a connection that never completed or that the peer already closed.
  for (const CmId& id : ids_) rdma_disconnect(id.get());
}

rdma_cm_id* VerbsEndpoint::add_connection(CmId id) {
  if (id->verbs != pd_->context)
    fail("verbs link: data connection {} is routed over {}, set-up over {}: all QPs of a link must share a device",
         ids_.size(), id->verbs ? ibv_get_device_name(id->verbs->device) : "no device", port_.device);
  if (ids_.size() == static_cast<std::size_t>(shape_.qps))
    fail("verbs link: a data connection beyond the {} (qps) the CQ was sized for", shape_.qps);
  ids_.push_back(std::move(id));
  attach_qp(ids_.size() - 1);
  return ids_.back().get();
}

// rdma_create_qp makes the RC QP and moves it to INIT (to_init); rdma_accept and the
// CONNECT_RESPONSE handling of rdma_connect take it through RTR to RTS (to_rtr, to_rts).
void VerbsEndpoint::attach_qp(std::size_t index) {
  rdma_cm_id* id = ids_[index].get();
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_.get();
  attr.recv_cq = cq_.get();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = static_cast<std::uint32_t>(send_depth_);
  attr.cap.max_recv_wr = static_cast<std::uint32_t>(receive_depth_);
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, pd_.get(), &attr) != 0)
    fail("rdma_create_qp(RC, {} send / {} receive WRs) on {}: {}", send_depth_, receive_depth_, port_.device,
         std::strerror(errno));
  qps_.emplace_back(id->qp, QpDeleter{id});
  post_receives(index, receive_depth_);
}

protocol::Welcome VerbsEndpoint::welcome() const {
  return {.buffer_bytes = buffer_.bytes().size(),
          .address = reinterpret_cast<std::uintptr_t>(buffer_.bytes().data()),
          .rkey = mr_->rkey,
          .huge_ppm = static_cast<std::uint32_t>(buffer_.backing().huge_fraction * 1e6)};
}

// A WRITE WITH IMM consumes a receive but places no bytes through it: receives carry no SGE.
void VerbsEndpoint::post_receives(std::size_t qp_index, std::size_t count) const {
  std::vector<ibv_recv_wr> work(count);
  for (std::size_t i = 0; i < count; ++i) {
    work[i].wr_id = work_id(kReceive, qp_index);
    work[i].next = i + 1 < count ? &work[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  if (const int rc = ibv_post_recv(qps_[qp_index].get(), work.data(), &bad))
    fail_link(fmt::format("ibv_post_recv({} receives, QP {}) on {}: {}", count, qp_index, port_.device, std::strerror(rc)));
}

void VerbsEndpoint::check_range(const char* side, std::size_t offset, std::size_t length, std::size_t size) const {
  if (offset > size || length > size - offset)
    fail("verbs link: {} range [{}, +{}) is outside the {}-byte buffer", side, offset, length, size);
}

void VerbsEndpoint::post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                               std::optional<std::uint32_t> imm) {
  check_range("local", local_offset, length, buffer_.bytes().size());
  check_range("remote", remote_offset, length, peer_.buffer_bytes);
  if (length > std::numeric_limits<std::uint32_t>::max()) fail("verbs link: a write of {} bytes is over 4 GiB", length);
  if (failure_) throw Error(*failure_);
  if (in_flight_ >= shape_.depth) wait_until([this] { return in_flight_ < shape_.depth; }, "post_write (a free slot)");

  const std::size_t qp = next_qp_;
  next_qp_ = (next_qp_ + 1) % qps_.size();
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(buffer_.bytes().data() + local_offset),
              .length = static_cast<std::uint32_t>(length),
              .lkey = mr_->lkey};
  ibv_send_wr work{};
  work.wr_id = work_id(kWrite, qp);
  work.sg_list = length > 0 ? &sge : nullptr;
  work.num_sge = length > 0 ? 1 : 0;
  work.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  work.send_flags = IBV_SEND_SIGNALED;
  if (imm) work.imm_data = htonl(*imm);
  work.wr.rdma.remote_addr = peer_.address + remote_offset;
  work.wr.rdma.rkey = peer_.rkey;
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qps_[qp].get(), &work, &bad))
    fail("ibv_post_send({}, {} bytes, QP {}) on {}: {}", imm ? "RDMA WRITE WITH IMM" : "RDMA WRITE", length, qp,
         port_.device, std::strerror(rc));
  if (in_flight_++ == 0) busy_since_ = std::chrono::steady_clock::now();
}

std::size_t VerbsEndpoint::in_flight() const {
  drain();
  return in_flight_;
}

std::optional<double> VerbsEndpoint::busy_seconds() const {
  drain();
  double busy = busy_seconds_;
  if (in_flight_ > 0) busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
  return busy;
}

void VerbsEndpoint::wait_in_flight_at_most(std::size_t count) {
  wait_until([&] { return in_flight_ <= count; }, "waiting for writes to complete");
}

Arrival VerbsEndpoint::wait_arrival() {
  wait_until([this] { return !arrivals_.empty(); }, "waiting for an arrival");
  const Arrival arrival = arrivals_.front();
  arrivals_.pop_front();
  return arrival;
}

std::optional<Arrival> VerbsEndpoint::poll_arrival() {
  drain();
  if (arrivals_.empty()) {
    if (failure_ || ++empty_polls_ % kPollsPerCheck == 0) check_link();
    return std::nullopt;
  }
  const Arrival arrival = arrivals_.front();
  arrivals_.pop_front();
  return arrival;
}

void VerbsEndpoint::read_remote(std::size_t remote_offset, std::span<std::byte> into) {
  check_range("remote", remote_offset, into.size(), peer_.buffer_bytes);
  for (std::size_t done = 0; done < into.size();) {
    if (failure_) throw Error(*failure_);
    const std::size_t piece = std::min(into.size() - done, bounce_.bytes().size());
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(bounce_.bytes().data()),
                .length = static_cast<std::uint32_t>(piece),
                .lkey = bounce_mr_->lkey};
    ibv_send_wr work{};
    work.wr_id = work_id(kRead, 0);
    work.sg_list = &sge;
    work.num_sge = 1;
    work.opcode = IBV_WR_RDMA_READ;
    work.send_flags = IBV_SEND_SIGNALED;
    work.wr.rdma.remote_addr = peer_.address + remote_offset + done;
    work.wr.rdma.rkey = peer_.rkey;
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(qps_[0].get(), &work, &bad))
      fail("ibv_post_send(RDMA READ, {} bytes) on {}: {}", piece, port_.device, std::strerror(rc));
    const std::size_t target = reads_done_ + 1;
    try {
      wait_until([&] { return reads_done_ >= target; }, "read_remote");
    } catch (const Error& e) {
      fail_link(e.what());  // a READ still outstanding could land in the bounce buffer later
    }
    std::memcpy(into.data() + done, bounce_.bytes().data(), piece);
    done += piece;
  }
}

std::map<std::string, std::string> VerbsEndpoint::device_context() const {
  return {{"device", port_.device},         {"fw_ver", port_.fw_ver},
          {"node_guid", port_.node_guid},   {"port", std::to_string(port_.port)},
          {"state", port_.state},           {"active_mtu", std::to_string(port_.active_mtu)},
          {"link_layer", port_.link_layer}, {"speed", port_.speed},
          {"gid", port_.gid},               {"netdev", port_.netdev},
          {"qps", std::to_string(qps_.size())}};
}

std::optional<double> VerbsEndpoint::link_bytes_per_second() const {
  if (port_.link_bytes_per_second <= 0) return std::nullopt;
  return port_.link_bytes_per_second;
}

void VerbsEndpoint::drain() const {
  std::array<ibv_wc, 32> completions;
  int count = 0;
  do {
    count = ibv_poll_cq(cq_.get(), static_cast<int>(completions.size()), completions.data());
    if (count < 0) fail_link(fmt::format("ibv_poll_cq on {}: failed ({})", port_.device, count));
    for (int i = 0; i < count; ++i) {
      const ibv_wc& wc = completions[static_cast<std::size_t>(i)];
      if (wc.status != IBV_WC_SUCCESS)
        fail_link(fmt::format("{}: {} failed: {} (vendor error {:#x})", link_name_, work_name(wc.wr_id),
                              ibv_wc_status_str(wc.status), wc.vendor_err));
      switch (wc.wr_id & 0xff) {
        case kWrite:
          // The completion is seen when polled: busy time runs to the poll, a little past the wire.
          if (--in_flight_ == 0)
            busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
          break;
        case kRead: ++reads_done_; break;
        case kReceive:
          if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
            fail_link(fmt::format("{}: the peer sent, it must only write (opcode {})", link_name_,
                                  static_cast<int>(wc.opcode)));
          // The completion says which QP and how many bytes, not where they landed: offset 0.
          // Receives are reposted at once, so only this bound keeps a flooding peer from
          // growing the queue without end.
          if (!is_keepalive(ntohl(wc.imm_data), wc.byte_len)) {
            if (arrivals_.size() >= kMaxQueuedArrivals)
              fail_link(fmt::format("{}: the peer sent over {} notifications nobody consumed (a flood)",
                                    link_name_, kMaxQueuedArrivals));
            arrivals_.push_back({.imm = ntohl(wc.imm_data), .offset = 0, .length = wc.byte_len});
          }
          last_heard_ = std::chrono::steady_clock::now();
          post_receives(static_cast<std::size_t>(wc.wr_id >> 8), 1);
          break;
      }
    }
  } while (count == static_cast<int>(completions.size()));
}

void VerbsEndpoint::set_peer(const protocol::Welcome& peer, const std::string& address) {
  peer_ = peer;
  link_name_ = fmt::format("verbs link on {} with {}", port_.device, address);
}

void VerbsEndpoint::check_link() const {
  while (!failure_) {
    const Event event = poll_event(channel_.get());
    if (!event) break;
    if (event->event == RDMA_CM_EVENT_DISCONNECTED || event->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
      failure_ = fmt::format("{}: peer disconnected ({})", link_name_, rdma_event_str(event->event));
  }
  if (failure_) throw Error(*failure_);
}

void VerbsEndpoint::fail_link(std::string reason) const {
  if (!failure_) failure_ = std::move(reason);
  throw Error(*failure_);
}

template <typename Ready>
void VerbsEndpoint::wait_until(Ready ready, const char* what) const {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + shape_.timeout;
  for (unsigned polls = 1;; ++polls) {
    drain();
    if (ready()) return;
    if (failure_ || polls % kPollsPerCheck == 0) {
      check_link();
      if (Clock::now() > deadline)
        fail("{}: {} timed out after {} ms", link_name_, what, shape_.timeout.count());
    }
  }
}

}  // namespace wirezip::rdma::verbs
