#include "name_filter.hpp"

#include <re2/re2.h>

#include "wirezip/util/error.hpp"

namespace wirezip::datasets::detail {

// Why RE2 and not std::regex: the names come from the file, an untrusted input, and libstdc++'s
// std::regex matches by recursive backtracking, one stack frame per character or more: '^(a|b)*$'
// over a 200,000-character name overflowed the stack and killed the process. RE2 matches in time
// linear in the name with bounded memory (a DFA, falling back to an NFA simulation) and never
// recurses on the input, so no name can crash the reader or stall it.
std::vector<std::size_t> matching_names(const std::vector<std::string_view>& names, const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes into our exception, not onto stderr
  RE2 regex(pattern, options);
  if (!regex.ok()) {
    // RE2's reason quotes the part of the pattern it stopped at: shortened as the pattern is.
    fail("bad tensor regex '{}': {}", shown(pattern), shown(regex.error()));
  }
  std::vector<std::size_t> matches;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (RE2::PartialMatch(re2::StringPiece(names[i].data(), names[i].size()), regex)) matches.push_back(i);
  return matches;
}

}  // namespace wirezip::datasets::detail
