// A peer that does not hold a server's secret, for scripts/testbed/preauth-cost: asks a verbs
// server COUNT times for a link with a BUFFER-byte buffer, without a secret or with the one in
// SECRET_FILE, and prints why each failed. Exit 0 when no attempt got a link, 1 when one did, 2 on
// bad arguments. Like any wirezip client it registers its own buffer first.
//   verbs_stranger HOST PORT BUFFER COUNT [SECRET_FILE]
#include <fmt/format.h>

#include <charconv>
#include <string>

#include "wirezip/rdma/transport.hpp"

namespace {

std::uint64_t number(const char* text) {
  std::uint64_t value = 0;
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size())
    throw wirezip::Error(fmt::format("not a number: {}", text));
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wirezip::rdma;
  if (argc != 5 && argc != 6) {
    fmt::print(stderr, "usage: verbs_stranger HOST PORT BUFFER COUNT [SECRET_FILE]\n");
    return 2;
  }
  LinkOptions options;
  std::uint64_t count = 0;
  std::uint16_t port = 0;
  try {
    port = static_cast<std::uint16_t>(number(argv[2]));
    options.buffer_bytes = number(argv[3]);
    count = number(argv[4]);
    if (argc == 6) options.secret = load_secret(argv[5]);
  } catch (const wirezip::Error& e) {
    fmt::print(stderr, "verbs_stranger: {}\n", e.what());
    return 2;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    try {
      connect(TransportKind::verbs, options, argv[1], port);
      fmt::print("verbs_stranger: attempt {} got a link\n", i + 1);
      return 1;
    } catch (const wirezip::Error& e) {
      fmt::print("verbs_stranger: attempt {} failed: {}\n", i + 1, e.what());
    }
  }
  return 0;
}
