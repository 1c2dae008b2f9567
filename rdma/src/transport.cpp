#include "wirezip/rdma/transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "transports.hpp"
#include "wirezip/util/enum_names.hpp"

namespace wirezip::rdma {

std::optional<Arrival> Endpoint::wait_arrival_for(std::chrono::microseconds wait) {
  // Transports that can block override this; the fallback polls (verbs polls its CQ anyway).
  const auto deadline = std::chrono::steady_clock::now() + wait;
  do {
    if (auto arrival = poll_arrival()) return arrival;
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

bool ServerLimits::allows(PagePolicy pages) const {
  switch (pages) {
    case PagePolicy::small: return allow_small;
    case PagePolicy::thp: return allow_thp;
    case PagePolicy::hugetlb: return allow_hugetlb;
  }
  return false;
}

std::size_t default_max_buffer() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t four_gib = std::size_t{4} << 30;
  if (pages <= 0 || page <= 0) return four_gib;
  return std::min(four_gib, static_cast<std::size_t>(pages) / 4 * static_cast<std::size_t>(page));
}

constexpr EnumNames<TransportKind, 3> kTransportNames{
    "transport", {{{TransportKind::verbs, "verbs"}, {TransportKind::tcp, "tcp"}, {TransportKind::mem, "mem"}}}};

TransportKind parse_transport(std::string_view text) { return kTransportNames.parse(text); }

std::string_view transport_name(TransportKind kind) { return kTransportNames.name(kind); }

LinkPair connect_loopback(TransportKind kind, const LinkOptions& options) {
  switch (kind) {
    case TransportKind::verbs: return verbs::connect_loopback(options);
    case TransportKind::tcp: return tcp::connect_loopback(options);
    case TransportKind::mem: return mem::connect_loopback(options);
  }
  fail("unknown transport");
}

std::unique_ptr<Listener> listen(TransportKind kind, const LinkOptions& options, const std::string& host,
                                 std::uint16_t port) {
  switch (kind) {
    case TransportKind::verbs: return verbs::listen(options, host, port);
    case TransportKind::tcp: return tcp::listen(options, host, port);
    case TransportKind::mem: break;
  }
  fail("the mem transport has both ends in one process: it cannot --serve or --peer");
}

std::unique_ptr<Endpoint> connect(TransportKind kind, const LinkOptions& options, const std::string& host,
                                  std::uint16_t port) {
  switch (kind) {
    case TransportKind::verbs: return verbs::connect(options, host, port);
    case TransportKind::tcp: return tcp::connect(options, host, port);
    case TransportKind::mem: break;
  }
  fail("the mem transport has both ends in one process: it cannot --serve or --peer");
}

void send_quit(TransportKind kind, const LinkOptions& options, const std::string& host, std::uint16_t port) {
  switch (kind) {
    case TransportKind::verbs: return verbs::send_quit(options, host, port);
    case TransportKind::tcp: return tcp::send_quit(options, host, port);
    case TransportKind::mem: return;
  }
}

std::pair<std::string, std::uint16_t> parse_host_port(std::string_view text, std::uint16_t default_port) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    if (text.empty()) fail("empty peer address: expected HOST[:PORT]");
    return {std::string(text), default_port};
  }
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (colon == 0 || ec != std::errc{} || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
    fail("bad peer address '{}': expected HOST[:PORT] with PORT in 1..65535", text);
  return {std::string(text.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

}  // namespace wirezip::rdma
