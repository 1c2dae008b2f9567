// tANS streams (coders/ans_lanes.hpp) whose every step takes the longest code: the hot loop's
// batches must still read only inside each stream. The streams are built bit by bit here, so the
// decoder meets codes no encoder of real data writes; under the sanitizer build a read past the
// last stream's end is an error, and in every build the symbols must come back exact.
#include <gtest/gtest.h>

#include <vector>

#include "coders/ans_lanes.hpp"
#include "coders/ans_tables.hpp"

namespace {

using namespace wirezip::codecs::ans;

// Appends `count` bits of `value`, lowest first (the streams' order).
struct BitAppender {
  std::vector<std::uint8_t> bytes;
  std::size_t bits = 0;
  void put(std::uint32_t value, unsigned count) {
    for (unsigned k = 0; k < count; ++k, ++bits) {
      if (bits % 8 == 0) bytes.push_back(0);
      bytes.back() |= static_cast<std::uint8_t>(((value >> k) & 1) << (bits % 8));
    }
  }
};

struct OneTable {
  const DecodeEntry* table;
  const DecodeEntry* decode(std::size_t) const { return table; }
};

// The exponent-context coder's shape: 10-bit tables, 3 raw bits after each symbol's code.
constexpr unsigned kLog = 10, kRaw = 3;

TEST(AnsLanes, LongestCodesEveryStepStayInsideTheStreams) {
  // 31 symbols of frequency 1 (10 bits each, and the next state is those 10 bits as they are) and
  // one that takes the rest of the table.
  Freqs freqs{};
  for (unsigned s = 0; s < 31; ++s) freqs[s] = 1;
  freqs[31] = (1u << kLog) - 31;
  std::vector<DecodeEntry> table(std::size_t{1} << kLog);
  build_decode_table(freqs, kLog, table.data());
  std::vector<std::uint32_t> longest;  // the states of the frequency-1 symbols
  for (std::uint32_t state = 0; state < table.size(); ++state)
    if (table[state].bits == kLog) longest.push_back(state);
  ASSERT_EQ(longest.size(), 31u);

  constexpr std::size_t kPerStream = 4096;
  constexpr std::size_t n = kStreams * kPerStream;
  std::vector<std::uint8_t> expected(n);
  std::vector<BitAppender> built(kStreams);
  for (std::size_t s = 0; s < kStreams; ++s) {
    // State i's value (i >= 2) is the field written with symbol i - 2; the last two fields are 0,
    // where the encoder's states start.
    std::vector<std::uint32_t> states(kPerStream + 2);
    for (std::size_t i = 0; i < kPerStream; ++i) states[i] = longest[(7 * i + 3 * s) % longest.size()];
    states[kPerStream] = states[kPerStream + 1] = 0;
    const std::size_t total = 2 * kLog + kPerStream * (kLog + kRaw);
    BitAppender& out = built[s];
    out.put(0, static_cast<unsigned>((8 - total % 8) % 8));  // the pad
    out.put(states[0], kLog), out.put(states[1], kLog);
    for (std::size_t i = 0; i < kPerStream; ++i) {
      const std::uint32_t raw = static_cast<std::uint32_t>(i % 8);
      out.put(states[i + 2], kLog);
      out.put(raw, kRaw);
      expected[s * kPerStream + i] = static_cast<std::uint8_t>(table[states[i]].symbol << kRaw | raw);
    }
  }
  // Back to back in one buffer of exactly their size, as read_streams hands them over.
  std::vector<std::uint8_t> buffer;
  for (const BitAppender& b : built) buffer.insert(buffer.end(), b.bytes.begin(), b.bytes.end());
  std::array<EncodedStream, kStreams> streams;
  const std::uint8_t* at = buffer.data();
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t total = 2 * kLog + kPerStream * (kLog + kRaw);
    streams[s] = {at, built[s].bytes.size(), static_cast<unsigned>((8 - total % 8) % 8)};
    at += built[s].bytes.size();
  }
  std::vector<std::uint8_t> out(n);
  decode_streams<kRaw>(streams, kLog, out.data(), n, OneTable{table.data()});
  EXPECT_EQ(out, expected);
}

}  // namespace
