#pragma once
// One interface for every compressor the suite measures. A Codec owns its library contexts
// (created once, reused for every call) and is used by one thread at a time: make one per thread.
#include <cstddef>
#include <span>
#include <string>

namespace wirezip::codecs {

class Codec {
 public:
  virtual ~Codec() = default;

  // The spec string this codec was built from, e.g. "bytegroup+zstd:level=1".
  virtual const std::string& spec() const = 0;
  // Bytes per element the codec groups by (1 when it does not group).
  virtual std::size_t element_width() const = 0;
  // Capacity compress() needs for an input of `original_bytes`.
  virtual std::size_t max_compressed_size(std::size_t original_bytes) const = 0;
  // Compresses `src` into `dst` (at least max_compressed_size(src.size()) bytes); returns the size written.
  virtual std::size_t compress(std::span<const std::byte> src, std::span<std::byte> dst) = 0;
  // Restores the original into `dst`; returns its size. A corrupt or truncated input, or a `dst`
  // too small, throws wirezip::Error; nothing is written past dst.size().
  virtual std::size_t decompress(std::span<const std::byte> src, std::span<std::byte> dst) = 0;
};

}  // namespace wirezip::codecs
