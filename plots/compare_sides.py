"""The sides of a comparison and each case's verdict: files loaded and pooled into sides, every
metric of every case compared against the first side with its direction, and the cases that
cannot be compared (broken, absent, skipped) set apart for the gate.

A metric knows its direction: times lower is better, rates and ratios higher is better. A change
counts as significant when it exceeds the threshold AND the Mann-Whitney U test says p < alpha;
with too few repetitions for the test to reach alpha, the threshold alone decides (and the row's
note says so).
"""
import json
import math
import statistics

from scipy.stats import mannwhitneyu

import benchjson

LOWER_IS_BETTER = ("real_time", "cpu_time", "mr_reg_us", "first_touch_us")
HIGHER_IS_BETTER = ("bytes_per_second", "items_per_second", "msg_rate", "ratio", "link_fraction", "huge_fraction",
                    "remote_huge_fraction", "stage_compress", "stage_decompress", "stage_link",
                    "overlap_efficiency", "serial_efficiency")


class BadInput(Exception):
    """An input that cannot be compared; compare.main() turns it into exit status 2."""


def load(path):
    """(context, {name: case}) of one Google Benchmark JSON file (cases as benchjson reads them)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) or not data["benchmarks"]:
        raise BadInput(f"{path}: no benchmarks (expected Google Benchmark JSON with a 'benchmarks' list)")
    if not all(isinstance(entry, dict) and "name" in entry for entry in data["benchmarks"]):
        raise BadInput(f"{path}: a benchmark entry without a name")
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    return context, benchjson.read_cases(data["benchmarks"])


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


def pool(loaded):
    """Merges the cases of several loaded files into one side. Why: runs of one group (e.g. one
    firmware version) measured in several files are the same population. A file with repetitions
    contributes its samples; an aggregates-only file its median as one point (and then the side
    has no repetition samples for a U test). A case broken in any file is broken on the side."""
    side = {}
    for _context, cases in loaded:
        for name, case in cases.items():
            merged = side.setdefault(name, {"points": {}, "reps": {}, "broken": None, "skipped": None})
            broken = benchjson.broken_reason(case)
            if broken or case["skipped"]:
                merged["broken"] = merged["broken"] or broken
                merged["skipped"] = merged["skipped"] or (case["skipped"] and f"skipped: {case['skipped']}")
                continue
            for metric in set(case["samples"]) | set(case["median"]):
                samples = case["samples"].get(metric)
                merged["points"].setdefault(metric, []).extend(samples or [case["median"][metric]])
                merged["reps"][metric] = merged["reps"].get(metric, True) and bool(samples)
    for case in side.values():  # measured in one file and skipped in another: measured
        if case["points"]:
            case["skipped"] = None
    return side


def min_p(n, m):
    """The smallest two-sided p the exact Mann-Whitney U test can give for n vs m samples."""
    return 2.0 / math.comb(n + m, n)


def compare_metric(base, new, threshold, alpha, direction="higher"):
    """Compares one metric of one case. base/new: (points, all points are repetitions). Returns a
    dict with the medians, delta, p-value and verdict; `note` says why no U test was used."""
    (bp, breps), (np_, nreps) = base, new
    b, n = statistics.median(bp), statistics.median(np_)
    row = {"base": b, "new": n, "delta_pct": None, "p_value": None, "u_test": False, "direction": direction,
           "verdict": "same", "note": None, "n_base": len(bp), "n_new": len(np_)}
    if b <= 0:
        row["note"] = "base is zero, no delta"
        return row
    delta = n / b - 1
    row["delta_pct"] = 100 * delta
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


def compare_sides(sides, metrics, threshold, alpha):
    """Compares every side against the first. Returns a dict:
    rows: {"case", "metric", "cells": [compare_metric dict or None per side]};
    missing: {"case", "in": [sides holding it]} for a case not on every side;
    errors: {"case", "side", "message"}, every case broken or skipped on any side;
    broken: {"case", "side", "reason"}, failed or unverified on a side after the first (the gate);
    not_measured: {"case", "side", "why"}, a case of the first side absent or skipped on a later one."""
    names = list(dict.fromkeys(name for side in sides for name in side))
    out = {"rows": [], "missing": [], "errors": [], "broken": [], "not_measured": []}
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
        for i in range(1, len(sides)):
            case = sides[i].get(name)
            if case is None or (case["skipped"] and not case["broken"]):
                out["not_measured"].append({"case": name, "side": i, "why": case["skipped"] if case else "absent"})
        for metric, direction in metrics:
            if metric not in base["points"]:
                continue
            cells = []
            for side in sides:
                case = side.get(name)
                if case is None or case["broken"] or metric not in case["points"]:
                    cells.append(None)
                    continue
                cells.append(compare_metric((base["points"][metric], base["reps"][metric]),
                                            (case["points"][metric], case["reps"][metric]), threshold, alpha,
                                            direction))
            out["rows"].append({"case": name, "metric": metric, "cells": cells})
    return out
