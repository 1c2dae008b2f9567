#pragma once
// Internal to the verbs transport: the set-up connection, an rdma_cm connection of its own that
// carries the session handshake before either side's link exists (docs/PROTOCOL.md section 1).
// Its resources are the same small, fixed set whatever the peer asks for: a protection domain,
// 8 KiB registered (one receive slot, one send slot), a CQ of a few entries and an RC QP with one
// receive posted. So until its peer authenticated, a passive side holds this and nothing else:
// no link buffer, nothing pinned beyond the slots, no answer but the challenge. Its rdma_cm events
// come on a channel of its own and its CQ notifies a completion channel of its own, so a passive
// side tells set-ups apart by descriptor and moves each on without waiting for any (verbs_pending.hpp).
//
// The buffer is registered for local access only: the peer can SEND into the posted receive and
// nothing else (no RDMA WRITE or READ into it). A SEND longer than the slot fails the receive.
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "verbs_common.hpp"

namespace wirezip::rdma::verbs {

using Clock = std::chrono::steady_clock;

class SetupConnection {
 public:
  // Each message of set-up fits a slot (a grant with the largest context is 3,180 bytes).
  static constexpr std::size_t kSlotBytes = 4096;

  // Takes `id` (resolved on the active side, a connect request on the passive side), moves it
  // to a channel of its own and gives it the QP, with its one receive posted. It takes the id
  // only once all of that is done: when it throws, `id` is still the caller's (the passive side
  // rejects the request with it).
  explicit SetupConnection(CmId&& id);
  ~SetupConnection();
  SetupConnection(const SetupConnection&) = delete;
  SetupConnection& operator=(const SetupConnection&) = delete;

  rdma_cm_id* id() const { return id_.get(); }

  // Active side: rdma_connect with `request`, then ESTABLISHED. Returns the accept's private data;
  // a reject carrying a refusal throws its reason.
  std::vector<std::byte> connect(std::span<const std::byte> request, Clock::time_point deadline,
                                 const std::string& where);
  // Passive side: rdma_accept with `reply` as private data. It does not wait for ESTABLISHED (the
  // passive side has set-ups of several peers going): the peer's first SEND proves the connection.
  void accept(std::span<const std::byte> reply);

  // What a send waits for: nothing (an answer follows, and the answer is what counts), the
  // peer's acknowledgement, or that or the peer's leaving (a last message the peer may close
  // on as soon as it has it).
  enum class Delivery { posted, acked, acked_or_gone };
  // One SEND of `message` (at most kSlotBytes), from a slot only this message uses.
  void send(std::span<const std::byte> message, Clock::time_point deadline, const char* what, Delivery delivery);
  // The one message the peer SENDs (the receive is not reposted): its bytes, valid while this
  // connection lives. Throws naming `what` on a failed receive, a disconnect or the deadline.
  std::span<const std::byte> receive(Clock::time_point deadline, const char* what);

  // Without waiting, for a passive side that moves several set-ups on in one loop: poll() the two
  // descriptors (rdma_cm events of this connection, and its completions), then ask.
  int event_fd() const { return channel_->fd; }
  int completion_fd() const { return completions_->fd; }
  // The peer's message if it is in (as receive()), nullopt if not yet; throws like receive().
  std::optional<std::span<const std::byte>> try_receive(const char* what);
  // Whether the last send is done: acknowledged, or the peer is gone. Throws if it failed.
  bool try_sent(const char* what);

 private:
  // The next completion on the CQ; nullopt once the peer disconnected and none is left. Throws
  // naming `what` on a failed completion or past the deadline.
  std::optional<ibv_wc> next_completion(Clock::time_point deadline, const char* what);
  // One look, without waiting: a completion, if any; else `peer_gone` is set once the peer
  // disconnected. Takes the completion channel's notifications and re-arms it first.
  std::optional<ibv_wc> try_completion(bool& peer_gone, const char* what);

  // Owners, in construction order; destruction runs in reverse.
  Channel channel_;
  CmId id_;
  Pd pd_;
  std::vector<std::byte> slots_;  // [receive slot | send slot]
  Mr mr_;
  CompChannel completions_;
  Cq cq_;
  Qp qp_;
  bool received_ = false;
};

// What is left of a set-up deadline, for the rdma_cm waits that take a timeout.
std::chrono::milliseconds left_until(Clock::time_point deadline);

// Active side: ADDR_RESOLVED, then ROUTE_RESOLVED for `id` (on a channel of its own): after this
// the id is bound to a device and port. `where` names the peer in errors.
void resolve(rdma_cm_id* id, SocketAddress address, Clock::time_point deadline, const std::string& where);

}  // namespace wirezip::rdma::verbs
