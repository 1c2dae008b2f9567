#pragma once
// A data set's bytes on page boundaries, as a transport's registered buffers and a training
// framework's tensors are. malloc puts a large block 16 bytes past a page boundary: every 1 MiB
// chunk of it would then start mid cache line, and a codec's vector loads would straddle lines on
// every chunk, a cost no real buffer has.
#include <cstddef>
#include <new>
#include <vector>

namespace wirezip::datasets {

template <typename T>
struct PageAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{4096};

  PageAligned() = default;
  template <typename U>
  PageAligned(const PageAligned<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }

  template <typename U>
  bool operator==(const PageAligned<U>&) const noexcept {
    return true;
  }
};

using AlignedBytes = std::vector<std::byte, PageAligned<std::byte>>;

}  // namespace wirezip::datasets
