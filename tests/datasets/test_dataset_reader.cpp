// Tests of DatasetReader: file data sets read by range (any offset, across tensors and files),
// shards named by a glob, and files that change under the reader.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "wirezip/datasets/bf16.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/dataset_reader.hpp"
#include "wirezip/datasets/safetensors.hpp"
#include "wirezip/util/error.hpp"

namespace wd = wirezip::datasets;
namespace fs = std::filesystem;

namespace {

std::string le(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

std::string safetensors(const std::string& header, const std::string& data) {
  return le(header.size(), 8) + header + data;
}

// One tensor of each convertible dtype, with values whose conversion rounds.
std::string mixed(const std::string& prefix, std::uint32_t seed) {
  std::string f32s, f16s, bf16s;
  for (std::uint32_t i = 0; i < 5; ++i) f32s += le(0x3f808000u + seed * 0x10001u + i * 0x8123u, 4);
  for (std::uint32_t i = 0; i < 3; ++i) f16s += le(0x3c01u + seed + i * 0x111u, 2);
  for (std::uint32_t i = 0; i < 4; ++i) bf16s += le(0x1234u + seed + i, 2);
  const std::string header = "{\"" + prefix + "h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[20,26]}," +
                             "\"" + prefix + "f\":{\"dtype\":\"F32\",\"shape\":[5],\"data_offsets\":[0,20]}," +
                             "\"" + prefix + "b\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[26,34]}}";
  return safetensors(header, f32s + f16s + bf16s);
}

class ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "wirezip-reader-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  fs::path dir_;
};

// The bf16 stream of safetensors files as the mapped-file path (read_safetensors_bf16) converts
// them, concatenated: built without DatasetReader, which load_dataset itself goes through.
std::vector<std::byte> mapped_selection(const std::vector<std::string>& paths) {
  std::vector<std::byte> out;
  for (const std::string& path : paths) {
    const std::vector<std::byte> bf16 = wd::read_safetensors_bf16(path, "").bf16;
    out.insert(out.end(), bf16.begin(), bf16.end());
  }
  return out;
}

// Every range of the reader's stream, the whole one included, equals the same range of `expected`.
void expect_every_range_matches(const std::string& spec, const std::vector<std::byte>& expected) {
  const wd::DatasetReader reader(spec);
  ASSERT_EQ(reader.size(), expected.size()) << spec;
  for (std::size_t at = 0; at <= expected.size(); ++at)
    for (std::size_t size = 0; at + size <= expected.size(); ++size) {
      std::vector<std::byte> got(size);
      reader.read(at, got);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.begin() + static_cast<std::ptrdiff_t>(at)))
          << spec << " at " << at << " size " << size;
    }
}

TEST_F(ReaderTest, EveryRangeOfAFileAndOfShardsEqualsTheWholeStream) {
  const std::string one = write("one.safetensors", mixed("", 0));
  expect_every_range_matches("safetensors:" + one, mapped_selection({one}));
  const std::string second = write("part-2.safetensors", mixed("y.", 7));
  const std::string first = write("part-1.safetensors", mixed("x.", 3));
  expect_every_range_matches("safetensors:" + (dir_ / "part-*.safetensors").string(),
                             mapped_selection({first, second}));
  const std::string f32("\x01\x80\x80\x3f\xff\xff\x7f\x7f\x00\x00\x00\x80", 12);
  std::vector<std::byte> converted(f32.size() / 2);
  wd::f32_le_to_bf16_le(std::as_bytes(std::span(f32)), converted);
  write("raw.f32", f32);
  expect_every_range_matches("file:" + (dir_ / "raw.f32").string() + ":dtype=f32", converted);
}

TEST_F(ReaderTest, ShardsAreOneStreamInSortedOrder) {
  const std::string second = write("part-2.safetensors", mixed("y.", 7));
  const std::string first = write("part-1.safetensors", mixed("x.", 3));
  const wd::Dataset a = wd::load_dataset("safetensors:" + first), b = wd::load_dataset("safetensors:" + second);
  const wd::Dataset both = wd::load_dataset("safetensors:" + (dir_ / "part-*.safetensors").string());
  wd::AlignedBytes expected = a.bytes;
  expected.insert(expected.end(), b.bytes.begin(), b.bytes.end());
  EXPECT_EQ(both.bytes, expected);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(both.bytes.data()) % 4096, 0u);  // file data sets too
  EXPECT_NE(both.description.find("(2 files): 6 of 6 tensors (F32 2, F16 2, BF16 2)"), std::string::npos)
      << both.description;
  // A selection may come from one shard only; none at all is an error naming the pattern.
  const wd::Dataset only_y = wd::load_dataset("safetensors:" + (dir_ / "part-*").string() + ":tensors=^y\\.");
  EXPECT_EQ(only_y.bytes, b.bytes);
  EXPECT_THROW(wd::load_dataset("safetensors:" + (dir_ / "part-*").string() + ":tensors=^z"), wirezip::Error);
}

TEST_F(ReaderTest, ABadShardIsNamedAndReadsPastTheEndAreRefused) {
  write("part-1.safetensors", mixed("x.", 3));
  const std::string bad = write("part-2.safetensors", le(1000, 8) + "{}");
  try {
    wd::DatasetReader reader("safetensors:" + (dir_ / "part-*.safetensors").string());
    ADD_FAILURE() << "a truncated shard was accepted";
  } catch (const wirezip::Error& error) {
    EXPECT_NE(std::string(error.what()).find(bad), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("runs past the end"), std::string::npos) << error.what();
  }
  const wd::DatasetReader reader("safetensors:" + (dir_ / "part-1.safetensors").string());
  std::vector<std::byte> two(2);
  EXPECT_THROW(reader.read(reader.size() - 1, two), wirezip::Error);
}

TEST_F(ReaderTest, TensorsOneAtATimeAreTheStreamInOrder) {
  write("part-2.safetensors", mixed("y.", 7));
  write("part-1.safetensors", mixed("x.", 3));
  const std::string shards = "safetensors:" + (dir_ / "part-*.safetensors").string();
  std::vector<std::string> names;
  std::vector<std::byte> joined;
  const wd::TensorWalk walk = wd::for_each_tensor(shards, [&](const wd::StreamTensor& t) {
    names.push_back(t.path.substr(t.path.rfind('/') + 1) + ":" + std::string(t.entry.name));
    joined.insert(joined.end(), t.bf16.begin(), t.bf16.end());
  });
  // File order within each shard (by data offset), shards sorted: the reader's stream, byte for byte.
  EXPECT_EQ(names, (std::vector<std::string>{"part-1.safetensors:x.f", "part-1.safetensors:x.h", "part-1.safetensors:x.b",
                                             "part-2.safetensors:y.f", "part-2.safetensors:y.h", "part-2.safetensors:y.b"}));
  EXPECT_TRUE(std::ranges::equal(joined, wd::load_dataset(shards).bytes));
  EXPECT_EQ(walk.files, 2u);
  EXPECT_EQ(walk.selected, 6u);
  EXPECT_EQ(walk.total, 6u);
  // A regex one shard does not match selects from the other; one no shard matches is an error.
  names.clear();
  wd::for_each_tensor(shards + ":tensors=^y\\.h", [&](const wd::StreamTensor& t) { names.emplace_back(t.entry.name); });
  EXPECT_EQ(names, std::vector<std::string>{"y.h"});
  EXPECT_THROW(wd::for_each_tensor(shards + ":tensors=^z", [](const wd::StreamTensor&) {}), wirezip::Error);
  EXPECT_THROW(wd::for_each_tensor("file:" + (dir_ / "part-1.safetensors").string(), [](const wd::StreamTensor&) {}),
               wirezip::Error);
}

TEST_F(ReaderTest, TensorsInPiecesAreTheStreamAndEachPieceKnowsItsPlace) {
  write("part-1.safetensors", mixed("x.", 3));
  const std::string spec = "safetensors:" + (dir_ / "part-1.safetensors").string();
  std::vector<std::byte> joined;
  std::vector<std::uint64_t> offsets;
  std::uint64_t tensor_bytes = 0, seen_in_tensor = 0;
  wd::for_each_tensor(
      spec,
      [&](const wd::StreamTensor& t) {
        if (t.offset == 0) tensor_bytes = t.bf16_bytes, seen_in_tensor = 0;
        EXPECT_EQ(t.offset, seen_in_tensor) << t.entry.name;  // pieces in order, none skipped
        EXPECT_EQ(t.bf16_bytes, tensor_bytes) << t.entry.name;
        EXPECT_TRUE(t.bf16.size() == 6 || t.offset + t.bf16.size() == t.bf16_bytes)
            << t.entry.name;  // only the last is short
        seen_in_tensor += t.bf16.size();
        offsets.push_back(t.offset);
        joined.insert(joined.end(), t.bf16.begin(), t.bf16.end());
      },
      6);
  // f32 and f16 converted piece by piece, as a whole
  EXPECT_TRUE(std::ranges::equal(joined, wd::load_dataset(spec).bytes));
  EXPECT_GT(offsets.size(), 3u);
  EXPECT_THROW(wd::for_each_tensor(
                   spec, [](const wd::StreamTensor&) {}, 5),
               wirezip::Error);  // odd
  EXPECT_THROW(wd::for_each_tensor(
                   spec, [](const wd::StreamTensor&) {}, 0),
               wirezip::Error);
}

TEST_F(ReaderTest, AFileThatShrinksWhileOpenIsAnErrorNotGarbage) {
  const std::string path = write("raw.bf16", std::string(64, 'x'));
  const wd::DatasetReader reader("file:" + path);
  fs::resize_file(path, 16);
  std::vector<std::byte> all(64);
  try {
    reader.read(0, all);
    ADD_FAILURE() << "a short read was accepted";
  } catch (const wirezip::Error& error) {
    EXPECT_NE(std::string(error.what()).find("shrank"), std::string::npos) << error.what();
  }
}

}  // namespace
