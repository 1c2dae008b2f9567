#pragma once
// Internal: one end of a verbs link. RC QPs (one per rdma_cm data connection) on one device,
// sharing a protection domain, one registered buffer and one completion queue. The connection
// code in verbs_transport.cpp builds it in steps once set-up authenticated the peer: the
// constructor makes the buffer and CQ on the set-up connection's device, each data connection
// adds a QP, and the peer's Welcome says where to write.
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "protocol.hpp"
#include "verbs_common.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma::verbs {

// What an endpoint needs to know to size itself.
struct EndpointShape {
  std::size_t buffer_bytes = 0;
  PagePolicy pages = PagePolicy::small;
  std::size_t depth = 1;       // most of this endpoint's writes in flight
  std::size_t peer_depth = 1;  // most of the peer's writes in flight (sizes the receive queues)
  int qps = 1;                 // connections the link will have (sizes the CQ)
  std::chrono::milliseconds timeout{10000};
};

class VerbsEndpoint final : public Endpoint {
 public:
  // On the device of `context`, port `port`. The data connections' events come on `channel`.
  VerbsEndpoint(Channel channel, ibv_context* context, int port, const EndpointShape& shape);
  ~VerbsEndpoint() override;
  VerbsEndpoint(const VerbsEndpoint&) = delete;
  VerbsEndpoint& operator=(const VerbsEndpoint&) = delete;

  // Setup, in order. add_connection takes a data connection's id (on channel(), on this
  // endpoint's device) and gives it a QP with receives posted; it returns the id for
  // rdma_connect / rdma_accept.
  rdma_event_channel* channel() const { return channel_.get(); }
  rdma_cm_id* add_connection(CmId id);
  protocol::Welcome welcome() const;  // this endpoint's buffer, for the peer
  // The peer's buffer, and its address for every failure message from then on: a run against
  // several hosts must say which one went away.
  void set_peer(const protocol::Welcome& peer, const std::string& address);

  TransportKind kind() const override { return TransportKind::verbs; }
  const PageBuffer& buffer() const override { return buffer_; }
  std::size_t remote_buffer_bytes() const override { return peer_.buffer_bytes; }
  double remote_huge_fraction() const override { return peer_.huge_ppm / 1e6; }

  void post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                  std::optional<std::uint32_t> imm) override;
  std::size_t in_flight() const override;
  void wait_in_flight_at_most(std::size_t count) override;
  Arrival wait_arrival() override;
  std::optional<Arrival> poll_arrival() override;
  void read_remote(std::size_t remote_offset, std::span<std::byte> into) override;

  std::chrono::steady_clock::time_point last_heard() const override { return last_heard_; }
  std::optional<double> busy_seconds() const override;
  std::optional<double> registration_us() const override { return registration_us_; }
  std::map<std::string, std::string> device_context() const override;
  std::optional<double> link_bytes_per_second() const override;

 private:
  // Drains the CQ: send completions retire writes and reads, receive completions queue Arrivals
  // and are reposted. Any failed completion fails the link. Polling is how a verbs endpoint
  // learns of progress, so the const observers poll too: the state it updates is mutable.
  void drain() const;
  // Looks for rdma_cm events (DISCONNECTED) without blocking; throws once the link failed.
  void check_link() const;
  // Busy-polls until `ready`, for at most the link's timeout; throws naming `what`.
  template <typename Ready>
  void wait_until(Ready ready, const char* what) const;
  [[noreturn]] void fail_link(std::string reason) const;
  void attach_qp(std::size_t index);
  void post_receives(std::size_t qp_index, std::size_t count) const;
  void check_range(const char* side, std::size_t offset, std::size_t length, std::size_t size) const;

  // Owners, in construction order; destruction runs in reverse: QPs, CQ, MRs, buffers, PD, ids,
  // channel. The PD is made on the set-up connection's device context, which rdma_cm keeps open
  // while an id on it lives: the set-up id until the first data connection is added, then ids_.
  Channel channel_;
  std::vector<CmId> ids_;
  Pd pd_;
  PageBuffer buffer_;
  Mr mr_;
  PageBuffer bounce_;  // read_remote lands here: a small registered buffer
  Mr bounce_mr_;
  Cq cq_;
  std::vector<Qp> qps_;

  EndpointShape shape_;
  std::size_t receive_depth_ = 0;  // receives kept posted on each QP
  std::size_t send_depth_ = 0;     // send queue size of each QP
  double registration_us_ = 0;
  VerbsPort port_;
  protocol::Welcome peer_;
  std::string link_name_;    // "verbs link on DEVICE", plus " with ADDRESS" once the peer is known
  std::size_t next_qp_ = 0;  // writes go round-robin over the QPs

  mutable std::size_t in_flight_ = 0;
  mutable std::chrono::steady_clock::time_point busy_since_;  // when in_flight_ last left 0
  mutable double busy_seconds_ = 0;                           // closed stretches with a write in flight
  mutable std::size_t reads_done_ = 0;
  mutable std::deque<Arrival> arrivals_;
  mutable std::chrono::steady_clock::time_point last_heard_ = std::chrono::steady_clock::now();
  mutable std::optional<std::string> failure_;  // the first reason the link failed
  mutable unsigned empty_polls_ = 0;            // poll_arrival looks for disconnects now and then
};

}  // namespace wirezip::rdma::verbs
