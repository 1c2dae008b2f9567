#pragma once
// Internal: tcp link set-up (docs/PROTOCOL.md section 1). The passive side authenticates a peer on
// the stream before it looks at what the peer asks for: hello (its magic only) -> challenge ->
// response (its MAC) -> only then the request against this side's limits, the buffer, the welcome
// and the accept. Until its response checks out a connection costs a fixed-size record here and
// nothing else: no buffer, no answer but the challenge or one refusal that names no host fact.
// Set-ups run side by side, at most kMaxPending, each within one deadline from its accept (not
// renewed per byte), so a silent or slow stranger holds one slot, never the peer behind it.
#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "protocol.hpp"
#include "session.hpp"
#include "tcp_socket.hpp"

namespace wirezip::rdma::tcp {

using Clock = std::chrono::steady_clock;

// A peer that proved it holds the secret (or any peer, on a server without one).
struct Authenticated {
  Socket socket;
  std::string who;            // "ADDR:PORT"
  Clock::time_point deadline;  // of the whole set-up, counted from the accept
  std::array<std::byte, protocol::kHelloSize> hello;
  session::Nonce challenge;
  session::Response response;
};

class PendingSetups {
 public:
  // Beyond this many, a new connection pushes out the oldest pending one: a crowd of strangers
  // then holds no slot longer than it takes kMaxPending newer connections to arrive, while an
  // honest peer needs its slot for one round trip. (Refusing new ones instead would let 16 silent
  // connections, renewed every deadline, shut everyone else out.)
  static constexpr std::size_t kMaxPending = 16;

  PendingSetups(const Socket& listener, std::string secret, Millis deadline)
      : listener_(listener), secret_(std::move(secret)), deadline_(deadline) {}
  // Takes new connections and moves pending set-ups on until one authenticates (returned), one
  // fails (PeerError "peer ADDR:PORT: why"; the rest stay pending for the next call), or `until`
  // passes with none pending (nullopt). No connection is taken after `until`.
  std::optional<Authenticated> next(Clock::time_point until);

 private:
  struct Pending {
    Socket socket;
    std::string who;
    Clock::time_point deadline;
    bool challenged = false;  // the hello is in and the challenge out: reading the response
    std::size_t got = 0;      // bytes of the message being read
    std::array<std::byte, protocol::kHelloSize> hello{};
    std::array<std::byte, session::kResponseSize> response{};
    session::Nonce challenge{};
  };
  void expire(Clock::time_point now);
  void take_new();
  std::optional<Authenticated> advance(std::size_t index);
  [[noreturn]] void drop(std::size_t index, const std::string& reason);
  [[noreturn]] void refuse(std::size_t index, const std::string& reason, unsigned version = protocol::kVersion);

  const Socket& listener_;
  const std::string secret_;
  const Millis deadline_;
  std::deque<Pending> pending_;  // oldest first
};

// The active side's half: hello, challenge, response, then the welcome and the accept. Returns the
// welcome and sets `context` to what the server told about itself. Throws naming the step; a
// refusal throws the server's reason.
protocol::Welcome client_set_up(const Socket& socket, std::span<const std::byte> hello, const LinkOptions& options,
                                std::map<std::string, std::string>& context);

}  // namespace wirezip::rdma::tcp
