// In a file of its own because GCC 12 with -fsanitize and -O2 reports false -Wmaybe-uninitialized
// warnings inside libstdc++'s <regex> (std::function in the NFA states). The pragma must precede
// every include to reach those header lines, so it is kept to this one small translation unit.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "name_filter.hpp"

#include <regex>

#include "wirezip/util/error.hpp"

namespace wirezip::datasets::detail {

std::vector<std::size_t> matching_names(const std::vector<std::string>& names, const std::string& pattern) {
  std::vector<std::size_t> matches;
  try {
    std::regex regex(pattern, std::regex::ECMAScript);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (std::regex_search(names[i], regex)) matches.push_back(i);
  } catch (const std::regex_error& error) {
    // Also thrown while matching, when a pattern is too complex for the backtracking engine.
    fail("bad tensor regex '{}': {}", pattern, error.what());
  }
  return matches;
}

}  // namespace wirezip::datasets::detail
