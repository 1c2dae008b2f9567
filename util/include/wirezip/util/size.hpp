#pragma once
// Byte sizes as people write them: "4096", "4KiB", "64MiB", "1GiB", "1MB" (SI, 10^6).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip {

// Throws wirezip::Error naming the text and the accepted forms.
std::uint64_t parse_size(std::string_view text);
// "4KiB,1MiB" -> {4096, 1048576}; empty items are errors.
std::vector<std::uint64_t> parse_size_list(std::string_view text);
// The shortest exact binary form: 1048576 -> "1MiB", 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);

}  // namespace wirezip
