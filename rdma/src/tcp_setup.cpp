#include "tcp_setup.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "wirezip/util/error.hpp"
#include "wirezip/util/poll_wait.hpp"

namespace wirezip::rdma::tcp {

std::optional<Authenticated> PendingSetups::next(Clock::time_point until) {
  std::vector<pollfd> fds;
  while (true) {
    const auto now = Clock::now();
    expire(now);
    const bool taking = now < until;
    if (!taking && pending_.empty()) return std::nullopt;
    const int wait = poll_timeout_ms(now,
                                     earliest_deadline(taking ? until : Clock::time_point::max(), pending_,
                                                       [](const Pending& p) { return p.deadline; }),
                                     std::chrono::seconds(1));
    fds.clear();
    for (const Pending& p : pending_) fds.push_back({p.socket.fd(), POLLIN, 0});
    fds.push_back({listener_.fd(), static_cast<short>(taking ? POLLIN : 0), 0});
    if (::poll(fds.data(), fds.size(), wait) < 0) {
      if (errno == EINTR) continue;
      fail("poll: {}", std::strerror(errno));
    }
    // Pending set-ups first: a peer already here goes on before new connections can push it out.
    for (std::size_t i = 0; i + 1 < fds.size(); ++i)
      if (fds[i].revents != 0)
        if (auto done = advance(i)) return done;
    if (taking && fds.back().revents != 0) take_new();
  }
}

void PendingSetups::expire(Clock::time_point now) {
  for (std::size_t i = 0; i < pending_.size(); ++i)
    if (pending_[i].deadline <= now)
      drop(i, fmt::format("{} within {} ms (the set-up deadline)",
                          pending_[i].challenged ? "handshake: no response to the challenge" : "no hello", deadline_.count()));
}

void PendingSetups::take_new() {
  for (std::size_t taken = 0; taken < kMaxPending; ++taken) {
    std::string who;
    bool out_of_descriptors = false;
    Socket socket = accept_waiting(listener_, &who, &out_of_descriptors);
    if (out_of_descriptors) {
      if (!pending_.empty()) drop(0, "dropped before it authenticated: this process is out of file descriptors");
      std::this_thread::sleep_for(Millis(10));  // descriptors held elsewhere in the process: wait a little
      return;
    }
    if (!socket) return;
    pending_.push_back({.socket = std::move(socket), .who = std::move(who), .deadline = Clock::now() + deadline_});
    if (pending_.size() > kMaxPending)
      drop(0, fmt::format("dropped before it authenticated: {} newer connections are setting up", kMaxPending));
  }
}

std::optional<Authenticated> PendingSetups::advance(std::size_t index) {
  Pending& p = pending_[index];
  const std::span<std::byte> message = p.challenged ? std::span<std::byte>(p.response) : std::span<std::byte>(p.hello);
  const ssize_t n = ::recv(p.socket.fd(), message.data() + p.got, message.size() - p.got, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return std::nullopt;
  if (n < 0) drop(index, fmt::format("recv: {}", std::strerror(errno)));
  if (n == 0)
    drop(index, p.challenged ? "handshake: the peer closed the connection before its response"
                             : "no hello: the peer closed the connection");
  p.got += static_cast<std::size_t>(n);
  if (p.got < message.size()) return std::nullopt;
  if (!p.challenged) {
    try {
      protocol::check_hello_version(p.hello);
    } catch (const Error& e) {
      refuse(index, e.what(), protocol::hello_version(p.hello));
    }
    p.challenge = session::random_nonce();
    const auto challenge = session::encode(session::Challenge{.auth_required = !secret_.empty(), .nonce = p.challenge});
    // 40 bytes into a fresh connection's empty send buffer: they go at once or the peer is gone.
    if (::send(p.socket.fd(), challenge.data(), challenge.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(challenge.size()))
      drop(index, fmt::format("handshake: sending the challenge: {}", std::strerror(errno)));
    p.challenged = true;
    p.got = 0;
    return std::nullopt;
  }
  session::Response response;
  try {
    response = session::decode_response(p.response);
  } catch (const Error& e) {
    refuse(index, fmt::format("handshake: {}", e.what()));
  }
  // The client's proof covers the hello: the welcome does not exist yet.
  if (auto why = session::check_response(response, p.challenge, secret_, {p.hello, {}})) refuse(index, *why);
  Authenticated done{.socket = std::move(p.socket), .who = std::move(p.who), .deadline = p.deadline,
                     .hello = p.hello, .challenge = p.challenge, .response = response};
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
  return done;
}

void PendingSetups::drop(std::size_t index, const std::string& reason) {
  const std::string who = std::move(pending_[index].who);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));  // closes the connection
  throw PeerError(fmt::format("peer {}: {}", who, reason));
}

void PendingSetups::refuse(std::size_t index, const std::string& reason, unsigned version) {
  // Best effort and never waiting: 128 bytes fit a fresh connection's send buffer.
  const auto refusal = protocol::encode_refusal(reason, version);
  (void)::send(pending_[index].socket.fd(), refusal.data(), refusal.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  drop(index, reason);
}

namespace {

// Exactly `into.size()` bytes of the message `what`, within the link's timeout.
void receive(const Socket& socket, std::span<std::byte> into, const char* what, Millis timeout) {
  try {
    if (!recv_all(socket, into, timeout)) fail("the peer closed the connection");
  } catch (const Error& e) {
    fail("no {}: {}", what, e.what());
  }
}

// A message of `size` bytes that may be a (longer) refusal instead: then the server's reason throws.
void receive_or_refusal(const Socket& socket, std::array<std::byte, protocol::kRefusalSize>& reply, std::size_t size,
                        const char* what, Millis timeout) {
  receive(socket, std::span(reply).first(size), what, timeout);
  if (!protocol::is_refusal(std::span(reply).first(size))) return;
  receive(socket, std::span(reply).subspan(size), what, timeout);
  fail("the server refused the link: {}", protocol::decode_refusal(reply));
}

}  // namespace

protocol::Welcome client_set_up(const Socket& socket, std::span<const std::byte> hello, const LinkOptions& options,
                                std::map<std::string, std::string>& context) {
  static_assert(session::kChallengeSize <= protocol::kRefusalSize && protocol::kWelcomeSize <= protocol::kRefusalSize);
  send_all(socket, hello, options.timeout);
  std::array<std::byte, protocol::kRefusalSize> reply{};
  receive_or_refusal(socket, reply, session::kChallengeSize, "challenge", options.timeout);
  const session::Challenge challenge = session::decode_challenge(std::span(reply).first(session::kChallengeSize));
  const session::Response response = session::answer(challenge, options, {hello, {}});
  send_all(socket, session::encode(response), options.timeout);
  receive_or_refusal(socket, reply, protocol::kWelcomeSize, "welcome", options.timeout);
  const auto welcome_bytes = std::span<const std::byte>(reply).first(protocol::kWelcomeSize);
  const protocol::Welcome welcome = protocol::decode_welcome(welcome_bytes, options.buffer_bytes);
  std::vector<std::byte> accept_bytes(session::kAcceptHeaderSize);
  receive(socket, accept_bytes, "accept", options.timeout);
  accept_bytes.resize(session::kAcceptHeaderSize + session::accept_context_length(accept_bytes));
  receive(socket, std::span(accept_bytes).subspan(session::kAcceptHeaderSize), "accept", options.timeout);
  session::Accept accept = session::decode_accept(accept_bytes);
  session::check_accept(accept, challenge.nonce, response, options, {hello, welcome_bytes});
  context = std::move(accept.context);
  return welcome;
}

}  // namespace wirezip::rdma::tcp
