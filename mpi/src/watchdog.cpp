#include "wirezip/mpi/session.hpp"

#include <fmt/format.h>

namespace wirezip::mpi {

Watchdog::Watchdog(std::string program, const Session& session)
    : program_(std::move(program)),
      where_(fmt::format("rank {} on {}", session.rank(), session.hostname())),
      thread_([this](std::stop_token stop) { watch(stop); }) {}

Watchdog::~Watchdog() {
  thread_.request_stop();
  changed_.notify_all();
}

Watchdog::Guard Watchdog::guard(std::string what, std::chrono::milliseconds bound) {
  {
    std::lock_guard lock(mutex_);
    what_ = std::move(what);
    bound_ = bound;
    deadline_ = std::chrono::steady_clock::now() + bound;
  }
  changed_.notify_all();
  return Guard(*this);
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    deadline_.reset();
  }
  changed_.notify_all();
}

void Watchdog::watch(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (!deadline_) {
      changed_.wait(lock, stop, [&] { return deadline_.has_value(); });
      continue;
    }
    const auto deadline = *deadline_;
    if (changed_.wait_until(lock, stop, deadline, [&] { return deadline_ != deadline; })) continue;
    if (stop.stop_requested()) return;
    // The main thread is stuck inside MPI: nothing it could do would end this wait.
    fmt::print(stderr, "{}: {}: {} did not finish within {} ms (a rank died or stalls); aborting the job\n",
               program_, where_, what_, bound_.count());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::_Exit(3);  // MPI_Abort does not return; if it ever did, still never hang
  }
}

}  // namespace wirezip::mpi
