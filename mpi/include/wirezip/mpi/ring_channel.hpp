#pragma once
// The ring's chunks over MPI point-to-point (MPI_Isend / MPI_Irecv): the channel that
// collective::Ring runs on when bench_collective's --transport is mpi.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "wirezip/collective/ring_channel.hpp"

namespace wirezip::mpi {

// Keeps a place per received and per sent chunk between passes, so that handling a chunk never
// waits for a send to finish (which could close a cycle around the ring). Works on a duplicate
// of `parent`, so a failed collective's stray messages can meet nothing else. Owns the requests
// it posts: abandon() cancels what a failed pass left.
class MpiChannel final : public collective::RingChannel {
 public:
  MpiChannel(MPI_Comm parent, std::chrono::milliseconds timeout);
  MpiChannel(const MpiChannel&) = delete;
  MpiChannel& operator=(const MpiChannel&) = delete;
  ~MpiChannel() override;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

  std::string_view name() const override { return "mpi"; }
  void begin_pass(const collective::PassShape& shape) override;
  std::span<std::byte> receive_slot(std::size_t index) override { return slot(received_, index); }
  std::span<std::byte> send_slot(std::size_t index) override { return slot(outgoing_, index); }
  void post_receive(std::size_t index, std::span<std::byte> into) override;
  std::optional<std::span<std::byte>> test_receive(std::size_t index) override;
  void send(std::size_t index, std::span<const std::byte> bytes) override;
  void end_pass() override;
  void abandon() override;

 private:
  std::span<std::byte> slot(std::vector<std::byte>& storage, std::size_t index);
  int tag(std::size_t index) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, ranks_ = 1, left_ = 0, right_ = 0;
  std::chrono::milliseconds timeout_;
  collective::PassShape shape_;
  std::uint64_t pass_ = 0;
  std::vector<std::byte> received_, outgoing_;
  std::vector<MPI_Request> receives_, sends_;
  std::vector<std::span<std::byte>> into_;
};

}  // namespace wirezip::mpi
