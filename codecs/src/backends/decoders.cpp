// The table of decoder backends: one line per backend. Defaults are the fastest measured here.
#include <isa-l.h>
#include <lz4.h>

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "backends/decoder_backends.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

struct Backend {
  std::string_view name;
  StreamFormat format;
  std::unique_ptr<StreamDecoder> (*make)();  // null: not built
  std::string (*library)();                  // library and version, or why it is not built
};

std::string isal_library() {
  return fmt::format("isa-l {}.{}.{}", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
}
std::string doca_missing() { return "not built (DOCA SDK not found)"; }

const std::array kBackends = {
    Backend{"isal", StreamFormat::deflate, make_isal_inflate, isal_library},
    Backend{"libdeflate", StreamFormat::deflate, make_libdeflate_inflate,
            [] { return "libdeflate " + libdeflate_version_string(); }},
    Backend{"zlib", StreamFormat::deflate, make_zlib_inflate, [] { return "zlib " + zlib_version_string(); }},
    Backend{"lz4", StreamFormat::lz4, make_lz4_block_decoder, [] { return std::string("lz4 ") + LZ4_versionString(); }},
#if WIREZIP_HAVE_DOCA
    Backend{"doca", StreamFormat::deflate, [] { return make_doca_decoder(StreamFormat::deflate); },
            [] { return "DOCA Compress " + doca_version_string(); }},
    Backend{"doca", StreamFormat::lz4, [] { return make_doca_decoder(StreamFormat::lz4); },
            [] { return "DOCA Compress " + doca_version_string(); }},
#else
    Backend{"doca", StreamFormat::deflate, nullptr, doca_missing},
    Backend{"doca", StreamFormat::lz4, nullptr, doca_missing},
#endif
};

}  // namespace

std::string_view stream_format_name(StreamFormat format) { return format == StreamFormat::deflate ? "deflate" : "lz4"; }

std::vector<DecoderInfo> list_decoders() {
  std::vector<DecoderInfo> out;
  for (const Backend& b : kBackends) out.push_back({std::string(b.name), b.format, b.library(), b.make != nullptr});
  return out;
}

std::string_view default_decoder(StreamFormat format) {
  // ISA-L inflates these literal-only planes fastest of the three here (docs/RESULTS.md, "Decoder
  // backends"); liblz4 is the LZ4 reference.
  return format == StreamFormat::deflate ? "isal" : "lz4";
}

namespace {

const Backend& find_backend(StreamFormat format, std::string_view name) {
  std::vector<std::string> valid;
  for (const Backend& b : kBackends) {
    if (b.format != format) continue;
    if (b.name == name) {
      if (!b.make) fail("decoder '{}' for {}: {}", name, stream_format_name(format), b.library());
      return b;
    }
    if (b.make) valid.emplace_back(b.name);
  }
  fail("unknown {} decoder '{}' (valid: {})", stream_format_name(format), name, fmt::join(valid, ", "));
}

}  // namespace

std::unique_ptr<StreamDecoder> make_decoder(StreamFormat format, std::string_view name) {
  return find_backend(format, name).make();
}

void require_decoder(StreamFormat format, std::string_view name) { find_backend(format, name); }

}  // namespace wirezip::codecs
