#pragma once
// Buffers with a chosen page policy, and the backing the kernel really gave them.
//
//   4k       MADV_NOHUGEPAGE: base pages only (the paper's 10.9 GB/s case)
//   thp      MADV_HUGEPAGE, populated: Transparent Huge Pages (the paper's 24.6 GB/s case)
//   hugetlb  MAP_HUGETLB: reserved hugetlbfs pages (what perftest's --use_hugepages means)
//
// Every buffer is 2 MiB aligned and sits between PROT_NONE guard pages, so its mapping is one VMA
// of its own and /proc/self/smaps describes exactly it: results carry the measured huge fraction,
// never the request.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace wirezip::rdma {

enum class PagePolicy { small, thp, hugetlb };

// "4k" | "thp" | "hugetlb"; anything else throws wirezip::Error naming the valid forms.
PagePolicy parse_page_policy(std::string_view text);
std::string_view page_policy_name(PagePolicy policy);

struct PageBacking {
  std::uint64_t rss_bytes = 0;          // resident bytes of the buffer's mapping
  std::uint64_t huge_bytes = 0;         // of those, on huge pages (AnonHugePages, or all for hugetlb)
  std::uint64_t kernel_page_bytes = 0;  // KernelPageSize of the mapping (4096, or 2 MiB for hugetlb)
  double huge_fraction = 0;             // huge_bytes / rss_bytes, 0..1
};

class PageBuffer {
 public:
  // Maps, advises and populates (touches every page) `size` bytes. Throws wirezip::Error; for
  // hugetlb with no pages reserved the message names /proc/sys/vm/nr_hugepages.
  static PageBuffer allocate(std::size_t size, PagePolicy policy);

  PageBuffer() = default;
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer();

  std::span<std::byte> bytes() const { return {data_, size_}; }
  PagePolicy policy() const { return policy_; }
  // Wall time of the first touch of every page, in microseconds: page faults, zeroing, THP collapse.
  double first_touch_us() const { return first_touch_us_; }
  // Reads /proc/self/smaps now.
  PageBacking backing() const;

 private:
  void release() noexcept;

  std::byte* reservation_ = nullptr;  // the whole mapping, guards included
  std::size_t reservation_size_ = 0;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  PagePolicy policy_ = PagePolicy::small;
  double first_touch_us_ = 0;
};

// The backing of the mapping(s) covering [begin, begin + size), from /proc/self/smaps.
PageBacking measure_backing(const void* begin, std::size_t size);

}  // namespace wirezip::rdma
