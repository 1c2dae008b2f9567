// Rank 0's merge of the --mpi pairs' reports: pair rows renamed, sum and minimum added, failures kept.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "mpi/mpi_pairs_merge.hpp"

namespace {

using namespace wirezip;

TEST(PairMerge, RenamesPairsAndAddsSumAndMinimum) {
  using nlohmann::json;
  auto peer = [](int rank, int pair, double rate, const std::string& fw) {
    harness::RankReport r;
    r.rank = rank;
    r.pair = pair;
    r.facts = {{"hostname", "h" + std::to_string(rank)}, {"rdma_fw_ver", fw}};
    r.report = {{"context", {{"date", "today"}}},
                {"benchmarks", json::array({{{"name", "pipeline/x"}, {"run_name", "pipeline/x"},
                                             {"bytes_per_second", rate}, {"verified", 1}}})}};
    return r;
  };
  harness::RankReport server0, server1;
  server0.rank = 0, server0.pair = 0, server0.serving = true, server0.facts = {{"hostname", "h0"}, {"rdma_fw_ver", "1"}};
  server1.rank = 2, server1.pair = 1, server1.serving = true, server1.facts = {{"hostname", "h2"}, {"rdma_fw_ver", "1"}};
  const json merged = harness::merge_pair_reports({server0, peer(1, 0, 3e9, "1"), server1, peer(3, 1, 2e9, "2")},
                                                  {2, "neighbor", "all pairs at once", "tcp"});
  std::map<std::string, json> rows;
  for (const json& row : merged["benchmarks"]) rows[row["name"]] = row;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows["pipeline/x/pair:0"]["bytes_per_second"], 3e9);
  EXPECT_EQ(rows["pipeline/x/pair:sum"]["bytes_per_second"], 5e9);
  EXPECT_EQ(rows["pipeline/x/pair:min"]["bytes_per_second"], 2e9);
  EXPECT_EQ(rows["pipeline/x/pair:sum"]["pairs"], 2);
  EXPECT_EQ(merged["context"]["pair1_hostname"], "h3");
  EXPECT_EQ(merged["context"]["pair1_peer_hostname"], "h2");
  EXPECT_EQ(merged["context"]["rdma_fw_ver"], "1,2");  // a fleet that differs shows every value
  EXPECT_EQ(merged["context"]["date"], "today");
  EXPECT_FALSE(harness::merged_has_failures(merged));
}

TEST(PairMerge, AFailedPairFailsTheAggregates) {
  using nlohmann::json;
  harness::RankReport ok, bad;
  ok.pair = 0, ok.rank = 1;
  ok.report = {{"benchmarks", json::array({{{"name", "c"}, {"bytes_per_second", 1.0}}})}};
  bad.pair = 1, bad.rank = 3;
  bad.report = {{"benchmarks", json::array({{{"name", "c"}, {"error_occurred", true}, {"error_message", "peer gone"}}})}};
  const json merged = harness::merge_pair_reports({ok, bad}, {2, "neighbor", "all pairs at once", "tcp"});
  bool found = false;
  for (const json& row : merged["benchmarks"])
    if (row["name"] == "c/pair:sum") {
      found = true;
      EXPECT_TRUE(row["error_occurred"].get<bool>());
      EXPECT_NE(row["error_message"].get<std::string>().find("pair 1: peer gone"), std::string::npos);
    }
  EXPECT_TRUE(found);
  EXPECT_TRUE(harness::merged_has_failures(merged));
}

}  // namespace
