#include "nccl_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wirezip::harness {

TableRow& NcclTable::row(const std::string& what, std::uint64_t bytes, const std::string& redop) {
  TableRow& row = rows_[{what, bytes}];
  row.what = what;
  row.bytes = bytes;
  row.redop = redop;
  return row;
}

void NcclTable::add(const std::string& what, std::uint64_t bytes, const std::string& redop, bool in_place,
                    const TableCell& cell) {
  TableRow& row = this->row(what, bytes, redop);
  TableCell& into = row.placement[in_place ? 1 : 0];
  row.ran[in_place ? 1 : 0] = true;
  into.seconds += cell.seconds;
  into.iterations += cell.iterations;
  into.bus_factor = cell.bus_factor;
  into.wrong += cell.wrong;
}

void NcclTable::add_failure(const std::string& what, std::uint64_t bytes, const std::string& redop, bool in_place) {
  row(what, bytes, redop).failed[in_place ? 1 : 0] = true;
}

std::string NcclTable::text() const {
  if (rows_.empty()) return {};
  std::size_t width = 10;
  for (const auto& [key, row] : rows_) width = std::max(width, row.what.size());
  std::string out = fmt::format("#{:>{}}  {:>12}  {:>12}  {:>6}  {:>6}  {:^33}  {:^33}\n", "", width, "", "", "", "",
                                "out-of-place", "in-place");
  out += fmt::format("#{:<{}}  {:>12}  {:>12}  {:>6}  {:>6}", "collective/impl/codec", width, "size", "count", "type",
                     "redop");
  for (int p = 0; p < 2; ++p) out += fmt::format("  {:>9} {:>7} {:>7} {:>7}", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("\n#{:<{}}  {:>12}  {:>12}  {:>6}  {:>6}", "", width, "(B)", "(elements)", "", "");
  for (int p = 0; p < 2; ++p) out += fmt::format("  {:>9} {:>7} {:>7} {:>7}", "(us)", "(GB/s)", "(GB/s)", "");
  out += "\n";
  double busbw_sum = 0;
  int measured = 0;
  std::uint64_t wrong = 0;
  int failed = 0;
  for (const auto& [key, row] : rows_) {
    out += fmt::format(" {:<{}}  {:>12}  {:>12}  {:>6}  {:>6}", row.what, width, row.bytes, row.bytes / 2, "bf16",
                       row.redop);
    for (int p = 0; p < 2; ++p) {
      const TableCell& cell = row.placement[p];
      if (row.failed[p]) {  // its figures are no result; its wrong values, if it counted any, are
        out += fmt::format("  {:>9} {:>7} {:>7} {:>7}", "-", "-", "-",
                           cell.wrong ? std::to_string(cell.wrong) : std::string("failed"));
        wrong += cell.wrong;
        ++failed;
        continue;
      }
      if (!row.ran[p] || cell.iterations == 0 || cell.seconds <= 0) {
        out += fmt::format("  {:>9} {:>7} {:>7} {:>7}", "-", "-", "-", "-");
        continue;
      }
      const double seconds = cell.seconds / cell.iterations;
      const double algbw = static_cast<double>(row.bytes) / seconds / 1e9;
      out +=
          fmt::format("  {:>9.1f} {:>7.2f} {:>7.2f} {:>7}", seconds * 1e6, algbw, algbw * cell.bus_factor, cell.wrong);
      busbw_sum += algbw * cell.bus_factor;
      ++measured;
      wrong += cell.wrong;
    }
    out += "\n";
  }
  out += fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  out += fmt::format("# Avg bus bandwidth    : {:.3f}\n", measured ? busbw_sum / measured : 0.0);
  if (failed) out += fmt::format("# Failed cases         : {}\n", failed);
  return out;
}

}  // namespace wirezip::harness
