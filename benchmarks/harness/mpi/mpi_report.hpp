#pragma once
// Google Benchmark under MPI: every rank runs the cases, one JSON file comes out. Ranks other
// than the reporting one must neither print nor open --benchmark_out.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>

namespace wirezip::harness {

// Swallows everything: the display reporter of ranks that do not report.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Before benchmark::Initialize: removes --benchmark_out=... and --benchmark_out_format=... from argv.
void drop_benchmark_out(int& argc, char** argv);
// After benchmark::Initialize (which consumed them): the --benchmark_out=PATH this process was
// started with, read back from /proc/self/cmdline; and --benchmark_out_format (default "json").
std::optional<std::string> benchmark_out_from_cmdline();
std::string benchmark_out_format_from_cmdline();
// The display format, --benchmark_format (default "console"), read back the same way.
std::string benchmark_format_from_cmdline();
// Points Google Benchmark's --benchmark_out at `path` (format json) for the next run.
void point_benchmark_out(const std::string& path);

}  // namespace wirezip::harness
