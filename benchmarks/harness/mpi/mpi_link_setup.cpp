#include "mpi_link_setup.hpp"

#include <openssl/rand.h>

#include "wirezip/mpi/session.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {

std::string job_secret(MPI_Comm comm) {
  std::string secret(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), static_cast<int>(secret.size())) != 1)
    fail("RAND_bytes failed: no job secret");
  mpi::check(MPI_Bcast(secret.data(), static_cast<int>(secret.size()), MPI_CHAR, 0, comm), "MPI_Bcast(secret)");
  return secret;
}

std::pair<std::string, std::string> serve_address(rdma::TransportKind kind, const std::string& device,
                                                  const std::string& bind, bool same_host, const std::string& hostname) {
  if (kind == rdma::TransportKind::verbs) {
    const std::string ip = rdma::pick_verbs_port(device).ipv4;
    if (ip.empty()) fail("the RDMA port has no IPv4 address for rdma_cm");
    return {ip, ip};
  }
  if (same_host) return {"127.0.0.1", "127.0.0.1"};
  // A specific bound address is the one that surely reaches this listener; a wildcard, the host's name.
  const bool wildcard = bind.empty() || bind == "0.0.0.0" || bind == "::";
  return {wildcard ? hostname : bind, bind};
}

}  // namespace wirezip::harness
