// The tcp transport: one-sided writes emulated over a stream. Each endpoint has a reader thread
// that places incoming writes straight into its buffer and acknowledges them, and a writer thread
// that alone sends on the socket, so neither side ever waits on the other's reader (no deadlock).
#include <cstring>
#include <deque>
#include <thread>

#include "link_state.hpp"
#include "protocol.hpp"
#include "tcp_socket.hpp"
#include "transports.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::rdma::tcp {
namespace {

// A write with an immediate is `notify`: the peer queues an Arrival; a plain `write` is silent.
enum class Frame : std::uint8_t { write = 1, ack = 2, read_request = 3, read_response = 4, notify = 5 };
constexpr std::size_t kHeaderSize = 24;  // type u8, pad[3], imm u32, offset u64, length u64

struct Header {
  Frame type;
  std::uint32_t imm = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

std::array<std::byte, kHeaderSize> encode(const Header& h) {
  std::array<std::byte, kHeaderSize> out{};
  store_le<std::uint8_t>(out, 0, static_cast<std::uint8_t>(h.type));
  store_le<std::uint32_t>(out, 4, h.imm);
  store_le<std::uint64_t>(out, 8, h.offset);
  store_le<std::uint64_t>(out, 16, h.length);
  return out;
}

Header decode(const std::array<std::byte, kHeaderSize>& in) {
  return {static_cast<Frame>(load_le<std::uint8_t>(in, 0)), load_le<std::uint32_t>(in, 4),
          load_le<std::uint64_t>(in, 8), load_le<std::uint64_t>(in, 16)};
}

struct Outgoing {
  Header header;
  const std::byte* payload = nullptr;  // into our registered buffer; stays valid while we live
};

class TcpEndpoint final : public Endpoint {
 public:
  TcpEndpoint(Socket socket, PageBuffer buffer, const protocol::Welcome& peer, const LinkOptions& options);
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

 private:
  void enqueue(const Outgoing& frame);
  void write_loop(std::stop_token stop);
  void read_loop(std::stop_token stop);
  void handle(const Header& header, std::stop_token stop);

  Socket socket_;
  PageBuffer buffer_;
  const std::size_t remote_bytes_;
  const double remote_huge_fraction_;
  const std::size_t depth_;
  LinkState state_;

  std::mutex out_mutex_;
  std::condition_variable_any out_ready_;
  std::deque<Outgoing> out_;

  std::mutex read_mutex_;  // one verification read at a time
  std::span<std::byte> read_target_;
  bool read_done_ = false;

  std::jthread writer_;  // threads last: stopped and joined before anything they use goes away
  std::jthread reader_;
};

void check_range(const char* side, std::size_t offset, std::size_t length, std::size_t size) {
  rdma::check_range("tcp link", side, offset, length, size);
}

TcpEndpoint::TcpEndpoint(Socket socket, PageBuffer buffer, const protocol::Welcome& peer, const LinkOptions& options)
    : socket_(std::move(socket)),
      buffer_(std::move(buffer)),
      remote_bytes_(peer.buffer_bytes),
      remote_huge_fraction_(peer.huge_ppm / 1e6),
      depth_(options.depth),
      state_("tcp link", options.timeout) {
  writer_ = std::jthread([this](std::stop_token stop) { write_loop(stop); });
  reader_ = std::jthread([this](std::stop_token stop) { read_loop(stop); });
}

TcpEndpoint::~TcpEndpoint() {
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
    std::lock_guard out_lock(out_mutex_);
    read_target_ = into;
    read_done_ = false;
  }
  enqueue({{Frame::read_request, 0, remote_offset, into.size()}, nullptr});
  // The response comes after every write posted before it: the stream is ordered.
  for (auto deadline = std::chrono::steady_clock::now() + state_.timeout();;) {
    state_.check();
    {
      std::lock_guard out_lock(out_mutex_);
      if (read_done_) return;
    }
    if (std::chrono::steady_clock::now() > deadline)
      fail("tcp link: no answer to a read of {} bytes within {} ms", into.size(), state_.timeout().count());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void TcpEndpoint::enqueue(const Outgoing& frame) {
  {
    std::lock_guard lock(out_mutex_);
    out_.push_back(frame);
  }
  out_ready_.notify_one();
}

void TcpEndpoint::write_loop(std::stop_token stop) {
  try {
    while (true) {
      Outgoing frame;
      {
        std::unique_lock lock(out_mutex_);
        if (!out_ready_.wait(lock, stop, [&] { return !out_.empty(); })) return;
        frame = out_.front();
        out_.pop_front();
      }
      send_all(socket_, encode(frame.header), state_.timeout());
      if (frame.payload) send_all(socket_, {frame.payload, frame.header.length}, state_.timeout());
    }
  } catch (const std::exception& e) {
    if (!stop.stop_requested()) state_.fail_link(e.what());
  }
}

void TcpEndpoint::read_loop(std::stop_token stop) {
  try {
    std::array<std::byte, kHeaderSize> raw;
    while (recv_all(socket_, raw, state_.timeout(), stop)) handle(decode(raw), stop);
    state_.fail_link("the peer closed the connection");
  } catch (const std::exception& e) {
    if (!stop.stop_requested()) state_.fail_link(e.what());
  }
}

void TcpEndpoint::handle(const Header& header, std::stop_token stop) {
  const auto buffer = buffer_.bytes();
  switch (header.type) {
    case Frame::write:
    case Frame::notify:
      check_range("incoming write", header.offset, header.length, buffer.size());
      recv_all(socket_, buffer.subspan(header.offset, header.length), state_.timeout());
      enqueue({{Frame::ack, header.imm, 0, 0}, nullptr});
      if (header.type == Frame::notify) state_.push_arrival({header.imm, header.offset, header.length});
      return;
    case Frame::ack:
      state_.complete_writes(1);
      return;
    case Frame::read_request:
      check_range("read request", header.offset, header.length, buffer.size());
      enqueue({{Frame::read_response, 0, 0, header.length}, buffer.data() + header.offset});
      return;
    case Frame::read_response: {
      std::span<std::byte> target;
      {
        std::lock_guard lock(out_mutex_);
        target = read_target_;
      }
      if (target.size() != header.length) fail("tcp link: unexpected read response of {} bytes", header.length);
      recv_all(socket_, target, state_.timeout());
      std::lock_guard lock(out_mutex_);
      read_done_ = true;
      return;
    }
  }
  (void)stop;
  fail("tcp link: unknown frame type {} (is the peer a wirezip endpoint?)", static_cast<int>(header.type));
}

// The passive side's buffer is the one the peer asked for (size and pages).
class TcpListener final : public Listener {
 public:
  TcpListener(Socket socket, const LinkOptions& options) : socket_(std::move(socket)), options_(options) {}
  std::uint16_t port() const override { return local_port(socket_); }
  std::unique_ptr<Endpoint> accept(std::chrono::milliseconds idle) override {
    Socket peer = accept_within(socket_, idle);
    if (!peer) return nullptr;
    std::array<std::byte, protocol::kHelloSize> raw;
    if (!recv_all(peer, raw, options_.timeout)) fail("tcp link: the peer closed before saying hello");
    const protocol::Hello hello = protocol::decode_hello(raw);
    if (hello.quit) return nullptr;
    PageBuffer buffer = PageBuffer::allocate(hello.buffer_bytes, hello.pages);
    const protocol::Welcome welcome{.buffer_bytes = buffer.bytes().size(),
                                    .huge_ppm = static_cast<std::uint32_t>(buffer.backing().huge_fraction * 1e6)};
    send_all(peer, protocol::encode(welcome), options_.timeout);
    LinkOptions mine = options_;
    mine.depth = std::max<std::size_t>(1, hello.depth);
    return std::make_unique<TcpEndpoint>(std::move(peer), std::move(buffer),
                                         protocol::Welcome{.buffer_bytes = hello.buffer_bytes}, mine);
  }

 private:
  Socket socket_;
  LinkOptions options_;
};

protocol::Hello hello_for(const LinkOptions& options, bool quit) {
  return {.buffer_bytes = options.buffer_bytes, .depth = static_cast<std::uint32_t>(options.depth),
          .pages = options.pages, .quit = quit};
}

}  // namespace

std::unique_ptr<Listener> listen(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  return std::make_unique<TcpListener>(listen_on(host, port), options);
}

std::unique_ptr<Endpoint> connect(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  if (options.depth == 0) fail("tcp link: depth must be at least 1");
  PageBuffer buffer = PageBuffer::allocate(options.buffer_bytes, options.pages);
  Socket socket = connect_to(host, port, options.timeout);
  send_all(socket, protocol::encode(hello_for(options, false)), options.timeout);
  std::array<std::byte, protocol::kWelcomeSize> raw;
  try {
    if (!recv_all(socket, raw, options.timeout)) fail("the peer closed the connection");
  } catch (const Error& e) {
    fail("tcp link to {}:{}: no welcome: {}", host, port, e.what());
  }
  return std::make_unique<TcpEndpoint>(std::move(socket), std::move(buffer), protocol::decode_welcome(raw), options);
}

void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port) {
  Socket socket = connect_to(host, port, options.timeout);
  send_all(socket, protocol::encode(hello_for(options, true)), options.timeout);
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
  std::unique_ptr<Endpoint> active = connect(options, "127.0.0.1", listener->port());
  acceptor.join();
  if (error) std::rethrow_exception(error);
  if (!passive) fail("tcp loopback: the listener accepted no connection");
  return {std::move(active), std::move(passive)};
}

}  // namespace wirezip::rdma::tcp
