#pragma once
// The one temporary output file of a run, removed when SIGINT, SIGTERM or SIGHUP ends the process
// (the handler unlinks it with async-signal-safe calls, then the signal ends the process as it
// would have). Registering and forgetting happen with those signals blocked, so a signal never
// sees half a path, and never removes a path that a rename has just made the real output.
#include <signal.h>

#include <string>

namespace wirezip::cli {

// Blocks the three signals for its lifetime (pending ones arrive when it ends).
class BlockedSignals {
 public:
  BlockedSignals();
  ~BlockedSignals();
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

 private:
  sigset_t previous_;
};

// Call with BlockedSignals held. Installs the handlers on first use; throws wirezip::Error when the
// path is too long to keep in the handler's fixed buffer.
void remove_on_signal(const std::string& path);
// Call with BlockedSignals held: a signal from now on removes nothing.
void forget_on_signal();

}  // namespace wirezip::cli
