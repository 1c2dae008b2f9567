// libFuzzer target: a live tcp endpoint (its reader and writer threads) fed arbitrary bytes by a
// peer over a socket pair. Whatever arrives, the endpoint places checked writes, acknowledges,
// answers reads, or fails the link; it never crashes, writes outside its buffer or hangs.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "wirezip/util/error.hpp"
#include "../../rdma/src/transports.hpp"

using namespace wirezip::rdma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  LinkOptions options;
  options.depth = 4;
  options.timeout = std::chrono::milliseconds(200);
  auto endpoint = tcp::endpoint_over_socket(fds[0], 64 << 10, 64 << 10, options);
  // The peer says its piece, then hangs up; answers to it pile up in the socket, unread.
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(fds[1], data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fds[1], SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  try {
    while (std::chrono::steady_clock::now() < deadline) {
      endpoint->poll_arrival();  // drains what the peer notified; throws once the link failed
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    __builtin_trap();  // the link outlived the peer's hang-up by 2 s: a hang
  } catch (const wirezip::Error&) {
  }
  endpoint.reset();
  ::close(fds[1]);
  return 0;
}
