#pragma once
// The one exception type the libraries throw for bad input or failed operations.
// Messages name the operation and the reason, so a caller can print what() as one line.
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace wirezip {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace wirezip
