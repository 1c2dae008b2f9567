#include <gtest/gtest.h>

#include <fstream>

#include "wirezip/rdma/page_buffer.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {
namespace {

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(PageBuffer, SmallPagesAreMeasuredAsSmall) {
  auto buffer = PageBuffer::allocate(16 << 20, PagePolicy::small);
  ASSERT_EQ(buffer.bytes().size(), 16u << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.bytes().data()) % (2 << 20), 0u);
  const PageBacking backing = buffer.backing();
  EXPECT_GE(backing.rss_bytes, 16u << 20);  // populated: every page touched
  EXPECT_EQ(backing.huge_bytes, 0u);
  EXPECT_EQ(backing.huge_fraction, 0.0);
  EXPECT_EQ(backing.kernel_page_bytes, 4096u);
  EXPECT_GT(buffer.first_touch_us(), 0.0);
}

TEST(PageBuffer, ThpIsMeasuredAsHuge) {
  if (thp_mode().find("[never]") != std::string::npos) GTEST_SKIP() << "THP disabled on this host";
  auto buffer = PageBuffer::allocate(16 << 20, PagePolicy::thp);
  const PageBacking backing = buffer.backing();
  // madvise mode: the advice is what makes these huge; the kernel may still fall back for a few.
  EXPECT_GT(backing.huge_fraction, 0.5) << "AnonHugePages " << backing.huge_bytes << " of Rss " << backing.rss_bytes;
  EXPECT_LE(backing.huge_fraction, 1.0);
}

TEST(PageBuffer, BackingCoversOnlyItsOwnMapping) {
  // Two neighbours with different policies must not blur each other's measurement.
  auto small = PageBuffer::allocate(8 << 20, PagePolicy::small);
  auto huge = PageBuffer::allocate(8 << 20, PagePolicy::thp);
  EXPECT_EQ(small.backing().huge_bytes, 0u);
  EXPECT_LE(huge.backing().rss_bytes, 8u << 20);
}

TEST(PageBuffer, HugetlbWithoutReservedPagesNamesTheKnob) {
  std::ifstream in("/proc/sys/vm/nr_hugepages");
  long reserved = 0;
  in >> reserved;
  if (reserved > 0) GTEST_SKIP() << "this host has hugetlb pages reserved";
  try {
    PageBuffer::allocate(4 << 20, PagePolicy::hugetlb);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/sys/vm/nr_hugepages"), std::string::npos) << e.what();
  }
}

TEST(PageBuffer, PolicyNamesAndBadInput) {
  EXPECT_EQ(parse_page_policy("4k"), PagePolicy::small);
  EXPECT_EQ(parse_page_policy("thp"), PagePolicy::thp);
  EXPECT_EQ(parse_page_policy("hugetlb"), PagePolicy::hugetlb);
  EXPECT_EQ(page_policy_name(PagePolicy::thp), "thp");
  EXPECT_THROW(parse_page_policy("2m"), Error);
  EXPECT_THROW(PageBuffer::allocate(0, PagePolicy::small), Error);
}

TEST(PageBuffer, MovesOwnership) {
  auto a = PageBuffer::allocate(1 << 20, PagePolicy::small);
  std::byte* data = a.bytes().data();
  PageBuffer b = std::move(a);
  EXPECT_EQ(b.bytes().data(), data);
  EXPECT_TRUE(a.bytes().empty());
}

}  // namespace
}  // namespace wirezip::rdma
