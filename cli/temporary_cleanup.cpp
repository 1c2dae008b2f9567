#include "temporary_cleanup.hpp"

#include <limits.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>

#include "wirezip/util/error.hpp"

namespace wirezip::cli {
namespace {

constexpr std::array kSignals = {SIGINT, SIGTERM, SIGHUP};

// Written only with the signals blocked, read only by the handler.
std::array<char, PATH_MAX> registered{};
volatile std::sig_atomic_t armed = 0;

extern "C" void remove_and_reraise(int signal) {
  if (armed) ::unlink(registered.data());
  // SA_RESETHAND restored the default action; the signal is blocked while this runs, so the raised
  // one is delivered, and ends the process, when the handler returns.
  ::raise(signal);
}

void install_handlers() {
  static bool installed = false;
  if (installed) return;
  struct sigaction action {};
  action.sa_handler = remove_and_reraise;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) {
    struct sigaction old {};
    // A signal the parent set to be ignored (nohup) stays ignored.
    if (sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(signal, &action, nullptr);
  }
  installed = true;
}

}  // namespace

BlockedSignals::BlockedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : kSignals) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockedSignals::~BlockedSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void remove_on_signal(const std::string& path) {
  if (path.size() >= registered.size()) fail("the path '{}' is too long ({} bytes)", path, path.size());
  install_handlers();
  std::memcpy(registered.data(), path.c_str(), path.size() + 1);
  armed = 1;
}

void forget_on_signal() { armed = 0; }

}  // namespace wirezip::cli
