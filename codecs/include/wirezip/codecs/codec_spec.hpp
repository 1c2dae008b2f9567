#pragma once
// A codec spec names a codec the way users write it on the command line and a sender names it to
// its receiver. The grammar, written only here (names, options, ranges and defaults are rows of
// the codec table, codecs/src/codec_table.cpp; `bench_codec --list-codecs` prints them):
//
//   spec      := CODER                       one coder on the whole chunk, e.g. lz4, zstd:level=3
//              | memcpy                      the ceiling: a framed copy (checksum + copy)
//              | bytegroup[:OPTION]...[+CODER]   byte planes (or the exponent split), each coded
//              | blosc:SHUFFLE[:width=W]+COMPRESSOR[:level=N]   the c-blosc peer, in its own container
//   CODER     := NAME[:OPTION]...           NAME: a coder row of the table (lz4, zstd, huff, ...)
//   OPTION    := key=value                  an integer in the row's range, or one of its words
//
// decoder=D on lz4, igzip and deflate picks the backend that decodes their planes (decoders.hpp).
// bytegroup:split=exponent[:format=bf16|fp16|fp32] splits floats into an exponent plane and
// sign/mantissa planes; ans:context=exponent after it codes sign/mantissa given the exponent.
//
// parse_codec_spec() is the one parser of spec text, whoever wrote it (a flag, a file header, a
// peer's case record): it checks the text against kMaxCodecSpecText and the table, and the
// CodecSpec it returns is valid: make() builds its codec without parsing again.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/codecs/codec.hpp"

namespace wirezip::codecs {

struct CodecRow;  // one row of the codec table (codecs/src/codec_table.hpp)

inline constexpr std::size_t kMaxCodecSpecText = 256;

// One '+'-separated part of a spec, checked against its row of the table.
struct SpecStage {
  const CodecRow* row = nullptr;
  std::vector<std::string> words{};  // what followed the name, as written ("level=3", "bitshuffle")
  std::map<std::string, std::int64_t, std::less<>> numbers{};  // integer options, given or default
  std::map<std::string, std::string, std::less<>> choices{};   // word options, given or default

  std::string_view name() const;
  bool given(std::string_view key) const;  // written in the spec, not a default
  std::int64_t number(std::string_view key) const;
  // The option's word; empty when an option without a default was not given.
  std::string choice(std::string_view key) const;
};

class CodecSpec {
 public:
  CodecSpec() = default;  // no codec (a raw pipeline case)
  bool empty() const { return stages_.empty(); }
  // The text it was parsed from, byte for byte: what frames, case records and file headers carry.
  const std::string& text() const { return text_; }

  std::unique_ptr<Codec> make() const;
  // The same codec with its coder's planes decoded by backend `decoder`, replacing any decoder=:
  // "bytegroup+deflate" -> "bytegroup+deflate:decoder=zlib". Frames are the same whatever the
  // decoder. Throws wirezip::Error when the coder's planes are not standard streams or the backend
  // does not decode them.
  CodecSpec with_decoder(std::string_view decoder) const;
  // Capacity a compress() of `original_bytes` needs.
  std::size_t max_compressed_size(std::size_t original_bytes) const;
  // Every codec writes wirezip frames (frame.hpp) but blosc, which has its own container.
  bool writes_frames() const;

  const std::vector<SpecStage>& stages() const { return stages_; }
  bool operator==(const CodecSpec& other) const { return text_ == other.text_; }

 private:
  friend CodecSpec parse_codec_spec(std::string_view text);
  std::string text_;
  std::vector<SpecStage> stages_;  // the head, then its '+' stage if any
};

// Throws wirezip::Error: "bad codec spec 'TEXT': why; valid forms: ..." (the forms from the table).
CodecSpec parse_codec_spec(std::string_view text);

// Every valid form, from the table: "memcpy, bytegroup[:width=1..16]...[+CODER], ...".
std::string valid_codec_forms();

}  // namespace wirezip::codecs
