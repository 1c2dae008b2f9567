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

// Text from a command line, file or peer as an error line shows it: the first `limit` bytes, then
// "..." when there was more, so a 100 KB argument cannot flood the line; bytes outside printable
// ASCII (and the backslash) as \xNN, so a hostile name cannot drive the terminal.
inline std::string shown(std::string_view text, std::size_t limit = 80) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '\\')
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  if (text.size() > limit) out += "...";
  return out;
}

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace wirezip
