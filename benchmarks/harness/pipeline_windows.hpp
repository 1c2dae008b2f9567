#pragma once
// What bench_pipeline's sender buffer holds during a case: the whole data set, or one window of
// whole chunks of a file data set at a time. Putting a window there (reading the file, telling the
// receiver the new size) and checking what the receiver made of it are never timed; the runs that
// move a window are, and an iteration's time is the sum of its windows' runs.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "windowed_dataset.hpp"
#include "wirezip/pipeline/pipeline.hpp"

namespace wirezip::harness {

class SenderWindows {
 public:
  // Throws wirezip::Error when a windowed data set's window cannot hold one chunk.
  SenderWindows(const RunDataset& data, std::size_t chunk_bytes, std::uint64_t window_bytes);

  std::size_t count() const;    // 1 for a data set held in memory
  std::size_t largest() const;  // bytes of the largest window: what the link's buffers must hold
  std::uint64_t offset(std::size_t w) const { return w * step_; }
  std::size_t bytes(std::size_t w) const;

  // Window `w` in the sender's buffer (read unless it is there already) and the receiver told its
  // size (unless it was the last size told on this link in this case).
  void load(std::size_t w, rdma::Endpoint& sender, const pipeline::Config& config);
  // The receiver's destination equals window `w` of the data set, read back and compared a piece
  // at a time; throws wirezip::Error naming the first byte that differs.
  void verify(std::size_t w, rdma::Endpoint& sender) const;

 private:
  const RunDataset& data_;
  std::uint64_t step_;
  std::size_t loaded_ = std::numeric_limits<std::size_t>::max(), case_bytes_ = 0;
};

// The stage rates of each window, added up into the rates of the whole data set: bytes over each
// stage's summed seconds, ratio over every chunk's frame, CPU seconds summed.
class StageSums {
 public:
  void add(const pipeline::StageRates& window, std::size_t bytes);
  pipeline::StageRates rates() const;

 private:
  double bytes_ = 0, compress_ = 0, decompress_ = 0, receiver_decompress_ = 0, link_ = 0;
  double link_sender_cpu_ = 0, link_receiver_cpu_ = 0;
  std::uint64_t compressed_ = 0;
};

// The local stage passes of a window hold this many bytes of frames and restored chunks at a time.
std::size_t stage_batch_bytes(const pipeline::Config& config);

}  // namespace wirezip::harness
