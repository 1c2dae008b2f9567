#include "verbs_pending.hpp"

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "wirezip/rdma/transport.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/poll_wait.hpp"

namespace wirezip::rdma::verbs {

namespace {

void reject_request(rdma_cm_id* id, std::string_view reason, unsigned version) {
  const auto refusal = protocol::encode_refusal(reason, version);
  rdma_reject(id, refusal.data(), static_cast<std::uint8_t>(refusal.size()));
}

}  // namespace

std::string Request::who() const { return peer_address(id.get()); }

void Request::reject(std::string_view reason, unsigned version) const { reject_request(id.get(), reason, version); }

std::optional<Request> next_request(rdma_event_channel* channel, Clock::time_point deadline) {
  while (true) {
    Request request;  // declared first: the event is acked before the id could be destroyed
    Event event = next_event(channel, left_until(deadline));
    if (!event) return std::nullopt;
    if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
    request.id.reset(event->id);
    const rdma_conn_param& param = event->param.conn;
    request.size = std::min<std::size_t>(param.private_data_len, kRequestBytes);
    if (request.size > 0) std::memcpy(request.data.data(), param.private_data, request.size);
    event.reset();
    return request;
  }
}

std::optional<Authenticated> PendingSetups::next(Clock::time_point until) {
  std::vector<pollfd> fds;
  while (true) {
    if (!unreported_.empty()) {
      const std::string why = std::move(unreported_.front());
      unreported_.pop_front();
      throw PeerError(why);
    }
    const auto now = Clock::now();
    expire(now);
    const bool taking = now < until;
    if (!taking && pending_.empty()) return std::nullopt;
    const int wait = poll_timeout_ms(now,
                                     earliest_deadline(taking ? until : Clock::time_point::max(), pending_,
                                                       [](const Pending& p) { return p.deadline; }),
                                     std::chrono::seconds(1));
    fds.clear();
    for (const Pending& p : pending_) {
      fds.push_back({p.setup->event_fd(), POLLIN, 0});
      fds.push_back({p.setup->completion_fd(), POLLIN, 0});
    }
    fds.push_back({listener_->fd, static_cast<short>(taking ? POLLIN : 0), 0});
    if (::poll(fds.data(), fds.size(), wait) < 0) {
      if (errno == EINTR) continue;
      fail("poll: {}", std::strerror(errno));
    }
    // Pending set-ups first: a peer already here goes on before new requests can push it out.
    for (std::size_t i = 0; i < pending_.size(); ++i)
      if (fds[2 * i].revents != 0 || fds[2 * i + 1].revents != 0)
        if (auto done = advance(i)) return done;
    if (taking && fds.back().revents != 0) take_waiting();
  }
}

void PendingSetups::take(Request request) {
  try {
    start(request);
  } catch (const PeerError& e) {
    if (unreported_.size() < kMaxPending) unreported_.emplace_back(e.what());
  }
}

void PendingSetups::expire(Clock::time_point now) {
  for (std::size_t i = 0; i < pending_.size(); ++i)
    if (pending_[i].deadline <= now)
      drop(i, pending_[i].refusal.empty()
                  ? fmt::format("handshake: no response to the challenge within {} ms (the set-up deadline)",
                                deadline_.count())
                  : pending_[i].refusal);
}

void PendingSetups::take_waiting() {
  for (std::size_t taken = 0; taken < kMaxPending; ++taken) {
    std::optional<Request> request = next_request(listener_, Clock::now());  // only what is queued
    if (!request) return;
    start(*request);
  }
}

void PendingSetups::start(Request& request) {
  const std::string who = request.who();
  try {
    if (protocol::is_join(request.bytes())) {
      request.reject("a data connection of no link being set up");
      fail("a data connection of no link being set up");
    }
    try {
      protocol::check_hello_version(request.bytes());
      if (request.size < kRequestBytes) fail("connect request: {} bytes, expected {}", request.size, kRequestBytes);
    } catch (const Error& e) {
      request.reject(e.what(), protocol::hello_version(request.bytes()));
      throw;
    }
    Pending pending{.setup = nullptr,
                    .who = who,
                    .deadline = Clock::now() + deadline_,
                    .request = request.data,
                    .challenge = session::random_nonce(),
                    .refusal = {}};
    try {
      pending.setup = std::make_unique<SetupConnection>(std::move(request.id));  // takes the id if it succeeds
      pending.setup->accept(
          session::encode(session::Challenge{.auth_required = !secret_.empty(), .nonce = pending.challenge}));
    } catch (const Error& e) {
      // Refused at once, with why: the peer does not wait out its own deadline for an answer.
      const unsigned version = protocol::hello_version(request.bytes());
      reject_request(pending.setup ? pending.setup->id() : request.id.get(), e.what(), version);
      throw;
    }
    pending_.push_back(std::move(pending));
  } catch (const Error& e) {
    throw PeerError(fmt::format("peer {}: {}", who, e.what()));
  }
  if (pending_.size() > kMaxPending)
    drop(0, fmt::format("dropped before it authenticated: {} newer connections are setting up", kMaxPending));
}

std::optional<Authenticated> PendingSetups::advance(std::size_t index) {
  Pending& p = pending_[index];
  if (!p.refusal.empty()) {
    bool delivered = true;
    try {
      delivered = p.setup->try_sent("refusal");
    } catch (const Error&) {
    }
    if (delivered) drop(index, p.refusal);
    return std::nullopt;
  }
  std::optional<std::span<const std::byte>> message;
  try {
    message = p.setup->try_receive("response");
  } catch (const Error& e) {
    drop(index, fmt::format("handshake: {}", e.what()));
  }
  if (!message) return std::nullopt;
  session::Response response;
  try {
    response = session::decode_response(*message);
  } catch (const Error& e) {
    refuse(index, fmt::format("handshake: {}", e.what()));
    return std::nullopt;
  }
  // The client's proof covers its whole request: the grant does not exist yet.
  if (auto why = session::check_response(response, p.challenge, secret_, {p.request, {}})) {
    refuse(index, *why);
    return std::nullopt;
  }
  Authenticated done{.setup = std::move(p.setup),
                     .who = std::move(p.who),
                     .deadline = p.deadline,
                     .request = p.request,
                     .challenge = p.challenge,
                     .response = response};
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
  return done;
}

void PendingSetups::drop(std::size_t index, std::string reason) {
  const std::string who = std::move(pending_[index].who);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));  // disconnects, frees its resources
  throw PeerError(fmt::format("peer {}: {}", who, reason));
}

void PendingSetups::refuse(std::size_t index, const std::string& reason) {
  Pending& p = pending_[index];
  try {
    p.setup->send(protocol::encode_refusal(reason), p.deadline, "refusal", SetupConnection::Delivery::posted);
  } catch (const Error&) {
    drop(index, reason);
  }
  p.refusal = reason;
}

}  // namespace wirezip::rdma::verbs
