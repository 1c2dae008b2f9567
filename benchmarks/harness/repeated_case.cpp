#include "repeated_case.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace wirezip::harness {
namespace {

// The runs of one registered case. Google Benchmark runs them one after another, never two at
// once, and each with all its threads, so the k-th run's threads are entries k*T .. k*T+T-1 of
// a thread count T: that numbers the runs without any help from the library.
class CaseRuns {
 public:
  struct Entry {
    std::uint64_t run = 0;
    std::optional<std::string> earlier_failure;  // the reason an earlier run failed
  };

  Entry enter(int threads) {
    std::lock_guard lock(mutex_);
    PerThreadCount& count = counts_[threads];
    Entry entry{count.entered++ / static_cast<std::uint64_t>(threads), std::nullopt};
    if (count.failure && count.failure->run < entry.run) entry.earlier_failure = count.failure->reason;
    return entry;
  }

  void record(int threads, std::uint64_t run, const std::string& why) {
    std::lock_guard lock(mutex_);
    std::optional<Failure>& failure = counts_[threads].failure;
    if (!failure) failure = Failure{run, why};  // the first reason stays
  }

 private:
  struct Failure {
    std::uint64_t run;
    std::string reason;
  };
  struct PerThreadCount {
    std::uint64_t entered = 0;
    std::optional<Failure> failure;
  };
  std::mutex mutex_;
  std::map<int, PerThreadCount> counts_;
};

// The case this thread is running, for skip_case: a benchmark thread runs one case at a time.
struct Running {
  CaseRuns* runs = nullptr;
  std::uint64_t run = 0;
};
thread_local Running running;

class RunningScope {
 public:
  RunningScope(CaseRuns& runs, std::uint64_t run) { running = {&runs, run}; }
  RunningScope(const RunningScope&) = delete;
  RunningScope& operator=(const RunningScope&) = delete;
  ~RunningScope() { running = {}; }
};

}  // namespace

benchmark::internal::Benchmark* register_case(const std::string& name, std::function<void(benchmark::State&)> body) {
  auto runs = std::make_shared<CaseRuns>();
  return benchmark::RegisterBenchmark(name.c_str(), [body = std::move(body), runs](benchmark::State& state) {
    const CaseRuns::Entry entry = runs->enter(state.threads());
    if (entry.earlier_failure) {
      state.SkipWithError(entry.earlier_failure->c_str());
    } else {
      const RunningScope scope(*runs, entry.run);
      body(state);
    }
    // iterations() is 0 only for a run whose loop never started; after SkipWithError the loop
    // runs no iteration and the run reports the count it was given.
    if (state.error_occurred() && state.iterations() == 0)
      for ([[maybe_unused]] auto _ : state) {
      }
  });
}

void skip_case(benchmark::State& state, const std::string& why) {
  state.SkipWithError(why.c_str());
  if (running.runs) running.runs->record(state.threads(), running.run, why);
}

}  // namespace wirezip::harness
