#pragma once
// How the ranks of an MPI job form pairs for bench_pipeline --mpi and bench_rdma --mpi: one rank
// of each pair serves, the other runs the cases against it.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::collective {

enum class Pairing {
  neighbor,    // ranks 2k (serves) and 2k+1
  cross_node,  // ranks on different hosts (by hostname), e.g. one per host of two
};
Pairing parse_pairing(std::string_view text);  // "neighbor" | "cross-node"

struct RankPair {
  int serve = 0;  // runs the --serve side
  int peer = 0;   // runs the --peer side, the cases
};

// `hosts[r]` is rank r's hostname. Pairs come ordered by their serving rank. Throws on an odd
// number of ranks, or (cross-node) when one host holds more than half of them.
std::vector<RankPair> make_pairs(std::span<const std::string> hosts, Pairing pairing);

}  // namespace wirezip::collective
