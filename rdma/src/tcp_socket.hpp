#pragma once
// Internal: a socket file descriptor with one owner, and the few blocking operations the tcp
// transport needs, each bounded by a timeout and failing with one clear line.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stop_token>
#include <string>
#include <utility>

namespace wirezip::rdma::tcp {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Ends both directions now: a thread blocked in recv() on this socket returns.
  void shutdown_both() const;

 private:
  int fd_ = -1;
};

using Millis = std::chrono::milliseconds;

// A listening socket on host:port (host "" = all addresses, port 0 = any free port), non-blocking.
Socket listen_on(const std::string& host, std::uint16_t port);
std::uint16_t local_port(const Socket& socket);
// A connection already queued on `listener`, non-blocking, `peer` set to its "ADDR:PORT"; an empty
// Socket when none is queued, or when this process is out of descriptors (`out_of_descriptors`).
Socket accept_waiting(const Socket& listener, std::string* peer, bool* out_of_descriptors);
// Connects with a timeout; "connection refused" and "timed out" are distinct errors naming the peer.
Socket connect_to(const std::string& host, std::uint16_t port, Millis timeout);

// Sends all bytes; a peer that stops reading for `timeout` is an error.
void send_all(const Socket& socket, std::span<const std::byte> bytes, Millis timeout);
// The same for `head` then `body`, gathered: one system call and no segment of the header alone
// (which would wake the peer's reader once for it and again for the body).
void send_all(const Socket& socket, std::span<const std::byte> head, std::span<const std::byte> body, Millis timeout);
// Sends what the socket takes now, without waiting; returns how many bytes (0 when it is full).
std::size_t send_some(const Socket& socket, std::span<const std::byte> bytes);
// Receives exactly bytes.size(). Returns false on a clean end of stream before the first byte;
// throws on an error, an end of stream mid-message, or no progress for `timeout` once the message
// has begun. Without a stop token, waiting for the first byte is bounded by `timeout` too; with
// one (a reader thread between messages) it waits until stopped, then throws.
bool recv_all(const Socket& socket, std::span<std::byte> bytes, Millis timeout, std::stop_token stop = {});
// Waits up to `timeout` for bytes to read (or end of stream); false when none came.
bool wait_readable(const Socket& socket, Millis timeout);

}  // namespace wirezip::rdma::tcp
