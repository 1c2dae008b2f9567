#pragma once
// Builds a codec from a spec string, the way users name codecs on the command line:
//
//   memcpy                      the ceiling: a framed copy (checksum + copy)
//   lz4[:accel=N][:decoder=D]   zstd[:level=N][:literals=1]     (N may be negative for zstd)
//   rans                        htscodecs rANS 4x16, order 0
//   huff                        wirezip's 4-stream order-0 Huffman
//   igzip[:level=0..3][:decoder=D]  ISA-L deflate with per-plane Huffman tables
//   deflate[:decoder=D]         wirezip's literal-only raw DEFLATE, decodable by any inflate
//   ans                         wirezip's 4-stream order-0 tANS (fractional bits per symbol)
//
// decoder=D picks the backend that decodes the planes (decoders.hpp): isal, libdeflate or zlib for
// igzip and deflate, lz4 for lz4; doca where the DOCA SDK was found.
//   bytegroup[:width=W][+CODER] byte planes (W = 2 for bf16, 4 for fp32), each coded with CODER
//   bytegroup:split=exponent[:format=bf16|fp16|fp32][+CODER]   exponent plane + sign/mantissa planes
//   bytegroup:split=exponent+ans:context=exponent             sign/mantissa coded given the exponent
//   blosc:{noshuffle|shuffle|bitshuffle}[:width=W]+{lz4|lz4hc|zstd|blosclz|zlib}[:level=N]
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/codecs/codec.hpp"

namespace wirezip::codecs {

// The best wirezip codec on bf16 training traffic: the best ratio that still leads every peer in
// both directions (by bench_codec measurements; see README, "Measured here").
inline constexpr std::string_view kBestCodecSpec = "bytegroup:split=exponent+huff";

// Throws wirezip::Error naming the spec and every valid form.
std::unique_ptr<Codec> make_codec(std::string_view spec);

// The spec with its coder's decoder option set to `decoder`, replacing any: with_decoder(
// "bytegroup+deflate", "zlib") is "bytegroup+deflate:decoder=zlib". Frames are the same whatever the
// decoder. Throws wirezip::Error when the spec's coder has no decoder choice (only lz4, igzip and
// deflate planes are standard streams) or the backend does not decode its format.
std::string with_decoder(std::string_view spec, std::string_view decoder);

// True when the spec's codec writes wirezip frames (frame.hpp): every codec but blosc's, which has
// its own container. Throws wirezip::Error on a bad spec.
bool writes_frames(std::string_view spec);

struct CodecInfo {
  std::string spec;
  std::string description;
  std::string library;  // library and version that does the work
};
// One representative spec per family and setting, for --list-codecs.
std::vector<CodecInfo> list_codecs();
// What bench_codec runs without --codecs: memcpy, every family at its recommended setting, peers.
std::vector<std::string> default_codec_specs();
// Library name -> version string, for benchmark contexts.
std::map<std::string, std::string> library_versions();

}  // namespace wirezip::codecs
