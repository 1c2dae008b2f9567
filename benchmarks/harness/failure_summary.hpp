#pragma once
// Runs the registered cases and turns failed ones into the exit status. Google Benchmark exits 0
// whatever happened inside a case; here a case that ended with SkipWithError (a missing device the
// user asked for, a failed verification, a dead peer) makes the binary exit kExitCaseFailed after a
// summary on stderr that names each failed case and its reason, so CI and scripts see it.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::harness {

struct FailedCase {
  std::string name;    // as in the JSON, e.g. rdma/verbs/pages:4k/size:65536/depth:16/manual_time
  std::string reason;  // the error_message
};

// The display reporter Google Benchmark would have made itself (so --benchmark_format still
// applies), recording every failed run on the way. --benchmark_out still writes its file, unchanged:
// given only a display reporter, RunSpecifiedBenchmarks makes the file reporter as before.
class FailureRecordingReporter : public benchmark::BenchmarkReporter {
 public:
  FailureRecordingReporter();
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;
  // Each failed case once (repetitions of a case fail alike), in the order they ran.
  const std::vector<FailedCase>& failures() const { return failures_; }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  std::vector<FailedCase> failures_;
};

struct CaseOutcome {
  std::size_t cases = 0;  // the cases --benchmark_filter selected; 0: none (bad usage)
  std::vector<FailedCase> failures;
};

// Runs every case --benchmark_filter selects, then benchmark::Shutdown().
CaseOutcome run_cases();

// "NAME: K of N cases failed:" and one line "  case: reason" per failed case.
std::string failure_summary(std::string_view binary, const CaseOutcome& outcome);

// 0 when every case ran; else prints failure_summary to stderr and returns kExitCaseFailed. No case
// selected is bad usage (Google Benchmark has said so on stderr): kExitUsage. Call it last, after
// anything else that may print, so the summary ends the output.
int exit_status(std::string_view binary, const CaseOutcome& outcome);

}  // namespace wirezip::harness
