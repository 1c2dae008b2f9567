// wirezip: files in and out of wirezip frames, in the manner of zstd and lz4.
//
//   wirezip compress [-f] [--codec=SPEC] [--chunk=SIZE] IN OUT      ("-" for stdin / stdout)
//   wirezip decompress [-f] [--decoder=NAME] [--max-output=SIZE] IN OUT
//   wirezip inspect [--json] FILE
//   wirezip inspect [-f] [--max-output=SIZE] --extract-plane=K FILE OUT
//
// Outputs are handled as files.hpp says: an existing file or symbolic link only with -f/--force,
// devices and FIFOs written straight. Exit status: 0 on success; 1 on bad or truncated input, an
// output refused or a failed read, write or close (one line on stderr, and no output file left
// behind); 2 on bad usage.
#include <fmt/format.h>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "files.hpp"
#include "wirezip/codecs/build_info.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace {

constexpr int kExitInput = 1, kExitUsage = 2;

// --max-output's default: a quarter of the RAM, at most 8 GiB. Output is written as it is decoded,
// so the cap is not about memory alone: it bounds what a small hostile file can make a run write.
std::uint64_t default_max_output() {
  constexpr std::uint64_t kCeiling = std::uint64_t{8} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return kCeiling;
  return std::min(kCeiling, static_cast<std::uint64_t>(pages) / 4 * static_cast<std::uint64_t>(page_bytes));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wirezip;
  std::ios::sync_with_stdio(false);
  CLI::App app{"wirezip: compress files into wirezip frames, decompress and inspect them."};
  app.require_subcommand(1);
  // CLI11 ends the text with a newline of its own.
  std::string version = codecs::version_text("wirezip");
  version.pop_back();
  app.set_version_flag("--version", version, "print the build: version, git sha, compiler, libraries");

  const std::uint64_t max_output_default = default_max_output();
  std::string codec{codecs::kBestCodecSpec}, chunk = "1MiB", decoder, in, out, plane_text,
      max_output = std::to_string(max_output_default);
  bool json = false;
  cli::OutputOptions output_options;
  const std::string force_help = "replace an existing OUT, or write to the target of a symbolic link OUT";
  const std::string max_output_help = fmt::format(
      "refuse input that would write more than SIZE bytes (default: RAM/4, at most 8GiB; here {})",
      max_output_default);
  app.footer(
      "Example:\n  wirezip compress model.safetensors model.wz && wirezip decompress model.wz copy.safetensors\n"
      "Each subcommand's options: wirezip SUBCOMMAND --help.\n\n"
      "An existing OUT is replaced only with -f/--force (keeping its mode and owner; a file with other hard\n"
      "links is rewritten in place); devices and FIFOs are written straight. Exit status: 0; 1 on bad input,\n"
      "a refused output or a failed read or write; 2 on bad usage.");
  auto* compress = app.add_subcommand("compress", "IN -> OUT, cut into chunks, each one frame");
  compress->add_option("--codec", codec, "codec spec (bench_codec --list-codecs; not blosc)")->capture_default_str();
  compress->add_option("--chunk", chunk, "bytes per frame, 1 .. 1GiB (as the pipeline cuts a tensor)")
      ->capture_default_str();
  compress->add_flag("-f,--force", output_options.force, force_help);
  compress->add_option("IN", in, "input file, or - for stdin")->required();
  compress->add_option("OUT", out, "output file, or - for stdout")->required();

  auto* decompress = app.add_subcommand("decompress", "the exact inverse of compress");
  decompress->add_option("--decoder", decoder, "decode with this backend (isal, libdeflate, zlib, lz4, doca)");
  decompress->add_flag("-f,--force", output_options.force, force_help);
  decompress->add_option("--max-output", max_output, max_output_help)->type_name("SIZE");
  decompress->add_option("IN", in, "compressed file, or - for stdin")->required();
  decompress->add_option("OUT", out, "output file, or - for stdout")->required();

  auto* inspect = app.add_subcommand("inspect", "every frame's fields, or one plane's stored bytes");
  inspect->add_flag("--json", json, "print JSON");
  inspect->add_option("--extract-plane", plane_text, "write plane K of every frame, as stored, to OUT");
  inspect->add_flag("-f,--force", output_options.force, "with --extract-plane: " + force_help);
  inspect->add_option("--max-output", max_output, "with --extract-plane: " + max_output_help)->type_name("SIZE");
  inspect->add_option("FILE", in, "compressed file, or - for stdin")->required();
  inspect->add_option("OUT", out, "with --extract-plane: output file, or - for stdout");

  std::uint64_t chunk_bytes = 0, plane = 0;
  codecs::CodecSpec codec_spec;
  try {
    app.parse(argc, argv);
    if (compress->parsed()) {
      chunk_bytes = flag::size("--chunk", chunk, 1, codecs::ContainerLimits{}.max_chunk);
      codec_spec = codecs::parse_codec_spec(codec);
      if (!codec_spec.writes_frames()) fail("--codec: '{}' does not write wirezip frames; choose a wirezip codec", codec);
    }
    if (decompress->parsed() || inspect->parsed())
      output_options.max_output = flag::size("--max-output", max_output, 1);
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
    if (compress->parsed()) cli::compress(codec_spec, chunk_bytes, in, out, output_options);
    if (decompress->parsed()) cli::decompress(decoder, in, out, output_options);
    if (inspect->parsed())
      plane_text.empty() ? cli::inspect(in, json) : cli::extract_plane(plane, in, out, output_options);
    cli::finish_stdout();
  } catch (const std::exception& e) {
    fmt::print(stderr, "wirezip: {}\n", e.what());
    return kExitInput;
  }
  return 0;
}
