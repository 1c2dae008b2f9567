#pragma once
// Every wire and file format here is little-endian on every host: these two functions are the
// only place that knows how to lay an integer out.
#include <cstddef>
#include <cstdint>
#include <span>

namespace wirezip {

template <typename T>
void store_le(std::span<std::byte> out, std::size_t offset, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[offset + i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
}

template <typename T>
T load_le(std::span<const std::byte> in, std::size_t offset) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<std::uint64_t>(in[offset + i]) << (8 * i);
  return static_cast<T>(value);
}

}  // namespace wirezip
