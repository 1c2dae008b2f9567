#include "coders/ans_tables.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "wirezip/util/error.hpp"

namespace wirezip::codecs::ans {
namespace {

// FSE's spread: a step coprime with L visits every slot once and scatters each symbol's slots
// over the table, which keeps the states' bit costs close to -log2(f / L).
std::vector<std::uint8_t> spread(const Freqs& freqs, unsigned table_log) {
  const std::uint32_t size = 1u << table_log, mask = size - 1, step = (size >> 1) + (size >> 3) + 3;
  std::vector<std::uint8_t> slots(size);
  std::uint32_t position = 0;
  for (unsigned s = 0; s < 256; ++s)
    for (std::uint32_t i = 0; i < freqs[s]; ++i) {
      slots[position] = static_cast<std::uint8_t>(s);
      position = (position + step) & mask;
    }
  return slots;
}

unsigned highest_bit(std::uint32_t v) { return v ? 31u - static_cast<unsigned>(std::countl_zero(v)) : 0u; }

}  // namespace

Freqs normalize(const Counts& counts, unsigned table_log) {
  const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  const std::int64_t size = std::int64_t{1} << table_log;
  Freqs freqs{};
  std::int64_t sum = 0;
  unsigned present = 0;
  for (unsigned s = 0; s < 256; ++s) {
    if (!counts[s]) continue;
    ++present;
    const auto scaled = static_cast<std::int64_t>((static_cast<double>(counts[s]) * size) / total + 0.5);
    freqs[s] = static_cast<std::uint16_t>(std::max<std::int64_t>(1, scaled));
    sum += freqs[s];
  }
  if (present < 2 || present > size) throw std::logic_error("ans: normalize needs 2..2^table_log symbols");
  // Rounding and the floor of 1 leave sum off by a little: take the excess from the largest
  // frequencies one at a time (the cheapest place, relatively), or give the shortfall to the largest.
  std::array<std::uint8_t, 256> order;
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint8_t a, std::uint8_t b) { return freqs[a] > freqs[b]; });
  if (sum < size) freqs[order[0]] = static_cast<std::uint16_t>(freqs[order[0]] + (size - sum));
  while (sum > size)
    for (unsigned i = 0; i < present && sum > size; ++i)
      if (freqs[order[i]] > 1) --freqs[order[i]], --sum;
  return freqs;
}

void check_freqs(const Freqs& freqs, unsigned table_log) {
  if (table_log < kMinTableLog || table_log > kMaxTableLog)
    fail("corrupt frame: ans table log {} (must be {}..{})", table_log, kMinTableLog, kMaxTableLog);
  std::uint32_t sum = 0;
  unsigned present = 0;
  for (std::uint16_t f : freqs) sum += f, present += f != 0;
  if (sum != (1u << table_log) || present < 2)
    fail("corrupt frame: ans frequencies sum to {} over {} symbols (need {} over two or more)", sum, present,
         1u << table_log);
}

void build_decode_table(const Freqs& freqs, unsigned table_log, DecodeEntry* table) {
  const std::uint32_t size = 1u << table_log;
  const std::vector<std::uint8_t> slots = spread(freqs, table_log);
  std::array<std::uint32_t, 256> next;
  std::copy(freqs.begin(), freqs.end(), next.begin());
  for (std::uint32_t u = 0; u < size; ++u) {
    const std::uint8_t s = slots[u];
    const std::uint32_t n = next[s]++;  // in [f, 2f): n << bits lands in [L, 2L)
    const unsigned bits = table_log - highest_bit(n);
    table[u] = {static_cast<std::uint8_t>(bits), s, static_cast<std::uint16_t>((n << bits) - size)};
  }
}

void build_encode_table(const Freqs& freqs, unsigned table_log, EncodeTable& table) {
  const std::uint32_t size = 1u << table_log;
  const std::vector<std::uint8_t> slots = spread(freqs, table_log);
  std::array<std::uint32_t, 256> cumulative{};
  for (unsigned s = 1; s < 256; ++s) cumulative[s] = cumulative[s - 1] + freqs[s - 1];
  table.states.resize(size);
  std::array<std::uint32_t, 256> fill = cumulative;
  for (std::uint32_t u = 0; u < size; ++u) table.states[fill[slots[u]]++] = static_cast<std::uint16_t>(size + u);
  for (unsigned s = 0; s < 256; ++s) {
    const std::uint32_t f = freqs[s];
    if (!f) {
      table.symbols[s] = {};
      continue;
    }
    const std::uint32_t max_bits = table_log - highest_bit(f - 1);
    table.symbols[s] = {(max_bits << 16) - (f << max_bits),
                        static_cast<std::int32_t>(cumulative[s]) - static_cast<std::int32_t>(f)};
  }
}

double coded_bits(const Counts& counts, const Freqs& freqs, unsigned table_log) {
  double bits = 0;
  for (unsigned s = 0; s < 256; ++s)
    if (counts[s]) bits += counts[s] * (table_log - std::log2(static_cast<double>(freqs[s])));
  return bits;
}

}  // namespace wirezip::codecs::ans

namespace wirezip::codecs::ans {
void fail_stream(std::size_t stream) {
  fail("corrupt frame: ans stream {} does not end where its symbols do", stream);
}
}  // namespace wirezip::codecs::ans
