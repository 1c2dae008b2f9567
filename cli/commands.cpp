#include "commands.hpp"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "files.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::cli {
namespace {

using codecs::ContainerReader;
using nlohmann::json;

// Runs `body`, prefixing any error with the input's name, so each failure reads as one line. A
// failed read looks like the end of the file to the reader; its errno is the better message.
template <typename Body>
void about(const Input& in, Body&& body) {
  const std::string name = in.name() == "-" ? "stdin" : in.name();
  try {
    body();
  } catch (const OutputError&) {
    throw;
  } catch (const Error& e) {
    if (in.read_error() != 0) fail("reading {} failed: {}", name, std::strerror(in.read_error()));
    fail("{}: {}", name, e.what());
  }
}

// Frame version 2 stores raw planes first (frame.hpp): plane k is not after planes 0..k-1.
std::uint64_t plane_offset(const codecs::FrameHeader& header, std::size_t k) { return codecs::plane_offsets(header)[k]; }

json frame_json(const codecs::ContainerFrame& frame) {
  const codecs::FrameHeader& h = frame.header;
  json planes = json::array();
  for (std::size_t k = 0; k < h.element_width; ++k)
    planes.push_back({{"mode", codecs::plane_mode_name(h.planes[k].mode)}, {"stored_bytes", h.planes[k].stored_size},
                      {"offset", plane_offset(h, k)}});
  return {{"version", codecs::kFrameVersion},  {"coder", codecs::coder_name(h.coder)},
          {"width", h.element_width},          {"original_bytes", h.original_size},
          {"tail_bytes", h.tail_size()},       {"frame_bytes", frame.bytes.size()},
          {"checksum", fmt::format("{:016x}", h.checksum)}, {"planes", planes}};
}

}  // namespace

void compress(const codecs::CodecSpec& codec_spec, std::uint64_t chunk, const std::string& in_path,
              const std::string& out_path, const OutputOptions& options) {
  auto codec = codec_spec.make();
  Input in(in_path);
  Output out(out_path, options.force, in);
  try {
    codecs::ContainerWriter writer(out.stream(), codec_spec, chunk);
    std::vector<std::byte> buffer(chunk), frame(codec->max_compressed_size(chunk));
    while (true) {
      in.stream().read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(chunk));
      const auto n = static_cast<std::size_t>(in.stream().gcount());
      if (n == 0) break;
      const std::size_t size = codec->compress(std::span(buffer).first(n), frame);
      writer.write_frame(std::span(frame).first(size), n);
      if (n < chunk) break;
    }
    if (in.read_error() != 0) fail("reading '{}' failed: {}", in_path, std::strerror(in.read_error()));
    writer.finish();
  } catch (const Error&) {
    // The writer only knows that a write failed; the output knows why.
    if (out.write_error() != 0) fail("writing {} failed: {}", out.shown(), std::strerror(out.write_error()));
    throw;
  }
  out.commit();
}

void decompress(const std::string& decoder, const std::string& in_path, const std::string& out_path,
                const OutputOptions& options) {
  Input in(in_path);
  Output out(out_path, options.force, in);
  about(in, [&] {
    ContainerReader reader(in.stream(), {.max_original = options.max_output, .max_original_name = "--max-output"});
    const codecs::CodecSpec& spec = reader.header().codec_spec;
    auto codec = (decoder.empty() ? spec : spec.with_decoder(decoder)).make();
    std::vector<std::byte> restored;
    while (auto frame = reader.next()) {
      restored.resize(frame->header.original_size);
      try {
        codec->decompress(frame->bytes, restored);
      } catch (const Error& e) {
        fail("frame {}: {}", reader.frames_read() - 1, e.what());
      }
      out.write(restored);
    }
  });
  out.commit();
}

void inspect(const std::string& in_path, bool as_json) {
  // Each frame is printed as it is read, so memory stays flat however many frames the file holds;
  // the totals come last. A corrupt frame ends the report there, with the error on stderr.
  Input in(in_path);
  about(in, [&] {
    ContainerReader reader(in.stream());
    const auto& header = reader.header();
    if (as_json)
      fmt::print("{{\n  \"chunk_bytes\": {},\n  \"codec\": {},\n  \"container_version\": {},\n  \"frames\": [",
                 header.chunk_bytes, json(header.codec_spec.text()).dump(), codecs::kContainerVersion);
    else
      fmt::print("container version {}, codec {}, chunk {} bytes\n", codecs::kContainerVersion,
                 header.codec_spec.text(), header.chunk_bytes);
    std::uint64_t stored = 0;
    while (auto frame = reader.next()) {
      const std::uint64_t index = reader.frames_read() - 1;
      const json f = frame_json(*frame);
      stored += frame->bytes.size();
      if (as_json) {
        fmt::print("{}\n    {}", index == 0 ? "" : ",", f.dump());
        continue;
      }
      fmt::print("frame {}: version {}, coder {}, width {}, {} original bytes ({} tail), {} frame bytes, xxh3 {}\n",
                 index, f["version"].get<int>(), f["coder"].get<std::string>(), f["width"].get<int>(),
                 f["original_bytes"].get<std::uint64_t>(), f["tail_bytes"].get<std::uint64_t>(),
                 f["frame_bytes"].get<std::uint64_t>(), f["checksum"].get<std::string>());
      for (std::size_t k = 0; k < f["planes"].size(); ++k)
        fmt::print("  plane {}: {}, {} bytes\n", k, f["planes"][k]["mode"].get<std::string>(),
                   f["planes"][k]["stored_bytes"].get<std::uint64_t>());
    }
    if (as_json)
      fmt::print("\n  ],\n  \"frame_count\": {},\n  \"frame_bytes\": {},\n  \"original_bytes\": {}\n}}\n",
                 reader.frames_read(), stored, reader.original_bytes());
    else
      fmt::print("{} frames, {} original bytes in {} frame bytes\n", reader.frames_read(), reader.original_bytes(),
                 stored);
  });
}

void extract_plane(std::uint64_t plane, const std::string& in_path, const std::string& out_path,
                   const OutputOptions& options) {
  Input in(in_path);
  Output out(out_path, options.force, in);
  about(in, [&] {
    ContainerReader reader(in.stream());
    std::uint64_t written = 0;
    while (auto frame = reader.next()) {
      const codecs::FrameHeader& h = frame->header;
      if (plane >= h.element_width)
        fail("frame {} has {} planes, there is no plane {}", reader.frames_read() - 1, h.element_width, plane);
      const std::uint64_t stored = h.planes[plane].stored_size;
      if (stored > options.max_output - written)
        fail("frame {}: plane {} of {} bytes takes the output past --max-output of {} bytes",
             reader.frames_read() - 1, plane, stored, options.max_output);
      written += stored;
      out.write(frame->bytes.subspan(plane_offset(h, plane), h.planes[plane].stored_size));
    }
  });
  out.commit();
}

}  // namespace wirezip::cli
