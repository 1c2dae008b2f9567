#pragma once
// What carries a ring pass's chunks from rank r to r+1: the ring engine (collective::Ring) decides what
// to send and where each chunk belongs; a channel moves the bytes. Two of them: MPI point-to-point
// (mpi/src/ring_channel.cpp) and LinkChannel, over two of wirezip's own links (tcp; the Endpoint
// interface is verbs' too). No MPI here: the link channel is unit-tested in one process.
//
// A pass has `total` chunks numbered 0..total-1 (own chunks first, then forwards), each at most
// `capacity` bytes. Every rank begins the same passes in the same order.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::collective {

struct PassShape {
  std::size_t total = 0, capacity = 0;
  bool receive_slots = false, send_slots = false;  // whether the pass will ask for them
};

class RingChannel {
 public:
  virtual ~RingChannel() = default;
  virtual std::string_view name() const = 0;  // "mpi", "tcp", ...

  virtual void begin_pass(const PassShape& shape) = 0;
  // Places the channel keeps for chunk `index` when the pass has none of its own: where it may be
  // received, where an outgoing chunk may be composed (compressed into). `capacity` bytes each.
  virtual std::span<std::byte> receive_slot(std::size_t index) = 0;
  virtual std::span<std::byte> send_slot(std::size_t index) = 0;
  // Chunk `index`, at most into.size() bytes, is to land in `into`.
  virtual void post_receive(std::size_t index, std::span<std::byte> into) = 0;
  // The bytes of chunk `index` once they are in its `into` (a prefix of it); nothing yet otherwise.
  virtual std::optional<std::span<std::byte>> test_receive(std::size_t index) = 0;
  // Sends chunk `index`; `bytes` stay untouched until end_pass.
  virtual void send(std::size_t index, std::span<const std::byte> bytes) = 0;
  // Waits (bounded) until every send of the pass is done.
  virtual void end_pass() = 0;
  // The pass failed: let go of what it left behind. The channel carries no more passes.
  virtual void abandon() = 0;
};

// Immediates of the link channel. The top three bits keep them apart from link set-up and the
// keepalive (rdma::kKeepaliveImm, top bits 000) and say what the rest is.
inline constexpr std::uint32_t kRingChunkImm = 0x80000000u;  // | chunk index: a chunk in its slot
inline constexpr std::uint32_t kRingReadyImm = 0x40000000u;  // | pass number: "send me that pass"
inline constexpr std::uint32_t kRingValueMask = 0x1fffffffu;
inline constexpr std::size_t kRingMaxChunks = kRingValueMask + 1;
std::uint32_t ring_chunk_imm(std::size_t index);
std::uint32_t ring_ready_imm(std::uint64_t pass);

// An arrival from the left neighbour, checked against the pass: the chunk index it names (within
// the pass, in its slot, at most `capacity` bytes, not seen before). Throws naming the field at
// fault. `check_offset`: the transport reports where the bytes landed (verbs does not).
std::size_t check_chunk_arrival(const rdma::Arrival& arrival, const PassShape& shape,
                                const std::vector<std::optional<std::size_t>>& arrived, bool check_offset);
// An arrival from the right neighbour must be its zero-byte "ready for pass `pass`".
void check_ready_arrival(const rdma::Arrival& arrival, std::uint64_t pass);

// The ring's two links at one rank: `right` connected to rank r+1 (it writes into r+1's buffer),
// `left` accepted from rank r-1 (r-1 writes into it). Chunk i of a pass lives at i x capacity in
// both buffers: composed in right's buffer, written to the same place in r+1's. Before writing a
// pass, a rank waits for its right neighbour's "ready" for that pass, which that neighbour sends
// when it begins the pass, so no slot is overwritten while it is still being read.
class LinkChannel final : public RingChannel {
 public:
  struct Peers {
    int rank = 0, left = 0, right = 0;  // for messages
  };
  LinkChannel(std::unique_ptr<rdma::Endpoint> right, std::unique_ptr<rdma::Endpoint> left, Peers peers,
              std::chrono::milliseconds timeout);
  ~LinkChannel() override;

  std::string_view name() const override;
  void begin_pass(const PassShape& shape) override;
  std::span<std::byte> receive_slot(std::size_t index) override;
  std::span<std::byte> send_slot(std::size_t index) override;
  void post_receive(std::size_t index, std::span<std::byte> into) override;
  std::optional<std::span<std::byte>> test_receive(std::size_t index) override;
  void send(std::size_t index, std::span<const std::byte> bytes) override;
  void end_pass() override;
  void abandon() override { broken_ = true; }
  bool broken() const { return broken_; }
  // The most bytes one pass may use: total x capacity must fit.
  std::size_t pass_bytes() const;

 private:
  // Runs a link operation; a failed link becomes one line naming this rank and the neighbour.
  template <typename Body>
  auto on_link(int neighbour, const char* what, Body body);
  void drain_left();

  std::unique_ptr<rdma::Endpoint> right_, left_;
  Peers peers_;
  std::chrono::milliseconds timeout_;
  bool broken_ = false;
  std::uint64_t pass_ = 0;
  PassShape shape_;
  std::vector<std::optional<std::size_t>> arrived_;  // per chunk: its length, once it landed
  std::vector<std::span<std::byte>> into_;           // per chunk: where the pass wants it
};

}  // namespace wirezip::collective
