#pragma once
// The MPI library's lifetime, error handling and the watchdog that turns a dead or stalled rank
// into a clear error instead of a hang.
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace wirezip::mpi {

// Throws wirezip::Error "WHAT: <MPI's error string>" unless rc is MPI_SUCCESS.
void check(int rc, std::string_view what);

// MPI_Init_thread on construction (MPI_THREAD_MULTIPLE, so the watchdog may abort while the main
// thread waits inside MPI), MPI_Finalize on destruction. MPI_COMM_WORLD returns errors instead of
// aborting, so each failure is reported with the operation that failed.
// MPI_Init waits for every rank of the job; one that never gets there (stopped, or never started)
// would hold this one forever. Past `init_bound` this process prints "<program>: MPI_Init did not
// finish within N ms ..." and exits with status 3 (MPI_Abort needs an initialised MPI), which ends
// the job: the launcher stops every rank when one exits without MPI_Finalize.
class Session {
 public:
  Session(std::string_view program, std::chrono::milliseconds init_bound);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& hostname() const { return hostname_; }
  // "Open MPI v4.1.4, ..." (first line of MPI_Get_library_version).
  std::string library_version() const;

 private:
  int rank_ = 0, size_ = 1;
  std::string hostname_;
};

// One thread that ends the whole job when a guarded wait outlives its bound: it prints
// "<program>: rank R on HOST: <what> did not finish within N ms (a rank died or stalls); aborting"
// and calls MPI_Abort. Waits are guarded one at a time, from the thread that owns the watchdog.
class Watchdog {
 public:
  Watchdog(std::string program, const Session& session);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  // Disarms on destruction.
  class Guard {
   public:
    explicit Guard(Watchdog& owner) : owner_(&owner) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { owner_->disarm(); }

   private:
    Watchdog* owner_;
  };
  [[nodiscard]] Guard guard(std::string what, std::chrono::milliseconds bound);

 private:
  void disarm();
  void watch(std::stop_token stop);

  std::string program_, where_;
  std::mutex mutex_;
  std::condition_variable_any changed_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string what_;
  std::chrono::milliseconds bound_{0};
  std::jthread thread_;  // last: joined before the members it reads go away
};

}  // namespace wirezip::mpi
