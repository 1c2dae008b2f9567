// bench_codec's chunk passes hold a codec to the size it says it restored: a codec that restores
// fewer bytes than a chunk has fails the case, naming the chunk and both sizes, in the in-memory
// pass and in a windowed case's check alike.
#include "codec_chunks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

// Copies in both directions; from its `short_from`-th decompression on it says it restored one
// byte less than it did (a codec bug bench_codec must catch, not time).
class ShortCodec final : public codecs::Codec {
 public:
  explicit ShortCodec(int short_from) : short_from_(short_from) {}
  const std::string& spec() const override { return spec_; }
  std::size_t element_width() const override { return 1; }
  std::size_t max_compressed_size(std::size_t original_bytes) const override { return original_bytes; }
  std::size_t compress(std::span<const std::byte> src, std::span<std::byte> dst) override {
    std::memcpy(dst.data(), src.data(), src.size());
    return src.size();
  }
  std::size_t decompress(std::span<const std::byte> src, std::span<std::byte> dst) override {
    std::memcpy(dst.data(), src.data(), src.size());
    return ++decompressions_ >= short_from_ ? src.size() - 1 : src.size();
  }

 private:
  const std::string spec_ = "short";
  const int short_from_;
  int decompressions_ = 0;
};

std::string error_of(const std::function<void()>& step) {
  try {
    step();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CodecChunks, AShortRestoreFailsTheInMemoryPassNamingTheChunkAndBothSizes) {
  const std::vector<std::byte> data(3 * 4096, std::byte{7});
  ThreadChunks mine;
  for (std::size_t i = 0; i < 3; ++i) mine.originals.push_back(std::span(data).subspan(i * 4096, 4096));
  mine.make_frames(3, 4096);
  mine.frame_sizes.assign(3, 0);
  std::vector<std::byte> restored(data.size());
  ShortCodec sound(1000), short_second(2);
  compress_all(sound, mine);
  EXPECT_NO_THROW(decompress_all(sound, mine, restored));
  EXPECT_EQ(error_of([&] { decompress_all(short_second, mine, restored); }),
            "chunk 1 of this thread: decompress restored 4095 bytes, the chunk has 4096");
}

TEST(CodecChunks, AShortRestoreFailsAWindowedCheckNamingTheChunkAndBothSizes) {
  const auto path = std::filesystem::temp_directory_path() / ("wirezip-codec-chunks-" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    const std::vector<char> bytes(4 * 4096, 3);  // 8192 bf16 values
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const datasets::DatasetReader reader("file:" + path.string());
  const WindowPlan plan = plan_windows(reader.size(), 4096, reader.size(), 1);
  ShortCodec sound(1000), short_second(2);
  WindowedChunks chunks(reader, plan, sound, 0, 1, false);
  chunks.load(0, sound);
  compress_all(sound, chunks.chunks());
  EXPECT_EQ(chunks.verify(sound), reader.size());
  EXPECT_EQ(error_of([&] { chunks.verify(short_second); }),
            "the chunk at byte 4096 of the data set: decompress restored 4095 bytes, the chunk has 4096");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace wirezip::harness
