// A peer that does not hold a server's secret, for scripts/testbed/preauth-cost and setup-wait.
//   verbs_stranger HOST PORT BUFFER COUNT [SECRET_FILE]
// asks a verbs server COUNT times, one after another, for a link with a BUFFER-byte buffer,
// without a secret or with the one in SECRET_FILE, and prints why each failed. Exit 0 when no
// attempt got a link, 1 when one did, 2 on bad arguments. Like any wirezip client it registers its
// own buffer first.
//   verbs_stranger HOST PORT BUFFER COUNT --silent=SECONDS
// opens COUNT set-up connections at once, each with a well-formed request for BUFFER bytes, prints
// "attempt I: challenged, staying silent" as each gets its challenge, never answers one, and exits
// 0 after SECONDS (or 1 at once when a connection fails before its challenge).
#include <fmt/format.h>

#include <charconv>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "verbs_silent_peer.hpp"
#include "wirezip/rdma/transport.hpp"

namespace {

using namespace std::chrono_literals;
namespace verbs = wirezip::rdma::verbs;

std::uint64_t number(const char* text) {
  std::uint64_t value = 0;
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size())
    throw wirezip::Error(fmt::format("not a number: {}", text));
  return value;
}

// The silent attempts' shared state: output, and whether one failed (which ends every hold at once).
struct Silence {
  std::mutex mutex;
  std::condition_variable failed_changed;
  bool failed = false;
};

// Attempt `index`: a set-up connection asking for `buffer_bytes`, held silent until `until` or
// until another attempt fails.
void stay_silent(const std::string& host, std::uint16_t port, std::uint64_t buffer_bytes, std::uint64_t index,
                 verbs::Clock::time_point until, Silence& silence) {
  const auto setup = verbs::open_silent_setup(host, port, buffer_bytes, verbs::Clock::now() + 60s);
  std::unique_lock lock(silence.mutex);
  fmt::print("verbs_stranger: attempt {}: challenged, staying silent\n", index + 1);
  std::fflush(stdout);
  silence.failed_changed.wait_until(lock, until, [&] { return silence.failed; });
}

// COUNT silent set-ups at once; see the header.
int silent(const std::string& host, std::uint16_t port, std::uint64_t buffer_bytes, std::uint64_t count,
           std::chrono::seconds hold) {
  const auto until = verbs::Clock::now() + hold;
  Silence silence;
  std::vector<std::jthread> threads;
  for (std::uint64_t i = 0; i < count; ++i)
    threads.emplace_back([&, i] {
      try {
        stay_silent(host, port, buffer_bytes, i, until, silence);
      } catch (const std::exception& e) {
        const std::lock_guard lock(silence.mutex);
        fmt::print("verbs_stranger: attempt {} failed before its challenge: {}\n", i + 1, e.what());
        silence.failed = true;
        silence.failed_changed.notify_all();
      }
    });
  threads.clear();  // joins
  return silence.failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wirezip::rdma;
  if (argc != 5 && argc != 6) {
    fmt::print(stderr, "usage: verbs_stranger HOST PORT BUFFER COUNT [SECRET_FILE | --silent=SECONDS]\n");
    return 2;
  }
  LinkOptions options;
  // The set-up deadline also covers registering BUFFER bytes of our own first, which under
  // emulation on a loaded host takes seconds: a refusal must not be lost to our own deadline.
  options.timeout = std::chrono::seconds(60);
  std::uint64_t count = 0;
  std::uint16_t port = 0;
  std::optional<std::uint64_t> silent_s;
  try {
    const std::uint64_t given_port = number(argv[2]);
    if (given_port > 65535) throw wirezip::Error(fmt::format("PORT {} is over 65535", given_port));
    port = static_cast<std::uint16_t>(given_port);
    options.buffer_bytes = number(argv[3]);
    count = number(argv[4]);
    const std::string_view last = argc == 6 ? argv[5] : "";
    if (last.starts_with("--silent="))
      silent_s = number(argv[5] + std::string_view("--silent=").size());
    else if (argc == 6)
      options.secret = load_secret(argv[5]);
  } catch (const wirezip::Error& e) {
    fmt::print(stderr, "verbs_stranger: {}\n", e.what());
    return 2;
  }
  if (silent_s) return silent(argv[1], port, options.buffer_bytes, count, std::chrono::seconds(*silent_s));
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
