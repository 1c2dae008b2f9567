#include "pipeline_windows.hpp"

#include <algorithm>
#include <vector>

#include "wirezip/util/error.hpp"

namespace wirezip::harness {

SenderWindows::SenderWindows(const RunDataset& data, std::size_t chunk_bytes, std::uint64_t window_bytes)
    : data_(data), step_(data.size()) {
  if (!data.reader) return;
  if (window_bytes < chunk_bytes) fail("--window={} cannot hold one {}-byte chunk", window_bytes, chunk_bytes);
  // Whole chunks: the chunks of every window are the chunks of the data set held whole.
  step_ = window_bytes / chunk_bytes * chunk_bytes;
}

std::size_t SenderWindows::count() const {
  return step_ == 0 ? 0 : static_cast<std::size_t>((data_.size() + step_ - 1) / step_);
}

std::size_t SenderWindows::largest() const { return static_cast<std::size_t>(std::min(step_, data_.size())); }

std::size_t SenderWindows::bytes(std::size_t w) const {
  return static_cast<std::size_t>(std::min(step_, data_.size() - offset(w)));
}

void SenderWindows::load(std::size_t w, rdma::Endpoint& sender, const pipeline::Config& config) {
  if (loaded_ != w) {
    data_.read(offset(w), sender.buffer().bytes().first(bytes(w)));
    loaded_ = w;
  }
  if (case_bytes_ != bytes(w)) {
    pipeline::start_case(sender, bytes(w), config);
    case_bytes_ = bytes(w);
  }
}

void SenderWindows::verify(std::size_t w, rdma::Endpoint& sender) const {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::vector<std::byte> got(std::min(kPiece, bytes(w))), want(got.size());
  for (std::size_t at = 0; at < bytes(w); at += kPiece) {
    const std::size_t n = std::min(kPiece, bytes(w) - at);
    sender.read_remote(at, std::span(got).first(n));
    data_.read(offset(w) + at, std::span(want).first(n));
    const auto end = want.begin() + static_cast<std::ptrdiff_t>(n);
    const auto differs = std::mismatch(want.begin(), end, got.begin()).first;
    if (differs != end)
      fail("verification: the receiver's destination differs from the source at byte {} after the last run",
           offset(w) + at + static_cast<std::uint64_t>(differs - want.begin()));
  }
}

void StageSums::add(const pipeline::StageRates& window, std::size_t bytes) {
  const double b = static_cast<double>(bytes);
  bytes_ += b;
  compress_ += b / window.compress;
  decompress_ += b / window.decompress;
  receiver_decompress_ += b / window.receiver_decompress;
  link_ += b / window.link;
  link_sender_cpu_ += window.link_sender_cpu;
  link_receiver_cpu_ += window.link_receiver_cpu;
  compressed_ += window.compressed_bytes;
}

pipeline::StageRates StageSums::rates() const {
  pipeline::StageRates r;
  r.compress = bytes_ / compress_;
  r.decompress = bytes_ / decompress_;
  r.receiver_decompress = bytes_ / receiver_decompress_;
  r.link = bytes_ / link_;
  r.ratio = bytes_ / static_cast<double>(compressed_);  // as measure_stages computes it: the same bits
  r.compressed_bytes = compressed_;
  r.link_sender_cpu = link_sender_cpu_;
  r.link_receiver_cpu = link_receiver_cpu_;
  return r;
}

std::size_t stage_batch_bytes(const pipeline::Config& config) {
  // Enough whole rounds of chunks over the workers that the batches' ends cost little idle time.
  constexpr std::size_t kBatch = std::size_t{8} << 20;
  return std::max(kBatch, 4 * static_cast<std::size_t>(config.workers) * config.chunk_bytes);
}

}  // namespace wirezip::harness
