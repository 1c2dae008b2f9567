"""Compare Google Benchmark JSON runs of wirezip's binaries: per-case metric deltas, a Mann-Whitney U
test over repetitions, and an exit status CI can gate on.

Two files: `compare BASE.json NEW.json` prints one row per (case, metric) with base, new, delta,
p-value and verdict. Many files: `compare --group-by=KEY a.json b.json ...` groups the files by the
context value KEY (e.g. rdma_fw_ver, or a peer's peer_rdma_fw_ver), pools files with the same value,
and prints one column per group with its median and delta vs the first group.

Each metric has a direction (times lower is better; rates and ratios higher is better), so a
regression is a drop in throughput or a rise in time. A change counts as significant when it
exceeds --threshold AND the U test says p < --alpha. The exact two-sided U test cannot go below
2/C(n+m, n): 3 vs 3 repetitions give p >= 0.1, so it takes at least 4 repetitions per side (5 to be
comfortable) to reach 0.05. With fewer, the verdict falls back to the threshold alone and says so.

The gate passes only on data. It fails (exit 1) on: a significant regression; a broken case on
the new side (it failed; its `verified` counter is not 1 in some repetition or in a mean or median
aggregate, or is missing where the base carries one; a gated metric the base has is missing, NaN,
infinite or not a number in any repetition; it holds only stddev/cv aggregates); a row whose base
value is unusable (`bad base`: not a finite number, missing in some repetition, or <= 0); a new
side (or --group-by group) with no row compared, --allow-missing or not, and a --group-by with a
single group; a case of the base that the new side did not measure (absent or skipped), unless
--allow-missing; a difference in a --require-same context key (checked first, one line each on
stderr, nothing compared). Aggregates-only input is accepted and judged on its worst statistic: a
new side's value is the worse of its mean and median (the base keeps its median), and `verified`
must be 1 in each. Differences in the watched context keys (CPU, SIMD path, kernel, THP, data sets,
library versions, the peer's keys) are printed above the table. --expect=FILE adds absolute bounds
held against the last file (an acceptance test: nccl-tests' NCCL_TESTS_MIN_BW): a case outside its
bound, a rule matching no case, or a bound on a context key the file lacks fails the gate.
Exit status: 0 the gate passes, 1 it fails, 2 bad input (one line on stderr): an unreadable file, a
non-finite or negative --threshold, an --alpha outside (0, 1], a case name written twice (two
benchmarks, or a repetition or aggregate twice; see compare_input.check_unique), an unknown
time_unit (each naming the case).
"""
import argparse
import json
import math
import sys

import compare_context
import compare_report
import expect
import paired
from compare_input import BadInput, load, pool
from compare_sides import JUDGED, compare_sides, parse_metrics

LABEL_KEYS = ("hostname", "kernel", "rdma_device", "rdma_fw_ver", "wirezip_git_sha")


def label(context):
    """The context keys that tell two runs apart (host, kernel, NIC firmware, source revision)."""
    values = dict(context)
    values.setdefault("hostname", context.get("host_name"))
    return {k: str(values[k]) for k in LABEL_KEYS if values.get(k) is not None}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="compare", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Needs >= 4 (better 5) repetitions per side for the U test to reach "
                                       "p < 0.05; with fewer the verdict uses the threshold alone.")
    p.add_argument("files", nargs="+", metavar="FILE.json", help="BASE.json NEW.json, or any number with --group-by")
    p.add_argument("--threshold", default="5%", help="relative change counted as a regression, in %% (default 5%%)")
    p.add_argument("--alpha", default="0.05", help="U test significance level, in (0, 1] (default 0.05)")
    p.add_argument("--metrics", default="bytes_per_second,ratio",
                   help="comma-separated; a metric of unknown direction as NAME:higher or NAME:lower")
    p.add_argument("--group-by", metavar="KEY", help="context key whose value groups the files (e.g. rdma_fw_ver)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a case of the base that the new side did not measure does not fail the gate")
    p.add_argument("--require-same", metavar="KEY,...", default="",
                   help="context keys (or prefixes like version_*) that must be equal in every file")
    p.add_argument("--expect", metavar="FILE",
                   help="absolute bounds held against the last file, one 'CASE_GLOB METRIC >= BOUND' (or <=) a line; "
                        "BOUND a number or [FACTOR *] context:KEY (plots/expect.py); a miss fails the gate")
    p.add_argument("--json-out", metavar="FILE", help="also write the comparison as JSON")
    return p.parse_args(argv)


def group_files(args, loaded, metrics):
    """The sides: with --group-by, one per value of the key (first seen first), files pooled;
    else base and new. Sides after the first judge an aggregates-only file on its worst statistic.
    Returns (groups, sides)."""
    if not args.group_by:
        groups = [{"value": side, "files": [path], "label": label(ctx)}
                  for side, path, (ctx, _) in zip(compare_report.SIDE_NAMES, args.files, loaded)]
        return groups, [pool([x], metrics, worst=i > 0) for i, x in enumerate(loaded)]
    if not any(args.group_by in context for context, _ in loaded):
        raise BadInput(f"--group-by: no file has the context key '{args.group_by}'")
    groups = {}
    for path, (context, cases) in zip(args.files, loaded):
        value = str(context.get(args.group_by, compare_context.UNSET))
        g = groups.setdefault(value, {"value": value, "files": [], "label": label(context), "loaded": []})
        g["files"].append(path)
        g["loaded"].append((context, cases))
    groups = list(groups.values())
    return groups, [pool(g.pop("loaded"), metrics, worst=i > 0) for i, g in enumerate(groups)]


def parse_limits(args):
    """(threshold as a fraction, alpha) from the command line; BadInput unless both are finite
    and meaningful: a NaN threshold makes every comparison false, so nothing could fail."""
    try:
        threshold = float(args.threshold.strip().rstrip("%")) / 100
    except ValueError:
        raise BadInput(f"--threshold: not a percentage: {args.threshold}") from None
    if not math.isfinite(threshold) or threshold < 0:
        raise BadInput(f"--threshold: must be a finite percentage >= 0: {args.threshold}")
    try:
        alpha = float(args.alpha)
    except ValueError:
        raise BadInput(f"--alpha: not a number: {args.alpha}") from None
    if not (0 < alpha <= 1):  # also false for NaN
        raise BadInput(f"--alpha: must be a number in (0, 1]: {args.alpha}")
    return threshold, alpha


def main(argv=None):
    """Runs the comparison; returns the exit status (0 the gate passes, 1 it fails, 2 bad input)."""
    args = parse_args(argv)
    try:
        threshold, args.alpha = parse_limits(args)
        if not args.group_by and len(args.files) != 2:
            raise BadInput(f"expected BASE.json NEW.json (got {len(args.files)} files); use --group-by for more")
        metrics = parse_metrics(args.metrics)
        rules = expect.parse(args.expect) if args.expect else []
        loaded = [load(path) for path in args.files]
        groups, sides = group_files(args, loaded, metrics)
    except BadInput as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return 2

    required = compare_context.parse_patterns(args.require_same)
    unknown = [p for p in required if not any(compare_context.matches(k, [p]) for c, _ in loaded for k in c)]
    if unknown:
        print(f"compare: error: --require-same: no file has a context key matching {unknown[0]}", file=sys.stderr)
        return 2
    ignore = (args.group_by,) if args.group_by else ()
    contexts = [context for context, _ in loaded]
    watched = compare_context.WATCHED + tuple(required)
    diffs = [compare_context.differences(contexts[0], c, watched, ignore) for c in contexts[1:]]
    fatal = [(path, d) for path, file_diffs in zip(args.files[1:], diffs) for d in file_diffs
             if compare_context.matches(d[0], required)]
    for path, (key, first, value) in fatal:
        print(f"compare: context key {key} differs: {first!r} in {args.files[0]}, {value!r} in {path} "
              f"(--require-same)", file=sys.stderr)
    if fatal:
        return 1

    result = compare_sides(sides, metrics, threshold, args.alpha)
    paired.apply_to_comparison(args.files, result, threshold, args.alpha)  # scripts/ab sides: by round
    names = args.files if args.group_by else list(compare_report.SIDE_NAMES)
    required_keys = {k for file_diffs in diffs for k, _, _ in file_diffs if compare_context.matches(k, required)}
    header = compare_report.context_header(diffs, names, required_keys)
    if args.group_by:
        body = compare_report.group_report(args.group_by, groups, result)
    else:
        body = compare_report.pair_report([g["label"] for g in groups], result)
    print("\n".join(header + [body]))
    gate = gate_of(result, [f"{args.group_by}={g['value']}" if args.group_by else g["value"] for g in groups],
                   args.allow_missing)
    misses = expect_misses(rules, args.files[-1], loaded[-1])
    gate["expect_failures"] = misses
    gate["pass"] = gate["pass"] and not misses
    print("\n".join(misses + [f"{gate['regressions']} significant regression(s) past {100 * threshold:g}%"]
                    + ([f"{len(rules)} expect rule(s), {len(misses)} missed"] if rules else [])))
    print(compare_report.gate_line(gate, threshold))
    if args.json_out:
        write_json(args, threshold, metrics, groups, result, diffs, gate)
    return 0 if gate["pass"] else 1


def expect_misses(rules, path, loaded):
    """--expect: the rules' misses against one file (its own context for context:KEY bounds)."""
    context, cases = loaded
    values = expect.file_values(cases, {r["metric"] for r in rules})
    return expect.judge(rules, {(path, case): v for case, v in values.items()},
                        {(path, case): context for case in values})


def gate_of(result, side_names, allow_missing):
    """The gate's counts and verdict. It passes only on data: every later side must have at
    least one judged row, and no row may be broken or lack a usable base value."""
    judged = [[c["verdict"] for r in result["rows"] if (c := r["cells"][i]) and c["verdict"] in JUDGED]
              for i in range(1, len(side_names))]
    gate = {"regressions": sum(v.count("regression") for v in judged), "broken": len(result["broken"]),
            "bad_base": len(result["bad_base"]), "not_measured": len(result["not_measured"]),
            "compared": sum(map(len, judged)), "nothing_compared": [side_names[i + 1] for i, v in enumerate(judged)
                                                                   if not v],
            "allow_missing": allow_missing}
    if len(side_names) == 1:
        gate["nothing_compared"] = [f"{side_names[0]} alone (no other group)"]
    gate["pass"] = not (gate["regressions"] or gate["broken"] or gate["bad_base"] or gate["nothing_compared"]
                        or (gate["not_measured"] and not allow_missing))
    return gate


def write_json(args, threshold, metrics, groups, result, diffs, gate):
    """--json-out: the comparison as data; the two-file form has one flat row per verdict."""
    report = {"group_by": args.group_by, "threshold_pct": 100 * threshold, "alpha": args.alpha,
              "metrics": [m for m, _ in metrics], "directions": dict(metrics), "groups": groups,
              "context_differences": [{"file": path, "key": k, "base": b, "value": v}
                                      for path, file_diffs in zip(args.files[1:], diffs) for k, b, v in file_diffs],
              **result, "regressions": gate["regressions"], "gate": gate}
    if not args.group_by:
        report["rows"] = [dict(case=r["case"], metric=r["metric"], **r["cells"][1])
                          for r in result["rows"] if r["cells"][1]]
        report["only_in_base"] = [m["case"] for m in result["missing"] if m["in"] == [0]]
        report["only_in_new"] = [m["case"] for m in result["missing"] if m["in"] == [1]]
    with open(args.json_out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
