#pragma once
// Cases that fail in some repetitions only (a peer that dies after two of five) within what Google
// Benchmark 1.7 can aggregate. Its statistics over a case's repetitions (ComputeStats) assume two
// things a failed run can break:
//  - every run reports the iteration count the runner gave it, but a run that failed before its
//    timing loop reports 0, and a debug check then aborts the binary (SIGABRT, truncated JSON);
//  - the first run did not fail: its statistics list is read, and a failed run carries none
//    (SIGSEGV when a failed first repetition is followed by two that pass).
// register_case wraps a case so that neither happens: a run that failed before its loop still
// passes through it (empty: nothing is timed), and once a run of a case failed, each later run of
// it fails at once with the same reason, so every repetition after a failure is a failure too.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

namespace wirezip::harness {

// benchmark::RegisterBenchmark(name, body) with the guards above. Each thread count of it is a
// case of its own.
benchmark::internal::Benchmark* register_case(const std::string& name, std::function<void(benchmark::State&)> body);

// state.SkipWithError(why), remembered for the later runs when the case was registered with
// register_case. Call it from the thread Google Benchmark runs the case on.
void skip_case(benchmark::State& state, const std::string& why);

}  // namespace wirezip::harness
