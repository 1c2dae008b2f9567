#include "wirezip/util/spec.hpp"

#include <charconv>

#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"

namespace wirezip {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    items.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (const std::string& item : items)
    if (item.empty()) fail("empty item in '{}' (separator '{}')", shown(text), separator);
  return items;
}

SpecPart parse_spec_part(std::string_view text) {
  SpecPart part;
  std::vector<std::string> words = split(text, ':');
  part.name = words.front();
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    std::size_t eq = word.find('=');
    if (eq == std::string::npos) {
      part.positional.push_back(word);
    } else if (eq == 0) {
      fail("option without a name in '{}'", text);
    } else if (!part.options.emplace(word.substr(0, eq), word.substr(eq + 1)).second) {
      // Which of the two was meant is unknowable; keeping either would hide the other.
      fail("option '{}' given twice in '{}'", word.substr(0, eq), shown(text));
    }
  }
  return part;
}

std::optional<std::string> SpecPart::take(const std::string& key) {
  auto it = options.find(key);
  if (it == options.end()) return std::nullopt;
  std::string value = it->second;
  options.erase(it);
  return value;
}

std::int64_t SpecPart::take_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                                std::int64_t max) {
  std::optional<std::string> text = take(key);
  if (!text) return fallback;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || end != text->data() + text->size() || value < min || value > max)
    fail("{}: option {}={} must be an integer in [{}, {}]", name, key, shown(*text), min, max);
  return value;
}

std::uint64_t SpecPart::take_size(const std::string& key, std::uint64_t fallback) {
  std::optional<std::string> text = take(key);
  return text ? parse_size(*text) : fallback;
}

void SpecPart::check_consumed(std::string_view context) const {
  if (!options.empty())
    fail("{}: unknown option '{}' for '{}'", context, options.begin()->first, name);
}

}  // namespace wirezip
