#include "tcp_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "wirezip/util/error.hpp"

namespace wirezip::rdma::tcp {
namespace {

constexpr Millis kSlice{100};  // how often blocking waits look at their stop token

std::string error_text() { return std::strerror(errno); }

int poll_one(int fd, short events, Millis timeout) {
  pollfd p{fd, events, 0};
  // poll() takes an int of milliseconds; a longer wait must not wrap to a negative (endless) one.
  const int wait = static_cast<int>(std::clamp<std::int64_t>(timeout.count(), 0, std::numeric_limits<int>::max()));
  int rc;
  do rc = ::poll(&p, 1, wait);
  while (rc < 0 && errno == EINTR);
  if (rc < 0) fail("poll: {}", error_text());
  return rc;
}

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const noexcept { freeaddrinfo(info); }
};

std::unique_ptr<addrinfo, AddrInfoDeleter> resolve(const std::string& host, std::uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_INET;  // the test beds and the paper's setups are IPv4
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &result); rc != 0)
    fail("cannot resolve '{}': {}", host, gai_strerror(rc));
  return std::unique_ptr<addrinfo, AddrInfoDeleter>(result);
}

// No Nagle delay for small messages; keepalive probes so a peer host that vanished (power, cable)
// ends the link within about a minute even when nothing is being sent.
void set_link_options(const Socket& socket) {
  const int one = 1, idle_s = 30, interval_s = 10, probes = 3;
  setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(socket.fd(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(socket.fd(), IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(socket.fd(), IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  setsockopt(socket.fd(), IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

void Socket::shutdown_both() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Socket listen_on(const std::string& host, std::uint16_t port) {
  auto info = resolve(host, port, true);
  // Non-blocking: accept_waiting takes what is there and never waits on a connection that vanished.
  Socket socket(::socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) fail("socket: {}", error_text());
  int one = 1;
  setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(socket.fd(), info->ai_addr, info->ai_addrlen) != 0)
    fail("cannot listen on {}:{}: {}", host.empty() ? "*" : host, port, error_text());
  // The longest queue the kernel allows: connections beyond it wait for a SYN retransmit (a second
  // or more), and a crowd of strangers must not push an honest peer there.
  if (::listen(socket.fd(), SOMAXCONN) != 0) fail("listen on port {}: {}", port, error_text());
  return socket;
}

std::uint16_t local_port(const Socket& socket) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
    fail("getsockname: {}", error_text());
  return ntohs(address.sin_port);
}

Socket accept_waiting(const Socket& listener, std::string* peer, bool* out_of_descriptors) {
  *out_of_descriptors = false;
  while (true) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    Socket socket(::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!socket) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Socket();
      // The connection went away before we took it: nobody to serve, not a listener failure.
      if (errno == ECONNABORTED || errno == EINTR || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE) {
        *out_of_descriptors = true;
        return Socket();
      }
      fail("accept: {}", error_text());
    }
    set_link_options(socket);
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
    *peer = fmt::format("{}:{}", text, ntohs(address.sin_port));
    return socket;
  }
}

Socket connect_to(const std::string& host, std::uint16_t port, Millis timeout) {
  auto info = resolve(host, port, false);
  Socket socket(::socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) fail("socket: {}", error_text());
  if (::connect(socket.fd(), info->ai_addr, info->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) fail("connect to {}:{}: {}", host, port, error_text());
    if (poll_one(socket.fd(), POLLOUT, timeout) == 0)
      fail("connect to {}:{}: no answer within {} ms", host, port, timeout.count());
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) fail("connect to {}:{}: {}", host, port, std::strerror(error));
  }
  // Blocking from here on; every blocking call below is bounded by poll().
  fcntl(socket.fd(), F_SETFL, fcntl(socket.fd(), F_GETFL) & ~O_NONBLOCK);
  set_link_options(socket);
  return socket;
}

// Both try the socket first and poll only when it would block: on a busy link the bytes or the
// room are usually there already, and a poll before every call doubles the system calls.
void send_all(const Socket& socket, std::span<const std::byte> bytes, Millis timeout) {
  send_all(socket, bytes, {}, timeout);
}

void send_all(const Socket& socket, std::span<const std::byte> head, std::span<const std::byte> body, Millis timeout) {
  while (!head.empty() || !body.empty()) {
    iovec parts[2] = {{const_cast<std::byte*>(head.data()), head.size()},
                      {const_cast<std::byte*>(body.data()), body.size()}};
    msghdr message{};
    message.msg_iov = head.empty() ? parts + 1 : parts;
    message.msg_iovlen = head.empty() ? 1 : 2;
    const ssize_t n = ::sendmsg(socket.fd(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      const std::size_t sent = static_cast<std::size_t>(n), from_head = std::min(sent, head.size());
      head = head.subspan(from_head);
      body = body.subspan(sent - from_head);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail("send: {}", error_text());
    if (poll_one(socket.fd(), POLLOUT, timeout) == 0) fail("send: the peer took nothing for {} ms", timeout.count());
  }
}

std::size_t send_some(const Socket& socket, std::span<const std::byte> bytes) {
  while (true) {
    const ssize_t n = ::send(socket.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    if (errno != EINTR) fail("send: {}", error_text());
  }
}

// While a long message arrives, poll() wakes the reader only once a good part of its rest is there
// (SO_RCVLOWAT), not for every segment: each wake-up is a context switch on a host whose cores the
// link shares with the codecs. Back to one byte when the message is in, so a header never waits.
class LowWater {
 public:
  explicit LowWater(const Socket& socket) : fd_(socket.fd()) {}
  LowWater(const LowWater&) = delete;
  LowWater& operator=(const LowWater&) = delete;
  ~LowWater() { set(1); }
  void expect(std::size_t rest) { set(rest < kMin ? 1 : static_cast<int>(std::min(rest, kMax))); }

 private:
  static constexpr std::size_t kMin = std::size_t{64} << 10, kMax = std::size_t{256} << 10;
  void set(int bytes) {
    // A refusal costs only the wake-ups this saves: the reader still takes whatever has come.
    if (bytes != current_ && ::setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0) current_ = bytes;
  }
  int fd_;
  int current_ = 1;
};

bool recv_all(const Socket& socket, std::span<std::byte> bytes, Millis timeout, std::stop_token stop) {
  const std::size_t wanted = bytes.size();
  LowWater low_water(socket);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    if (stop.stop_requested()) fail("recv: stopped");
    const ssize_t n = ::recv(socket.fd(), bytes.data(), bytes.size(), MSG_DONTWAIT);
    if (n == 0) {
      if (bytes.size() == wanted) return false;
      fail("recv: the peer closed the connection in the middle of a message");
    }
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      deadline = std::chrono::steady_clock::now() + timeout;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail("recv: {}", error_text());
    low_water.expect(bytes.size());
    if (poll_one(socket.fd(), POLLIN, std::min(kSlice, timeout)) == 0) {
      // Idle between messages is fine; a message that stops half way is not.
      if (bytes.size() == wanted && stop.stop_possible()) {
        deadline = std::chrono::steady_clock::now() + timeout;
        continue;
      }
      if (std::chrono::steady_clock::now() > deadline) fail("recv: no data from the peer for {} ms", timeout.count());
    }
  }
  return true;
}

bool wait_readable(const Socket& socket, Millis timeout) { return poll_one(socket.fd(), POLLIN, timeout) > 0; }

}  // namespace wirezip::rdma::tcp
