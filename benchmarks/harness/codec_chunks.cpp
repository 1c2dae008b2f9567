#include "codec_chunks.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {

void ThreadChunks::make_frames(std::size_t count, std::size_t capacity) {
  frame_pages = PageSpan(checked_mul(count, capacity, "frame bytes"));
  std::memset(frame_pages.bytes().data(), 0, frame_pages.bytes().size());
  frames.clear();
  for (std::size_t i = 0; i < count; ++i) frames.push_back(frame_pages.bytes().subspan(i * capacity, capacity));
}

void compress_all(codecs::Codec& codec, ThreadChunks& mine) {
  for (std::size_t i = 0; i < mine.originals.size(); ++i)
    mine.frame_sizes[i] = codec.compress(mine.originals[i], mine.frames[i]);
}

void decompress_all(codecs::Codec& codec, ThreadChunks& mine, std::span<std::byte> restored) {
  std::size_t offset = 0;
  for (std::size_t i = 0; i < mine.originals.size(); ++i) {
    std::span<std::byte> out = restored.subspan(offset, mine.originals[i].size());
    // A short restore would leave the rest of the chunk's output as the last pass wrote it.
    if (const std::size_t size = codec.decompress(mine.frames[i].first(mine.frame_sizes[i]), out); size != out.size())
      fail("chunk {} of this thread: decompress restored {} bytes, the chunk has {}", i, size, out.size());
    offset += out.size();
  }
}

PageSpan::PageSpan(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) fail("cannot map {} bytes for a window: {}", bytes, std::strerror(errno));
  data_ = static_cast<std::byte*>(address);
}

PageSpan::~PageSpan() {
  if (data_) ::munmap(data_, size_);
}

PageSpan::PageSpan(PageSpan&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PageSpan& PageSpan::operator=(PageSpan&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

WindowPlan plan_windows(std::uint64_t data_bytes, std::uint64_t chunk, std::uint64_t window, int threads) {
  const std::uint64_t round = checked_mul(chunk, static_cast<std::uint64_t>(threads), "chunk x threads");
  if (window < round)
    fail("--window={} cannot hold one {}-byte chunk for each of {} threads (at least {} bytes)", window, chunk,
         threads, round);
  return {.data_bytes = data_bytes, .chunk = chunk, .window = window / round * round};
}

WindowedChunks::WindowedChunks(const datasets::DatasetReader& reader, const WindowPlan& plan,
                               const codecs::Codec& codec, int thread, int threads, bool decompress)
    : reader_(reader),
      plan_(plan),
      thread_(thread),
      threads_(threads),
      decompress_(decompress),
      input_(plan.window / static_cast<std::uint64_t>(threads)),
      scratch_(plan.chunk) {
  const std::uint64_t count = (plan.data_bytes + plan.chunk - 1) / plan.chunk;
  // Uneven shares would leave a thread idle at the end of every window: the wall time would
  // measure the split, not the codec.
  if (count % static_cast<std::uint64_t>(threads) != 0)
    fail("{} chunks do not split evenly over {} threads (a thread would idle in every iteration); "
         "choose a chunk size or thread count that divides them", count, threads);
  const std::size_t per_window = static_cast<std::size_t>(plan.window / plan.chunk / static_cast<std::uint64_t>(threads));
  mine_.make_frames(per_window, codec.max_compressed_size(plan.chunk));
  for (std::uint64_t i = static_cast<std::uint64_t>(thread); i < count; i += static_cast<std::uint64_t>(threads))
    total_bytes_ += std::min(plan.chunk, plan.data_bytes - i * plan.chunk);
}

void WindowedChunks::load(std::size_t w, codecs::Codec& codec) {
  const std::uint64_t start = w * plan_.window, end = std::min(start + plan_.window, plan_.data_bytes);
  const auto threads = static_cast<std::uint64_t>(threads_);
  mine_.originals.clear();
  offsets_.clear();
  mine_.original_bytes = 0;
  const std::span<std::byte> input = input_.bytes();
  for (std::uint64_t at = start + static_cast<std::uint64_t>(thread_) * plan_.chunk; at < end; at += threads * plan_.chunk) {
    const std::uint64_t size = std::min(plan_.chunk, end - at);
    const std::span<std::byte> piece = input.subspan(mine_.original_bytes, size);
    reader_.read(at, piece);
    mine_.originals.push_back(piece);
    offsets_.push_back(at);
    mine_.original_bytes += size;
  }
  mine_.frame_sizes.assign(mine_.originals.size(), 0);
  window_share_ = mine_.original_bytes;
  if (decompress_) compress_all(codec, mine_);
}

std::uint64_t WindowedChunks::verify(codecs::Codec& codec) {
  std::uint64_t compressed = 0, at = 0;
  for (std::size_t i = 0; i < mine_.originals.size(); ++i) {
    const std::size_t size = mine_.originals[i].size();
    const std::span<std::byte> scratch = std::span(scratch_).first(size);
    std::span<const std::byte> original = mine_.originals[i], restored = scratch;
    if (decompress_) {
      reader_.read(offsets_[i], scratch);
      original = scratch;
      restored = this->restored().subspan(at, size);
    } else if (const std::size_t got = codec.decompress(mine_.frames[i].first(mine_.frame_sizes[i]), scratch);
               got != size) {
      fail("the chunk at byte {} of the data set: decompress restored {} bytes, the chunk has {}", offsets_[i], got,
           size);
    }
    if (!std::equal(original.begin(), original.end(), restored.begin()))
      fail("round trip mismatch: the chunk at byte {} of the data set does not restore its input", offsets_[i]);
    compressed += mine_.frame_sizes[i];
    at += size;
  }
  return compressed;
}

}  // namespace wirezip::harness
