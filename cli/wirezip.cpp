// wirezip: files in and out of wirezip frames, in the manner of zstd and lz4.
//
//   wirezip compress [--codec=SPEC] [--chunk=SIZE] IN OUT      ("-" for stdin / stdout)
//   wirezip decompress [--decoder=NAME] IN OUT
//   wirezip inspect [--json] FILE
//   wirezip inspect --extract-plane=K FILE OUT
//
// Exit status: 0 on success; 1 on bad or truncated input or a failed read or write (one line on
// stderr, and no output file left behind); 2 on bad usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace {

constexpr int kExitInput = 1, kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace wirezip;
  std::ios::sync_with_stdio(false);
  CLI::App app{"wirezip: compress files into wirezip frames, decompress and inspect them."};
  app.require_subcommand(1);

  std::string codec{codecs::kBestCodecSpec}, chunk = "1MiB", decoder, in, out, plane_text;
  bool json = false;
  auto* compress = app.add_subcommand("compress", "IN -> OUT, cut into chunks, each one frame");
  compress->add_option("--codec", codec, "codec spec (bench_codec --list-codecs; not blosc)")->capture_default_str();
  compress->add_option("--chunk", chunk, "bytes per frame, 1 .. 1GiB (as the pipeline cuts a tensor)")
      ->capture_default_str();
  compress->add_option("IN", in, "input file, or - for stdin")->required();
  compress->add_option("OUT", out, "output file, or - for stdout")->required();

  auto* decompress = app.add_subcommand("decompress", "the exact inverse of compress");
  decompress->add_option("--decoder", decoder, "decode with this backend (isal, libdeflate, zlib, lz4, doca)");
  decompress->add_option("IN", in, "compressed file, or - for stdin")->required();
  decompress->add_option("OUT", out, "output file, or - for stdout")->required();

  auto* inspect = app.add_subcommand("inspect", "every frame's fields, or one plane's stored bytes");
  inspect->add_flag("--json", json, "print JSON");
  inspect->add_option("--extract-plane", plane_text, "write plane K of every frame, as stored, to OUT");
  inspect->add_option("FILE", in, "compressed file, or - for stdin")->required();
  inspect->add_option("OUT", out, "with --extract-plane: output file, or - for stdout");

  std::uint64_t chunk_bytes = 0, plane = 0;
  try {
    app.parse(argc, argv);
    if (compress->parsed()) {
      chunk_bytes = flag::size("--chunk", chunk, 1, codecs::ContainerLimits{}.max_chunk);
      if (!codecs::writes_frames(codec)) fail("--codec: '{}' does not write wirezip frames; choose a wirezip codec", codec);
    }
    if (inspect->parsed()) {
      if (plane_text.empty() != out.empty()) fail("inspect: --extract-plane=K takes FILE and OUT, plain inspect FILE only");
      if (!plane_text.empty()) plane = flag::count("--extract-plane", plane_text, 0, codecs::kMaxElementWidth - 1);
    }
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "wirezip: {}\n", e.what());
    return kExitUsage;
  } catch (const Error& e) {
    fmt::print(stderr, "wirezip: {}\n", e.what());
    return kExitUsage;
  }

  try {
    if (compress->parsed()) cli::compress(codec, chunk_bytes, in, out);
    if (decompress->parsed()) cli::decompress(decoder, in, out);
    if (inspect->parsed()) plane_text.empty() ? cli::inspect(in, json) : cli::extract_plane(plane, in, out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wirezip: {}\n", e.what());
    return kExitInput;
  }
  return 0;
}
