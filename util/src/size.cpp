#include "wirezip/util/size.hpp"

#include <array>
#include <charconv>
#include <limits>

#include "wirezip/util/error.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip {
namespace {

struct Unit {
  std::string_view suffix;
  std::uint64_t factor;
};
// Longest suffixes first so "KiB" is not read as "B" with a junk number.
constexpr std::array<Unit, 10> kUnits{{{"KiB", 1ull << 10},
                                       {"MiB", 1ull << 20},
                                       {"GiB", 1ull << 30},
                                       {"TiB", 1ull << 40},
                                       {"KB", 1000ull},
                                       {"MB", 1000'000ull},
                                       {"GB", 1000'000'000ull},
                                       {"K", 1ull << 10},
                                       {"M", 1ull << 20},
                                       {"B", 1ull}}};

[[noreturn]] void bad_size(std::string_view text) {
  fail(
      "bad size '{}': expected a whole number of bytes with an optional unit (B, K, KiB, M, MiB, GiB, TiB, KB, MB, "
      "GB), e.g. 64KiB",
      shown(text));
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  std::uint64_t factor = 1;
  std::string_view digits = text;
  for (const Unit& unit : kUnits) {
    if (digits.size() > unit.suffix.size() && digits.ends_with(unit.suffix)) {
      factor = unit.factor;
      digits.remove_suffix(unit.suffix.size());
      break;
    }
  }
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) bad_size(text);
  if (value > std::numeric_limits<std::uint64_t>::max() / factor) bad_size(text);
  return value * factor;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  std::vector<std::uint64_t> sizes;
  for (const std::string& item : split(text, ',')) sizes.push_back(parse_size(item));
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::array<std::string_view, 4> names{"B", "KiB", "MiB", "GiB"};
  std::size_t unit = 0;
  while (unit + 1 < names.size() && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, names[unit]);
}

}  // namespace wirezip
