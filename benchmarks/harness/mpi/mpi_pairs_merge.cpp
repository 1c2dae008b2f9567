#include "mpi_pairs_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace wirezip::harness {
namespace {

using nlohmann::json;

constexpr const char* kRateFields[] = {"bytes_per_second", "items_per_second", "msg_rate"};

double rate_of(const json& row) { return row.value("bytes_per_second", 0.0); }

json renamed(json row, const std::string& suffix) {
  for (const char* field : {"name", "run_name"})
    if (row.contains(field) && row[field].is_string()) row[field] = row[field].get<std::string>() + suffix;
  return row;
}

// The sum and minimum rows of one case name over the pairs that ran it.
std::pair<json, json> aggregates(const std::vector<std::pair<int, json>>& rows) {
  const auto slowest = std::min_element(rows.begin(), rows.end(),
                                        [](const auto& a, const auto& b) { return rate_of(a.second) < rate_of(b.second); });
  json sum = renamed(slowest->second, "/pair:sum"), min = renamed(slowest->second, "/pair:min");
  for (const char* field : kRateFields) {
    if (!slowest->second.contains(field)) continue;
    double total = 0;
    for (const auto& [_, row] : rows) total += row.value(field, 0.0);
    sum[field] = total;
  }
  double verified = 1;
  std::string failures;
  for (const auto& [pair, row] : rows) {
    if (row.contains("verified")) verified = std::min(verified, row.value("verified", 0.0));
    if (row.value("error_occurred", false))
      failures += fmt::format("{}pair {}: {}", failures.empty() ? "" : "; ", pair, row.value("error_message", std::string()));
  }
  for (json* row : {&sum, &min}) {
    (*row)["pairs"] = rows.size();
    if (row->contains("verified")) (*row)["verified"] = verified;
    if (!failures.empty()) {
      (*row)["error_occurred"] = true;
      (*row)["error_message"] = failures;
    }
  }
  return {sum, min};
}

void add_contexts(json& context, const std::vector<RankReport>& ranks) {
  std::map<std::string, std::set<std::string>> values;
  for (const RankReport& r : ranks) {
    for (const auto& [key, value] : r.facts.items()) {
      const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      values[key].insert(text);
      if (r.pair >= 0) context[fmt::format("pair{}_{}{}", r.pair, r.serving ? "peer_" : "", key)] = text;
    }
    if (r.pair >= 0 && !r.error.empty()) context[fmt::format("pair{}_{}error", r.pair, r.serving ? "peer_" : "")] = r.error;
  }
  // One value per key for compare --group-by; a fleet that differs shows every value.
  for (const auto& [key, distinct] : values) {
    std::string joined;
    for (const std::string& v : distinct) joined += (joined.empty() ? "" : ",") + v;
    context[key] = joined;
  }
}

}  // namespace

json to_json(const RankReport& r) {
  return {{"rank", r.rank}, {"pair", r.pair}, {"serving", r.serving}, {"facts", r.facts},
          {"report", r.report}, {"error", r.error}};
}

RankReport rank_report_from_json(const json& j) {
  RankReport r;
  r.rank = j.at("rank").get<int>();
  r.pair = j.at("pair").get<int>();
  r.serving = j.at("serving").get<bool>();
  r.facts = j.at("facts");
  r.report = j.at("report");
  r.error = j.at("error").get<std::string>();
  return r;
}

json merge_pair_reports(const std::vector<RankReport>& ranks, const PairRunInfo& info) {
  std::vector<const RankReport*> peers(static_cast<std::size_t>(info.pairs), nullptr);
  for (const RankReport& r : ranks)
    if (r.pair >= 0 && r.pair < info.pairs && !r.serving) peers[static_cast<std::size_t>(r.pair)] = &r;

  json merged;
  json context = json::object();
  for (const RankReport* peer : peers)
    if (peer && peer->report.is_object() && peer->report.contains("context")) {
      context = peer->report["context"];
      break;
    }
  add_contexts(context, ranks);
  context["link"] = fmt::format("MPI pairs: {} pair(s) over {}, {} pairing, {}", info.pairs, info.transport,
                                info.pairing, info.concurrency);
  context["mpi_pairs"] = std::to_string(info.pairs);
  context["mpi_ranks"] = std::to_string(ranks.size());
  context["mpi_pairing"] = info.pairing;
  context["mpi_concurrency"] = info.concurrency;
  merged["context"] = context;

  json benchmarks = json::array();
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<int, json>>> by_name;
  for (int pair = 0; pair < info.pairs; ++pair) {
    const RankReport* peer = peers[static_cast<std::size_t>(pair)];
    if (!peer || !peer->report.is_object() || !peer->report.contains("benchmarks")) continue;
    for (const json& row : peer->report["benchmarks"]) {
      const std::string name = row.value("name", std::string());
      benchmarks.push_back(renamed(row, fmt::format("/pair:{}", pair)));
      if (!by_name.count(name)) order.push_back(name);
      by_name[name].emplace_back(pair, row);
    }
  }
  for (const std::string& name : order) {
    auto [sum, min] = aggregates(by_name[name]);
    benchmarks.push_back(std::move(sum));
    benchmarks.push_back(std::move(min));
  }
  merged["benchmarks"] = benchmarks;
  return merged;
}

bool merged_has_failures(const json& merged) {
  for (const auto& [key, _] : merged["context"].items())
    if (key.rfind("pair", 0) == 0 && key.ends_with("_error")) return true;
  for (const json& row : merged["benchmarks"])
    if (row.value("error_occurred", false)) return true;
  return false;
}

}  // namespace wirezip::harness
