#pragma once
// Internal: the codec table. One row per coder, plane transform and container: its name, options
// (ranges and defaults), libraries, the stream format of its planes (what decoder= backends read
// them) and its factory. The parser, the valid-forms text, --list-codecs, the library versions and
// the decoder= check are all read from the rows: adding a coder is adding a row (and its file).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coders/plane_coder.hpp"
#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/codecs/decoders.hpp"

namespace wirezip::codecs {

// Where a row may stand in a spec.
enum class RowRole : std::uint8_t {
  coder,       // codes planes: a spec alone, or the stage after bytegroup
  framing,     // memcpy, bytegroup: the head of a spec, with at most one coder stage
  container,   // blosc: the head, with one compressor stage, in its own container
  compressor,  // a compressor inside blosc
};

struct OptionRow {
  std::string_view key{};
  std::int64_t min = 0, max = 0, fallback = 0;  // an integer option
  std::vector<std::string_view> words{};        // a word option: the values allowed
  std::string_view fallback_word{};             // a word option's default; empty: none
  bool positional = false;                      // written without key= (blosc's shuffle mode)
  bool decoder = false;                         // a decoder= backend of the row's planes format
  bool is_words() const { return !words.empty() || decoder; }
};

struct Library {
  std::string_view key;   // in library_versions() and the JSON context: version_<key>
  std::string_view name;  // as people know it
  std::string (*version)();
};

struct CodecRow {
  std::string_view name{};
  RowRole role{};
  std::optional<CoderId> id{};  // coders: the id their frames carry, named by `name` in frames
  std::vector<OptionRow> options{};
  std::vector<std::string_view> libraries{};  // keys into libraries(): who does the work
  std::optional<StreamFormat> planes{};       // coded planes are standard streams of this format
  // A head row: at most one '+' stage, of this role; required or not.
  std::optional<RowRole> stage{};
  bool stage_required = false;
  bool writes_frames = true;
  // Cross-stage rules (bytegroup's width and format, ans's context): derive values, throw on a
  // contradiction. `head` is null for a coder standing alone.
  void (*resolve)(SpecStage& self, SpecStage* head, SpecStage* stage) = nullptr;
  // Heads: the codec of the whole spec. Coders: their plane coder.
  std::unique_ptr<Codec> (*make_codec)(const std::string& text, const SpecStage& head,
                                       const SpecStage* stage) = nullptr;
  std::unique_ptr<PlaneCoder> (*make_coder)(const SpecStage& self) = nullptr;
};

std::span<const CodecRow> codec_table();
// A frame's coder byte names a coder: raw (planes stored as they are) or a coder row's id.
bool is_coder_id(std::uint8_t id);
std::span<const Library> libraries();
// The row named `name` with role `role`; null when there is none.
const CodecRow* find_row(RowRole role, std::string_view name);
// "lz4 1.9.4", "wirezip 0.9.0, xxhash 0.8.1": the libraries a spec's codec runs on.
std::string libraries_text(const CodecSpec& spec);
std::string library_text(std::string_view key);  // "zstd 1.5.4"
// "lz4[:accel=1..65537][:decoder=lz4]"; with_defaults: "[:accel=1..65537, default 1]".
std::string row_form(const CodecRow& row, bool with_defaults);
std::string_view role_name(RowRole role);  // "coder", "framing", "container", "blosc compressor"
// The built decoder backends that read `format`: the values decoder= takes.
std::vector<std::string> decoder_names(StreamFormat format);

// A spec listed by --list-codecs, with what it shows; `in_defaults`: bench_codec runs it without
// --codecs. In the order they are listed and run.
struct ListedSpec {
  std::string_view spec;
  std::string_view description;
  bool in_defaults;
};
std::span<const ListedSpec> listed_specs();

}  // namespace wirezip::codecs
