#pragma once
// Size arithmetic on values that came from a peer, a file or the command line: a result that
// would wrap is an error naming what was being computed, never a small number.
#include <cstddef>
#include <string_view>

#include "wirezip/util/error.hpp"

namespace wirezip {

inline std::size_t checked_add(std::size_t a, std::size_t b, std::string_view what) {
  std::size_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) fail("{}: {} + {} overflows", what, a, b);
  return sum;
}

inline std::size_t checked_mul(std::size_t a, std::size_t b, std::string_view what) {
  std::size_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) fail("{}: {} x {} overflows", what, a, b);
  return product;
}

}  // namespace wirezip
