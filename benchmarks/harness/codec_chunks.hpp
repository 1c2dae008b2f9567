#pragma once
// The chunks one thread of a bench_codec case codes: the whole data set's share held at once, or a
// file data set's share of one window at a time (read, coded, verified, released).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wirezip/codecs/codec.hpp"
#include "wirezip/datasets/dataset_reader.hpp"

namespace wirezip::harness {

// Anonymous pages that can be handed back to the kernel (MADV_DONTNEED) and reused: a window's
// buffer, whose resident size is what the window bounds.
class PageSpan {
 public:
  PageSpan() = default;
  explicit PageSpan(std::size_t bytes);
  ~PageSpan();
  PageSpan(PageSpan&& other) noexcept;
  PageSpan& operator=(PageSpan&& other) noexcept;
  PageSpan(const PageSpan&) = delete;
  PageSpan& operator=(const PageSpan&) = delete;

  std::span<std::byte> bytes() const { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// This thread's chunks t, t + T, t + 2T, ... each with its own compressed buffer. The buffers are
// slices of one mapping, touched when made (so no page fault is timed) and unmapped with it: freed
// malloc memory would stay resident in a thread's arena and count in the next case's peak.
struct ThreadChunks {
  std::vector<std::span<const std::byte>> originals;
  std::vector<std::span<std::byte>> frames;
  std::vector<std::size_t> frame_sizes;
  std::uint64_t original_bytes = 0;
  PageSpan frame_pages;

  // `count` frames of `capacity` bytes each.
  void make_frames(std::size_t count, std::size_t capacity);
};

void compress_all(codecs::Codec& codec, ThreadChunks& mine);
// Throws wirezip::Error naming the chunk when the codec restores fewer or more bytes than it has.
void decompress_all(codecs::Codec& codec, ThreadChunks& mine, std::span<std::byte> restored);

// Window geometry of a case: windows of whole rounds of chunks over the threads, so every window
// splits evenly and each chunk goes to the thread it would go to with the data set in memory.
struct WindowPlan {
  std::uint64_t data_bytes = 0, chunk = 0, window = 0;  // window: a multiple of chunk x threads
  std::size_t windows() const { return static_cast<std::size_t>((data_bytes + window - 1) / window); }
};
// Throws wirezip::Error when `window` cannot hold one chunk per thread.
WindowPlan plan_windows(std::uint64_t data_bytes, std::uint64_t chunk, std::uint64_t window, int threads);

// One thread's side of a windowed case. Memory: its share of a window as input, as frames, and
// one chunk for the check. A decompress case restores into the input pages: the check re-reads the
// original from the file, and pages that stay mapped from window to window are never faulted
// again inside the timing (a page released and faulted anew costs more than the copy into it).
class WindowedChunks {
 public:
  WindowedChunks(const datasets::DatasetReader& reader, const WindowPlan& plan, const codecs::Codec& codec,
                 int thread, int threads, bool decompress);

  // Untimed: reads this thread's chunks of window `w`; for a decompress case also compresses them.
  void load(std::size_t w, codecs::Codec& codec);
  ThreadChunks& chunks() { return mine_; }
  std::span<std::byte> restored() { return input_.bytes().first(window_share_); }
  // Untimed: restores (compress) or re-reads (decompress) every chunk and compares; returns the
  // window's compressed bytes. Throws on the first difference.
  std::uint64_t verify(codecs::Codec& codec);
  std::uint64_t total_bytes() const { return total_bytes_; }  // this thread's share of all windows

 private:
  const datasets::DatasetReader& reader_;
  WindowPlan plan_;
  int thread_, threads_;
  bool decompress_;
  PageSpan input_;
  std::vector<std::byte> scratch_;  // one chunk
  std::vector<std::uint64_t> offsets_;  // stream offset of each chunk of this window
  ThreadChunks mine_;
  std::size_t window_share_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace wirezip::harness
