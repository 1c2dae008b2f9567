#include "wirezip/mpi/session.hpp"

#include <unistd.h>

#include "wirezip/util/error.hpp"

namespace wirezip::mpi {

void check(int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail("{}: {}", what, std::string_view(text, static_cast<std::size_t>(length)));
}

Session::Session() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    fail("MPI_Init_thread failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  hostname_ = name;
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
