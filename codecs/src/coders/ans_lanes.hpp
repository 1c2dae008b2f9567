#pragma once
// Internal: a plane of symbols as four tANS streams (ans_streams.hpp), for any model that says
// which table codes symbol i: one table (ans.cpp), or one per exponent (ans_context.cpp).
// Stream s codes symbols [s*q, (s+1)*q), q = n/4; the last takes the rest; in each stream, even
// positions use state A and odd ones state B. The hot loops take two streams at a time, so their
// states, bit offsets and pointers stay in registers (perf showed arrays of states spilled to the
// stack costing 2x), and check bounds once per batch of rounds, not per symbol.
#include <algorithm>
#include <array>
#include <vector>

#include "coders/ans_streams.hpp"
#include "coders/hot_clones.hpp"

// The ans coders' hot entry points, cloned per target (hot_clones.hpp).
#define WZ_ANS_HOT WZ_HOT_CLONES
#define WZ_INLINE inline __attribute__((always_inline))

namespace wirezip::codecs::ans {

constexpr std::size_t kStreams = 4;

inline std::array<std::size_t, kStreams + 1> stream_bounds(std::size_t n) {
  const std::size_t q = n / kStreams;
  return {0, q, 2 * q, 3 * q, n};
}

struct EncodedStream {
  const std::uint8_t* data;
  std::size_t size;
  unsigned pad;
};

// Bytes a stream of m symbols may need (BackWriter also needs 8 writable bytes below its start).
inline std::size_t stream_bound(std::size_t m) { return (m * 16 + 2 * kMaxTableLog + 7) / 8 + 16; }

// A model says which tables code symbol i: Model::encode(i) -> const EncodeTable&,
// Model::decode(i) -> const DecodeEntry*. With kRaw > 0, a byte's top 8 - kRaw bits are the
// table's symbol and its kRaw low bits are written as they are, after the state's bits; a round
// of four symbols then takes 4 x (table_log + kRaw) <= 56 bits.
struct EncodeLane {
  const std::uint8_t* src;  // the stream's first symbol
  std::size_t left;         // symbols not yet coded: [0, left) of the stream, coded top down
  BackWriter out;
  std::uint32_t a, b;      // the states of even and odd positions
  std::size_t first;        // the stream's first symbol index in the plane
};

template <unsigned kRaw, typename Model>
inline void encode_one(EncodeLane& l, const Model& model) {
  const std::size_t i = --l.left;
  if constexpr (kRaw > 0) l.out.put(l.src[i] & ((1u << kRaw) - 1), kRaw);
  encode_symbol(i & 1 ? l.b : l.a, static_cast<std::uint8_t>(l.src[i] >> kRaw), model.encode(l.first + i), l.out);
}

// Rounds of four symbols (positions 4g+3 .. 4g: B, A, B, A) for two lanes together. The hot state
// lives in plain locals and the model is a copy: byte stores cannot alias either. Two lanes, as in
// decoding: four spill to the stack on x86-64 (measured 7% slower on an AMD EPYC).
template <unsigned kRaw, typename Model>
WZ_INLINE void encode_rounds(EncodeLane* lanes, std::size_t rounds, const Model model) {
  struct Hot {
    const std::uint8_t* src;
    std::size_t first, left;
    std::uint8_t* end;
    std::uint64_t bits;
    unsigned count;
    std::uint32_t a, b;
  };
  auto load = [](const EncodeLane& l) { return Hot{l.src, l.first, l.left, l.out.end, l.out.bits, l.out.count, l.a, l.b}; };
  Hot x = load(lanes[0]), y = load(lanes[1]);
  auto step = [&model](Hot& h, std::uint32_t& state, std::size_t i) {
    const EncodeTable& table = model.encode(h.first + i);
    const std::uint8_t byte = h.src[i];
    if constexpr (kRaw > 0) {  // read after the state's bits, so written before them
      h.bits = (h.bits << kRaw) | (byte & ((1u << kRaw) - 1));
      h.count += kRaw;
    }
    const EncodeSymbol e = table.symbols[byte >> kRaw];
    const unsigned n = (state + e.delta_bits) >> 16;
    h.bits = (h.bits << n) | (state & ((1u << n) - 1));
    h.count += n;
    state = table.states[(state >> n) + e.delta_state];
  };
  auto round = [&step](Hot& h) {
    const std::size_t i = h.left - 4;
    step(h, h.b, i + 3), step(h, h.a, i + 2), step(h, h.b, i + 1), step(h, h.a, i);
    h.left = i;
    store64(h.end - 8, (h.bits << (63 - h.count)) << 1);  // BackWriter::flush
    h.end -= h.count >> 3;
    h.count &= 7;
  };
  for (std::size_t r = 0; r < rounds; ++r) round(x), round(y);
  auto save = [](EncodeLane& l, const Hot& h) {
    l.left = h.left, l.out.end = h.end, l.out.bits = h.bits, l.out.count = h.count, l.a = h.a, l.b = h.b;
  };
  save(lanes[0], x), save(lanes[1], y);
}

// Encodes src[0, n) into four streams written backwards into scratch; all tables of one table_log.
template <unsigned kRaw, typename Model>
WZ_INLINE std::array<EncodedStream, kStreams> encode_streams(const std::uint8_t* src, std::size_t n, unsigned table_log,
                                                   const Model& model,
                                                   std::array<std::vector<std::uint8_t>, kStreams>& scratch) {
  const auto bounds = stream_bounds(n);
  const std::uint32_t size = 1u << table_log;
  std::array<EncodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t m = bounds[s + 1] - bounds[s];
    scratch[s].resize(stream_bound(m) + 8);
    lanes[s] = {src + bounds[s], m, {scratch[s].data() + scratch[s].size()}, size, size, bounds[s]};
    while (lanes[s].left % 4) encode_one<kRaw>(lanes[s], model);  // the top, so whole rounds remain
    lanes[s].out.flush();
  }
  for (std::size_t s = 0; s < kStreams; s += 2)
    encode_rounds<kRaw>(&lanes[s], std::min(lanes[s].left, lanes[s + 1].left) / 4, model);
  std::array<EncodedStream, kStreams> streams;
  for (std::size_t s = 0; s < kStreams; ++s) {
    EncodeLane& l = lanes[s];
    while (l.left) {
      encode_one<kRaw>(l, model);
      if (l.left % 4 == 0) l.out.flush();
    }
    l.out.put(l.b - size, table_log);  // read first by the decoder: A, then B
    l.out.put(l.a - size, table_log);
    const unsigned pad = l.out.finish();
    streams[s] = {l.out.end, static_cast<std::size_t>(scratch[s].data() + scratch[s].size() - l.out.end), pad};
  }
  return streams;
}

struct DecodeLane {
  Reader in;
  std::uint8_t* out;  // the next symbol's place in the plane
  std::size_t left;   // symbols still to decode
  std::uint32_t a, b;
  std::size_t position;  // plane index of *out
};

// Rounds of four symbols (A, B, A, B) for two lanes together. A lane's place in its stream is one
// bit offset from `base`, the start of the buffer both streams lie in: each round loads 8 bytes
// there afresh, so no bit buffer or count is carried from round to round, and two lanes' offsets,
// states and output pointers stay in x86-64's 16 registers (four lanes spill them to the stack
// every round: measured 13% slower on an AMD EPYC). The caller has checked that each lane has
// `rounds` rounds of symbols and 8 readable bytes at every round's offset.
template <unsigned kRaw, typename Model>
WZ_INLINE void decode_rounds(const std::uint8_t* base, DecodeLane* lanes, std::size_t rounds, const Model model) {
  struct Hot {
    std::size_t at;  // bits of the buffer at `base` already taken
    std::uint8_t* out;
    std::size_t position;
    std::size_t a, b;  // size_t: an index with no zero-extension step
  };
  auto load = [base](const DecodeLane& l) {
    return Hot{8 * static_cast<std::size_t>(l.in.in - base) - l.in.count, l.out, l.position, l.a, l.b};
  };
  // Table load -> mask -> add is the state's path: the entry's low byte is the bit count, which the
  // shifts take as it is.
  auto step = [&model](Hot& h, std::uint64_t& bits, std::size_t& state, std::size_t k) {
    const std::uint32_t e = entry_word(model.decode(h.position + k)[state]);
    const unsigned n = e & 0xff;
    state = (e >> 16) + (bits & ((std::uint64_t{1} << n) - 1));
    bits >>= n;
    h.at += n;
    if constexpr (kRaw > 0) {
      h.out[k] = static_cast<std::uint8_t>((e >> 8) << kRaw | (bits & ((1u << kRaw) - 1)));
      bits >>= kRaw;
      h.at += kRaw;
    } else {
      h.out[k] = static_cast<std::uint8_t>(e >> 8);
    }
  };
  auto round = [&step, base](Hot& h) {
    std::uint64_t bits = load64(base + (h.at >> 3)) >> (h.at & 7);  // 57 bits or more
    step(h, bits, h.a, 0), step(h, bits, h.b, 1), step(h, bits, h.a, 2), step(h, bits, h.b, 3);
    h.out += 4, h.position += 4;
  };
  Hot x = load(lanes[0]), y = load(lanes[1]);
  for (std::size_t r = 0; r < rounds; ++r) round(x), round(y);
  auto save = [base, rounds](DecodeLane& l, const Hot& h) {
    l.in.in = base + (h.at >> 3), l.in.bits = 0, l.in.count = 0;
    l.in.refill();
    l.in.take(h.at & 7);
    l.out = h.out, l.position = h.position;
    l.a = static_cast<std::uint32_t>(h.a), l.b = static_cast<std::uint32_t>(h.b), l.left -= 4 * rounds;
  };
  save(lanes[0], x), save(lanes[1], y);
}

// Decodes exactly n symbols into out. Throws on a stream that does not end exactly where its
// symbols do, or whose states do not return to where the encoder started.
template <unsigned kRaw, typename Model>
WZ_INLINE void decode_streams(const std::array<EncodedStream, kStreams>& streams, unsigned table_log, std::uint8_t* out,
                    std::size_t n, const Model& model) {
  const auto bounds = stream_bounds(n);
  std::array<DecodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    DecodeLane& l = lanes[s];
    l.in = {streams[s].data, streams[s].data, streams[s].data + streams[s].size};
    l.out = out + bounds[s];
    l.left = bounds[s + 1] - bounds[s];
    l.position = bounds[s];
    l.in.refill();
    l.in.take(streams[s].pad);
    l.a = l.in.take(table_log);
    l.b = l.in.take(table_log);
  }
  // A round takes at most 4 x (table_log + kRaw) bits and reads 8 bytes where it starts: batches
  // of rounds whose last start is still 8 bytes short of each stream's end.
  // A round's load leaves at least 57 bits after the offset's bit within its byte.
  const std::size_t round_bits = 4 * (table_log + kRaw);
  for (std::size_t s = 0; s < kStreams && round_bits <= 57; s += 2) {
    while (streams[s + 1].data >= streams[s].data) {
      std::size_t rounds = std::min(lanes[s].left, lanes[s + 1].left) / 4;
      for (std::size_t k = s; k < s + 2; ++k) {
        const std::ptrdiff_t room = lanes[k].in.in_end - lanes[k].in.in - 8;
        rounds = std::min<std::size_t>(rounds, room > 0 ? 8 * static_cast<std::size_t>(room) / round_bits : 0);
      }
      if (rounds < 16) break;
      decode_rounds<kRaw>(streams[s].data, &lanes[s], rounds, model);  // one buffer (read_streams)
    }
  }
  for (std::size_t s = 0; s < kStreams; ++s) {
    DecodeLane& l = lanes[s];
    for (std::size_t i = l.position - bounds[s]; l.left; ++i, --l.left) {
      l.in.refill();
      const std::uint8_t symbol = decode_symbol(i & 1 ? l.b : l.a, model.decode(l.position++), l.in);
      *l.out++ = static_cast<std::uint8_t>(symbol << kRaw | l.in.take(kRaw));
    }
    if (l.in.consumed_bits() != 8 * static_cast<std::uint64_t>(streams[s].size) || l.a || l.b) fail_stream(s);
  }
}

}  // namespace wirezip::codecs::ans
