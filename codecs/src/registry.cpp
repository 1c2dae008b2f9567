#include "wirezip/codecs/registry.hpp"

#include <blosc.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <array>

#include "backends/decoder_backends.hpp"
#include "codec_factories.hpp"
#include "planes/plane_layout.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::codecs {
namespace {

constexpr std::string_view kValidForms =
    "memcpy, lz4[:accel=N][:decoder=D], zstd[:level=N][:literals=1], rans, huff, ans, igzip[:level=0..3][:decoder=D], "
    "deflate[:decoder=D], "
    "bytegroup[:width=W][:split=exponent[:format=bf16|fp16|fp32]][+CODER], "
    "bytegroup:split=exponent+ans:context=exponent, blosc:{noshuffle|shuffle|bitshuffle}[:width=W]+{lz4|lz4hc|zstd|blosclz|zlib}"
    "[:level=N]";

[[noreturn]] void bad_spec(std::string_view spec, std::string_view why) {
  fail("bad codec spec '{}': {}; valid forms: {}", spec, why, kValidForms);
}

// The coders whose planes are standard streams, which any backend of the decoder seam decodes.
constexpr std::array<std::string_view, 3> kCodersWithDecoders = {"lz4", "igzip", "deflate"};

// The decoder= option of a coder stage, or the format's default.
std::unique_ptr<StreamDecoder> take_decoder(SpecPart& part, StreamFormat format) {
  return make_decoder(format, part.take("decoder").value_or(std::string(default_decoder(format))));
}

// A coder stage: lz4, zstd, rans, huff, igzip, deflate with their options.
std::unique_ptr<PlaneCoder> make_coder(std::string_view spec, SpecPart part) {
  std::unique_ptr<PlaneCoder> coder;
  if (part.name == "lz4") {
    const int acceleration = static_cast<int>(part.take_int("accel", 1, 1, 65537));
    coder = make_lz4_coder(acceleration, take_decoder(part, StreamFormat::lz4));
  } else if (part.name == "zstd") {
    int level = static_cast<int>(part.take_int("level", 1, ZSTD_minCLevel(), ZSTD_maxCLevel()));
    coder = make_zstd_coder(level, part.take_int("literals", 0, 0, 1) == 1);
  } else if (part.name == "rans") {
    coder = make_rans_coder();
  } else if (part.name == "huff") {
    coder = make_huff_coder();
  } else if (part.name == "ans") {
    coder = make_ans_coder();
  } else if (part.name == "igzip") {
    const int level = static_cast<int>(part.take_int("level", 0, 0, 3));
    coder = make_igzip_coder(level, take_decoder(part, StreamFormat::deflate));
  } else if (part.name == "deflate") {
    coder = make_deflate_coder(take_decoder(part, StreamFormat::deflate));
  } else {
    bad_spec(spec, fmt::format("unknown coder '{}'", part.name));
  }
  if (!part.positional.empty()) bad_spec(spec, fmt::format("unexpected word '{}'", part.positional.front()));
  part.check_consumed(fmt::format("codec spec '{}'", spec));
  return coder;
}

std::size_t take_width(SpecPart& part, std::size_t fallback) {
  return static_cast<std::size_t>(part.take_int("width", static_cast<std::int64_t>(fallback), 1,
                                                 static_cast<std::int64_t>(kMaxElementWidth)));
}

// bytegroup's split: byte planes, or split=exponent with a float format named or implied by the
// width (2: bf16, 4: fp32); a width given beside a format must agree with it.
PlaneLayout take_layout(std::string_view spec, SpecPart& head, std::size_t& width, bool width_given) {
  const std::string split_kind = head.take("split").value_or("bytes");
  const auto format_name = head.take("format");
  if (split_kind == "bytes") {
    if (format_name) bad_spec(spec, "format= needs split=exponent");
    return PlaneLayout::bytes;
  }
  if (split_kind != "exponent") bad_spec(spec, fmt::format("unknown split '{}' (bytes or exponent)", split_kind));
  FloatFormat format = width == 4 ? FloatFormat::fp32 : FloatFormat::bf16;
  if (format_name) {
    auto parsed = parse_float_format(*format_name);
    if (!parsed) bad_spec(spec, fmt::format("unknown float format '{}' (bf16, fp16 or fp32)", *format_name));
    format = *parsed;
  }
  if (width_given && width != float_format_width(format))
    bad_spec(spec, fmt::format("split=exponent of {} needs width {}, not {}", float_format_name(format),
                               float_format_width(format), width));
  width = float_format_width(format);
  return exponent_layout(format);
}

// ans:context=exponent after split=exponent: the sign/mantissa plane coded given the exponent.
std::unique_ptr<Codec> make_context_codec(std::string_view spec, SpecPart stage, std::string_view context,
                                          PlaneLayout layout) {
  if (stage.name != "ans") bad_spec(spec, "context= is an option of the ans coder");
  if (context != "exponent") bad_spec(spec, fmt::format("unknown context '{}' (exponent)", context));
  if (layout == PlaneLayout::bytes) bad_spec(spec, "context=exponent needs bytegroup:split=exponent");
  if (!stage.positional.empty()) bad_spec(spec, fmt::format("unexpected word '{}'", stage.positional.front()));
  stage.check_consumed(fmt::format("codec spec '{}'", spec));
  return make_exponent_context_codec(std::string(spec),
                                     static_cast<FloatFormat>(static_cast<std::uint8_t>(layout) - 1));
}

std::unique_ptr<Codec> make_blosc(std::string_view spec, SpecPart head, const std::vector<std::string>& stages) {
  if (head.positional.size() != 1 || stages.size() != 2)
    bad_spec(spec, "blosc needs a shuffle mode and one compressor, e.g. blosc:bitshuffle+lz4");
  const std::string& mode = head.positional.front();
  int shuffle = mode == "noshuffle" ? BLOSC_NOSHUFFLE
                : mode == "shuffle" ? BLOSC_SHUFFLE
                : mode == "bitshuffle" ? BLOSC_BITSHUFFLE
                                       : -1;
  if (shuffle < 0) bad_spec(spec, fmt::format("unknown blosc shuffle '{}'", mode));
  std::size_t width = take_width(head, 2);
  head.check_consumed(fmt::format("codec spec '{}'", spec));

  SpecPart inner = parse_spec_part(stages[1]);
  if (inner.name != "lz4" && inner.name != "lz4hc" && inner.name != "zstd" && inner.name != "blosclz" &&
      inner.name != "zlib")
    bad_spec(spec, fmt::format("unknown blosc compressor '{}'", inner.name));
  int level = static_cast<int>(inner.take_int("level", 5, 0, 9));
  if (!inner.positional.empty()) bad_spec(spec, fmt::format("unexpected word '{}'", inner.positional.front()));
  inner.check_consumed(fmt::format("codec spec '{}'", spec));
  return make_blosc_codec(std::string(spec), shuffle, width, inner.name, level);
}

std::unique_ptr<Codec> build_codec(std::string_view spec) {
  const std::vector<std::string> stages = split(spec, '+');
  SpecPart head = parse_spec_part(stages.front());
  if (head.name == "blosc") return make_blosc(spec, std::move(head), stages);
  if (head.name == "memcpy") {
    if (stages.size() != 1 || !head.options.empty() || !head.positional.empty())
      bad_spec(spec, "memcpy takes no options or stages");
    return make_framed_codec(std::string(spec), 1, nullptr);
  }
  if (head.name == "bytegroup") {
    if (stages.size() > 2) bad_spec(spec, "bytegroup takes one coder stage");
    const bool width_given = head.options.count("width") != 0;
    std::size_t width = take_width(head, 2);
    const PlaneLayout layout = take_layout(spec, head, width, width_given);
    if (!head.positional.empty()) bad_spec(spec, fmt::format("unexpected word '{}'", head.positional.front()));
    head.check_consumed(fmt::format("codec spec '{}'", spec));
    std::unique_ptr<PlaneCoder> coder;
    if (stages.size() == 2) {
      SpecPart stage = parse_spec_part(stages[1]);
      if (auto context = stage.take("context")) return make_context_codec(spec, std::move(stage), *context, layout);
      coder = make_coder(spec, std::move(stage));
    }
    return make_framed_codec(std::string(spec), width, std::move(coder), layout);
  }
  if (stages.size() != 1) bad_spec(spec, "only bytegroup and blosc take a '+' stage");
  return make_framed_codec(std::string(spec), 1, make_coder(spec, std::move(head)));
}

}  // namespace

std::string with_decoder(std::string_view spec, std::string_view decoder) {
  std::vector<std::string> stages = split(spec, '+');
  const std::string head = parse_spec_part(stages.front()).name;
  const bool grouped = head == "bytegroup" && stages.size() == 2;
  std::string& stage = grouped ? stages[1] : stages[0];
  const std::string coder = parse_spec_part(stage).name;
  if ((!grouped && stages.size() != 1) ||
      std::find(kCodersWithDecoders.begin(), kCodersWithDecoders.end(), coder) == kCodersWithDecoders.end())
    fail("codec '{}' takes no decoder (only lz4, igzip and deflate planes are standard streams)", spec);
  std::vector<std::string> words = split(stage, ':');
  std::erase_if(words, [](const std::string& w) { return w.starts_with("decoder="); });
  words.push_back(fmt::format("decoder={}", decoder));
  stage = fmt::format("{}", fmt::join(words, ":"));
  std::string result = fmt::format("{}", fmt::join(stages, "+"));
  make_codec(result);  // the backend must exist and decode this coder's format
  return result;
}

bool writes_frames(std::string_view spec) {
  make_codec(spec);
  return parse_spec_part(split(spec, '+').front()).name != "blosc";
}

std::unique_ptr<Codec> make_codec(std::string_view spec) {
  try {
    return build_codec(spec);
  } catch (const Error& e) {
    // Errors from option parsing get the same one line as the rest: spec, reason, valid forms.
    if (std::string_view(e.what()).starts_with("bad codec spec")) throw;
    bad_spec(spec, e.what());
  }
}

std::vector<CodecInfo> list_codecs() {
  const auto v = library_versions();
  const std::string wirezip = "wirezip " + v.at("wirezip") + ", xxhash " + v.at("xxhash");
  return {
      {"memcpy", "framed copy: checksum + copy, the ceiling", wirezip},
      {"bytegroup", "byte planes stored raw: the cost of grouping alone", wirezip},
      {"lz4", "LZ4 on the whole chunk", "lz4 " + v.at("lz4")},
      {"lz4:accel=8", "LZ4, faster and weaker", "lz4 " + v.at("lz4")},
      {"zstd:level=1", "zstd level 1", "zstd " + v.at("zstd")},
      {"zstd:level=-5", "zstd fast level (negative)", "zstd " + v.at("zstd")},
      {"rans", "rANS order 0 on the whole chunk", "htscodecs " + v.at("htscodecs")},
      {"huff", "wirezip Huffman order 0 on the whole chunk", wirezip},
      {"bytegroup+lz4", "NetZIP: byte planes + LZ4", "lz4 " + v.at("lz4")},
      {"bytegroup+zstd:level=1", "byte planes + zstd level 1", "zstd " + v.at("zstd")},
      {"bytegroup+zstd:level=-5:literals=1", "byte planes + fast zstd, Huffman literals forced on",
       "zstd " + v.at("zstd")},
      {"bytegroup+rans", "byte planes + rANS 4x16 order 0", "htscodecs " + v.at("htscodecs")},
      {"bytegroup+igzip:level=0", "byte planes + ISA-L deflate, per-plane Huffman tables", "isa-l " + v.at("isa-l")},
      {"bytegroup+huff", "byte planes + wirezip Huffman", wirezip},
      {"bytegroup+deflate", "byte planes as literal-only raw DEFLATE (wirezip encoder), any inflate decodes them",
       "wirezip; isa-l " + v.at("isa-l")},
      {"bytegroup+deflate:decoder=libdeflate", "the same frames, inflated by libdeflate",
       "wirezip; libdeflate " + v.at("libdeflate")},
      {"bytegroup+deflate:decoder=zlib", "the same frames, inflated by zlib", "wirezip; zlib " + v.at("zlib")},
      {"bytegroup:width=4+huff", "fp32 byte planes + wirezip Huffman", wirezip},
      {"bytegroup:split=exponent+huff", "exponent plane + sign/mantissa plane, wirezip Huffman (the best codec)",
       wirezip},
      {"bytegroup:split=exponent+rans", "exponent plane + sign/mantissa plane, rANS 4x16 order 0",
       "htscodecs " + v.at("htscodecs")},
      {"bytegroup:split=exponent+ans", "exponent plane + sign/mantissa plane, wirezip tANS order 0", wirezip},
      {"bytegroup:split=exponent+ans:context=exponent", "as above, sign/mantissa coded given the exponent", wirezip},
      {"ans", "wirezip tANS order 0 on the whole chunk", wirezip},
      {"blosc:shuffle+lz4", "peer: c-blosc byte shuffle + LZ4", "c-blosc " + v.at("blosc")},
      {"blosc:bitshuffle+lz4", "peer: c-blosc bit shuffle + LZ4", "c-blosc " + v.at("blosc")},
      {"blosc:bitshuffle+zstd:level=1", "peer: c-blosc bit shuffle + zstd level 1", "c-blosc " + v.at("blosc")},
  };
}

std::vector<std::string> default_codec_specs() {
  return {"memcpy",
          "bytegroup",
          "lz4",
          "zstd:level=1",
          "bytegroup+lz4",
          "bytegroup+zstd:level=1",
          "bytegroup+zstd:level=-5:literals=1",
          "bytegroup+rans",
          "bytegroup+igzip:level=0",
          "bytegroup+huff",
          "bytegroup:split=exponent+ans",
          "bytegroup:split=exponent+ans:context=exponent",
          std::string(kBestCodecSpec),
          "bytegroup+deflate",
          "blosc:shuffle+lz4",
          "blosc:bitshuffle+lz4",
          "blosc:bitshuffle+zstd:level=1"};
}

std::map<std::string, std::string> library_versions() {
  return {{"wirezip", WIREZIP_VERSION},
          {"xxhash", fmt::format("{}.{}.{}", XXH_versionNumber() / 10000, XXH_versionNumber() / 100 % 100,
                                      XXH_versionNumber() % 100)},
          {"lz4", lz4_version()},
          {"zstd", zstd_version()},
          {"htscodecs", htscodecs_version_string()},
          {"isa-l", isal_version()},
          {"zlib", zlib_version_string()},
          {"libdeflate", libdeflate_version_string()},
          {"blosc", blosc_version()}};
}

}  // namespace wirezip::codecs
