#include "mpi_pairs.hpp"

namespace wirezip::harness {

void add_mpi_pair_flags(CLI::App& app, MpiPairFlags& flags) {
  app.add_flag("--mpi", flags.enabled,
               "started by mpirun -np 2N: N pairs of ranks, each a --serve and a --peer side, one JSON from rank 0");
  app.add_option("--pairing", flags.pairing, "--mpi: neighbor (ranks 2k, 2k+1) or cross-node (ranks on different hosts)")
      ->capture_default_str();
  app.add_flag("--one-pair-at-a-time", flags.one_pair_at_a_time, "--mpi: run the pairs one after another, alone");
  app.add_option("--mpi-wait-s", flags.wait_s, "--mpi: bound on waiting for the other pairs")->capture_default_str();
}

}  // namespace wirezip::harness
