#include "protocol.hpp"

#include <algorithm>

#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::rdma::protocol {
namespace {

// Version 3 ("...3"): over tcp the passive side authenticates the active one before it looks at
// the hello's request (section 1 of docs/PROTOCOL.md).
constexpr std::uint32_t kHelloMagic = 0x335a5748;    // "HWZ3"
constexpr std::uint32_t kWelcomeMagic = 0x335a5757;  // "WWZ3"
constexpr std::uint32_t kRefusalMagic = 0x335a5752;  // "RWZ3"
constexpr std::uint32_t kJoinMagic = 0x335a574a;     // "JWZ3"
constexpr std::uint32_t kVersionByte = 0xffu << 24;

// The protocol version a wirezip magic of any version names ('1'..'9' in its top byte), or 0.
unsigned version_of(std::uint32_t got, std::uint32_t magic) {
  const unsigned digit = got >> 24;
  return (got & ~kVersionByte) == (magic & ~kVersionByte) && digit >= '1' && digit <= '9' ? digit - '0' : 0;
}

void check_magic(std::span<const std::byte> in, std::size_t size, std::uint32_t magic, const char* what) {
  if (in.size() < size) fail("{}: {} bytes, expected {}", what, in.size(), size);
  const auto got = load_le<std::uint32_t>(in, 0);
  if (got == magic) return;
  if (const unsigned version = version_of(got, magic))
    fail("{}: the peer speaks wirezip protocol {}, this side {}; run the same wirezip version on both hosts", what,
         version, kVersion);
  fail("{}: magic {:#010x} is not wirezip's (is the peer a wirezip endpoint?)", what, got);
}

}  // namespace

std::array<std::byte, kHelloSize> encode(const Hello& hello) {
  std::array<std::byte, kHelloSize> out{};
  store_le<std::uint32_t>(out, 0, kHelloMagic);
  store_le<std::uint64_t>(out, 4, hello.buffer_bytes);
  store_le<std::uint32_t>(out, 12, hello.depth);
  store_le<std::uint8_t>(out, 16, static_cast<std::uint8_t>(hello.pages));
  store_le<std::uint8_t>(out, 17, hello.quit ? 1 : 0);
  return out;
}

void check_hello_version(std::span<const std::byte> in) { check_magic(in, kHelloSize, kHelloMagic, "hello"); }

unsigned hello_version(std::span<const std::byte> in) {
  return in.size() >= 4 ? version_of(load_le<std::uint32_t>(in, 0), kHelloMagic) : 0;
}

Hello decode_hello(std::span<const std::byte> in, const ServerLimits& limits) {
  check_hello_version(in);
  Hello hello;
  hello.buffer_bytes = load_le<std::uint64_t>(in, 4);
  if (hello.buffer_bytes < kMinLinkBuffer || hello.buffer_bytes > limits.max_buffer)
    fail("hello.buffer_bytes = {} is outside [{}, {}] (the server's --max-buffer)", hello.buffer_bytes,
         kMinLinkBuffer, limits.max_buffer);
  hello.depth = load_le<std::uint32_t>(in, 12);
  if (hello.depth < 1 || hello.depth > kMaxDepth) fail("hello.depth = {} is outside [1, {}]", hello.depth, kMaxDepth);
  const auto pages = load_le<std::uint8_t>(in, 16);
  if (pages > static_cast<std::uint8_t>(PagePolicy::hugetlb)) fail("hello.pages = {} is no page policy", pages);
  hello.pages = static_cast<PagePolicy>(pages);
  if (!limits.allows(hello.pages))
    fail("hello.pages = {} is not allowed by this server (--allow-pages)", page_policy_name(hello.pages));
  const auto quit = load_le<std::uint8_t>(in, 17);
  if (quit > 1) fail("hello.quit = {} is neither 0 nor 1", quit);
  hello.quit = quit == 1;
  return hello;
}

std::array<std::byte, kWelcomeSize> encode(const Welcome& welcome) {
  std::array<std::byte, kWelcomeSize> out{};
  store_le<std::uint32_t>(out, 0, kWelcomeMagic);
  store_le<std::uint64_t>(out, 4, welcome.buffer_bytes);
  store_le<std::uint64_t>(out, 12, welcome.address);
  store_le<std::uint32_t>(out, 20, welcome.rkey);
  store_le<std::uint32_t>(out, 24, welcome.huge_ppm);
  return out;
}

namespace {
Welcome decode_buffer_description(std::span<const std::byte> in, const char* what) {
  check_magic(in, kWelcomeSize, kWelcomeMagic, what);
  Welcome welcome;
  welcome.buffer_bytes = load_le<std::uint64_t>(in, 4);
  welcome.address = load_le<std::uint64_t>(in, 12);
  welcome.rkey = load_le<std::uint32_t>(in, 20);
  welcome.huge_ppm = load_le<std::uint32_t>(in, 24);
  if (welcome.huge_ppm > 1'000'000) fail("{}.huge_ppm = {} is over 10^6", what, welcome.huge_ppm);
  return welcome;
}
}  // namespace

Welcome decode_welcome(std::span<const std::byte> in, std::uint64_t expected_bytes) {
  if (is_refusal(in)) fail("the server refused the link: {}", decode_refusal(in));
  Welcome welcome = decode_buffer_description(in, "welcome");
  if (welcome.buffer_bytes != expected_bytes)
    fail("welcome.buffer_bytes = {}, but {} were asked for", welcome.buffer_bytes, expected_bytes);
  return welcome;
}

Welcome decode_peer_buffer(std::span<const std::byte> in, const ServerLimits& limits) {
  Welcome peer = decode_buffer_description(in, "peer buffer");
  if (peer.buffer_bytes < kMinLinkBuffer || peer.buffer_bytes > limits.max_buffer)
    fail("peer buffer.buffer_bytes = {} is outside [{}, {}]", peer.buffer_bytes, kMinLinkBuffer, limits.max_buffer);
  return peer;
}

std::array<std::byte, kJoinSize> encode(const Join& join) {
  std::array<std::byte, kJoinSize> out{};
  store_le<std::uint32_t>(out, 0, kJoinMagic);
  store_le<std::uint32_t>(out, 4, join.index);
  std::copy(join.token.begin(), join.token.end(), out.begin() + 8);
  return out;
}

bool is_join(std::span<const std::byte> in) { return in.size() >= 4 && load_le<std::uint32_t>(in, 0) == kJoinMagic; }

Join decode_join(std::span<const std::byte> in) {
  check_magic(in, kJoinSize, kJoinMagic, "join");
  Join join;
  join.index = load_le<std::uint32_t>(in, 4);
  if (join.index >= kMaxQps) fail("join.index = {} is not below {}", join.index, kMaxQps);
  std::copy_n(in.begin() + 8, join.token.size(), join.token.begin());
  return join;
}

std::array<std::byte, kRefusalSize> encode_refusal(std::string_view reason, unsigned version) {
  std::array<std::byte, kRefusalSize> out{};
  const std::size_t length = std::min(reason.size(), kRefusalText);
  // Another version's peer reads a refusal in its own version's magic: it prints the reason.
  const unsigned digit = version >= 1 && version <= 9 ? '0' + version : '0' + kVersion;
  store_le<std::uint32_t>(out, 0, (kRefusalMagic & ~kVersionByte) | (digit << 24));
  store_le<std::uint32_t>(out, 4, static_cast<std::uint32_t>(length));
  std::transform(reason.begin(), reason.begin() + static_cast<std::ptrdiff_t>(length), out.begin() + 8,
                 [](char c) { return static_cast<std::byte>(c); });
  return out;
}

bool is_refusal(std::span<const std::byte> in) {
  return in.size() >= 8 && version_of(load_le<std::uint32_t>(in, 0), kRefusalMagic) != 0;
}

std::string decode_refusal(std::span<const std::byte> in) {
  if (!is_refusal(in)) fail("refusal: bad magic");
  const auto length = load_le<std::uint32_t>(in, 4);
  if (length > kRefusalText || length > in.size() - 8) fail("refusal.length = {} is over its {} bytes", length, in.size() - 8);
  std::string text;
  for (std::size_t i = 0; i < length; ++i) {
    const auto c = static_cast<char>(in[8 + i]);
    text += (c >= 0x20 && c < 0x7f) ? c : '?';  // never echo control bytes from a peer
  }
  if (const unsigned version = version_of(load_le<std::uint32_t>(in, 0), kRefusalMagic); version != kVersion)
    text += fmt::format(" (the peer speaks wirezip protocol {}, this side {})", version, kVersion);
  return text;
}

}  // namespace wirezip::rdma::protocol
