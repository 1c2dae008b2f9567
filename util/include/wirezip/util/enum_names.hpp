#pragma once
// The names of an enum's values, written once: the name a record or case shows, the value a flag's
// text parses to, and the error line that lists the valid forms all come from one table, so adding
// a value is one entry and the three can never disagree.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "wirezip/util/error.hpp"

namespace wirezip {

template <typename Enum, std::size_t N>
struct EnumNames {
  std::string_view what;  // what a value is, for "unknown <what> 'x': valid forms are a, b"
  std::array<std::pair<Enum, std::string_view>, N> names;

  constexpr std::string_view name(Enum value) const {
    for (const auto& [v, n] : names)
      if (v == value) return n;
    return "unknown";
  }

  constexpr std::optional<Enum> find(std::string_view text) const {
    for (const auto& [v, n] : names)
      if (n == text) return v;
    return std::nullopt;
  }

  // The value named by untrusted text; an unknown name is an Error that lists the valid forms.
  Enum parse(std::string_view text) const {
    if (const auto value = find(text)) return *value;
    fail("unknown {} '{}': valid forms are {}", what, shown(text), valid_forms());
  }

  std::string valid_forms() const {
    std::string out;
    for (const auto& [v, n] : names) (out += out.empty() ? "" : ", ") += n;
    return out;
  }
};

}  // namespace wirezip
