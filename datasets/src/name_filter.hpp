#pragma once
// Selecting tensors by a std::regex over their names.
#include <cstddef>
#include <string>
#include <vector>

namespace wirezip::datasets::detail {

// Indices of the names in which `pattern` (ECMAScript) is found by regex_search, in order.
// Throws wirezip::Error "bad tensor regex '...': reason" for a pattern std::regex rejects.
std::vector<std::size_t> matching_names(const std::vector<std::string>& names, const std::string& pattern);

}  // namespace wirezip::datasets::detail
