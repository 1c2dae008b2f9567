#pragma once
// What the codec table (codecs/src/codec_table.cpp) tells the rest of the suite: codecs built from
// spec text, the specs --list-codecs shows and bench_codec runs by default, every valid form, the
// libraries' versions. The spec grammar is in codec_spec.hpp.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/codecs/codec.hpp"
#include "wirezip/codecs/codec_spec.hpp"

namespace wirezip::codecs {

// The best wirezip codec on bf16 training traffic: the best ratio that still leads every peer in
// both directions (by bench_codec measurements; see docs/RESULTS.md, "Codecs").
inline constexpr std::string_view kBestCodecSpec = "bytegroup:split=exponent+huff";

// parse_codec_spec(spec).make(): for tests and tools that hold spec text.
std::unique_ptr<Codec> make_codec(std::string_view spec);

struct CodecInfo {
  std::string spec;
  std::string description;
  std::string library;  // library and version that does the work
};
// One representative spec per family and setting, for --list-codecs.
std::vector<CodecInfo> list_codecs();
// What bench_codec runs without --codecs: memcpy, every family at its recommended setting, peers.
std::vector<std::string> default_codec_specs();

// One row of the codec table as --list-codecs prints it.
struct CodecForm {
  std::string form;                   // name and options with ranges and defaults
  std::string role;                   // coder, framing, container, blosc compressor
  std::string library;                // libraries and versions
  std::vector<std::string> decoders;  // the decoder= backends that read its planes (built ones)
};
std::vector<CodecForm> codec_forms();

// Library name -> version string, for benchmark contexts.
std::map<std::string, std::string> library_versions();

}  // namespace wirezip::codecs
