"""Paired statistics for interleaved A/B runs: each round ran both sides back to back (in a random
order), so the per-round ratio B/A sees one machine state and the host's drift cancels in it.

The statistic is the Wilcoxon signed-rank test on the per-round log-ratios log(B/A), exact
two-sided. Why this one:
- The random order per round makes the null distribution of log(B/A) symmetric about 0 on
  identical code (which side ran first is a coin flip), which is exactly what the signed-rank
  test assumes; it then uses the sizes of the differences, not only their signs, so it has more
  power than the sign test at the 6-20 rounds a gate can afford.
- A bootstrap CI of the median is unreliable at 10 rounds: the bootstrap distribution of a
  median of 10 points takes only a handful of values and under-covers.
- The test is one-sided, in the direction the median ratio moved: a gate asks "is B slower?" (or
  "faster?"), each alone a test at alpha. The exact one-sided test reaches p = 1/2^n at best: 5
  rounds give 0.031, 10 give 0.001; with fewer than 5 rounds there is no verdict (a row says so),
  never a threshold-only one.
The point estimate is the median of the per-round ratios; its confidence interval is the
distribution-free one from order statistics (the sign test's interval: [x_(k), x_(n-k+1)] with
k from the binomial(n, 1/2)), which holds whatever the ratios' distribution.

Verdict: a regression needs both the median ratio past --threshold in the bad direction and
p < alpha, the p adjusted by Holm's method over every case x metric of the comparison (many cases
at alpha each would otherwise fail a gate on identical code often); an improvement the same the
other way; else `same`.
"""
import json
import math
import statistics

from scipy.stats import binom, wilcoxon

MIN_ROUNDS = 5  # the exact one-sided signed-rank test cannot reach p < 0.05 with fewer


def min_p(n):
    """The smallest two-sided p the exact signed-rank test can give with n nonzero differences."""
    return 2.0 / 2 ** n if n else 1.0


def median_ci(values, alpha):
    """(low, high, level): the order-statistic confidence interval of the median, at the smallest
    level >= 1 - alpha that n values allow (the widest, min..max, when n is too small)."""
    xs = sorted(values)
    n = len(xs)
    k = 1
    while k + 1 <= n // 2 and binom.cdf(k, n, 0.5) <= alpha / 2:
        k += 1
    level = 1 - 2 * binom.cdf(k - 1, n, 0.5)
    return xs[k - 1], xs[n - k], level


def signed_rank_p(log_ratios, alternative="two-sided"):
    """Exact Wilcoxon signed-rank p on the log-ratios ("less": B below A); 1.0 when every one is
    zero (the sides are identical, e.g. instruction counts of the same code)."""
    nonzero = [x for x in log_ratios if x != 0]
    if len(nonzero) < 2:
        return 1.0
    return float(wilcoxon(nonzero, alternative=alternative, method="exact").pvalue)


def compare_paired(a, b, threshold, alpha, direction="higher"):
    """Compares one metric of one case over rounds. a, b: {round: value}; only rounds both sides
    measured count. Returns a dict with compare_sides' row keys (base, new, delta_pct, p_value,
    verdict, note, ...) plus the paired ones: rounds, ratios, median_ratio, ci_low, ci_high,
    ci_level, test."""
    rounds = sorted(set(a) & set(b), key=int)
    ratios = [b[r] / a[r] for r in rounds if a[r] > 0 and b[r] > 0]
    row = {"base": statistics.median(a[r] for r in rounds) if rounds else None,
           "new": statistics.median(b[r] for r in rounds) if rounds else None,
           "direction": direction, "rounds": len(ratios), "ratios": ratios, "test": "wilcoxon signed-rank (paired)",
           "u_test": False, "p_value": None, "delta_pct": None, "median_ratio": None, "ci_low": None,
           "ci_high": None, "ci_level": None, "verdict": "same", "note": None, "p_adjusted": None,
           "n_base": len(rounds), "n_new": len(rounds)}
    if len(ratios) < 2:
        row["note"] = f"{len(ratios)} paired round(s) with positive values: nothing to compare"
        return row
    median = statistics.median(ratios)
    row["median_ratio"] = median
    row["delta_pct"] = 100 * (median - 1)
    row["ci_low"], row["ci_high"], row["ci_level"] = median_ci(ratios, alpha)
    logs = [math.log(r) for r in ratios]
    # One-sided, in the direction the median moved: the gate asks "is B worse" (or "better"), and
    # each of those questions alone is a test at alpha; the two-sided p is kept for the record.
    row["p_two_sided"] = signed_rank_p(logs)
    row["p_value"] = signed_rank_p(logs, "less" if median < 1 else "greater")
    nonzero = sum(x != 0 for x in logs)
    powered = min_p(nonzero) / 2 < alpha
    row["u_test"] = powered  # compare_report marks an underpowered p with this flag
    if not powered and nonzero:
        row["note"] = (f"{nonzero} rounds: the signed-rank test cannot reach p < {alpha:g} "
                       f"(need >= {MIN_ROUNDS}); no verdict")
    row["worse"] = median < 1 - threshold if direction == "higher" else median > 1 + threshold
    row["better"] = median > 1 + threshold if direction == "higher" else median < 1 - threshold
    # Too few rounds give no verdict: the threshold alone fails identical code on a drifting host.
    row["significant"] = powered and row["p_value"] < alpha
    decide(row)
    return row


def decide(row):
    """The verdict from the significance and the direction past the threshold."""
    if row["significant"] and row["worse"]:
        row["verdict"] = "regression"
    elif row["significant"] and row["better"]:
        row["verdict"] = "improvement"
    else:
        row["verdict"] = "same"


def holm(rows, alpha):
    """Holm's step-down correction over every row of one comparison (each case x metric is a
    test): without it, 20 identical cases at alpha 0.05 would fail one gate in two. Sets
    p_adjusted and re-decides each tested row; rows without a powered test keep their verdict."""
    tested = sorted((r for r in rows if r.get("u_test") and r.get("p_value") is not None), key=lambda r: r["p_value"])
    running = 0.0
    for i, r in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - i) * r["p_value"]))
        r["p_adjusted"] = running
        r["significant"] = running < alpha
        decide(r)
    return rows


def rounds_of(path):
    """{case: {round: entry}} of one side's JSON when every measured row carries ab_round (a
    scripts/ab side file); None for an ordinary run."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    rows = [e for e in data.get("benchmarks", []) if isinstance(e, dict) and e.get("run_type") != "aggregate"]
    if not rows or not all("ab_round" in e for e in rows):
        return None
    out = {}
    for e in rows:
        if not e.get("error_occurred") and not e.get("skipped"):
            out.setdefault(e.get("run_name") or e["name"], {})[int(e["ab_round"])] = e
    return out


def apply_to_comparison(paths, result, threshold, alpha):
    """scripts/compare's hook: when both files are scripts/ab sides (rows carry ab_round), each
    two-file row's new-side cell becomes the paired comparison of the same rounds. Returns how
    many cells it replaced (0: an ordinary comparison, left as it was)."""
    if len(paths) != 2:
        return 0
    sides = [rounds_of(p) for p in paths]
    if None in sides:
        return 0
    replaced = 0
    for row in result["rows"]:
        a, b = (s.get(row["case"], {}) for s in sides)
        cell = row["cells"][1] if len(row["cells"]) == 2 else None
        if cell is None:
            continue
        metric = row["metric"]
        av = {r: e[metric] for r, e in a.items() if isinstance(e.get(metric), (int, float))}
        bv = {r: e[metric] for r, e in b.items() if isinstance(e.get(metric), (int, float))}
        if len(set(av) & set(bv)) >= 2:
            row["cells"][1] = compare_paired(av, bv, threshold, alpha, cell["direction"])
            replaced += 1
    holm([row["cells"][1] for row in result["rows"] if row["cells"][1] and "rounds" in row["cells"][1]], alpha)
    return replaced
