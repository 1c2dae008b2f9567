// Built when CMake found no MPI: --mpi says so.
#include "mpi_pairs.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {

int run_mpi_pairs(std::string_view binary, const MpiPairFlags&, const LinkFlags&, const std::function<int(const LinkFlags&)>&) {
  fail("{} was built without MPI: install libopenmpi-dev and openmpi-bin, then rerun scripts/setup", binary);
}

}  // namespace wirezip::harness
