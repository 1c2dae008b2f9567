// The tcp transport: one-sided writes emulated over a stream. Each endpoint has a reader thread
// that places incoming writes straight into its buffer and acknowledges them, and a writer thread
// that sends whatever has to wait for room on the socket, so neither side ever waits on the other's
// reader (no deadlock). A frame without payload (an ack, a credit's notify) with nothing ahead of it
// goes from the thread that has it, if the socket takes it now: no wake-up of the writer for it.
// Everything the reader takes from the peer goes through tcp_frames.hpp's decoder and the range
// and count checks here; a violation fails the link, never the process.
#include <atomic>
#include <cstring>
#include <deque>
#include <thread>

#include "link_state.hpp"
#include "protocol.hpp"
#include "session.hpp"
#include "tcp_frames.hpp"
#include "tcp_setup.hpp"
#include "tcp_socket.hpp"
#include "transports.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip::rdma::tcp {
namespace {

// Frames waiting to be sent. Ours are bounded by our depth, acks by the peer's (at most
// kMaxDepth), plus a read response: a peer that keeps sending without reading our answers
// would grow this without end, so past the bound it is a flood and the link fails.
constexpr std::size_t kMaxQueued = 2 * kMaxDepth + 64;

struct Outgoing {
  Header header;
  const std::byte* payload = nullptr;  // into our registered buffer; stays valid while we live
  std::size_t header_sent = 0;         // bytes of the header already on the socket (begun by enqueue)
  std::size_t payload_bytes() const { return payload ? header.length : 0; }
};

class TcpEndpoint final : public Endpoint {
 public:
  TcpEndpoint(Socket socket, PageBuffer buffer, std::size_t remote_bytes, double remote_huge_fraction,
              const LinkOptions& options);
  ~TcpEndpoint() override;

  TransportKind kind() const override { return TransportKind::tcp; }
  const PageBuffer& buffer() const override { return buffer_; }
  std::size_t remote_buffer_bytes() const override { return remote_bytes_; }
  double remote_huge_fraction() const override { return remote_huge_fraction_; }
  void post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                  std::optional<std::uint32_t> imm) override;
  std::size_t in_flight() const override { return state_.in_flight(); }
  std::optional<double> busy_seconds() const override { return state_.busy_seconds(); }
  void wait_in_flight_at_most(std::size_t count) override { state_.wait_in_flight_at_most(count); }
  Arrival wait_arrival() override { return state_.wait_arrival(); }
  std::optional<Arrival> poll_arrival() override { return state_.poll_arrival(); }
  std::optional<Arrival> wait_arrival_for(std::chrono::microseconds wait) override {
    return state_.wait_arrival_for(wait);
  }
  void read_remote(std::size_t remote_offset, std::span<std::byte> into) override;
  std::chrono::steady_clock::time_point last_heard() const override { return state_.last_heard(); }

 private:
  void enqueue(const Outgoing& frame);
  void write_loop(std::stop_token stop);
  void read_loop(std::stop_token stop);
  void handle(const Header& header);
  void receive_read_response(const Header& header);
  // Ends a verification read that did not finish: the link fails and, once the reader has let go
  // of the caller's span, nothing can write into it any more.
  void abandon_read(const std::string& reason);

  Socket socket_;
  PageBuffer buffer_;
  const std::size_t remote_bytes_;
  const double remote_huge_fraction_;
  const std::size_t depth_;
  LinkState state_;

  std::mutex out_mutex_;
  std::condition_variable_any out_ready_;
  std::deque<Outgoing> out_;
  bool sending_ = false;  // a thread (the writer, or one in enqueue) owns the socket's sending side

  std::mutex read_mutex_;    // one verification read at a time
  std::mutex target_mutex_;  // held by the reader while it writes into read_target_
  std::span<std::byte> read_target_;
  bool read_pending_ = false;
  std::atomic<bool> read_done_ = false;

  std::jthread writer_;  // threads last: stopped and joined before anything they use goes away
  std::jthread reader_;
};

void check_range(const char* side, std::size_t offset, std::size_t length, std::size_t size) {
  rdma::check_range("tcp link", side, offset, length, size);
}

TcpEndpoint::TcpEndpoint(Socket socket, PageBuffer buffer, std::size_t remote_bytes, double remote_huge_fraction,
                         const LinkOptions& options)
    : socket_(std::move(socket)),
      buffer_(std::move(buffer)),
      remote_bytes_(remote_bytes),
      remote_huge_fraction_(remote_huge_fraction),
      depth_(options.depth),
      state_("tcp link", options.timeout) {
  writer_ = std::jthread([this](std::stop_token stop) { write_loop(stop); });
  reader_ = std::jthread([this](std::stop_token stop) { read_loop(stop); });
  threads::name_thread(writer_, "wz-tcp-send");
  threads::name_thread(reader_, "wz-tcp-recv");
}

TcpEndpoint::~TcpEndpoint() {
  // Acknowledgements already queued go out first (briefly): the peer may be waiting on one.
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(out_mutex_);
      if (out_.empty() && !sending_) break;
    }
    try {
      state_.check();
    } catch (const Error&) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  writer_.request_stop();
  reader_.request_stop();
  socket_.shutdown_both();  // the peer sees the end of the stream at once
}

void TcpEndpoint::post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                             std::optional<std::uint32_t> imm) {
  check_range("local", local_offset, length, buffer_.bytes().size());
  check_range("remote", remote_offset, length, remote_bytes_);
  state_.wait_in_flight_at_most(depth_ - 1);
  state_.add_in_flight();
  enqueue({{imm ? Frame::notify : Frame::write, imm.value_or(0), remote_offset, length},
           buffer_.bytes().data() + local_offset});
}

void TcpEndpoint::read_remote(std::size_t remote_offset, std::span<std::byte> into) {
  check_range("remote", remote_offset, into.size(), remote_bytes_);
  std::unique_lock lock(read_mutex_);
  {
    std::lock_guard target(target_mutex_);
    read_target_ = into;
    read_pending_ = true;
    read_done_ = false;
  }
  try {
    enqueue({{Frame::read_request, 0, remote_offset, into.size()}, nullptr});
  } catch (const Error& e) {
    abandon_read(e.what());  // the reader must not keep `into` as its target once this returns
  }
  // The response comes after every write posted before it: the stream is ordered.
  for (auto deadline = std::chrono::steady_clock::now() + state_.timeout(); !read_done_;) {
    try {
      state_.check();
    } catch (const Error& e) {
      abandon_read(e.what());
    }
    if (std::chrono::steady_clock::now() > deadline)
      abandon_read(fmt::format("no answer to a read of {} bytes within {} ms", into.size(), state_.timeout().count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void TcpEndpoint::abandon_read(const std::string& reason) {
  state_.fail_link(reason);
  socket_.shutdown_both();  // a reader inside recv() returns at once
  std::lock_guard target(target_mutex_);
  read_target_ = {};
  read_pending_ = false;
  state_.check();  // throws the link's (first) failure
  fail("tcp link: {}", reason);
}

void TcpEndpoint::enqueue(const Outgoing& frame) {
  std::unique_lock lock(out_mutex_);
  if (out_.size() >= kMaxQueued) {
    // The link is over: every wait on it (in-flight writes, a read) ends with this, not a timeout.
    const std::string reason =
        fmt::format("the peer does not read what it asks for ({} frames queued for it)", out_.size());
    lock.unlock();
    state_.fail_link(reason);
    socket_.shutdown_both();
    fail("tcp link: {}", reason);
  }
  if (frame.payload_bytes() > 0 || !out_.empty() || sending_) {
    out_.push_back(frame);
    lock.unlock();
    out_ready_.notify_one();
    return;
  }
  // Nothing ahead of it and only a header to send: this thread sends it, without waiting for room.
  sending_ = true;
  lock.unlock();
  const auto header = encode(frame.header);
  std::size_t sent = 0;
  bool broken = false;
  try {
    sent = send_some(socket_, header);
  } catch (const std::exception& e) {
    state_.fail_link(e.what());  // as when the writer's send fails: every wait now says why
    broken = true;
  }
  lock.lock();
  sending_ = false;
  if (sent < header.size() && !broken) {
    Outgoing rest = frame;
    rest.header_sent = sent;
    out_.push_front(rest);  // the socket was full: the writer finishes it, before anything queued since
  }
  const bool more = !out_.empty();
  lock.unlock();
  if (more) out_ready_.notify_one();
}

void TcpEndpoint::write_loop(std::stop_token stop) {
  try {
    while (true) {
      Outgoing frame;
      {
        std::unique_lock lock(out_mutex_);
        if (!out_ready_.wait(lock, stop, [&] { return !out_.empty() && !sending_; })) return;
        frame = out_.front();
        out_.pop_front();
        sending_ = true;
      }
      const auto header = encode(frame.header);
      send_all(socket_, std::span(header).subspan(frame.header_sent), {frame.payload, frame.payload_bytes()},
               state_.timeout());
      std::lock_guard lock(out_mutex_);
      sending_ = false;
    }
  } catch (const std::exception& e) {
    if (!stop.stop_requested()) state_.fail_link(e.what());
  }
}

void TcpEndpoint::read_loop(std::stop_token stop) {
  try {
    std::array<std::byte, kHeaderSize> raw;
    while (recv_all(socket_, raw, state_.timeout(), stop)) {
      state_.heard();
      handle(decode(raw));
    }
    state_.fail_link("the peer closed the connection");
  } catch (const std::exception& e) {
    if (!stop.stop_requested()) state_.fail_link(e.what());
  }
}

void TcpEndpoint::handle(const Header& header) {
  const auto buffer = buffer_.bytes();
  switch (header.type) {
    case Frame::write:
    case Frame::notify:
      check_range("incoming write", header.offset, header.length, buffer.size());
      recv_all(socket_, buffer.subspan(header.offset, header.length), state_.timeout());
      enqueue({{Frame::ack, header.imm, 0, 0}, nullptr});
      if (header.type == Frame::notify && !is_keepalive(header.imm, header.length))
        state_.push_arrival({header.imm, header.offset, header.length});
      return;
    case Frame::ack:
      if (state_.in_flight() == 0) fail("tcp link: an ack with no write in flight");
      state_.complete_writes(1);
      return;
    case Frame::read_request:
      check_range("read request", header.offset, header.length, buffer.size());
      enqueue({{Frame::read_response, 0, 0, header.length}, buffer.data() + header.offset});
      return;
    case Frame::read_response:
      return receive_read_response(header);
  }
}

void TcpEndpoint::receive_read_response(const Header& header) {
  std::lock_guard target(target_mutex_);
  if (!read_pending_) fail("tcp link: a read response nobody asked for ({} bytes)", header.length);
  if (read_target_.size() != header.length)
    fail("tcp link: a read response of {} bytes to a read of {}", header.length, read_target_.size());
  recv_all(socket_, read_target_, state_.timeout());
  read_pending_ = false;
  read_done_ = true;
}

LinkOptions minimal_link(const LinkOptions& options) {
  LinkOptions mine = options;
  mine.buffer_bytes = kMinLinkBuffer;
  mine.pages = PagePolicy::small;
  mine.depth = 1;
  return mine;
}

// The passive side's buffer is the one the peer asked for (size and pages), within its limits,
// and only once the peer authenticated (tcp_setup.hpp).
class TcpListener final : public Listener {
 public:
  TcpListener(Socket socket, const LinkOptions& options)
      : socket_(std::move(socket)), options_(options), pending_(socket_, options.secret, options.timeout) {}
  std::uint16_t port() const override { return local_port(socket_); }
  std::unique_ptr<Endpoint> accept(std::chrono::milliseconds idle) override {
    std::optional<Authenticated> peer = pending_.next(Clock::now() + idle);
    if (!peer) return nullptr;
    const std::string who = peer->who;
    try {
      return set_up(std::move(*peer));
    } catch (const std::exception& e) {
      throw PeerError(fmt::format("peer {}: {}", who, e.what()));
    }
  }

 private:
  std::unique_ptr<Endpoint> set_up(Authenticated peer) {
    // What is left of the set-up's deadline, for each step.
    const auto left = [&] { return std::max(Millis(1), std::chrono::ceil<Millis>(peer.deadline - Clock::now())); };
    protocol::Hello hello;
    PageBuffer buffer;
    try {
      hello = protocol::decode_hello(peer.hello, options_.limits);
      buffer = PageBuffer::allocate(hello.buffer_bytes, hello.pages);
    } catch (const Error& e) {
      send_all(peer.socket, protocol::encode_refusal(e.what()), left());  // the client prints why
      throw;
    }
    const auto welcome = protocol::encode(protocol::Welcome{
        .buffer_bytes = buffer.bytes().size(),
        .huge_ppm = static_cast<std::uint32_t>(buffer.backing().huge_fraction * 1e6)});
    const session::Accept accept = session::make_accept(peer.challenge, peer.response, options_, {peer.hello, welcome});
    send_all(peer.socket, welcome, left());
    send_all(peer.socket, session::encode(accept), left());
    if (hello.quit) return nullptr;
    LinkOptions mine = options_;
    mine.depth = hello.depth;
    return std::make_unique<TcpEndpoint>(std::move(peer.socket), std::move(buffer), hello.buffer_bytes, 0.0, mine);
  }

  Socket socket_;
  LinkOptions options_;
  PendingSetups pending_;
};

std::unique_ptr<Endpoint> connect_with(const LinkOptions& options, const std::string& host, std::uint16_t port,
                                       bool quit) {
  if (options.depth == 0 || options.depth > kMaxDepth) fail("tcp link: depth must be in [1, {}]", kMaxDepth);
  if (options.buffer_bytes < kMinLinkBuffer) fail("tcp link: the buffer must be at least {} bytes", kMinLinkBuffer);
  PageBuffer buffer = PageBuffer::allocate(options.buffer_bytes, options.pages);
  Socket socket = connect_to(host, port, options.timeout);
  const auto hello = protocol::encode(protocol::Hello{.buffer_bytes = options.buffer_bytes,
                                                      .depth = static_cast<std::uint32_t>(options.depth),
                                                      .pages = options.pages, .quit = quit});
  try {
    std::map<std::string, std::string> context;
    const protocol::Welcome peer = client_set_up(socket, hello, options, context);
    auto endpoint = std::make_unique<TcpEndpoint>(std::move(socket), std::move(buffer), peer.buffer_bytes,
                                                  peer.huge_ppm / 1e6, options);
    endpoint->set_peer_context(std::move(context));
    return endpoint;
  } catch (const Error& e) {
    fail("tcp link to {}:{}: {}", host, port, e.what());
  }
}

}  // namespace

std::unique_ptr<Endpoint> endpoint_over_socket(int fd, std::size_t buffer_bytes, std::size_t remote_bytes,
                                               const LinkOptions& options) {
  Socket socket(fd);
  return std::make_unique<TcpEndpoint>(std::move(socket), PageBuffer::allocate(buffer_bytes, PagePolicy::small),
                                       remote_bytes, 0.0, options);
}

std::unique_ptr<Listener> listen(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  return std::make_unique<TcpListener>(listen_on(host, port), options);
}

std::unique_ptr<Endpoint> connect(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  return connect_with(options, host, port, false);
}

void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  connect_with(minimal_link(options), host, port, true);
}

LinkPair connect_loopback(const LinkOptions& options) {
  auto listener = listen(options, "127.0.0.1", 0);
  std::unique_ptr<Endpoint> passive;
  std::exception_ptr error;
  std::jthread acceptor([&] {
    try {
      passive = listener->accept(options.timeout);
    } catch (...) {
      error = std::current_exception();
    }
  });
  threads::name_thread(acceptor, "wz-tcp-accept");
  std::unique_ptr<Endpoint> active;
  try {
    active = connect(options, "127.0.0.1", listener->port());
  } catch (...) {
    acceptor.join();
    if (error) std::rethrow_exception(error);  // the passive side's reason says more
    throw;
  }
  acceptor.join();
  if (error) std::rethrow_exception(error);
  if (!passive) fail("tcp loopback: the listener accepted no connection");
  return {std::move(active), std::move(passive)};
}

}  // namespace wirezip::rdma::tcp
