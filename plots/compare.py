"""Compare Google Benchmark JSON runs of wirezip's binaries: per-case metric deltas, a Mann-Whitney U
test over repetitions, and an exit status CI can gate on.

Two files: `compare BASE.json NEW.json` prints one row per (case, metric) with base, new, delta,
p-value and verdict. Many files: `compare --group-by=KEY a.json b.json ...` groups the files by the
context value KEY (e.g. rdma_fw_ver), pools files with the same value, and prints one column per
group with its median and delta vs the first group.

All metrics compared here are higher-is-better (bytes_per_second, ratio, msg_rate), so a regression
is a drop. A drop counts as significant when it exceeds --threshold AND the U test says p < --alpha.
The exact two-sided U test cannot go below 2/C(n+m, n): 3 vs 3 repetitions give p >= 0.1, so it
takes at least 4 repetitions per side (5 to be comfortable) to reach 0.05. With fewer, or with no
repetitions at all, the verdict falls back to the threshold alone and the table says so.

Exit status: 0 no significant regression, 1 at least one, 2 bad input (one line on stderr).
"""
import argparse
import json
import math
import statistics
import sys

from scipy.stats import mannwhitneyu

LABEL_KEYS = ("hostname", "kernel", "rdma_device", "rdma_fw_ver", "wirezip_git_sha")
AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")


class BadInput(Exception):
    """An input file that cannot be compared; main() turns it into exit status 2."""


def load(path):
    """Reads one benchmark JSON file into (context, cases). Why a dict per case: repetitions,
    aggregates and errors of one case are spread over several entries and must be regrouped by name.
    Each case is {"samples": {metric: [repetition values]}, "median": {metric: aggregate median},
    "error": message or None}."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) or not data["benchmarks"]:
        raise BadInput(f"{path}: no benchmarks (expected Google Benchmark JSON with a 'benchmarks' list)")
    cases = {}
    for entry in data["benchmarks"]:
        if not isinstance(entry, dict) or "name" not in entry:
            raise BadInput(f"{path}: a benchmark entry without a name")
        case = cases.setdefault(case_name(entry), {"samples": {}, "median": {}, "error": None})
        if entry.get("error_occurred") or entry.get("skipped"):
            message = entry.get("error_message") or entry.get("skip_message") or "no message"
            case["error"] = f"skipped: {message}"
            continue
        numbers = {k: v for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if entry.get("run_type") == "aggregate":
            if entry.get("aggregate_name") == "median":
                case["median"].update(numbers)
            elif entry.get("aggregate_name") == "mean":  # a fallback when the median is missing
                for k, v in numbers.items():
                    case["median"].setdefault(k, v)
        else:
            for k, v in numbers.items():
                case["samples"].setdefault(k, []).append(v)
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    return context, cases


def case_name(entry):
    """The name shared by a case's repetitions and aggregates: run_name when the writer gave it,
    else the name with the aggregate suffix stripped (older Google Benchmark versions)."""
    if entry.get("run_name"):
        return entry["run_name"]
    name = entry["name"]
    if entry.get("run_type") == "aggregate":
        suffix = "_" + str(entry.get("aggregate_name", ""))
        if name.endswith(suffix):
            return name[: -len(suffix)]
        for suffix in AGGREGATE_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)]
    return name


def label(context):
    """The context keys that tell two runs apart (host, kernel, NIC firmware, source revision)."""
    values = dict(context)
    values.setdefault("hostname", context.get("host_name"))
    return {k: str(values[k]) for k in LABEL_KEYS if values.get(k) is not None}


def pool(loaded):
    """Merges the cases of several loaded files into one side. Why: runs of one group (e.g. one
    firmware version) measured in several files are the same population. A file with repetitions
    contributes its samples; an aggregates-only file contributes its median as one point (and then
    the side has no repetition samples for a U test)."""
    side = {}
    for _context, cases in loaded:
        for name, case in cases.items():
            merged = side.setdefault(name, {"points": {}, "reps": {}, "error": None})
            if case["error"]:
                merged["error"] = case["error"]
                continue
            for metric in set(case["samples"]) | set(case["median"]):
                samples = case["samples"].get(metric)
                merged["points"].setdefault(metric, []).extend(samples or [case["median"][metric]])
                merged["reps"][metric] = merged["reps"].get(metric, True) and bool(samples)
    return side


def min_p(n, m):
    """The smallest two-sided p the exact Mann-Whitney U test can give for n vs m samples."""
    return 2.0 / math.comb(n + m, n)


def compare_metric(base, new, threshold, alpha):
    """Compares one metric of one case. base/new: (points, all points are repetitions). Returns a
    dict with the medians, delta, p-value and verdict; `note` says why no U test was used."""
    (bp, breps), (np_, nreps) = base, new
    b, n = statistics.median(bp), statistics.median(np_)
    row = {"base": b, "new": n, "delta_pct": None, "p_value": None, "u_test": False,
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
    if delta < -threshold and significant:
        row["verdict"] = "regression"
    elif delta > threshold and significant:
        row["verdict"] = "improvement"
    return row


def fmt_value(metric, v):
    """Human units: GB/s (10^9) for throughput, SI prefixes for rates, 3 significant digits."""
    if v is None:
        return "—"
    if metric == "bytes_per_second":
        return f"{sig3(v / 1e9)} GB/s"
    if metric == "ratio":
        return sig3(v)
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{sig3(v / scale)}{prefix}"
    return sig3(v)


def sig3(x):
    """x with 3 significant digits, keeping trailing zeros (0.900, not 0.9)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    x = float(f"{x:.2e}")  # round first: 0.9996 becomes 1.00, not 1.000
    decimals = 2 - math.floor(math.log10(abs(x)))
    return f"{x:.{max(decimals, 0)}f}"


def fmt_p(row):
    """The p-value cell: the p, marked when the U test was underpowered, or 'no U test'."""
    if row["p_value"] is None:
        return "no U test"
    return f"{row['p_value']:.3g}" + ("" if row["u_test"] else " (underpowered)")


def fmt_delta(d):
    return "—" if d is None else f"{d:+.1f}%"


def compare_sides(sides, metrics, threshold, alpha):
    """Compares every side against the first. Returns (rows, missing, errors): rows are
    {"case", "metric", "cells": [compare_metric dict or None per side]}; cases absent from some
    side and errored cases are returned separately so they are listed, never compared as zeros."""
    names = list(dict.fromkeys(name for side in sides for name in side))
    rows, missing, errors = [], [], []
    for name in names:
        present = [i for i, side in enumerate(sides) if name in side]
        errs = [(i, sides[i][name]["error"]) for i in present if sides[i][name]["error"]]
        errors += [{"case": name, "side": i, "message": m} for i, m in errs]
        if len(present) < len(sides):
            missing.append({"case": name, "in": present})
        if errs or 0 not in present:
            continue
        base = sides[0][name]
        for metric in metrics:
            if metric not in base["points"]:
                continue
            cells = []
            for i, side in enumerate(sides):
                case = side.get(name)
                if case is None or metric not in case["points"]:
                    cells.append(None)
                    continue
                cells.append(compare_metric((base["points"][metric], base["reps"][metric]),
                                            (case["points"][metric], case["reps"][metric]), threshold, alpha))
            rows.append({"case": name, "metric": metric, "cells": cells})
    return rows, missing, errors


def pair_report(labels, rows, missing, errors):
    """The two-file markdown: labels, the case/metric table, notes, missing cases and errors."""
    out = [f"**{side}**: " + (", ".join(f"{k}={v}" for k, v in lab.items()) or "(no context)")
           for side, lab in zip(("base", "new"), labels)]
    out += ["", "| case | metric | base | new | delta | p-value | verdict |", "|---|---|---|---|---|---|---|"]
    notes = []
    for row in rows:
        c = row["cells"][1]
        if c is None:
            continue
        out.append(f"| {row['case']} | {row['metric']} | {fmt_value(row['metric'], c['base'])} | "
                   f"{fmt_value(row['metric'], c['new'])} | {fmt_delta(c['delta_pct'])} | {fmt_p(c)} | {c['verdict']} |")
        if c["note"] and c["note"] not in notes:
            notes.append(c["note"])
    out += [""] + [f"Note: {n}" for n in notes]
    out += listing("Only in base:", [m["case"] for m in missing if m["in"] == [0]])
    out += listing("Only in new:", [m["case"] for m in missing if m["in"] == [1]])
    out += listing("Errors:", [f"{e['case']} ({('base', 'new')[e['side']]}): {e['message']}" for e in errors])
    return "\n".join(out)


def group_report(key, groups, rows, missing, errors):
    """The --group-by markdown: one column per group value, median and delta vs the first group."""
    out = [f"**{key}={g['value']}**: " + ", ".join(f"{k}={v}" for k, v in g["label"].items())
           + f" ({len(g['files'])} file{'s' if len(g['files']) > 1 else ''})" for g in groups]
    out += ["", "| case | metric | " + " | ".join(f"{key}={g['value']}" for g in groups) + " |",
            "|---|---|" + "---|" * len(groups)]
    for row in rows:
        cells = []
        for i, c in enumerate(row["cells"]):
            if c is None:
                cells.append("—")
            elif i == 0:
                cells.append(fmt_value(row["metric"], c["new"]))
            else:
                mark = "" if c["verdict"] == "same" else f", {c['verdict']}"
                mark += "" if c["u_test"] else ", no U test" if c["p_value"] is None else ", underpowered"
                cells.append(f"{fmt_value(row['metric'], c['new'])} ({fmt_delta(c['delta_pct'])}{mark})")
        out.append(f"| {row['case']} | {row['metric']} | " + " | ".join(cells) + " |")
    out += [""] + listing("Missing:", [f"{m['case']}: only in " + ", ".join(f"{key}={groups[i]['value']}" for i in m["in"])
                                       for m in missing])
    out += listing("Errors:", [f"{e['case']} ({key}={groups[e['side']]['value']}): {e['message']}" for e in errors])
    return "\n".join(out)


def listing(title, items):
    """A titled bullet list, or nothing when empty."""
    return [title] + [f"- {i}" for i in items] + [""] if items else []


def parse_args(argv):
    p = argparse.ArgumentParser(prog="compare", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Needs >= 4 (better 5) repetitions per side for the U test to reach "
                                       "p < 0.05; with fewer the verdict uses the threshold alone.")
    p.add_argument("files", nargs="+", metavar="FILE.json", help="BASE.json NEW.json, or any number with --group-by")
    p.add_argument("--threshold", default="5%", help="relative change counted as a regression, in %% (default 5%%)")
    p.add_argument("--alpha", type=float, default=0.05, help="U test significance level (default 0.05)")
    p.add_argument("--metrics", default="bytes_per_second,ratio", help="comma-separated, higher is better")
    p.add_argument("--group-by", metavar="KEY", help="context key whose value groups the files (e.g. rdma_fw_ver)")
    p.add_argument("--json-out", metavar="FILE", help="also write the comparison as JSON")
    return p.parse_args(argv)


def main(argv=None):
    """Runs the comparison; returns the exit status (0 fine, 1 significant regression, 2 bad input)."""
    args = parse_args(argv)
    try:
        try:
            threshold = float(args.threshold.rstrip("%")) / 100
        except ValueError:
            raise BadInput(f"--threshold: not a percentage: {args.threshold}") from None
        if not args.group_by and len(args.files) != 2:
            raise BadInput(f"expected BASE.json NEW.json (got {len(args.files)} files); use --group-by for more")
        loaded = [load(path) for path in args.files]
    except BadInput as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return 2
    metrics = [m for m in args.metrics.split(",") if m]
    if args.group_by:
        groups = {}
        for path, (context, cases) in zip(args.files, loaded):
            value = str(context.get(args.group_by, "(unset)"))
            g = groups.setdefault(value, {"value": value, "files": [], "label": label(context), "loaded": []})
            g["files"].append(path)
            g["loaded"].append((context, cases))
        groups = list(groups.values())
        sides = [pool(g.pop("loaded")) for g in groups]
    else:
        groups = [{"value": side, "files": [path], "label": label(ctx)}
                  for side, path, (ctx, _) in zip(("base", "new"), args.files, loaded)]
        sides = [pool([x]) for x in loaded]
    rows, missing, errors = compare_sides(sides, metrics, threshold, args.alpha)
    if args.group_by:
        print(group_report(args.group_by, groups, rows, missing, errors))
    else:
        print(pair_report([g["label"] for g in groups], rows, missing, errors))
    regressions = sum(c is not None and c["verdict"] == "regression" for r in rows for c in r["cells"][1:])
    print(f"{regressions} significant regression(s) past {100 * threshold:g}%")
    if args.json_out:
        report = {"group_by": args.group_by, "threshold_pct": 100 * threshold, "alpha": args.alpha,
                  "metrics": metrics, "groups": groups, "rows": rows, "missing": missing,
                  "errors": errors, "regressions": regressions}
        if not args.group_by:  # the two-file form, flat: one verdict per row
            report["rows"] = [dict(case=r["case"], metric=r["metric"], **r["cells"][1]) for r in rows if r["cells"][1]]
            report["only_in_base"] = [m["case"] for m in missing if m["in"] == [0]]
            report["only_in_new"] = [m["case"] for m in missing if m["in"] == [1]]
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if regressions else 0
