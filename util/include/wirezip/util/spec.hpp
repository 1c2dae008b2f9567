#pragma once
// Spec strings name a thing and its options: "zstd:level=3", "synthetic:weights:size=64MiB:seed=1".
// A spec part is ':'-separated: a name, positional words, then key=value options.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip {

std::vector<std::string> split(std::string_view text, char separator);

struct SpecPart {
  std::string name;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;

  // Each lookup removes the option, so check_consumed() can reject unknown keys.
  std::optional<std::string> take(const std::string& key);
  std::int64_t take_int(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  std::uint64_t take_size(const std::string& key, std::uint64_t fallback);
  // Throws naming `context` and the first option no one asked for.
  void check_consumed(std::string_view context) const;
};

// Throws on an empty name or an option without a key.
SpecPart parse_spec_part(std::string_view text);

}  // namespace wirezip
