"""Change points of one series by E-divisive means (Matteson and James, "A Nonparametric Approach for
Multiple Change Point Analysis of Multivariate Data", JASA 109(505), 2014), the method MongoDB's and
Apache Otava's performance CI use.

Why this method: it assumes no distribution, finds a slow drift as well as a step (the divergence
of a segment's distances grows with every small step in it), and its significance comes from a
permutation test, so the false-alarm rate is the alpha it is given. Each round splits the segment
whose best split has the largest statistic and keeps the split only when fewer than alpha of the
seeded permutations of that segment reach it (the paper's bisection with alpha = 1 distances).
"""
import numpy as np

MIN_SEGMENT = 2  # a segment's within-distance needs two points


def qhat(x):
    """Q̂(τ) for every split τ of x into x[:τ], x[τ:] with MIN_SEGMENT points or more on each side
    (index i of the result is τ = MIN_SEGMENT + i): (m k / n) times the energy divergence
    2 E|X - Y| - E|X - X'| - E|Y - Y'| of the two sides, from one table of prefix sums."""
    n = len(x)
    d = np.abs(x[:, None] - x[None, :])
    p = np.zeros((n + 1, n + 1))
    p[1:, 1:] = d.cumsum(0).cumsum(1)
    t = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    m, k = t.astype(float), (n - t).astype(float)
    within_left = p[t, t]
    within_right = p[n, n] - p[t, n] - p[n, t] + p[t, t]
    cross = p[t, n] - p[t, t]
    divergence = 2 * cross / (m * k) - within_left / (m * (m - 1)) - within_right / (k * (k - 1))
    return m * k / n * divergence


def best_split(x):
    """(τ, Q̂(τ)) of the best split of x, or None when x is too short to split."""
    if len(x) < 2 * MIN_SEGMENT:
        return None
    q = qhat(x)
    i = int(np.argmax(q))
    return MIN_SEGMENT + i, float(q[i])


def permutation_p(x, observed, permutations, rng):
    """The share of random orders of x whose best split reaches observed (the observed order counts)."""
    reached = sum(best_split(rng.permutation(x))[1] >= observed for _ in range(permutations))
    return (1 + reached) / (1 + permutations)


def change_points(values, alpha=0.05, permutations=199, rng=None):
    """[(index, p-value)] in index order: index is the first point after a change."""
    x = np.asarray(values, dtype=float)
    rng = rng if rng is not None else np.random.default_rng(0)
    found = []
    while True:
        bounds = [0] + sorted(i for i, _ in found) + [len(x)]
        candidates = []
        for a, b in zip(bounds, bounds[1:]):
            split = best_split(x[a:b])
            if split:
                candidates.append((split[1], a + split[0], a, b))
        if not candidates:
            break
        q, index, a, b = max(candidates)
        p = permutation_p(x[a:b], q, permutations, rng)
        if p > alpha:
            break
        found.append((index, p))
    return sorted(found)
