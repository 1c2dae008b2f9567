#pragma once
// The wirezip command's subcommands. Each throws wirezip::Error with one line on bad input or a
// failed read or write; wirezip.cpp prints it and exits 1.
#include <cstdint>
#include <optional>
#include <string>

#include "wirezip/codecs/codec_spec.hpp"

namespace wirezip::cli {

// What every command that writes a file takes (files.hpp says what `force` allows).
struct OutputOptions {
  bool force = false;
  // decompress and --extract-plane: the most bytes one run may write, against decompression bombs;
  // a frame that declares more is refused before anything is allocated for it.
  std::uint64_t max_output = UINT64_MAX;
};

// IN -> OUT ("-": stdin, stdout) as a container of frames, one per `chunk` bytes of input.
void compress(const codecs::CodecSpec& codec_spec, std::uint64_t chunk, const std::string& in, const std::string& out,
              const OutputOptions& options);
// The exact inverse; `decoder` (non-empty) overrides the decoder option of the file's codec spec.
void decompress(const std::string& decoder, const std::string& in, const std::string& out,
                const OutputOptions& options);
// The container's and every frame's fields, as text or as JSON, on stdout.
void inspect(const std::string& in, bool json);
// Plane `plane` of every frame as stored (a raw DEFLATE stream, an LZ4 block, raw bytes or the one
// byte of a constant plane), back to back in OUT; `inspect --json` gives each one's size and mode.
void extract_plane(std::uint64_t plane, const std::string& in, const std::string& out, const OutputOptions& options);

}  // namespace wirezip::cli
