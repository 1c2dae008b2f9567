"""Each case's verdict: every gated metric of every case compared against the first side with its
direction, and the cases and rows that cannot be compared (broken, absent, skipped, without a
usable base value) set apart for the gate.

A metric knows its direction: times lower is better, rates and ratios higher is better. A change
counts as significant when it exceeds the threshold AND the Mann-Whitney U test over the
repetitions (unpaired: the sides ran at different times) says p < alpha; with too few repetitions
for the test to reach alpha, the threshold alone decides (and the row's note says so).

Verdicts: same, improvement, regression (judged); broken (the new side's value is missing, not a
finite number, or missing in some repetitions); bad base (the base value is unusable: not a
finite number, missing in some repetitions, or <= 0, so no relative change exists).
"""
import math
import statistics

from scipy.stats import mannwhitneyu

from compare_input import BadInput, metric_state

LOWER_IS_BETTER = ("real_time", "cpu_time", "mr_reg_us", "first_touch_us")
HIGHER_IS_BETTER = ("bytes_per_second", "items_per_second", "msg_rate", "ratio", "link_fraction", "huge_fraction",
                    "remote_huge_fraction", "stage_compress", "stage_decompress", "stage_link",
                    "overlap_efficiency", "serial_efficiency")
JUDGED = ("same", "improvement", "regression")


def parse_metrics(text):
    """[(metric, "higher" | "lower")] from 'bytes_per_second,real_time,my_counter:lower'. A metric
    of unknown direction must say it: guessing would turn a regression into an improvement."""
    out = []
    for item in filter(None, text.split(",")):
        metric, _, direction = item.partition(":")
        if not direction:
            direction = "lower" if metric in LOWER_IS_BETTER else "higher" if metric in HIGHER_IS_BETTER else None
        if direction not in ("higher", "lower"):
            raise BadInput(f"--metrics: direction of '{metric}' unknown; write {metric}:higher or {metric}:lower")
        out.append((metric, direction))
    if not out:
        raise BadInput("--metrics: no metric given")
    return out


def min_p(n, m):
    """The smallest two-sided p the exact Mann-Whitney U test can give for n vs m samples."""
    return 2.0 / math.comb(n + m, n)


def compare_metric(base, new, threshold, alpha, direction="higher"):
    """Compares one metric of one case with the unpaired U test. base/new: (points, all points are
    repetitions); the base median is > 0. Returns a dict with the medians, delta, p-value and
    verdict; `note` says why no U test was used."""
    (bp, breps), (np_, nreps) = base, new
    b, n = statistics.median(bp), statistics.median(np_)
    delta = n / b - 1
    row = {"base": b, "new": n, "delta_pct": 100 * delta, "p_value": None, "u_test": False, "direction": direction,
           "verdict": "same", "note": None, "n_base": len(bp), "n_new": len(np_)}
    if breps and nreps and len(bp) >= 2 and len(np_) >= 2:
        p = mannwhitneyu(bp, np_, alternative="two-sided").pvalue
        row["p_value"] = None if math.isnan(p) else float(p)
        if min_p(len(bp), len(np_)) < alpha and row["p_value"] is not None:
            row["u_test"] = True
        else:
            row["note"] = (f"{len(bp)} vs {len(np_)} repetitions: the U test cannot reach p < {alpha:g} "
                           f"(smallest p {min_p(len(bp), len(np_)):.3g}); need >= 4 per side; threshold alone")
    else:
        row["note"] = f"no U test ({len(bp)} vs {len(np_)} samples; run with --benchmark_repetitions>=5)"
    significant = row["p_value"] < alpha if row["u_test"] else True
    better = delta > threshold if direction == "higher" else delta < -threshold
    worse = delta < -threshold if direction == "higher" else delta > threshold
    if significant and worse:
        row["verdict"] = "regression"
    elif significant and better:
        row["verdict"] = "improvement"
    return row


def unjudged(verdict, base_points, direction, reason):
    """A cell that has no verdict on the change: broken (the new side) or bad base."""
    return {"base": statistics.median(base_points) if base_points else None, "new": None, "delta_pct": None,
            "p_value": None, "u_test": False, "direction": direction, "verdict": verdict, "note": None,
            "reason": reason, "n_base": len(base_points or []), "n_new": 0}


def verified_problem(base, case):
    """Why case (a later side) lacks the `verified` counter its base carries, or None."""
    if not base["verified"][0]:
        return None
    carrying, total = case["verified"]
    if carrying == 0:
        return "no verified counter (the base has one)"
    if carrying < total:
        return f"verified absent in {total - carrying} of {total} repetition(s) (the base has it)"
    return None


def compare_sides(sides, metrics, threshold, alpha):
    """Compares every side against the first. Returns a dict:
    rows: {"case", "metric", "cells": [compare_metric or unjudged dict, or None, per side]};
    missing: {"case", "in": [sides holding it]} for a case not on every side;
    errors: {"case", "side", "message"}, every case broken or skipped on any side;
    broken: {"case", "side", "reason"}, failed, unverified or without a usable value of a gated
    metric on a side after the first (the gate);
    not_measured: {"case", "side", "why"}, a case of the first side absent or skipped on a later one;
    bad_base: {"case", "metric", "reason"}, a row whose base value cannot be compared against."""
    names = list(dict.fromkeys(name for side in sides for name in side))
    out = {"rows": [], "missing": [], "errors": [], "broken": [], "not_measured": [], "bad_base": []}
    for name in names:
        present = [i for i, side in enumerate(sides) if name in side]
        if len(present) < len(sides):
            out["missing"].append({"case": name, "in": present})
        for i in present:
            case = sides[i][name]
            message = case["broken"] or case["skipped"]
            if message:
                out["errors"].append({"case": name, "side": i, "message": message})
            if i > 0 and case["broken"]:
                out["broken"].append({"case": name, "side": i, "reason": case["broken"]})
        base = sides[0].get(name)
        if base is None or base["broken"] or base["skipped"]:
            continue
        usable = {}  # later side -> its case, where it can be compared
        for i in range(1, len(sides)):
            case = sides[i].get(name)
            if case is None or (case["skipped"] and not case["broken"]):
                out["not_measured"].append({"case": name, "side": i, "why": case["skipped"] if case else "absent"})
            elif not case["broken"]:
                why = verified_problem(base, case)
                if why:
                    out["errors"].append({"case": name, "side": i, "message": why})
                    out["broken"].append({"case": name, "side": i, "reason": why})
                else:
                    usable[i] = case
        compare_case(name, sides[0][name], usable, len(sides), metrics, (threshold, alpha), out)
    return out


def compare_case(name, base, usable, n_sides, metrics, limits, out):
    """The rows of one case: each gated metric the base carries, each usable later side judged,
    broken, or (without a usable base value) all marked bad base. Every check on the data is done
    before a statistic sees it, here the one place a row's statistic (compare_metric) is called."""
    problems = {}  # later side -> [why a gated metric has no usable value]
    for metric, direction in metrics:
        points, reps, problem = metric_state(base, metric)
        if points is None and problem is None:
            continue  # the base does not measure it (e.g. ratio of a transfer): nothing to hold NEW to
        if problem is None and not statistics.median(points) > 0:
            problem = f"base median {statistics.median(points):g} <= 0: no relative change"
        cells = [None] * n_sides
        if problem:
            out["bad_base"].append({"case": name, "metric": metric, "reason": problem})
            for i in [0, *usable]:
                cells[i] = unjudged("bad base", points, direction, problem)
            out["rows"].append({"case": name, "metric": metric, "cells": cells})
            continue
        cells[0] = compare_metric((points, reps), (points, reps), *limits, direction)
        for i, case in usable.items():
            new_points, new_reps, why = metric_state(case, metric)
            if new_points is None:
                why = why or f"{metric} absent"
                problems.setdefault(i, []).append(why)
                cells[i] = unjudged("broken", points, direction, why)
            else:
                cells[i] = compare_metric((points, reps), (new_points, new_reps), *limits, direction)
        out["rows"].append({"case": name, "metric": metric, "cells": cells})
    for i, whys in problems.items():
        out["errors"].append({"case": name, "side": i, "message": "; ".join(whys)})
        out["broken"].append({"case": name, "side": i, "reason": "; ".join(whys)})
