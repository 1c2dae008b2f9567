#include "wirezip/util/flag.hpp"

#include <charconv>

#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::flag {
namespace {

// A comma-separated list, each item parsed by `one` (count or size) with the same bounds.
using ParseOne = std::uint64_t (*)(std::string_view, std::string_view, std::uint64_t, std::uint64_t);
std::vector<std::uint64_t> each(std::string_view flag, std::string_view text, std::uint64_t min, std::uint64_t max,
                                ParseOne one) {
  std::vector<std::uint64_t> values;
  for (const std::string& item : list(flag, text)) values.push_back(one(flag, item, min, max));
  return values;
}

}  // namespace

std::vector<std::string> list(std::string_view flag, std::string_view text) {
  if (text.empty()) fail("{}: no value (expected a comma-separated list)", flag);
  try {
    return split(text, ',');
  } catch (const Error& e) {
    fail("{}: {}", flag, e.what());
  }
}

std::vector<std::string> spec_list(std::string_view flag, std::string_view text) {
  if (text.empty()) fail("{}: no value (expected a comma-separated list)", flag);
  std::vector<std::string> items(1);
  int depth = 0;  // of (), [] and {} around this character
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {  // an escaped character, backslash kept
      items.back() += text.substr(i, 2);
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      items.emplace_back();
      continue;
    }
    items.back() += c;
  }
  for (const std::string& item : items)
    if (item.empty()) fail("{}: empty item in '{}'", flag, shown(text));
  return items;
}

std::uint64_t count(std::string_view flag, std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  // from_chars takes no '+' and, for an unsigned type, no '-': "-1" is refused, not wrapped.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < min || value > max)
    fail("{}: '{}' is not a whole number in [{}, {}]", flag, shown(text), min, max);
  return value;
}

std::vector<std::uint64_t> counts(std::string_view flag, std::string_view text, std::uint64_t min,
                                  std::uint64_t max) {
  return each(flag, text, min, max, count);
}

std::uint64_t size(std::string_view flag, std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(text);
  } catch (const Error& e) {
    fail("{}: {}", flag, e.what());
  }
  if (bytes < min) fail("{}: '{}' is less than the minimum, {}", flag, shown(text), format_size(min));
  if (bytes > max) fail("{}: '{}' is more than the maximum, {}", flag, shown(text), format_size(max));
  return bytes;
}

std::vector<std::uint64_t> sizes(std::string_view flag, std::string_view text, std::uint64_t min,
                                 std::uint64_t max) {
  return each(flag, text, min, max, size);
}

}  // namespace wirezip::flag
