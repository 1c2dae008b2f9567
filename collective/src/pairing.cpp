#include "wirezip/collective/pairing.hpp"

#include <algorithm>
#include <numeric>

#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::collective {

constexpr EnumNames<Pairing, 2> kPairingNames{"pairing",
                                              {{{Pairing::neighbor, "neighbor"}, {Pairing::cross_node, "cross-node"}}}};

Pairing parse_pairing(std::string_view text) { return kPairingNames.parse(text); }

std::vector<RankPair> make_pairs(std::span<const std::string> hosts, Pairing pairing) {
  const int ranks = static_cast<int>(hosts.size());
  if (ranks < 2 || ranks % 2) fail("pairs need an even number of ranks, at least 2 (got {})", ranks);
  std::vector<RankPair> pairs;
  if (pairing == Pairing::neighbor) {
    for (int r = 0; r < ranks; r += 2) pairs.push_back({r, r + 1});
    return pairs;
  }
  // Ranks sorted by host: position j and j + n/2 lie on different hosts unless one host holds
  // more than half of the ranks, in which case no cross-node pairing exists.
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return hosts[a] < hosts[b]; });
  const int half = ranks / 2;
  for (int j = 0; j < half; ++j) {
    const int a = order[j], b = order[j + half];
    if (hosts[a] == hosts[b]) {
      const auto count = std::count(hosts.begin(), hosts.end(), hosts[a]);
      fail("cross-node pairing: host {} holds {} of the {} ranks, more than half", hosts[a], count, ranks);
    }
    pairs.push_back({std::min(a, b), std::max(a, b)});
  }
  std::sort(pairs.begin(), pairs.end(), [](const RankPair& x, const RankPair& y) { return x.serve < y.serve; });
  return pairs;
}

}  // namespace wirezip::collective
