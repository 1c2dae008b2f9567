// wirezip's order-0 tANS coder (`ans`): near the order-0 bound where Huffman's whole bits are not
// (ans_tables.hpp says why), at a table lookup per symbol. Counts come from a sample of the plane
// (ans_model.hpp: plane_counts); every byte value inside the plane's range gets a frequency, so
// every symbol present has one.
//
// Coded plane: format byte | table log | 32-byte bitmap of the symbols with a frequency | u16 LE
// frequency of each, in symbol order | per stream a pad byte | sizes of streams 0-2 (u32 LE) |
// 4 streams (ans_lanes.hpp).
#include "coders/ans_lanes.hpp"
#include "coders/ans_model.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace ans;

constexpr unsigned kTableLog = 12;

// One table for every symbol.
struct Order0 {
  const EncodeTable* encode_table;
  const DecodeEntry* decode_table;
  const EncodeTable& encode(std::size_t) const { return *encode_table; }
  const DecodeEntry* decode(std::size_t) const { return decode_table; }
};
enum Format : std::uint8_t { kEmpty = 0, kSingleSymbol = 1, kAns = 2, kExponentContext = 3 };  // 3: ans_context.cpp

WZ_ANS_HOT std::array<EncodedStream, kStreams> encode_order0(const std::uint8_t* src, std::size_t n, const EncodeTable& table,
                                                       std::array<std::vector<std::uint8_t>, kStreams>& scratch) {
  return encode_streams<0>(src, n, kTableLog, Order0{&table, nullptr}, scratch);
}

WZ_ANS_HOT void decode_order0(const std::array<EncodedStream, kStreams>& streams, unsigned table_log, std::uint8_t* out,
                          std::size_t n, const DecodeEntry* table) {
  decode_streams<0>(streams, table_log, out, n, Order0{nullptr, table});
}

class AnsCoder final : public PlaneCoder {
 public:
  CoderId id() const override { return CoderId::ans; }
  std::size_t bound(std::size_t n) const override {
    return 2 + kMaxFreqsSize + kStreamsHeaderSize + (n * kMaxTableLog + 7) / 8 + kStreams * 8;
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  std::array<std::vector<std::uint8_t>, kStreams> scratch_;
  EncodeTable encode_table_;
  std::vector<DecodeEntry> decode_table_;
};

std::size_t AnsCoder::encode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size();
  if (n == 0) {
    dst[0] = kEmpty;
    return 1;
  }
  Counts counts;
  if (!plane_counts(src, n, counts)) {
    dst[0] = kSingleSymbol;
    dst[1] = src[0];
    return 2;
  }
  const Freqs freqs = normalize(counts, kTableLog);
  build_encode_table(freqs, kTableLog, encode_table_);
  dst[0] = kAns;
  dst[1] = kTableLog;
  std::uint8_t* out = dst + 2 + write_freqs(freqs, dst + 2);
  const auto streams = encode_order0(src, n, encode_table_, scratch_);
  return static_cast<std::size_t>(write_streams(streams, out) - dst);
}

void AnsCoder::decode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = dst_bytes.size(), size = src_bytes.size();
  if (size == 0) fail("corrupt frame: empty ans plane");
  if (src[0] == kEmpty && size == 1 && n == 0) return;
  if (src[0] == kSingleSymbol && size == 2 && n > 0) return void(std::memset(dst, src[1], n));
  if (src[0] == kExponentContext)
    fail("corrupt frame: this ans plane is coded given the exponent plane; decode it with "
         "bytegroup:split=exponent+ans:context=exponent");
  if (src[0] != kAns || size < 2 || n < 2)
    fail("corrupt frame: ans plane header (format {}, {} bytes for {} symbols)", src[0], size, n);
  const unsigned table_log = src[1];
  const std::uint8_t* const end = src + size;
  Freqs freqs;
  const std::uint8_t* in = read_freqs(src + 2, end, freqs);
  check_freqs(freqs, table_log);
  decode_table_.resize(std::size_t{1} << table_log);
  build_decode_table(freqs, table_log, decode_table_.data());
  const auto streams = read_streams(in, end);
  decode_order0(streams, table_log, dst, n, decode_table_.data());
}

}  // namespace

std::unique_ptr<PlaneCoder> make_ans_coder() { return std::make_unique<AnsCoder>(); }

}  // namespace wirezip::codecs
