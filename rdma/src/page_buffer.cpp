#include "wirezip/rdma/page_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {
namespace {

constexpr std::size_t kHugePage = 2 << 20;

// Sizes come from peers and the command line: a size that would wrap is an error, not a small buffer.
std::size_t round_up(std::size_t n, std::size_t to) {
  std::size_t padded = 0;
  if (__builtin_add_overflow(n, to - 1, &padded)) fail("page buffer: {} bytes cannot be mapped (size overflow)", n);
  return padded / to * to;
}

[[noreturn]] void fail_errno(std::string_view what, std::size_t size, PagePolicy policy) {
  fail("{}({} bytes, pages={}): {}", what, size, page_policy_name(policy), std::strerror(errno));
}

// Touches every base page once (a write, so the kernel must back it) and times it.
double populate(std::byte* data, std::size_t size) {
  const std::size_t step = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t offset = 0; offset < size; offset += step) data[offset] = std::byte{0};
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

constexpr EnumNames<PagePolicy, 3> kPagePolicyNames{
    "page policy", {{{PagePolicy::small, "4k"}, {PagePolicy::thp, "thp"}, {PagePolicy::hugetlb, "hugetlb"}}}};

PagePolicy parse_page_policy(std::string_view text) { return kPagePolicyNames.parse(text); }

std::string_view page_policy_name(PagePolicy policy) { return kPagePolicyNames.name(policy); }

PageBuffer PageBuffer::allocate(std::size_t size, PagePolicy policy) {
  if (size == 0) fail("page buffer: size must be at least 1 byte");
  // Guards and alignment slack come on top; anything near the address space is refused here.
  if (size > (std::size_t{1} << 47)) fail("page buffer: {} bytes is more than any machine maps", size);
  PageBuffer buffer;
  buffer.policy_ = policy;
  buffer.size_ = size;
  const std::size_t mapped = round_up(size, kHugePage);
  if (policy == PagePolicy::hugetlb) {
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) {
      if (errno == ENOMEM)
        fail("mmap({} bytes, pages=hugetlb): no huge pages available; reserve some with "
             "'echo N > /proc/sys/vm/nr_hugepages' (N >= {})", mapped, mapped / kHugePage);
      fail_errno("mmap", mapped, policy);
    }
    buffer.reservation_ = static_cast<std::byte*>(p);
    buffer.reservation_size_ = mapped;
    buffer.data_ = buffer.reservation_;
  } else {
    // Reserve guards + alignment slack as PROT_NONE, then open an aligned window inside it: the
    // window is one VMA that no neighbouring mapping can merge with.
    buffer.reservation_size_ = mapped + 2 * kHugePage;
    void* p = mmap(nullptr, buffer.reservation_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail_errno("mmap", buffer.reservation_size_, policy);
    buffer.reservation_ = static_cast<std::byte*>(p);
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    buffer.data_ = reinterpret_cast<std::byte*>(round_up(base + 1, kHugePage));
    if (mprotect(buffer.data_, mapped, PROT_READ | PROT_WRITE) != 0) fail_errno("mprotect", mapped, policy);
    const int advice = policy == PagePolicy::thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;
    if (madvise(buffer.data_, mapped, advice) != 0) fail_errno("madvise", mapped, policy);
  }
  buffer.first_touch_us_ = populate(buffer.data_, mapped);
  return buffer;
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept { *this = std::move(other); }

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    reservation_ = std::exchange(other.reservation_, nullptr);
    reservation_size_ = std::exchange(other.reservation_size_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    policy_ = other.policy_;
    first_touch_us_ = other.first_touch_us_;
  }
  return *this;
}

PageBuffer::~PageBuffer() { release(); }

void PageBuffer::release() noexcept {
  if (reservation_) munmap(reservation_, reservation_size_);
  reservation_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

PageBacking PageBuffer::backing() const { return measure_backing(data_, round_up(size_, kHugePage)); }

PageBacking measure_backing(const void* begin, std::size_t size) {
  const auto lo = reinterpret_cast<std::uintptr_t>(begin), hi = lo + size;
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) fail("cannot read /proc/self/smaps: {}", std::strerror(errno));
  PageBacking backing;
  bool inside = false;
  bool hugetlb = false;
  std::uint64_t hugetlb_bytes = 0;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream fields(line);
    if (line.find('-') < line.find(' ') && (fields >> std::hex >> start >> dash >> end) && dash == '-') {
      inside = start < hi && end > lo;  // a new VMA header line
      continue;
    }
    if (!inside) continue;
    std::string key;
    std::uint64_t kib = 0;
    std::istringstream entry(line);
    if (!(entry >> key >> kib)) continue;
    if (key == "Rss:") backing.rss_bytes += kib << 10;
    if (key == "AnonHugePages:") backing.huge_bytes += kib << 10;
    if (key == "Private_Hugetlb:" || key == "Shared_Hugetlb:") hugetlb_bytes += kib << 10;
    if (key == "KernelPageSize:") {
      backing.kernel_page_bytes = std::max<std::uint64_t>(backing.kernel_page_bytes, kib << 10);
      hugetlb = hugetlb || (kib << 10) >= kHugePage;
    }
  }
  // hugetlbfs pages do not count in Rss or AnonHugePages; they are huge by construction.
  if (hugetlb) backing.rss_bytes = backing.huge_bytes = hugetlb_bytes;
  backing.huge_fraction =
      backing.rss_bytes ? static_cast<double>(backing.huge_bytes) / static_cast<double>(backing.rss_bytes) : 0.0;
  return backing;
}

}  // namespace wirezip::rdma
