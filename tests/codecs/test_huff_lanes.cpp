// The Huffman decoder's bulk loop (huff_lanes.hpp) on lanes whose streams differ many-fold in
// length: it runs the lanes in batches of 8, then of fewer as lanes run out of whole rounds, and
// must leave every lane exactly where decoding that lane alone, code by code, leaves it.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "coders/huff_kernels.hpp"
#include "coders/huff_pairs.hpp"
#include "coders/huff_tables.hpp"

namespace wirezip::codecs::huff {
namespace {

constexpr std::size_t kGuard = 16;
constexpr std::uint8_t kGuardByte = 0xa5;

// A complete code of 12 byte symbols: symbol s has length s + 1 for s < 10, symbols 10 and 11
// length 11, so a lane of symbol 0 takes 1 bit per symbol and one of the rarest 11.
struct GeometricCode {
  Codes codes{};
  std::array<DecodeEntry, kWindowMask + 1> table{};

  explicit GeometricCode(const HuffKernels& kernels) {
    Lengths lengths{};
    for (unsigned s = 0; s < 12; ++s) lengths[s] = static_cast<std::uint8_t>(s < 10 ? s + 1 : 11);
    canonical_codes(lengths, codes);
    build_decode_table(PairAlphabet{}, codes, table.data(), kernels.window_entries);  // a byte code: no pairs
  }
};

struct Lanes {
  std::vector<std::vector<std::uint8_t>> symbols;  // per lane
  std::vector<std::uint8_t> streams;               // every lane's stream, in lane order, nothing after
  std::array<std::size_t, kStreams + 1> starts{};  // lane s's stream: [starts[s], starts[s + 1])
  std::array<std::uint64_t, kStreams> bits{};      // the bits each lane's codes take
};

// Lane s holds counts[s] symbols below limits[s], each code by its own put and flush.
Lanes encode_lanes(const GeometricCode& code, const std::array<std::size_t, kStreams>& counts,
                   const std::array<unsigned, kStreams>& limits) {
  std::mt19937 rng(21);
  Lanes lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    std::vector<std::uint8_t>& lane = lanes.symbols.emplace_back(counts[s]);
    for (std::uint8_t& symbol : lane) symbol = static_cast<std::uint8_t>(rng() % limits[s]);
    std::vector<std::uint8_t> out(2 * lane.size() + 16);
    EncodeLane encoder{nullptr, out.data()};
    for (std::uint8_t symbol : lane) {
      encoder.put(code_bits(code.codes[symbol]), code_length(code.codes[symbol]));
      encoder.flush();
      lanes.bits[s] += code_length(code.codes[symbol]);
    }
    encoder.finish();
    lanes.starts[s] = lanes.streams.size();
    lanes.streams.insert(lanes.streams.end(), out.data(), encoder.out);
  }
  lanes.starts[kStreams] = lanes.streams.size();
  return lanes;
}

// Decodes every lane: the kernel's bulk (when `bulk`), then code by code to each lane's end, as
// huff.cpp finishes a block. Checks each lane's symbols, the bits it took and its guard bytes.
void decode_and_check(const HuffKernels& kernels, const GeometricCode& code, const Lanes& lanes, bool bulk) {
  std::vector<std::vector<std::uint8_t>> outs;
  std::array<DecodeLane, kStreams> decoders;
  for (std::size_t s = 0; s < kStreams; ++s) {
    std::vector<std::uint8_t>& out = outs.emplace_back(lanes.symbols[s].size() + kGuard, kGuardByte);
    const std::uint8_t* stream = lanes.streams.data() + lanes.starts[s];
    decoders[s] = {
        {stream, stream, lanes.streams.data() + lanes.starts[s + 1]}, out.data(), out.data() + out.size() - kGuard};
  }
  if (bulk) kernels.decode_bulk(decoders.data(), code.table.data());
  for (std::size_t s = 0; s < kStreams; ++s) {
    SCOPED_TRACE(::testing::Message() << "lane " << s << (bulk ? ", bulk then alone" : ", alone"));
    DecodeLane& lane = decoders[s];
    while (lane.out < lane.out_end) {
      lane.refill();
      ASSERT_TRUE(lane.decode_one(code.table.data()));
    }
    EXPECT_EQ(lane.consumed_bits(), lanes.bits[s]);
    const std::vector<std::uint8_t>& out = outs[s];
    EXPECT_TRUE(std::equal(lanes.symbols[s].begin(), lanes.symbols[s].end(), out.begin()));
    EXPECT_TRUE(std::all_of(out.end() - kGuard, out.end(), [](std::uint8_t b) { return b == kGuardByte; }));
  }
}

// Lane 0 codes 1 bit per symbol and lane 7 about 6, so lane 0 runs out of whole rounds while the
// others have thousands left: batches of 7, 6, ... lanes follow. The empty, tiny and odd lanes of
// the second case never join a batch or leave one early.
TEST(HuffLanes, BulkDecodeOfUnevenStreamsLeavesEachLaneAsDecodingItAlone) {
  const std::array<unsigned, kStreams> limits{1, 2, 3, 4, 6, 8, 10, 12};
  for (const auto& counts : {std::array<std::size_t, kStreams>{4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000},
                             std::array<std::size_t, kStreams>{0, 1, 7, 4001, 8, 9, 300, 5000}}) {
    for (SimdPath path : available_simd_paths()) {
      SCOPED_TRACE(::testing::Message() << simd_path_name(path) << ", lane 7 of " << counts[7] << " symbols");
      const HuffKernels kernels = huff_kernels(path);
      const GeometricCode code(kernels);
      const Lanes lanes = encode_lanes(code, counts, limits);
      decode_and_check(kernels, code, lanes, true);
      decode_and_check(kernels, code, lanes, false);
    }
  }
}

}  // namespace
}  // namespace wirezip::codecs::huff
