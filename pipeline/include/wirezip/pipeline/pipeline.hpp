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

#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::pipeline {

// link: measure_stages' link-only run, a compressed run's chunk sizes through the slots with its
// notifications and credits, nothing decoded. Not a case mode: parse_mode refuses it.
enum class Mode { raw, serial, overlap, link };
Mode parse_mode(std::string_view text);  // "raw" | "serial" | "overlap"
// Whether the receiver decodes a mode's chunks (serial, overlap) or only takes them (raw, link).
constexpr bool decodes(Mode mode) { return mode == Mode::serial || mode == Mode::overlap; }
std::string_view mode_name(Mode mode);

struct Config {
  Mode mode = Mode::overlap;
  codecs::CodecSpec codec_spec = codecs::parse_codec_spec("bytegroup+huff");  // raw mode: empty (or a codec)
  std::size_t chunk_bytes = 1 << 20;
  std::size_t depth = 8;  // slots on each side, and writes in flight
  int workers = 1;        // compression threads (sender) and decompression threads (receiver)
  std::chrono::milliseconds timeout{10000};
};

// What a receiver accepts from a sender's case record, at most.
struct ServeLimits {
  int max_workers = 0;  // 0: the CPUs this process may use
  std::chrono::milliseconds max_timeout{600'000};
  std::size_t max_chunk = std::size_t{1} << 30;
  std::chrono::milliseconds idle{120'000};  // a link silent this long between cases is ended
  // Non-empty: decode with this backend (CodecSpec::with_decoder on each case's codec spec; a case
  // whose codec has no decoder choice is refused). The spec on the wire and the chunks' codec tag
  // stay the sender's.
  std::string decoder;
  int workers_allowed() const;
};

// The buffer each endpoint needs: the tensor (or destination) plus `depth` slots. Throws when the
// sizes overflow.
std::size_t link_buffer_bytes(const Config& config, std::size_t data_bytes);
// Where the slots start in either buffer.
std::size_t slots_offset(std::size_t data_bytes);

struct Result {
  double seconds = 0;  // first chunk read -> last credit back (the last chunk decompressed)
  std::uint64_t original_bytes = 0;
  std::uint64_t wire_bytes = 0;  // slot payloads written (headers included)
  double compress_busy = 0;      // busy time / (wall time x workers), 0..1
  double link_busy = 0;          // share of wall time with a write in flight
  double decompress_busy = 0;    // as reported by the receiver
  double decompress_seconds = 0;  // the receiver's decoding time, all workers together
  double sender_cpu_seconds = 0;  // this process's CPU time during the run
  double receiver_cpu_seconds = 0;  // the receiving process's, as it reported (the same process in loopback)
  // The sending host's CPU time over the run, every CPU and process (/proc/stat, in clock ticks):
  // busy, idle, and stolen by the hypervisor. All 0 where /proc/stat could not be read.
  struct HostCpu {
    double busy = 0, idle = 0, steal = 0;  // seconds, summed over the CPUs
    HostCpu& operator+=(const HostCpu& o) {
      busy += o.busy, idle += o.idle, steal += o.steal;
      return *this;
    }
    friend HostCpu operator-(const HostCpu& a, const HostCpu& b) {
      return {.busy = a.busy - b.busy, .idle = a.idle - b.idle, .steal = a.steal - b.steal};
    }
  } host_cpu;
  std::uint64_t chunks = 0;
  // Where each end's time went, summed over the run's chunks (workers together): the cost model
  // of docs/METRICS.md. The sender's come from this process, the receiver's from its run report.
  struct SenderTimes {
    double compress = 0, hash = 0;  // the codec, and checksumming originals it did not hash itself
    double compress_cpu = 0;        // the codec's thread CPU time: its cost on cores it shares
    double post = 0;                // handing finished slots to the transport
    double wait = 0;                // the transport thread blocked for a credit (or a finished slot)
    std::uint64_t switches = 0;     // this process's context switches, voluntary and not
    double queued = 0;              // its threads' time runnable, waiting for a CPU (schedstat)
    std::uint64_t threads = 0;      // this process's threads while the run went on
  } sender;
  struct ReceiverTimes {
    double hash = 0, wait = 0, credit = 0;  // decode time is decompress_seconds
    double decode_cpu = 0;                  // the decoders' thread CPU time
    std::uint64_t switches = 0, threads = 0;
  } receiver;
};

// Tells the receiver the case (codec, sizes, mode); call once per configuration.
void start_case(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config);
// Has the receiver fill its destination with the pattern of `seed` (outside any timing), so a
// chunk that a run fails to deliver cannot pass verification on bytes an earlier run wrote.
void prepare_run(rdma::Endpoint& sender, std::uint32_t seed);
// One run over the whole tensor, which must already be in sender.buffer() at offset 0.
// `wire_sizes` (one per chunk) is what a link-mode run moves per chunk: the link stage alone, as
// it carries compressed data.
Result run_once(rdma::Endpoint& sender, std::size_t data_bytes, const Config& config,
                const std::vector<std::size_t>* wire_sizes = nullptr);

// The receiving side: serves cases and runs until the sender says stop. A failed run is reported
// to the sender (an error immediate) and rethrown here, as is a link that fails or stays silent
// past limits.idle. Case records beyond `limits` are refused (the sender's case fails).
void serve(rdma::Endpoint& receiver, const ServeLimits& limits = {});
// Tells the receiver to return from serve().
void stop_serving(rdma::Endpoint& sender);

// Stage rates measured alone (original bytes per second), for overlap efficiency and the model.
struct StageRates {
  double compress = 0;
  double decompress = 0;           // here, with `workers` threads: the receiver's host in loopback
  double receiver_decompress = 0;  // on the receiver, one chunk at a time (a serial run)
  double link = 0;  // the link carrying this codec's compressed chunks, in original bytes
  double ratio = 1;
  std::uint64_t compressed_bytes = 0;  // every chunk's frame (chunk headers not counted)
  double link_sender_cpu = 0;    // CPU seconds of this process while the link ran alone
  double link_receiver_cpu = 0;  // of the receiving process, as it reported
};
// Compresses and decompresses every chunk locally with `workers` threads (no link), runs the link
// alone with the compressed sizes, and one serial run for the receiver's decoding rate (needs a
// serving peer, after start_case). The local passes hold the frames and restored bytes of
// `batch_bytes` at a time (rounded down to whole chunks, at least one; 0: all of `data`), so a
// window of a large data set costs a batch of memory, not the window again twice.
StageRates measure_stages(rdma::Endpoint& sender, std::span<const std::byte> data, const Config& config,
                          std::size_t batch_bytes = 0);

}  // namespace wirezip::pipeline
