// Plane coders backed by well-kept libraries: LZ4, zstd, htscodecs rANS, ISA-L igzip. LZ4 and igzip
// planes are standard streams, decoded through the decoder seam (decoders.hpp).
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_literalCompressionMode: experimental API, ZSTD_ps_enable needs >= 1.5.1
extern "C" {
#include <htscodecs/htscodecs.h>  // this header lacks its own extern "C" guard
}
#include <htscodecs/rANS_static4x16.h>
#include <isa-l.h>
#include <isa-l/igzip_lib.h>
#include <lz4.h>
#include <zstd.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

const char* chars(std::span<const std::byte> s) { return reinterpret_cast<const char*>(s.data()); }
char* chars(std::span<std::byte> s) { return reinterpret_cast<char*>(s.data()); }
unsigned char* uchars(std::span<const std::byte> s) {
  // C APIs below take non-const input pointers but do not write through them.
  return const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(s.data()));
}
unsigned char* uchars(std::span<std::byte> s) { return reinterpret_cast<unsigned char*>(s.data()); }

// The libraries below take int or unsigned sizes; larger planes are refused before any call.
constexpr std::size_t kMaxLibraryInput = INT_MAX / 2;

void check_int_size(std::size_t n, const char* what) {
  if (n > kMaxLibraryInput) fail("{}: plane of {} bytes is larger than the library accepts", what, n);
}

// Library bounds computed in int arithmetic would wrap for huge n; encode() refuses those anyway.
std::size_t checked_bound(std::size_t n, std::size_t (*bound)(std::size_t)) {
  return n > kMaxLibraryInput ? n : bound(n);
}

class Lz4Coder final : public PlaneCoder {
 public:
  Lz4Coder(int acceleration, std::unique_ptr<StreamDecoder> decoder)
      : acceleration_(acceleration), state_(LZ4_sizeofState()), decoder_(std::move(decoder)) {}
  CoderId id() const override { return CoderId::lz4; }
  std::size_t bound(std::size_t n) const override {
    return checked_bound(n, [](std::size_t m) { return static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(m))); });
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_int_size(src.size(), "lz4");
    int n = LZ4_compress_fast_extState(state_.data(), chars(src), chars(dst), static_cast<int>(src.size()),
                                       static_cast<int>(dst.size()), acceleration_);
    if (n <= 0) fail("lz4: compression of {} bytes failed", src.size());
    return static_cast<std::size_t>(n);
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override { decoder_->decode(src, dst); }

 private:
  int acceleration_;
  std::vector<char> state_;
  std::unique_ptr<StreamDecoder> decoder_;
};

class ZstdCoder final : public PlaneCoder {
 public:
  ZstdCoder(int level, bool force_literals) {
    if (!cctx_ || !dctx_) fail("zstd: cannot allocate a context");
    check(ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, level), "set level");
    if (force_literals)
      check(ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_literalCompressionMode, ZSTD_ps_enable), "force literals");
  }
  CoderId id() const override { return CoderId::zstd; }
  std::size_t bound(std::size_t n) const override { return ZSTD_compressBound(n); }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    return check(ZSTD_compress2(cctx_.get(), dst.data(), dst.size(), src.data(), src.size()), "compress");
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    std::size_t n = ZSTD_decompressDCtx(dctx_.get(), dst.data(), dst.size(), src.data(), src.size());
    if (ZSTD_isError(n)) fail("corrupt frame: zstd plane: {}", ZSTD_getErrorName(n));
    if (n != dst.size()) fail("corrupt frame: zstd plane decodes to {} bytes, expected {}", n, dst.size());
  }

 private:
  static std::size_t check(std::size_t code, const char* what) {
    if (ZSTD_isError(code)) fail("zstd: {}: {}", what, ZSTD_getErrorName(code));
    return code;
  }
  struct FreeC { void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); } };
  struct FreeD { void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); } };
  std::unique_ptr<ZSTD_CCtx, FreeC> cctx_{ZSTD_createCCtx()};
  std::unique_ptr<ZSTD_DCtx, FreeD> dctx_{ZSTD_createDCtx()};
};

class RansCoder final : public PlaneCoder {
 public:
  CoderId id() const override { return CoderId::rans; }
  std::size_t bound(std::size_t n) const override {
    return checked_bound(n, [](std::size_t m) { return std::size_t{rans_compress_bound_4x16(static_cast<unsigned>(m), kOrder)}; });
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_int_size(src.size(), "rans");
    unsigned int out_size = static_cast<unsigned int>(dst.size());
    if (!rans_compress_to_4x16(uchars(src), static_cast<unsigned>(src.size()), uchars(dst), &out_size, kOrder))
      fail("rans: compression of {} bytes failed", src.size());
    return out_size;
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_int_size(src.size(), "rans");
    // Given a null output, htscodecs allocates one sized by the (untrusted) stream: never let it.
    unsigned char spare = 0;
    unsigned char* out = dst.empty() ? &spare : uchars(dst);
    unsigned int out_size = static_cast<unsigned int>(dst.size());
    unsigned char* result = rans_uncompress_to_4x16(uchars(src), static_cast<unsigned>(src.size()), out, &out_size);
    if (result && result != out) std::free(result);
    if (result != out || out_size != dst.size())
      fail("corrupt frame: rans plane does not decode to {} bytes", dst.size());
  }

 private:
  static constexpr int kOrder = RANS_ORDER_X32;  // order 0, 32-way: the SIMD-friendly layout
};

class IgzipCoder final : public PlaneCoder {
 public:
  IgzipCoder(int level, std::unique_ptr<StreamDecoder> decoder)
      : level_(level), level_buffer_(ISAL_DEF_LVL3_LARGE), decoder_(std::move(decoder)) {}
  CoderId id() const override { return CoderId::igzip; }
  std::size_t bound(std::size_t n) const override { return n + n / 8 + 1024; }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    check_int_size(src.size(), "igzip");
    isal_huff_histogram histogram{};
    isal_update_histogram(uchars(src), static_cast<int>(src.size()), &histogram);
    isal_hufftables tables{};
    isal_create_hufftables(&tables, &histogram);
    isal_zstream stream;
    isal_deflate_stateless_init(&stream);
    stream.level = static_cast<std::uint32_t>(level_);
    stream.level_buf = level_buffer_.data();
    stream.level_buf_size = static_cast<std::uint32_t>(level_buffer_.size());
    stream.hufftables = &tables;
    stream.next_in = uchars(src);
    stream.avail_in = static_cast<std::uint32_t>(src.size());
    stream.next_out = uchars(dst);
    stream.avail_out = static_cast<std::uint32_t>(dst.size());
    stream.end_of_stream = 1;
    if (int rc = isal_deflate_stateless(&stream); rc != COMP_OK) fail("igzip: deflate failed ({})", rc);
    return stream.total_out;
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override { decoder_->decode(src, dst); }

 private:
  int level_;
  std::vector<std::uint8_t> level_buffer_;
  std::unique_ptr<StreamDecoder> decoder_;
};

}  // namespace

std::unique_ptr<PlaneCoder> make_lz4_coder(int acceleration, std::unique_ptr<StreamDecoder> decoder) {
  return std::make_unique<Lz4Coder>(acceleration, std::move(decoder));
}
std::unique_ptr<PlaneCoder> make_zstd_coder(int level, bool force_literals) {
  return std::make_unique<ZstdCoder>(level, force_literals);
}
std::unique_ptr<PlaneCoder> make_rans_coder() { return std::make_unique<RansCoder>(); }
std::unique_ptr<PlaneCoder> make_igzip_coder(int level, std::unique_ptr<StreamDecoder> decoder) {
  return std::make_unique<IgzipCoder>(level, std::move(decoder));
}

std::string lz4_version() { return LZ4_versionString(); }
std::string zstd_version() { return ZSTD_versionString(); }
std::string htscodecs_version_string() { return htscodecs_version(); }
std::string isal_version() {
  return fmt::format("{}.{}.{}", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
}

}  // namespace wirezip::codecs
