#pragma once
// Command-line values, checked before anything uses them: lists, whole numbers and sizes within
// bounds. Each function throws wirezip::Error with one line naming the flag, the text and what the
// flag takes, e.g. "--depth: '-1' is not a whole number in [1, 256]". Parsing the text ourselves
// (CLI11 binds strings) matters for unsigned flags: CLI11 reads "-1" as 2^64 - 1.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::flag {

constexpr std::uint64_t kNoMaximum = std::numeric_limits<std::uint64_t>::max();

// "a,b,c"; an empty list or an empty item is an error.
std::vector<std::string> list(std::string_view flag, std::string_view text);
// A list of specs that may hold a regex (--datasets=safetensors:PATH:tensors=REGEX,...): a comma
// inside (), [] or {}, or escaped as "\,", does not end an item ("\," stays in it: RE2 reads it
// as a comma). Otherwise as list().
std::vector<std::string> spec_list(std::string_view flag, std::string_view text);

// A whole number in [min, max], decimal digits only (no sign, no unit).
std::uint64_t count(std::string_view flag, std::string_view text, std::uint64_t min, std::uint64_t max);
std::vector<std::uint64_t> counts(std::string_view flag, std::string_view text, std::uint64_t min,
                                  std::uint64_t max);

// A size as parse_size reads it ("64KiB"), at least `min` and at most `max` bytes.
std::uint64_t size(std::string_view flag, std::string_view text, std::uint64_t min, std::uint64_t max = kNoMaximum);
std::vector<std::uint64_t> sizes(std::string_view flag, std::string_view text, std::uint64_t min,
                                 std::uint64_t max = kNoMaximum);

}  // namespace wirezip::flag
