#pragma once
// The decoder seam: decompression backends for the standard streams inside wirezip frames. The
// planes of bytegroup+deflate are raw DEFLATE streams and those of bytegroup+lz4 plain LZ4 blocks,
// so the same frames can be decoded by different libraries, or by a hardware engine (BlueField-3's
// decompresses exactly these two formats). A codec spec picks one: `bytegroup+deflate:decoder=zlib`.
//
// Adding a backend is a new file with a class derived from StreamDecoder and one line in the table
// of decoders.cpp; a backend whose SDK is absent stays in the table as "not built" with the reason.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::codecs {

enum class StreamFormat { deflate, lz4 };
std::string_view stream_format_name(StreamFormat format);  // "deflate" | "lz4"

// Decodes one whole stream. Owns its library state (created once, reused) and is used by one
// thread at a time, like the Codec that holds it.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Decodes `src`, which must be exactly one complete stream, into exactly dst.size() bytes. A
  // malformed or truncated stream, one that decodes to any other size, or one followed by unused
  // bytes throws wirezip::Error naming the backend; nothing is written outside dst.
  virtual void decode(std::span<const std::byte> src, std::span<std::byte> dst) = 0;
};

struct DecoderInfo {
  std::string name;     // as in decoder=NAME
  StreamFormat format;
  std::string library;  // library and version, or why it is not built
  bool built = true;
};
// Every backend in the table, built or not, deflate ones first.
std::vector<DecoderInfo> list_decoders();

// What a spec without decoder= uses: the fastest backend measured here (docs/RESULTS.md, "Decoder backends").
std::string_view default_decoder(StreamFormat format);

// Throws wirezip::Error naming the valid backends for the format, or why NAME is not built.
std::unique_ptr<StreamDecoder> make_decoder(StreamFormat format, std::string_view name);
// The same check without making the backend: what a codec spec's decoder= is held to.
void require_decoder(StreamFormat format, std::string_view name);

}  // namespace wirezip::codecs
