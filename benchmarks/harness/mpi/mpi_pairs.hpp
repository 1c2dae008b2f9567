#pragma once
// --mpi for bench_pipeline and bench_rdma: `mpirun -np 2N BINARY --mpi ...` forms N pairs of
// ranks. In each pair one rank runs the binary's --serve side on an ephemeral port and the other
// its --peer side against it, the address and port exchanged through MPI; every pair runs at
// once (or one at a time). The data moves over wirezip's transports; MPI only launches, meets and
// gathers. Rank 0 writes one Google Benchmark JSON: each pair's cases (.../pair:<i>), their sum
// and minimum over pairs (.../pair:sum, .../pair:min), and each host's context (pair<i>_<key>
// for the peer side, pair<i>_peer_<key> for the serving side).
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "link_flags.hpp"

namespace wirezip::harness {

struct MpiPairFlags {
  bool enabled = false;
  std::string pairing = "neighbor";  // or cross-node
  bool one_pair_at_a_time = false;
  long wait_s = 3600;  // bound on waiting for other pairs (one at a time, and at the end)
};
void add_mpi_pair_flags(CLI::App& app, MpiPairFlags& flags);

// `run_side(link)` is the binary's own run() given link flags for one side: --serve on an
// ephemeral port (link.on_listening learns it), or --peer=HOST:PORT. Returns the exit status:
// non-zero on rank 0 when any case of any pair failed. Throws when built without MPI.
int run_mpi_pairs(std::string_view binary, const MpiPairFlags& flags, const LinkFlags& link,
                  const std::function<int(const LinkFlags&)>& run_side);

}  // namespace wirezip::harness
