// The peer: c-blosc's shuffle / bitshuffle + LZ4 or zstd, in blosc's own container (not our frame,
// so it pays no checksum: the comparison is, if anything, tilted in the peer's favour).
#include <blosc.h>

#include "codec_factories.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

class BloscCodec final : public Codec {
 public:
  BloscCodec(std::string spec, int shuffle, std::size_t typesize, std::string compressor, int level)
      : spec_(std::move(spec)), shuffle_(shuffle), typesize_(typesize), compressor_(std::move(compressor)),
        level_(level) {}

  const std::string& spec() const override { return spec_; }
  std::size_t element_width() const override { return typesize_; }
  std::size_t max_compressed_size(std::size_t n) const override { return n + BLOSC_MAX_OVERHEAD; }

  std::size_t compress(std::span<const std::byte> src, std::span<std::byte> dst) override {
    if (src.size() > BLOSC_MAX_BUFFERSIZE) fail("{}: {} bytes exceeds blosc's buffer limit", spec_, src.size());
    // One internal thread: benchmark threads are the only parallelism, as for every other codec.
    int n = blosc_compress_ctx(level_, shuffle_, typesize_, src.size(), src.data(), dst.data(), dst.size(),
                               compressor_.c_str(), 0, 1);
    if (n <= 0) fail("{}: blosc_compress_ctx failed ({})", spec_, n);
    return static_cast<std::size_t>(n);
  }

  std::size_t decompress(std::span<const std::byte> src, std::span<std::byte> dst) override {
    std::size_t original = 0;
    if (src.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(src.data(), src.size(), &original) < 0)
      fail("corrupt frame: {}: not a valid blosc buffer of {} bytes", spec_, src.size());
    if (original > dst.size()) fail("{}: frame holds {} bytes, output has room for {}", spec_, original, dst.size());
    int n = blosc_decompress_ctx(src.data(), dst.data(), dst.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != original)
      fail("corrupt frame: {}: blosc_decompress_ctx returned {}", spec_, n);
    return original;
  }

 private:
  std::string spec_;
  int shuffle_;
  std::size_t typesize_;
  std::string compressor_;
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_blosc_codec(std::string spec, int shuffle, std::size_t typesize, std::string compressor,
                                        int level) {
  return std::make_unique<BloscCodec>(std::move(spec), shuffle, typesize, std::move(compressor), level);
}

std::string blosc_version() { return blosc_get_version_string(); }

}  // namespace wirezip::codecs
