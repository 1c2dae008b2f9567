#pragma once
// Rank 0's half of --mpi: every rank's report in, one Google Benchmark JSON out.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace wirezip::harness {

// What one rank sends to rank 0 after its side ran.
struct RankReport {
  int rank = 0;
  int pair = -1;            // -1: in no pair
  bool serving = false;     // the --serve side of its pair
  nlohmann::json facts;     // host, CPU, kernel, device, firmware, ...: flat strings
  nlohmann::json report;    // the peer side's Google Benchmark JSON (null on the serving side)
  std::string error;        // what ended this rank's side early, if anything
};
nlohmann::json to_json(const RankReport& report);
RankReport rank_report_from_json(const nlohmann::json& j);

struct PairRunInfo {
  int pairs = 0;
  std::string pairing, concurrency, transport;
};

// Cases of pair i are renamed NAME/pair:i; for each name, NAME/pair:sum (rates summed over the
// pairs: bytes_per_second, items_per_second, msg_rate; verified the minimum) and NAME/pair:min
// (the slowest pair's row) follow. A case failed in any pair fails both aggregates. The context is
// pair 0's, plus pair<i>_<key> (peer side) and pair<i>_peer_<key> (serving side) for each pair,
// and each fact key on its own: its one value, or every distinct value joined by ','.
nlohmann::json merge_pair_reports(const std::vector<RankReport>& ranks, const PairRunInfo& info);

// True when a merged JSON holds a failed case or a pair that reported an error.
bool merged_has_failures(const nlohmann::json& merged);

}  // namespace wirezip::harness
