#include "failure_summary.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "context.hpp"

namespace wirezip::harness {

// CreateDefaultDisplayReporter hands out the reporter for --benchmark_format; whoever passes it on
// as the display reporter owns it (the library deletes it only when it made the call itself).
FailureRecordingReporter::FailureRecordingReporter() : display_(benchmark::CreateDefaultDisplayReporter()) {}

bool FailureRecordingReporter::ReportContext(const Context& context) { return display_->ReportContext(context); }

void FailureRecordingReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (!run.error_occurred) continue;
    const std::string name = run.benchmark_name();
    const bool known = std::any_of(failures_.begin(), failures_.end(),
                                   [&](const FailedCase& failed) { return failed.name == name; });
    if (!known) failures_.push_back({name, run.error_message});
  }
  display_->ReportRuns(runs);
}

void FailureRecordingReporter::Finalize() { display_->Finalize(); }

CaseOutcome run_cases() {
  FailureRecordingReporter reporter;
  CaseOutcome outcome;
  outcome.cases = benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  outcome.failures = reporter.failures();
  return outcome;
}

std::string failure_summary(std::string_view binary, const CaseOutcome& outcome) {
  std::string text = fmt::format("{}: {} of {} cases failed:\n", binary, outcome.failures.size(), outcome.cases);
  for (const FailedCase& failed : outcome.failures) {
    std::string reason = failed.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');  // one line per case
    text += fmt::format("  {}: {}\n", failed.name, reason);
  }
  return text;
}

int exit_status(std::string_view binary, const CaseOutcome& outcome) {
  if (outcome.cases == 0) return kExitUsage;
  if (outcome.failures.empty()) return 0;
  fmt::print(stderr, "{}", failure_summary(binary, outcome));
  return kExitCaseFailed;
}

}  // namespace wirezip::harness
