// Tests of the safetensors and raw-file readers, on small files written into a temporary directory.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/mapped_file.hpp"
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
std::string f32(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  return le(bits, 4);
}
std::string u16(std::uint16_t bits) { return le(bits, 2); }

// A safetensors file: length, JSON header padded with spaces to 8 bytes (as writers do), data.
std::string safetensors(std::string header, const std::string& data) {
  while (header.size() % 8 != 0) header += ' ';
  return le(header.size(), 8) + header + data;
}

std::vector<std::uint16_t> elements(std::span<const std::byte> bytes) {
  std::vector<std::uint16_t> out;
  for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
    out.push_back(
        static_cast<std::uint16_t>(static_cast<unsigned>(bytes[i]) | static_cast<unsigned>(bytes[i + 1]) << 8));
  return out;
}

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "wirezip-datasets-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Expects loading `spec` to throw wirezip::Error whose message contains every one of `parts`.
  static void expect_error(const std::string& spec, std::initializer_list<std::string> parts) {
    try {
      wd::load_dataset(spec);
      ADD_FAILURE() << "no error for " << spec;
    } catch (const wirezip::Error& error) {
      for (const std::string& part : parts)
        EXPECT_NE(std::string(error.what()).find(part), std::string::npos)
            << "'" << part << "' not in: " << error.what();
    }
  }

  // A header with one tensor entry, over `data`, must fail to load with `message` in the error.
  void expect_bad_tensor(const std::string& entry, const std::string& data, const std::string& message) {
    std::string path = write("bad.safetensors", safetensors("{\"w\":" + entry + "}", data));
    expect_error("safetensors:" + path, {path, message});
  }

  // Three tensors, stored in the order c, a, b (not the JSON key order), plus metadata.
  std::string sample() {
    std::string header = R"({"__metadata__":{"format":"pt"},)"
                         R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[4,20]},)"
                         R"("b":{"dtype":"F16","shape":[3],"data_offsets":[20,26]},)"
                         R"("c":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";
    std::string data = u16(0x1234) + u16(0xabcd) +                                       // c
                       f32(1.0f) + f32(-2.5f) + le(0x3f808000, 4) + le(0x3f818000, 4) +  // a
                       u16(0x3c00) + u16(0xc000) + u16(0x3555);                          // b
    return write("sample.safetensors", safetensors(header, data));
  }

  fs::path dir_;
};

const std::vector<std::uint16_t> kC = {0x1234, 0xabcd};
const std::vector<std::uint16_t> kA = {0x3f80, 0xc020, 0x3f80, 0x3f82};  // ties to even
const std::vector<std::uint16_t> kB = {0x3f80, 0xc000, 0x3eab};

std::vector<std::uint16_t> concat(std::initializer_list<std::vector<std::uint16_t>> parts) {
  std::vector<std::uint16_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

}  // namespace

TEST_F(FilesTest, HeaderIsParsedInFileOrder) {
  wd::MappedFile file(sample());
  wd::SafetensorsHeader header = wd::parse_safetensors_header(file.bytes());
  ASSERT_EQ(header.tensors.size(), 3u);  // __metadata__ is not a tensor
  EXPECT_EQ(header.tensors[0].name, "c");
  EXPECT_EQ(header.tensors[1].name, "a");
  EXPECT_EQ(header.tensors[1].dtype, "F32");
  EXPECT_EQ(std::vector(header.tensors[1].shape.begin(), header.tensors[1].shape.end()),
            (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(header.tensors[2].name, "b");
  EXPECT_EQ(header.data_start + 26, file.bytes().size());
}

TEST_F(FilesTest, AllTensorsConvertedAndConcatenatedInFileOrder) {
  std::string path = sample();
  wd::Dataset dataset = wd::load_dataset("safetensors:" + path);
  EXPECT_EQ(elements(dataset.bytes), concat({kC, kA, kB}));
  EXPECT_EQ(dataset.description,
            "safetensors " + path + ": 3 of 3 tensors (F32 1, F16 1, BF16 1) as bf16, 9 bf16 elements");
}

TEST_F(FilesTest, RegexSelectsTensors) {
  std::string path = sample();
  EXPECT_EQ(elements(wd::load_dataset("safetensors:" + path + ":tensors=^a$").bytes), kA);
  EXPECT_EQ(elements(wd::load_dataset("safetensors:" + path + ":tensors=b|a").bytes), concat({kA, kB}));
  EXPECT_EQ(elements(wd::load_dataset("safetensors:" + path + ":tensors=[c:=]").bytes), kC);  // ':' '=' in the regex
  wd::Dataset only_b = wd::load_dataset("safetensors:" + path + ":tensors=b");
  EXPECT_NE(only_b.description.find("1 of 3 tensors matching 'b'"), std::string::npos) << only_b.description;
  expect_error("safetensors:" + path + ":tensors=^z", {"matches none", "first: c, a, b"});
  expect_error("safetensors:" + path + ":tensors=(", {"bad tensor regex '('"});
  expect_error("safetensors:" + path + ":tensors=", {"tensors= needs a regex"});
  expect_error("safetensors:" + path + ":tensor=a", {"unknown option 'tensor'", "tensors=REGEX"});
}

TEST_F(FilesTest, UnsupportedDtypeOnlyMattersWhenSelected) {
  std::string header = R"({"i":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},)"
                       R"("f":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})";
  std::string path = write("mixed.safetensors", safetensors(header, "\x01\x02" + f32(1.0f)));
  EXPECT_EQ(elements(wd::load_dataset("safetensors:" + path + ":tensors=^f$").bytes),
            std::vector<std::uint16_t>{0x3f80});
  expect_error("safetensors:" + path, {"tensor 'i' has dtype I8", "not supported", "F32, F16, BF16"});
}

TEST_F(FilesTest, EmptyTensorsAreAllowedButNotAnEmptySelection) {
  std::string header = R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]},)"
                       R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  std::string path = write("empty.safetensors", safetensors(header, f32(-2.5f)));
  EXPECT_EQ(elements(wd::load_dataset("safetensors:" + path).bytes), std::vector<std::uint16_t>{0xc020});
  expect_error("safetensors:" + path + ":tensors=e", {"hold no elements"});
}

TEST_F(FilesTest, MalformedHeadersGiveClearErrors) {
  std::string path = write("short.safetensors", std::string("\x05\x00\x00", 3));
  expect_error("safetensors:" + path, {path, "too short"});
  path = write("past.safetensors", le(1000, 8) + "{\"a\":1}");
  expect_error("safetensors:" + path, {"header length 1000 runs past the end"});
  path = write("truncated.safetensors",
               safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "").substr(0, 30));
  expect_error("safetensors:" + path, {"runs past the end", "truncated?"});
  path = write("absurd.safetensors", le(1ull << 62, 8) + "{}");
  expect_error("safetensors:" + path, {"over the format's limit"});
  path = write("json.safetensors", safetensors("{not json", ""));
  expect_error("safetensors:" + path, {"not valid JSON"});
  path = write("array.safetensors", safetensors("[1, 2]", ""));
  expect_error("safetensors:" + path, {"not a JSON object"});
  path = write("nothing.safetensors", "");
  expect_error("safetensors:" + path, {"0 bytes is too short"});
}

TEST_F(FilesTest, MalformedEntriesGiveClearErrors) {
  std::string eight(8, '\0');
  expect_bad_tensor(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})", eight,
                    "past the end of the 8-byte data section");
  expect_bad_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[8,4]})", eight, "end before begin");
  expect_bad_tensor(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})", eight,
                    "hold 8 bytes but dtype F32 x shape [3] needs 12");
  expect_bad_tensor(R"({"dtype":"F16","shape":[4294967296,4294967296],"data_offsets":[0,8]})", eight, "more than 2^64");
  expect_bad_tensor(R"({"dtype":"I8","shape":[8],"data_offsets":[0,8]})", eight, "dtype I8, which is not supported");
  expect_bad_tensor(R"({"dtype":"FOO","shape":[8],"data_offsets":[0,8]})", eight, "unknown dtype 'FOO'");
  // The data set's own checks escape names as the header's do: no terminal escape reaches stderr.
  const std::string hostile =
      write("hostile.safetensors",
            safetensors(R"({"\u001b]0;x\u0007":{"dtype":"I8","shape":[8],"data_offsets":[0,8]}})", eight));
  expect_error("safetensors:" + hostile, {"tensor '\\x1b]0;x\\x07' has dtype I8"});
  expect_bad_tensor(R"({"shape":[8],"data_offsets":[0,8]})", eight, "tensor 'w': missing \"dtype\"");
  expect_bad_tensor(R"({"dtype":7,"shape":[8],"data_offsets":[0,8]})", eight, "\"dtype\" must be a string");
  expect_bad_tensor(R"({"dtype":"BF16","shape":[-4],"data_offsets":[0,8]})", eight, "non-negative integers, found -4");
  expect_bad_tensor(R"({"dtype":"BF16","shape":4,"data_offsets":[0,8]})", eight, "\"shape\" must be an array");
  expect_bad_tensor(R"({"dtype":"BF16","shape":[4],"data_offsets":[8]})", eight, "must be [begin, end]");
  expect_bad_tensor(R"({"dtype":"BF16","shape":[4]})", eight, "missing \"data_offsets\"");
  expect_bad_tensor("5", eight, "entry is not a JSON object");
}

TEST_F(FilesTest, MissingFileNamesPathAndReason) {
  std::string path = (dir_ / "absent.safetensors").string();
  expect_error("safetensors:" + path, {path, "No such file or directory"});
  expect_error("file:" + path, {path, "No such file or directory"});
  expect_error("safetensors:" + dir_.string(), {"not a regular file"});
  EXPECT_THROW(wd::MappedFile{path}, wirezip::Error);
}

// Opening a FIFO for reading waits for a writer: the readers open with O_NONBLOCK and refuse
// anything but a regular file. Before, these calls never returned.
TEST_F(FilesTest, FifosAndDevicesAreRefusedWithoutWaiting) {
  const std::string fifo = (dir_ / "model.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error("safetensors:" + fifo, {fifo, "is a FIFO, not a regular file"});
  expect_error("file:" + fifo, {fifo, "is a FIFO, not a regular file"});
  expect_error("file:/dev/null", {"'/dev/null' is a character device, not a regular file"});
  EXPECT_THROW(wd::MappedFile{fifo}, wirezip::Error);
}

TEST_F(FilesTest, RawFiles) {
  std::string path = write("raw.bin", u16(0x3f80) + u16(0xc020) + u16(0x0001));
  wd::Dataset dataset = wd::load_dataset("file:" + path);
  EXPECT_EQ(elements(dataset.bytes), (std::vector<std::uint16_t>{0x3f80, 0xc020, 0x0001}));
  EXPECT_EQ(dataset.description, "raw bf16 file " + path + ", 3 bf16 elements");
  EXPECT_EQ(wd::load_dataset("file:" + path + ":dtype=bf16").bytes, dataset.bytes);

  path = write("raw.f32", f32(1.0f) + le(0x3f818000, 4) + f32(-2.5f));
  EXPECT_EQ(elements(wd::load_dataset("file:" + path + ":dtype=f32").bytes),
            (std::vector<std::uint16_t>{0x3f80, 0x3f82, 0xc020}));
  expect_error("file:" + write("odd.bin", "abc") + ":dtype=bf16", {"3 bytes, not a whole number of 2-byte"});
  expect_error("file:" + write("six.f32", "abcdef") + ":dtype=f32", {"6 bytes, not a whole number of 4-byte"});
  expect_error("file:" + write("empty.bin", ""), {"is empty"});
  expect_error("file:" + path + ":dtype=f64", {"unknown dtype 'f64'", "bf16, f32"});
  expect_error("file:" + path + ":endian=big", {"unknown option 'endian'"});
}

TEST_F(FilesTest, MappedFileOwnsItsMapping) {
  std::string path = write("m.bin", "hello");
  wd::MappedFile a(path);
  ASSERT_EQ(a.bytes().size(), 5u);
  wd::MappedFile b(std::move(a));
  EXPECT_EQ(b.bytes().size(), 5u);
  EXPECT_EQ(static_cast<char>(b.bytes()[4]), 'o');
  EXPECT_TRUE(a.bytes().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  wd::MappedFile c(write("e.bin", ""));
  EXPECT_TRUE(c.bytes().empty());
  c = std::move(b);
  EXPECT_EQ(c.path(), path);
  EXPECT_EQ(c.bytes().size(), 5u);
}

// Hostile safetensors files, as a peer or a downloaded checkpoint could hand them over: each must
// end in an error naming what is wrong, never a crash, an exhausted stack or memory out of
// proportion to the file.
namespace {

std::span<const std::byte> bytes_of(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

// The message select_safetensors_bf16 throws for `file`, or "" when it throws none.
std::string selection_error(const std::string& file, const std::string& regex = "") {
  try {
    wd::select_safetensors_bf16(bytes_of(file), regex);
  } catch (const wirezip::Error& error) {
    return error.what();
  }
  return "";
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

constexpr std::size_t kAttackDepth = 200'000;  // deep enough to exhaust any recursive walk's stack

}  // namespace

TEST(SafetensorsAttacks, DeepNestingIsRefusedNamingTheField) {
  std::string deep_shape = R"({"w":{"dtype":"F32","shape":)" + nested(kAttackDepth) + R"(,"data_offsets":[0,4]}})";
  std::string message = selection_error(safetensors(deep_shape, f32(1.0f)));
  EXPECT_EQ(message, "tensor 'w': \"shape\" must hold non-negative integers, found array");

  std::string deep_dtype = R"({"w":{"dtype":)" + nested(kAttackDepth) + R"(,"shape":[1],"data_offsets":[0,4]}})";
  EXPECT_EQ(selection_error(safetensors(deep_dtype, f32(1.0f))), "tensor 'w': \"dtype\" must be a string, found array");

  // Values the reader skips may nest, but only so deep.
  std::string deep_metadata = R"({"__metadata__":)" + nested(kAttackDepth) + "}";
  EXPECT_EQ(selection_error(safetensors(deep_metadata, "")),
            "\"__metadata__\" nests deeper than 16 levels (the header needs 3)");
  std::string deep_extra = R"({"w":{"extra":{"x":)" + nested(kAttackDepth) + "}}}";
  EXPECT_EQ(selection_error(safetensors(deep_extra, "")),
            "tensor 'w': \"extra\" nests deeper than 16 levels (the header needs 3)");
  std::string deep_root = nested(kAttackDepth);
  EXPECT_EQ(selection_error(safetensors(deep_root, "")), "header is not a JSON object but array");

  // Nesting within the limit in a skipped value is fine.
  std::string shallow = R"({"__metadata__":{"a":[[[1]]]},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":{}}})";
  EXPECT_EQ(selection_error(safetensors(shallow, f32(1.0f))), "");
}

TEST(SafetensorsAttacks, ErrorsNeverEchoUntrustedJson) {
  std::string long_string = "\"" + std::string(1'000'000, 'x') + "\"";
  std::string message = selection_error(safetensors(R"({"w":{"dtype":)" + long_string + "}}", ""));
  EXPECT_EQ(message,
            "tensor 'w': unknown dtype 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1000000 "
            "bytes)'");
  message = selection_error(safetensors(R"({"w":{"shape":[)" + long_string + "]}}", ""));
  EXPECT_EQ(message, "tensor 'w': \"shape\" must hold non-negative integers, found string");
  message = selection_error(safetensors("{\"w\":" + long_string + "}", ""));
  EXPECT_EQ(message, "tensor 'w': entry is not a JSON object but string");
  // A syntax error quotes the last token: a million-byte string broken by a control character.
  message = selection_error(safetensors("{\"w\":\"" + std::string(1'000'000, 'y') + "\x01\"}", ""));
  EXPECT_NE(message.find("header is not valid JSON at byte"), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  // Names are escaped: a terminal escape sequence in a name arrives as text.
  message =
      selection_error(safetensors(R"({"\u001b[31mred":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", f32(1)));
  EXPECT_NE(message.find("tensor '\\x1b[31mred': data_offsets [0, 4] hold 4 bytes"), std::string::npos) << message;
}

TEST(SafetensorsAttacks, LongNameWithBacktrackingRegexIsMatchedInLinearTime) {
  // std::regex overflowed its stack on '^(a|b)*$' over a 200,000-character name; RE2 does not recurse.
  std::string name(kAttackDepth, 'a');
  for (std::size_t i = 1; i < name.size(); i += 2) name[i] = 'b';
  std::string file = safetensors("{\"" + name + R"(":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}})", u16(0x3f80));
  wd::SafetensorsSelection selection = wd::select_safetensors_bf16(bytes_of(file), "^(a|b)*$");
  ASSERT_EQ(selection.selected.size(), 1u);
  EXPECT_EQ(selection.header.tensors[selection.selected[0]].name, name);
  EXPECT_EQ(elements(selection.bf16), std::vector<std::uint16_t>{0x3f80});

  std::string no_match = selection_error(file, "^(a|b)*c$");
  EXPECT_NE(no_match.find("tensor regex '^(a|b)*c$' matches none of its 1 tensors (first: abab"), std::string::npos);
  EXPECT_NE(no_match.find("... (200000 bytes))"), std::string::npos) << no_match.substr(0, 300);
  EXPECT_EQ(selection_error(file, "(?<=a)b"), "bad tensor regex '(?<=a)b': invalid perl operator: (?<");
}

TEST(SafetensorsAttacks, OverlappingRangesAreRefusedNamingBothTensors) {
  std::string same = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                     R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_EQ(selection_error(safetensors(same, std::string(8, '\0'))),
            "tensors 'a' (data_offsets [0, 8]) and 'b' (data_offsets [0, 8]) overlap");
  std::string partial = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
                        R"("y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_EQ(selection_error(safetensors(partial, std::string(12, '\0'))),
            "tensors 'y' (data_offsets [0, 8]) and 'x' (data_offsets [4, 12]) overlap");
  std::string inside = R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                       R"("y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NE(selection_error(safetensors(inside, std::string(8, '\0'))).find("overlap"), std::string::npos);

  // The attack: 2000 tensors over the same 1 MiB of a 1.2 MB file once asked for 2 GB.
  std::string header = "{";
  for (int i = 0; i < 2000; ++i)
    header += fmt::format(R"({}"t{}":{{"dtype":"BF16","shape":[524288],"data_offsets":[0,1048576]}})", i ? "," : "", i);
  header += "}";
  std::string message = selection_error(safetensors(header, std::string(1 << 20, '\x01')));
  EXPECT_EQ(message, "tensors 't0' (data_offsets [0, 1048576]) and 't1' (data_offsets [0, 1048576]) overlap");
}

TEST(SafetensorsAttacks, SizeArithmeticIsOverflowChecked) {
  // 2^16 x 2^16 x 2^16 x 2^16 x 4 bytes wraps to 0 in 64 bits: it must not pass as an empty tensor.
  std::string wraps = R"({"w":{"dtype":"F32","shape":[65536,65536,65536,65536],"data_offsets":[0,0]}})";
  EXPECT_EQ(selection_error(safetensors(wraps, "")),
            "tensor 'w': data_offsets [0, 0] hold 0 bytes but dtype F32 x shape [65536, 65536, 65536, 65536] needs "
            "more than 2^64");
  std::string many_dims = R"({"w":{"dtype":"U8","shape":[)";
  for (int i = 0; i < 100; ++i) many_dims += i ? ",2" : "2";
  many_dims += R"(],"data_offsets":[0,8]}})";
  EXPECT_EQ(selection_error(safetensors(many_dims, std::string(8, '\0'))),
            "tensor 'w': data_offsets [0, 8] hold 8 bytes but dtype U8 x shape [2, 2, 2, 2, 2, 2, 2, 2, ...] needs "
            "more than 2^64");
  std::string huge_end =
      R"({"w":{"dtype":"U8","shape":[8],"data_offsets":[18446744073709551608,18446744073709551615]}})";
  EXPECT_NE(selection_error(safetensors(huge_end, "")).find("past the end of the 0-byte data section"),
            std::string::npos);
  std::string too_big = R"({"w":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,0]}})";
  EXPECT_EQ(selection_error(safetensors(too_big, "")),
            "tensor 'w': \"shape\" must hold non-negative integers, found 1.8446744073709552e+19");
}

TEST(SafetensorsAttacks, NamesAndFieldsGivenTwiceAreRefused) {
  std::string entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  EXPECT_EQ(selection_error(safetensors("{\"w\":" + entry + ",\"w\":" + entry + "}", f32(1))),
            "tensor 'w' appears twice in the header");
  EXPECT_EQ(selection_error(safetensors(R"({"w":{"dtype":"F32","dtype":"F16"}})", "")),
            "tensor 'w': \"dtype\" appears twice");
  EXPECT_EQ(selection_error(safetensors(R"({"w":{"data_offsets":[0,4,8]}})", "")),
            "tensor 'w': \"data_offsets\" must be [begin, end], found more than 2 numbers");
}
