// Software backends of the decoder seam: raw DEFLATE through ISA-L, zlib and libdeflate, LZ4 blocks
// through liblz4. Each decodes one whole stream into exactly the plane it was given and refuses a
// stream that ends early, decodes to another size, or leaves bytes unused.
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zlib.h>

#include <climits>
#include <cstdint>

#include "backends/decoder_backends.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

unsigned char* uchars(std::span<const std::byte> s) {
  // The C APIs below take non-const input pointers but do not write through them.
  return const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(s.data()));
}
unsigned char* uchars(std::span<std::byte> s) { return reinterpret_cast<unsigned char*>(s.data()); }

// ISA-L and zlib count in 32 bits, liblz4 in int: larger planes are refused before any call.
void check_size(std::size_t n, std::size_t limit, const char* backend) {
  if (n > limit) fail("corrupt frame: {}: a stream of {} bytes is larger than the library accepts", backend, n);
}

class IsalInflate final : public StreamDecoder {
 public:
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_size(src.size(), UINT32_MAX, "isal");
    check_size(dst.size(), UINT32_MAX, "isal");
    inflate_state& s = *state_;
    isal_inflate_init(&s);
    s.next_in = uchars(src);
    s.avail_in = static_cast<std::uint32_t>(src.size());
    s.next_out = uchars(dst);
    s.avail_out = static_cast<std::uint32_t>(dst.size());
    const int rc = isal_inflate_stateless(&s);
    if (rc != ISAL_DECOMP_OK || s.total_out != dst.size())
      fail("corrupt frame: isal inflate: {} after {} of {} bytes", result_name(rc), s.total_out, dst.size());
    // ISA-L reads ahead into its bit buffer: whole bytes left there were never part of the stream.
    const std::uint64_t unused = s.avail_in + static_cast<std::uint64_t>(s.read_in_length) / 8;
    if (unused != 0) fail("corrupt frame: isal inflate: {} bytes follow the end of the stream", unused);
  }

 private:
  static const char* result_name(int rc) {
    switch (rc) {
      case ISAL_DECOMP_OK: return "ok";
      case ISAL_END_INPUT: return "the stream ends early";
      case ISAL_OUT_OVERFLOW: return "the stream decodes to more bytes than the plane";
      case ISAL_INVALID_BLOCK: return "invalid block";
      case ISAL_INVALID_SYMBOL: return "invalid symbol";
      case ISAL_INVALID_LOOKBACK: return "invalid distance";
      default: return "error";
    }
  }
  std::unique_ptr<inflate_state> state_ = std::make_unique<inflate_state>();  // ~100 KiB: not on the stack
};

class ZlibInflate final : public StreamDecoder {
 public:
  ZlibInflate() {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) fail("zlib: inflateInit2 failed");  // -15: raw DEFLATE
  }
  ~ZlibInflate() override { inflateEnd(&stream_); }
  ZlibInflate(const ZlibInflate&) = delete;
  ZlibInflate& operator=(const ZlibInflate&) = delete;

  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_size(src.size(), UINT_MAX, "zlib");
    check_size(dst.size(), UINT_MAX, "zlib");
    if (inflateReset(&stream_) != Z_OK) fail("zlib: inflateReset failed");
    stream_.next_in = uchars(src);
    stream_.avail_in = static_cast<uInt>(src.size());
    stream_.next_out = uchars(dst);
    stream_.avail_out = static_cast<uInt>(dst.size());
    const int rc = inflate(&stream_, Z_FINISH);
    if (rc != Z_STREAM_END)
      fail("corrupt frame: zlib inflate: {} after {} of {} bytes",
           rc == Z_BUF_ERROR ? (stream_.avail_in == 0 ? "the stream ends early" : "the stream decodes to more bytes than the plane")
                             : (stream_.msg ? stream_.msg : "error"),
           stream_.total_out, dst.size());
    if (stream_.total_out != dst.size())
      fail("corrupt frame: zlib inflate: the stream decodes to {} bytes, expected {}", stream_.total_out, dst.size());
    if (stream_.avail_in != 0)
      fail("corrupt frame: zlib inflate: {} bytes follow the end of the stream", stream_.avail_in);
  }

 private:
  z_stream stream_{};
};

class LibdeflateInflate final : public StreamDecoder {
 public:
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    std::size_t in_used = 0, out_size = 0;
    const libdeflate_result rc = libdeflate_deflate_decompress_ex(d_.get(), src.data(), src.size(), dst.data(),
                                                                  dst.size(), &in_used, &out_size);
    if (rc == LIBDEFLATE_INSUFFICIENT_SPACE)
      fail("corrupt frame: libdeflate: the stream decodes to more than the plane's {} bytes", dst.size());
    if (rc != LIBDEFLATE_SUCCESS) fail("corrupt frame: libdeflate: bad or truncated stream");
    if (out_size != dst.size())
      fail("corrupt frame: libdeflate: the stream decodes to {} bytes, expected {}", out_size, dst.size());
    if (in_used != src.size())
      fail("corrupt frame: libdeflate: {} bytes follow the end of the stream", src.size() - in_used);
  }

 private:
  struct Free {
    void operator()(libdeflate_decompressor* d) const noexcept { libdeflate_free_decompressor(d); }
  };
  std::unique_ptr<libdeflate_decompressor, Free> d_{[] {
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    if (!d) fail("libdeflate: cannot allocate a decompressor");
    return d;
  }()};
};

class Lz4Block final : public StreamDecoder {
 public:
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_size(src.size(), INT_MAX, "lz4");
    check_size(dst.size(), INT_MAX, "lz4");
    // LZ4_decompress_safe stops at the end of `src`: a block must end exactly there.
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(dst.data()),
                                      static_cast<int>(src.size()), static_cast<int>(dst.size()));
    if (n < 0 || static_cast<std::size_t>(n) != dst.size())
      fail("corrupt frame: lz4 plane decodes to {} bytes, expected {}", n, dst.size());
  }
};

}  // namespace

std::unique_ptr<StreamDecoder> make_isal_inflate() { return std::make_unique<IsalInflate>(); }
std::unique_ptr<StreamDecoder> make_zlib_inflate() { return std::make_unique<ZlibInflate>(); }
std::unique_ptr<StreamDecoder> make_libdeflate_inflate() { return std::make_unique<LibdeflateInflate>(); }
std::unique_ptr<StreamDecoder> make_lz4_block_decoder() { return std::make_unique<Lz4Block>(); }
std::string zlib_version_string() { return zlibVersion(); }
std::string libdeflate_version_string() { return LIBDEFLATE_VERSION_STRING; }

}  // namespace wirezip::codecs
