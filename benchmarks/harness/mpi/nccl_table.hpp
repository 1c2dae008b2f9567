#pragma once
// bench_collective's closing table in nccl-tests' layout: one line per collective, implementation,
// codec and size, the out-of-place and in-place cases side by side (time, algbw, busbw, #wrong
// each), then the out-of-bounds count and the average bus bandwidth, as nccl-tests ends its output.
// A case that failed shows "-" for its figures and "failed" for #wrong (unless it counted wrong
// values: then their number); the failure summary says why.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace wirezip::harness {

// What one placement of one case measured, summed over its repetitions.
struct TableCell {
  double seconds = 0;  // time of every timed iteration, summed
  double iterations = 0;
  double bus_factor = 0;    // busbw / algbw of the collective
  std::uint64_t wrong = 0;  // values that differed from the reference (every rank's, summed)
};

struct TableRow {
  std::string what;  // op/impl/codec: the case name without size, ranks, transport and placement
  std::uint64_t bytes = 0;
  std::string redop;       // "sum", or "none" for all-gather
  TableCell placement[2];  // [0] out-of-place, [1] in-place
  bool ran[2] = {false, false};
  bool failed[2] = {false, false};
};

class NcclTable {
 public:
  // Adds one repetition's figures (a repetition of a case already seen adds to it).
  void add(const std::string& what, std::uint64_t bytes, const std::string& redop, bool in_place,
           const TableCell& cell);
  // A placement of a case that failed, measured or not: its row is there all the same.
  void add_failure(const std::string& what, std::uint64_t bytes, const std::string& redop, bool in_place);
  // The table, "# Out of bounds values" and "# Avg bus bandwidth" lines, and "# Failed cases" when
  // any failed; empty when nothing ran.
  std::string text() const;

 private:
  TableRow& row(const std::string& what, std::uint64_t bytes, const std::string& redop);

  std::map<std::tuple<std::string, std::uint64_t>, TableRow> rows_;
};

}  // namespace wirezip::harness
