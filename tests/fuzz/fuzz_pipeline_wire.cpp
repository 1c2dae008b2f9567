// libFuzzer target: the pipeline receiver as a sender's bytes reach it (and the sender's parsers of
// the run report and the credits a receiver sends back). A real receiver serves a
// mem link; the input is a case record (whose fields the fuzzer chooses) or, after a valid case,
// the content of a slot (chunk header and frame) plus the immediate that announces it. The
// receiver must refuse the case, fail the chunk with a reason, or decode it; never crash or write
// outside its buffer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "wirezip/pipeline/serve_thread.hpp"
#include "wirezip/util/error.hpp"
#include "../../pipeline/src/wire.hpp"

using namespace wirezip;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {  // the sender's parser of the receiver's run report, on the same bytes
    const pipeline::wire::RunReport report = pipeline::wire::read_report(
        in.subspan(1),
        {.data_bytes = 40 << 10, .raw = (data[0] & 1) != 0, .wall_ns = 1'000'000, .workers = 1 + (data[0] >> 6)});
    if (report.wait_ns > 1'000'000 || report.decode_ns > 4'000'000) __builtin_trap();  // a time past its bound passed
  } catch (const Error&) {
  }
  try {  // and its parser of a credit: bytes 1..4 the immediate, byte 0 the case's depth
    std::uint32_t credit = 0;
    std::memcpy(&credit, data + 1, 4);
    for (const std::size_t slot : pipeline::wire::credited_slots(credit, 1 + data[0]))
      if (slot > data[0]) __builtin_trap();  // a slot outside the case passed the parser
  } catch (const Error&) {
  }
  static const codecs::CodecSpec kCodecs[] = {codecs::parse_codec_spec("memcpy"), codecs::parse_codec_spec("lz4"),
                                              codecs::parse_codec_spec("bytegroup+lz4"),
                                              codecs::parse_codec_spec("bytegroup+huff")};
  const pipeline::Config config{pipeline::Mode::overlap, kCodecs[data[0] % 4], 16 << 10, 2, 1,
                                std::chrono::milliseconds(50)};
  constexpr std::size_t kData = 40 << 10;  // three chunks, the last one short
  rdma::LinkOptions options;
  options.buffer_bytes = pipeline::link_buffer_bytes(config, kData);
  options.timeout = std::chrono::milliseconds(20);  // in-process: an answer that does not come is the common case
  rdma::LinkPair link = rdma::connect_loopback(rdma::TransportKind::mem, options);
  pipeline::ServeThread receiver(*link.first, *link.second);
  const auto staging = link.first->buffer().bytes();
  const std::size_t slots_at = pipeline::slots_offset(kData);
  std::uint32_t imm = 0;
  try {
    if (data[0] & 0x80) {  // the fuzzer's own case record, at offset 0
      const std::size_t length = std::min(size - 1, pipeline::wire::kCaseRecordMax);
      std::memcpy(staging.data() + slots_at, data + 1, length);
      link.first->post_write(slots_at, 0, length, pipeline::wire::imm(pipeline::wire::Kind::start, 0, 0));
      link.first->wait_arrival();
      return 0;
    }
    pipeline::start_case(*link.first, kData, config);
    std::memcpy(&imm, data + 1, 4);  // any immediate: kind, slot and value as the fuzzer likes
    const std::size_t slot_bytes = pipeline::wire::slot_bytes(config);
    const std::size_t length = std::min(size - 5, slot_bytes);
    std::memcpy(staging.data() + slots_at, data + 5, length);
    // A 32-bit hash is beyond a fuzzer's guessing: on request the header gets the case's codec tag,
    // so the codecs' decoders behind it are reached too.
    if ((data[0] & 0x40) && length >= pipeline::wire::kChunkHeaderSize) {
      const std::uint32_t tag = pipeline::wire::codec_tag(config.codec_spec);
      for (int i = 0; i < 4; ++i) staging[slots_at + 16 + i] = std::byte((tag >> (8 * i)) & 0xff);
    }
    link.first->post_write(slots_at, slots_at, length, imm);
    link.first->wait_arrival();  // a credit, "failed", or the link failing
  } catch (const Error&) {
  }
  return 0;
}
