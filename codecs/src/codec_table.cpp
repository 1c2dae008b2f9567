// The codec table: a row per coder, plane transform and container, and the specs --list-codecs
// shows. Everything that names codecs (parser, valid forms, listing, versions) reads these rows.
#include "codec_table.hpp"

#include <blosc.h>
#include <xxhash.h>
#include <zstd.h>

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "backends/decoder_backends.hpp"
#include "codec_factories.hpp"
#include "planes/plane_layout.hpp"
#include "wirezip/codecs/exponent_split.hpp"
#include "wirezip/codecs/format_ids.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

std::string xxhash_version() {
  return fmt::format("{}.{}.{}", XXH_versionNumber() / 10000, XXH_versionNumber() / 100 % 100,
                     XXH_versionNumber() % 100);
}

constexpr Library kLibraries[] = {
    {"wirezip", "wirezip", [] { return std::string(WIREZIP_VERSION); }},
    {"xxhash", "xxhash", xxhash_version},
    {"lz4", "lz4", lz4_version},
    {"zstd", "zstd", zstd_version},
    {"htscodecs", "htscodecs", htscodecs_version_string},
    {"isa-l", "isa-l", isal_version},
    {"zlib", "zlib", zlib_version_string},
    {"libdeflate", "libdeflate", libdeflate_version_string},
    {"blosc", "c-blosc", blosc_version},
};

std::unique_ptr<StreamDecoder> decoder_of(const SpecStage& coder) {
  return make_decoder(*coder.row->planes, coder.choice("decoder"));
}
int number(const SpecStage& stage, std::string_view key) { return static_cast<int>(stage.number(key)); }

// A coder standing alone: one plane, the whole chunk.
std::unique_ptr<Codec> coder_alone(const std::string& text, const SpecStage& head, const SpecStage*) {
  return make_framed_codec(text, 1, head.row->make_coder(head));
}

std::unique_ptr<Codec> make_memcpy(const std::string& text, const SpecStage&, const SpecStage*) {
  return make_framed_codec(text, 1, nullptr);
}

// bytegroup's split: byte planes, or split=exponent with a float format named or implied by the
// width (2: bf16, 4: fp32); a width given beside a format must agree with it. Leaves the layout
// and the element width it implies in numbers["layout"] and numbers["width"].
void resolve_bytegroup(SpecStage& self, SpecStage*, SpecStage*) {
  std::int64_t width = self.number("width");
  const std::string format_name = self.choice("format");
  PlaneLayout layout = PlaneLayout::bytes;
  if (self.choice("split") == "bytes") {
    if (!format_name.empty()) fail("format= needs split=exponent");
  } else {
    FloatFormat format = width == 4 ? FloatFormat::fp32 : FloatFormat::bf16;
    if (!format_name.empty()) format = *parse_float_format(format_name);
    const auto needed = static_cast<std::int64_t>(float_format_width(format));
    if (self.given("width") && width != needed)
      fail("split=exponent of {} needs width {}, not {}", float_format_name(format), needed, width);
    width = needed;
    layout = exponent_layout(format);
  }
  self.numbers["width"] = width;
  self.numbers["layout"] = static_cast<std::int64_t>(layout);
}

std::unique_ptr<Codec> make_bytegroup(const std::string& text, const SpecStage& head, const SpecStage* coder) {
  const auto layout = static_cast<PlaneLayout>(head.number("layout"));
  std::unique_ptr<PlaneCoder> plane_coder;
  if (coder && !coder->choice("context").empty())
    plane_coder = make_exponent_context_coder(exponent_format(layout));
  else if (coder)
    plane_coder = coder->row->make_coder(*coder);
  return make_framed_codec(text, static_cast<std::size_t>(head.number("width")), std::move(plane_coder), layout);
}

// ans:context=exponent: the sign/mantissa plane coded given the exponent, after split=exponent.
void resolve_ans(SpecStage& self, SpecStage* head, SpecStage*) {
  if (!self.choice("context").empty() && (!head || head->row->name != "bytegroup" ||
                                          head->number("layout") == static_cast<std::int64_t>(PlaneLayout::bytes)))
    fail("context=exponent needs bytegroup:split=exponent");
}

// A coder of whole bf16 elements: byte planes would hand it halves of them.
void resolve_whole_chunk(SpecStage& self, SpecStage* head, SpecStage*) {
  if (head) fail("{} codes whole bf16 chunks: use it alone, not after {}", self.name(), head->name());
}

std::unique_ptr<Codec> make_blosc(const std::string& text, const SpecStage& head, const SpecStage* compressor) {
  const std::string mode = head.choice("shuffle");
  const int shuffle = mode == "noshuffle" ? BLOSC_NOSHUFFLE : mode == "shuffle" ? BLOSC_SHUFFLE : BLOSC_BITSHUFFLE;
  return make_blosc_codec(text, shuffle, static_cast<std::size_t>(head.number("width")),
                          std::string(compressor->name()), number(*compressor, "level"));
}

const OptionRow kWidth{.key = "width", .min = 1, .max = static_cast<std::int64_t>(kMaxElementWidth), .fallback = 2};
const OptionRow kDecoder{.key = "decoder", .decoder = true};

CodecRow coder(std::string_view name, CoderId id, std::vector<OptionRow> options, std::string_view library,
               std::unique_ptr<PlaneCoder> (*make)(const SpecStage&), std::optional<StreamFormat> planes = {},
               void (*resolve)(SpecStage&, SpecStage*, SpecStage*) = nullptr) {
  return {.name = name,
          .role = RowRole::coder,
          .id = id,
          .options = std::move(options),
          .libraries = {library},
          .planes = planes,
          .resolve = resolve,
          .make_codec = coder_alone,
          .make_coder = make};
}

CodecRow blosc_compressor(std::string_view name) {
  return {.name = name,
          .role = RowRole::compressor,
          .options = {{.key = "level", .min = 0, .max = 9, .fallback = 5}},
          .libraries = {"blosc"}};
}

std::vector<CodecRow> build_table() {
  std::vector<CodecRow> rows{
      {.name = "memcpy", .role = RowRole::framing, .libraries = {"wirezip", "xxhash"}, .make_codec = make_memcpy},
      {.name = "bytegroup",
       .role = RowRole::framing,
       .options = {kWidth,
                   {.key = "split", .words = {"bytes", "exponent"}, .fallback_word = "bytes"},
                   {.key = "format", .words = {"bf16", "fp16", "fp32"}}},
       .libraries = {"wirezip", "xxhash"},
       .stage = RowRole::coder,
       .resolve = resolve_bytegroup,
       .make_codec = make_bytegroup},
      {.name = "blosc",
       .role = RowRole::container,
       .options = {{.key = "shuffle", .words = {"noshuffle", "shuffle", "bitshuffle"}, .positional = true}, kWidth},
       .libraries = {"blosc"},
       .stage = RowRole::compressor,
       .stage_required = true,
       .writes_frames = false,
       .make_codec = make_blosc},
      coder(
          "lz4", CoderId::lz4, {{.key = "accel", .min = 1, .max = 65537, .fallback = 1}, kDecoder}, "lz4",
          [](const SpecStage& s) { return make_lz4_coder(number(s, "accel"), decoder_of(s)); }, StreamFormat::lz4),
      coder("zstd", CoderId::zstd,
            {{.key = "level", .min = ZSTD_minCLevel(), .max = ZSTD_maxCLevel(), .fallback = 1},
             {.key = "literals", .min = 0, .max = 1, .fallback = 0}},
            "zstd", [](const SpecStage& s) { return make_zstd_coder(number(s, "level"), s.number("literals") == 1); }),
      coder("rans", CoderId::rans, {}, "htscodecs", [](const SpecStage&) { return make_rans_coder(); }),
      coder("huff", CoderId::huff, {}, "wirezip", [](const SpecStage&) { return make_huff_coder(); }),
      coder(
          "huff12", CoderId::huff12, {}, "wirezip", [](const SpecStage&) { return make_huff12_coder(); }, std::nullopt,
          resolve_whole_chunk),
      coder(
          "huff10", CoderId::huff10, {}, "wirezip", [](const SpecStage&) { return make_huff10_coder(); }, std::nullopt,
          resolve_whole_chunk),
      coder(
          "ans", CoderId::ans, {{.key = "context", .words = {"exponent"}}}, "wirezip",
          [](const SpecStage&) { return make_ans_coder(); }, std::nullopt, resolve_ans),
      coder(
          "igzip", CoderId::igzip, {{.key = "level", .min = 0, .max = 3, .fallback = 0}, kDecoder}, "isa-l",
          [](const SpecStage& s) { return make_igzip_coder(number(s, "level"), decoder_of(s)); },
          StreamFormat::deflate),
      coder(
          "deflate", CoderId::deflate, {kDecoder}, "wirezip",
          [](const SpecStage& s) { return make_deflate_coder(decoder_of(s)); }, StreamFormat::deflate),
  };
  for (std::string_view name : {"lz4", "lz4hc", "zstd", "blosclz", "zlib"}) rows.push_back(blosc_compressor(name));
  return rows;
}

// What --list-codecs shows, in its order; bench_codec runs those marked in this order by default.
constexpr ListedSpec kListed[] = {
    {"memcpy", "framed copy: checksum + copy, the ceiling", true},
    {"bytegroup", "byte planes stored raw: the cost of grouping alone", true},
    {"lz4", "LZ4 on the whole chunk", true},
    {"lz4:accel=8", "LZ4, faster and weaker", false},
    {"zstd:level=1", "zstd level 1", true},
    {"zstd:level=-5", "zstd fast level (negative)", false},
    {"rans", "rANS order 0 on the whole chunk", false},
    {"huff", "wirezip Huffman order 0 on the whole chunk", false},
    {"ans", "wirezip tANS order 0 on the whole chunk", false},
    {"huff12", "wirezip Huffman on each bf16's exponent + 4 high mantissa bits, sign and 3 low bits stored", true},
    {"huff10", "wirezip Huffman on each bf16's exponent + 2 high mantissa bits as a byte, sign and 5 low bits stored",
     true},
    {"bytegroup+lz4", "NetZIP: byte planes + LZ4", true},
    {"bytegroup+zstd:level=1", "byte planes + zstd level 1", true},
    {"bytegroup+zstd:level=-5:literals=1", "byte planes + fast zstd, Huffman literals forced on", true},
    {"bytegroup+rans", "byte planes + rANS 4x16 order 0", true},
    {"bytegroup+igzip:level=0", "byte planes + ISA-L deflate, per-plane Huffman tables", true},
    {"bytegroup+huff", "byte planes + wirezip Huffman", true},
    {"bytegroup:width=4+huff", "fp32 byte planes + wirezip Huffman", false},
    {"bytegroup:split=exponent+rans", "exponent plane + sign/mantissa plane, rANS 4x16 order 0", false},
    {"bytegroup:split=exponent+ans", "exponent plane + sign/mantissa plane, wirezip tANS order 0", true},
    {"bytegroup:split=exponent+ans:context=exponent", "as above, sign/mantissa coded given the exponent", true},
    {kBestCodecSpec, "exponent plane + sign/mantissa plane, wirezip Huffman (the best codec)", true},
    {"bytegroup+deflate", "byte planes as literal-only raw DEFLATE (wirezip encoder), any inflate decodes them", true},
    {"bytegroup+deflate:decoder=libdeflate", "the same frames, inflated by libdeflate", false},
    {"bytegroup+deflate:decoder=zlib", "the same frames, inflated by zlib", false},
    {"blosc:shuffle+lz4", "peer: c-blosc byte shuffle + LZ4", true},
    {"blosc:bitshuffle+lz4", "peer: c-blosc bit shuffle + LZ4", true},
    {"blosc:bitshuffle+zstd:level=1", "peer: c-blosc bit shuffle + zstd level 1", true},
};

// "[:key=min..max]", "[:key=a|b]", ":{a|b|c}" (positional, required); with its default if asked.
std::string option_form(const CodecRow& row, const OptionRow& option, bool with_default) {
  if (option.positional) return fmt::format(":{{{}}}", fmt::join(option.words, "|"));
  std::string fallback = option.decoder ? std::string(default_decoder(*row.planes)) : std::string(option.fallback_word);
  std::string values;
  if (option.is_words()) {
    values = option.decoder ? fmt::format("{}", fmt::join(decoder_names(*row.planes), "|"))
                            : fmt::format("{}", fmt::join(option.words, "|"));
  } else {
    values = fmt::format("{}..{}", option.min, option.max);
    fallback = std::to_string(option.fallback);
  }
  if (!with_default || fallback.empty()) return fmt::format("[:{}={}]", option.key, values);
  return fmt::format("[:{}={}, default {}]", option.key, values, fallback);
}

}  // namespace

std::vector<std::string> decoder_names(StreamFormat format) {
  std::vector<std::string> names;
  for (const DecoderInfo& d : list_decoders())
    if (d.format == format && d.built) names.push_back(d.name);
  return names;
}

std::string row_form(const CodecRow& row, bool with_defaults) {
  std::string form(row.name);
  for (const OptionRow& option : row.options) form += option_form(row, option, with_defaults);
  return form;
}

std::string_view role_name(RowRole role) {
  constexpr std::string_view names[] = {"coder", "framing", "container", "blosc compressor"};
  return names[static_cast<std::size_t>(role)];
}

std::string library_text(std::string_view key) {
  for (const Library& library : kLibraries)
    if (library.key == key) return fmt::format("{} {}", library.name, library.version());
  fail("codec table: no library '{}'", key);
}

std::span<const CodecRow> codec_table() {
  static const std::vector<CodecRow> rows = build_table();
  return rows;
}

std::span<const Library> libraries() { return kLibraries; }

namespace {

// Frame coder ids to names, from the coder rows: raw is the one id without a row (no coder ran).
const std::array<std::string_view, 256>& coder_names() {
  static const std::array<std::string_view, 256> names = [] {
    std::array<std::string_view, 256> out{};
    out[static_cast<std::uint8_t>(CoderId::raw)] = "raw";
    for (const CodecRow& row : codec_table())
      if (row.id) {
        std::string_view& slot = out[static_cast<std::uint8_t>(*row.id)];
        if (!slot.empty())
          fail("codec table: coder id {} is both {} and {}", static_cast<int>(*row.id), slot, row.name);
        slot = row.name;
      }
    return out;
  }();
  return names;
}

}  // namespace

std::string_view coder_name(CoderId id) {
  const std::string_view name = coder_names()[static_cast<std::uint8_t>(id)];
  return name.empty() ? "unknown" : name;
}

bool is_coder_id(std::uint8_t id) { return !coder_names()[id].empty(); }

const CodecRow* find_row(RowRole role, std::string_view name) {
  for (const CodecRow& row : codec_table())
    if (row.role == role && row.name == name) return &row;
  return nullptr;
}

std::string libraries_text(const CodecSpec& spec) {
  const SpecStage& worker = spec.stages().size() == 2 ? spec.stages()[1] : spec.stages()[0];
  std::vector<std::string> texts;
  for (std::string_view key : worker.row->libraries) texts.push_back(library_text(key));
  if (worker.row->planes) {
    for (const DecoderInfo& d : list_decoders())
      if (d.format == *worker.row->planes && d.name == worker.choice("decoder") &&
          std::find(texts.begin(), texts.end(), d.library) == texts.end())
        texts.push_back(d.library);
  }
  return fmt::format("{}", fmt::join(texts, ", "));
}

std::span<const ListedSpec> listed_specs() { return kListed; }

}  // namespace wirezip::codecs
