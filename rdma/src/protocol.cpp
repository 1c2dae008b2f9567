#include "protocol.hpp"

#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::rdma::protocol {
namespace {

constexpr std::uint32_t kHelloMagic = 0x315a5748;    // "HWZ1"
constexpr std::uint32_t kWelcomeMagic = 0x315a5757;  // "WWZ1"

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

Hello decode_hello(std::span<const std::byte> in) {
  if (in.size() < kHelloSize || load_le<std::uint32_t>(in, 0) != kHelloMagic)
    fail("link set-up: the peer is not a wirezip endpoint (bad hello)");
  Hello hello;
  hello.buffer_bytes = load_le<std::uint64_t>(in, 4);
  hello.depth = load_le<std::uint32_t>(in, 12);
  const auto pages = load_le<std::uint8_t>(in, 16);
  if (pages > static_cast<std::uint8_t>(PagePolicy::hugetlb)) fail("link set-up: unknown page policy {}", pages);
  hello.pages = static_cast<PagePolicy>(pages);
  hello.quit = load_le<std::uint8_t>(in, 17) != 0;
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

Welcome decode_welcome(std::span<const std::byte> in) {
  if (in.size() < kWelcomeSize || load_le<std::uint32_t>(in, 0) != kWelcomeMagic)
    fail("link set-up: the peer is not a wirezip endpoint (bad welcome)");
  Welcome welcome;
  welcome.buffer_bytes = load_le<std::uint64_t>(in, 4);
  welcome.address = load_le<std::uint64_t>(in, 12);
  welcome.rkey = load_le<std::uint32_t>(in, 20);
  welcome.huge_ppm = load_le<std::uint32_t>(in, 24);
  return welcome;
}

}  // namespace wirezip::rdma::protocol
