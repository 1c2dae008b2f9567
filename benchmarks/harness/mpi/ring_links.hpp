#pragma once
// bench_collective --transport=tcp: the ring's chunks over wirezip's own links instead of MPI
// point-to-point. MPI still launches the ranks and carries the addresses: each rank listens on an
// ephemeral port, the addresses are gathered, then rank r connects to r+1 while it accepts r-1.
#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/collective/ring_channel.hpp"
#include "wirezip/mpi/session.hpp"

namespace wirezip::harness {

struct RingLinkConfig {
  rdma::TransportKind kind = rdma::TransportKind::tcp;
  std::string bind;                 // tcp between hosts: the interface or address listeners bind; empty: every one
  std::string device;               // verbs: the device; empty = the first with an active port
  std::size_t buffer_bytes = 0;     // each link's buffer on both sides: the largest pass's slots
  std::size_t depth = 8;            // writes in flight per link
  std::chrono::milliseconds timeout{10000};
  std::string secret;               // the job's: only this job's ranks can join its ring
};

// Every rank calls it together (a collective over `comm`): this rank's two links as a channel.
// Throws on every rank, with the first failing rank's reason, when any rank cannot listen.
std::unique_ptr<collective::LinkChannel> connect_ring_links(MPI_Comm comm, const RingLinkConfig& config,
                                                            const std::vector<std::string>& hosts,
                                                            mpi::Watchdog& watchdog);

// The buffer a ring pass over `ranks` needs at most: (ranks - 1) x chunks x capacity bytes for the
// largest size and codec (raw: the chunk itself), at least rdma::kMinLinkBuffer.
std::size_t ring_link_bytes(const std::vector<std::size_t>& sizes, const std::vector<codecs::CodecSpec>& codecs, int ranks,
                            std::size_t chunk_bytes);

}  // namespace wirezip::harness
