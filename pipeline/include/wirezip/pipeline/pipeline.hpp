#pragma once
// The overlapped pipeline: chunked compress -> transfer -> decompress, verified end to end.
//
// The sender's buffer holds the tensor, then `depth` send slots; the receiver's buffer holds the
// destination, then `depth` receive slots (same layout). Compression workers compress chunks ahead
// into free slots; the sender's transport thread writes each finished slot into the same slot on
// the receiver; receiver workers decompress each arriving chunk into the destination and the
// receiver sends a credit back, so a slot is reused only once the receiver is done with it.
//
// Modes: raw (no codec: chunks written straight from tensor to destination, same credits),
// serial (compress, send, decompress one chunk at a time), overlap (all stages at once).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::pipeline {

enum class Mode { raw, serial, overlap };
Mode parse_mode(std::string_view text);  // "raw" | "serial" | "overlap"
std::string_view mode_name(Mode mode);

struct Config {
  Mode mode = Mode::overlap;
  std::string codec_spec = "bytegroup+huff";  // not used in raw mode
  std::size_t chunk_bytes = 1 << 20;
  std::size_t depth = 8;  // slots on each side, and writes in flight
  int workers = 1;        // compression threads (sender) and decompression threads (receiver)
  std::chrono::milliseconds timeout{10000};
};

// The buffer each endpoint needs: the tensor (or destination) plus `depth` slots.
std::size_t link_buffer_bytes(const Config& config, std::size_t data_bytes);
// Where the slots start in either buffer.
inline std::size_t slots_offset(std::size_t data_bytes) { return (data_bytes + 4095) / 4096 * 4096; }

struct Result {
  double seconds = 0;  // first chunk read -> last credit back (the last chunk decompressed)
  std::uint64_t original_bytes = 0;
  std::uint64_t wire_bytes = 0;  // slot payloads written (headers included)
  double compress_busy = 0;      // busy time / (wall time x workers), 0..1
  double link_busy = 0;          // share of wall time with a write in flight
  double decompress_busy = 0;    // as reported by the receiver
};

// Tells the receiver the case (codec, sizes, mode); call once per configuration.
void start_case(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config);
// One run over the whole tensor, which must already be in sender.buffer() at offset 0.
// `wire_sizes`, when given (one per chunk), turns a raw run into a link-only run moving that many
// bytes per chunk: the link stage alone, as it carries compressed data.
Result run_once(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config,
                const std::vector<std::size_t>* wire_sizes = nullptr);

// The receiving side: serves cases and runs until the sender says stop. A failed run is reported
// to the sender (an error immediate) and rethrown here, as is a link that fails.
void serve(rdma::Endpoint& receiver);
// Tells the receiver to return from serve().
void stop_serving(rdma::Endpoint& sender);

// Stage rates measured alone (original bytes per second), for overlap efficiency and the model.
struct StageRates {
  double compress = 0;
  double decompress = 0;
  double link = 0;  // the link carrying this codec's compressed chunks, in original bytes
  double ratio = 1;
};
// Compresses and decompresses every chunk locally with `workers` threads (no link), then runs
// the link alone with the compressed sizes (needs a serving peer, after start_case).
StageRates measure_stages(rdma::Endpoint& sender, std::span<const std::byte> data, const Config& config);

}  // namespace wirezip::pipeline
