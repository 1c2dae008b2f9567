#include "wirezip/mpi/session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "wirezip/util/error.hpp"

namespace wirezip::mpi {

void check(int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail("{}: {}", what, std::string_view(text, static_cast<std::size_t>(length)));
}

Session::Session(std::string_view program, std::chrono::milliseconds init_bound) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  hostname_ = name;
  {
    std::mutex mutex;
    std::condition_variable_any stopped;  // woken by request_stop only
    std::jthread watch([&](std::stop_token stop) {
      std::unique_lock lock(mutex);
      stopped.wait_for(lock, stop, init_bound, [] { return false; });
      if (stop.stop_requested()) return;
      fmt::print(stderr, "{}: process {} on {}: MPI_Init did not finish within {} ms (a rank died, stalls or "
                 "never started); exiting\n", program, getpid(), hostname_, init_bound.count());
      std::fflush(stderr);
      std::_Exit(3);
    });
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    watch.request_stop();  // wakes the wait: the jthread joins as this block ends
    if (rc != MPI_SUCCESS) fail("MPI_Init_thread failed");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() { MPI_Finalize(); }

std::string Session::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of("\n,"));
}

}  // namespace wirezip::mpi
