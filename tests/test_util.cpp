#include <gtest/gtest.h>

#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip {
namespace {

TEST(Size, ParsesUnits) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("64MiB"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("1MB"), 1000000u);
  EXPECT_EQ(parse_size("7B"), 7u);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(Size, RejectsJunkWithOneClearLine) {
  for (const char* bad : {"", "KiB", "-1", "1.5MiB", "12XB", "1MiB ", "99999999999999999999", "20000000000GiB"}) {
    try {
      parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad size"), std::string::npos) << e.what();
    }
  }
}

TEST(Size, ListsAndFormats) {
  EXPECT_EQ(parse_size_list("64KiB,1MiB,4MiB"), (std::vector<std::uint64_t>{65536, 1 << 20, 4 << 20}));
  EXPECT_THROW(parse_size_list("1MiB,,2MiB"), Error);
  EXPECT_EQ(format_size(1 << 20), "1MiB");
  EXPECT_EQ(format_size(65536), "64KiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(0), "0B");
}

TEST(Spec, SplitsNamePositionalAndOptions) {
  SpecPart part = parse_spec_part("synthetic:weights:size=64MiB:seed=1");
  EXPECT_EQ(part.name, "synthetic");
  EXPECT_EQ(part.positional, std::vector<std::string>{"weights"});
  EXPECT_EQ(part.take_size("size", 0), 64u << 20);
  EXPECT_EQ(part.take_int("seed", 0, 0, 100), 1);
  EXPECT_NO_THROW(part.check_consumed("test"));
}

TEST(Spec, RejectsUnknownOptionsAndBadValues) {
  SpecPart part = parse_spec_part("zstd:level=x:speed=3");
  EXPECT_THROW(part.take_int("level", 1, -5, 22), Error);
  EXPECT_THROW(part.check_consumed("test"), Error);
  EXPECT_THROW(parse_spec_part("zstd::level=1"), Error);
  EXPECT_THROW(parse_spec_part("zstd:=1"), Error);
  SpecPart range = parse_spec_part("lz4:accel=0");
  EXPECT_THROW(range.take_int("accel", 1, 1, 10), Error);
}

}  // namespace
}  // namespace wirezip
