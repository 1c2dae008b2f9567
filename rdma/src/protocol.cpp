#include "protocol.hpp"

#include "wirezip/util/error.hpp"

namespace wirezip::rdma::protocol {
namespace {

constexpr std::uint32_t kHelloMagic = 0x315a5748;    // "HWZ1"
constexpr std::uint32_t kWelcomeMagic = 0x315a5757;  // "WWZ1"

template <typename T>
void put(std::span<std::byte> out, std::size_t offset, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[offset + i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
}

template <typename T>
T get(std::span<const std::byte> in, std::size_t offset) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<std::uint64_t>(in[offset + i]) << (8 * i);
  return static_cast<T>(value);
}

}  // namespace

std::array<std::byte, kHelloSize> encode(const Hello& hello) {
  std::array<std::byte, kHelloSize> out{};
  put<std::uint32_t>(out, 0, kHelloMagic);
  put<std::uint64_t>(out, 4, hello.buffer_bytes);
  put<std::uint32_t>(out, 12, hello.depth);
  put<std::uint8_t>(out, 16, static_cast<std::uint8_t>(hello.pages));
  put<std::uint8_t>(out, 17, hello.quit ? 1 : 0);
  return out;
}

Hello decode_hello(std::span<const std::byte> in) {
  if (in.size() < kHelloSize || get<std::uint32_t>(in, 0) != kHelloMagic)
    fail("link set-up: the peer is not a wirezip endpoint (bad hello)");
  Hello hello;
  hello.buffer_bytes = get<std::uint64_t>(in, 4);
  hello.depth = get<std::uint32_t>(in, 12);
  const auto pages = get<std::uint8_t>(in, 16);
  if (pages > static_cast<std::uint8_t>(PagePolicy::hugetlb)) fail("link set-up: unknown page policy {}", pages);
  hello.pages = static_cast<PagePolicy>(pages);
  hello.quit = get<std::uint8_t>(in, 17) != 0;
  return hello;
}

std::array<std::byte, kWelcomeSize> encode(const Welcome& welcome) {
  std::array<std::byte, kWelcomeSize> out{};
  put<std::uint32_t>(out, 0, kWelcomeMagic);
  put<std::uint64_t>(out, 4, welcome.buffer_bytes);
  put<std::uint64_t>(out, 12, welcome.address);
  put<std::uint32_t>(out, 20, welcome.rkey);
  put<std::uint32_t>(out, 24, welcome.huge_ppm);
  return out;
}

Welcome decode_welcome(std::span<const std::byte> in) {
  if (in.size() < kWelcomeSize || get<std::uint32_t>(in, 0) != kWelcomeMagic)
    fail("link set-up: the peer is not a wirezip endpoint (bad welcome)");
  Welcome welcome;
  welcome.buffer_bytes = get<std::uint64_t>(in, 4);
  welcome.address = get<std::uint64_t>(in, 12);
  welcome.rkey = get<std::uint32_t>(in, 20);
  welcome.huge_ppm = get<std::uint32_t>(in, 24);
  return welcome;
}

}  // namespace wirezip::rdma::protocol
