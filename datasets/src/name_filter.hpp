#pragma once
// Selecting tensors by a regular expression over their names (RE2 syntax).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::datasets::detail {

// Indices of the names in which `pattern` (RE2 syntax) is found anywhere (RE2::PartialMatch), in
// order. Throws wirezip::Error "bad tensor regex '...': reason" for a pattern RE2 rejects.
std::vector<std::size_t> matching_names(const std::vector<std::string_view>& names, const std::string& pattern);

}  // namespace wirezip::datasets::detail
