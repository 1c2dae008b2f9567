#pragma once
// The one exception type the libraries throw for bad input or failed operations.
// Messages name the operation and the reason, so a caller can print what() as one line.
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wirezip {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Text from a command line, file or peer as an error line shows it: the first `limit` characters,
// then "..." when there was more, so a 100 KB argument cannot flood the line.
inline std::string shown(std::string_view text, std::size_t limit = 80) {
  return text.size() <= limit ? std::string(text) : std::string(text.substr(0, limit)) + "...";
}

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace wirezip
