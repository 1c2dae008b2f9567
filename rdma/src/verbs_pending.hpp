#pragma once
// Internal to the verbs transport: the passive side's set-ups up to authentication, several at
// once (docs/PROTOCOL.md section 1). Each connect request that carries a hello becomes a set-up
// connection (verbs_setup.hpp: a fixed, small set of resources whatever the hello asks for) that
// is accepted with its challenge at once; then one loop poll()s every pending set-up's rdma_cm
// channel and completion channel and moves on whichever is ready. So set-ups run side by side, at
// most kMaxPending, each within one deadline from its connect request (tcp_setup.hpp does the same
// for tcp): a silent or slow stranger holds one slot, never the peer behind it.
#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "protocol.hpp"
#include "session.hpp"
#include "verbs_setup.hpp"

namespace wirezip::rdma::verbs {

// An RC connect request carries at most 56 bytes: the hello and the active side's Welcome.
inline constexpr std::size_t kRequestBytes = protocol::kHelloSize + protocol::kWelcomeSize;
using RequestData = std::array<std::byte, kRequestBytes>;

// A connect request taken off a listener: its id, now ours, and its private data (rdma_cm pads
// an RC request's to 56 bytes; fewer means no wirezip peer).
struct Request {
  CmId id;
  RequestData data{};
  std::size_t size = 0;
  std::span<const std::byte> bytes() const { return std::span(data).first(size); }
  std::string who() const;  // the peer's address
  // Refuses it in the reject's private data (the peer prints why); the id is then done.
  void reject(std::string_view reason, unsigned version = protocol::kVersion) const;
};

// The next CONNECT_REQUEST on a listener's channel before `deadline` (now: never waits); other
// listener events are acked and passed over.
std::optional<Request> next_request(rdma_event_channel* channel, Clock::time_point deadline);

// A peer that proved it holds the secret (or any peer, on a server without one).
struct Authenticated {
  std::unique_ptr<SetupConnection> setup;
  std::string who;
  Clock::time_point deadline;  // of the whole set-up, counted from its connect request
  RequestData request{};       // the hello and the peer's Welcome, as asked
  session::Nonce challenge{};
  session::Response response;
};

class PendingSetups {
 public:
  // Beyond this many, a new request pushes out the oldest pending set-up (as tcp_setup.hpp's).
  static constexpr std::size_t kMaxPending = 16;

  PendingSetups(rdma_event_channel* listener, std::string secret, std::chrono::milliseconds deadline)
      : listener_(listener), secret_(std::move(secret)), deadline_(deadline) {}
  // Takes new requests and moves pending set-ups on until one authenticates (returned), one fails
  // (PeerError "peer ADDR: why"; the rest stay pending for the next call), or `until` passes with
  // none pending (nullopt). No request is taken after `until`.
  std::optional<Authenticated> next(Clock::time_point until);
  // A request that came while a link was being granted its data connections: it is challenged at
  // once and moved on by the next call of next(). A reason to refuse it is reported then.
  void take(Request request);

 private:
  struct Pending {
    std::unique_ptr<SetupConnection> setup;
    std::string who;
    Clock::time_point deadline;
    RequestData request{};
    session::Nonce challenge{};
    std::string refusal;  // set once refused: the refusal is being sent, then the set-up is dropped
  };
  void expire(Clock::time_point now);
  void take_waiting();
  void start(Request& request);
  std::optional<Authenticated> advance(std::size_t index);
  [[noreturn]] void drop(std::size_t index, std::string reason);
  // Sends why (without waiting) and keeps the set-up until the refusal is delivered or the deadline.
  void refuse(std::size_t index, const std::string& reason);

  rdma_event_channel* const listener_;
  const std::string secret_;
  const std::chrono::milliseconds deadline_;
  std::deque<Pending> pending_;         // oldest first
  std::deque<std::string> unreported_;  // why requests given to take() were refused, for next()
};

}  // namespace wirezip::rdma::verbs
