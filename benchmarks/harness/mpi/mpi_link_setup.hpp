#pragma once
// What every MPI-launched link of wirezip's needs to meet its peer: a secret for the whole job, so
// the links authenticate without a shared file, and where a listening rank is reached. Used by
// --mpi pairs (mpi_pairs.cpp) and bench_collective's ring over links (ring_links.cpp).
#include <mpi.h>

#include <string>
#include <utility>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::harness {

// One secret per job (rank 0, RAND_bytes), broadcast over `comm` to every rank.
std::string job_secret(MPI_Comm comm);

// Where a listening rank listens: {address its peer connects to, address it binds}. Loopback when
// both share a host; tcp otherwise: bound to `bind` and reached there, or, when `bind` is empty or
// a wildcard (every address), reached by its hostname; verbs:
// the RDMA port's IPv4 for rdma_cm (device: empty = the first active port).
std::pair<std::string, std::string> serve_address(rdma::TransportKind kind, const std::string& device,
                                                  const std::string& bind, bool same_host, const std::string& hostname);

}  // namespace wirezip::harness
