"""`scripts/ab --calibrate`: measures the gate itself on this machine, for one build (--build) and
one small set of codec cases (the flags after --, default below). Methods:
  kept-baseline  two separate runs of 5 repetitions each, scripts/compare's U test on bytes_per_second
  vs_memcpy      the same runs, gated on vs_memcpy instead
  interleaved    scripts/ab on identical sides, --rounds rounds per trial
  icount         scripts/ab --icount on identical sides (codec cases, not memcpy)
A/A false alarms: trials of identical code whose gate failed (any case). Power: --power-a vs
--power-b, two codec specs of a known true difference (its size is the pooled median ratio over
every round of every power trial, with its CI), detected as a regression of their compress case
in how many trials; for icount, the same two specs' instruction counts. Consecutive kept-baseline
runs form the pairs (n + 1 runs give n trials), as a CI runner comparing each run with the last.
"""
import json
import os
import statistics
import time

import compare_sides
import icount
import paired
from ab import analyse, gate, percent, run_rounds
from ab_sides import BadInput, binary_in, codec_rename, same

DEFAULT_ARGS = ["--datasets=synthetic:weights:size=4MiB:seed=1", "--chunks=1MiB"]
DEFAULT_CODEC = "bytegroup:split=exponent+huff"
ICOUNT_ARGS = ["--datasets=synthetic:weights:size=256KiB:seed=1", "--chunks=64KiB"]


def side(name, binary, flags, rename=same, label=None):
    return {"name": name, "label": label or " ".join(flags) or binary, "binary": binary, "flags": flags,
            "command": [binary] + flags, "rename": rename}


def kept_baseline(args, binary, bench_args, trials, log):
    """(false alarms on bytes_per_second, on vs_memcpy, wall s per trial) over consecutive runs."""
    import subprocess
    import tempfile
    started = time.monotonic()
    loaded = []
    with tempfile.TemporaryDirectory(prefix="wirezip-cal-") as tmp:
        for i in range(trials + 1):
            out = os.path.join(tmp, f"run{i}.json")
            subprocess.run([binary, *bench_args, "--benchmark_repetitions=5", f"--benchmark_min_time={args.min_time}",
                            f"--benchmark_out={out}", "--benchmark_out_format=json"], capture_output=True,
                           timeout=args.run_timeout, check=True)
            loaded.append(compare_sides.load(out))
    wall = (time.monotonic() - started) / (trials + 1) * 2  # a trial is two runs
    alarms = {}
    for metric in ("bytes_per_second", "vs_memcpy"):
        alarms[metric] = 0
        for base, new in zip(loaded, loaded[1:]):
            result = compare_sides.compare_sides([compare_sides.pool([base]), compare_sides.pool([new])],
                                                 [(metric, "higher")], percent(args.threshold, "--threshold"),
                                                 args.alpha)
            alarms[metric] += any(c and c["verdict"] == "regression" for r in result["rows"] for c in r["cells"][1:])
    log(f"calibrate: kept-baseline {alarms['bytes_per_second']}/{trials}, vs_memcpy {alarms['vs_memcpy']}/{trials}")
    return alarms, wall


def interleaved(args, sides, trials, log, case_filter=None):
    """Per trial: gate failed?, detected (case_filter's cases a regression)?, wall s; plus all ratios."""
    threshold = percent(args.threshold, "--threshold")
    outcomes, pooled = [], {}
    for t in range(trials):
        started = time.monotonic()
        merged, _, _ = run_rounds(args, sides, args.seed + t if args.seed is not None else None, lambda _: None)
        rows, broken = analyse(merged, [("bytes_per_second", "higher")], threshold, args.alpha)
        ok, _ = gate(rows, broken, threshold)
        hits = [r for r in rows if case_filter and case_filter(r["case"])]
        for r in hits:
            pooled.setdefault(r["case"], []).extend(r["ratios"])
        outcomes.append({"alarm": not ok, "detected": bool(hits) and all(r["verdict"] == "regression" for r in hits),
                         "wall_s": time.monotonic() - started})
        log(f"calibrate: trial {t + 1}/{trials}: gate {'FAIL' if not ok else 'pass'}"
            + (f", {[round(r['median_ratio'], 3) for r in hits]}" if hits else ""))
    return outcomes, pooled


def icount_trials(args, sides, trials, log):
    """Counts every codec case of sides[0] trials+1 times and of sides[1] once: (A/A false alarms
    over consecutive counts, the B/A verdicts, wall s per count)."""
    threshold = percent(args.icount_threshold, "--icount-threshold")
    args.icount_cache = False
    cases = [c for c in icount.list_cases(sides[0], ICOUNT_ARGS, args.run_timeout) if "/memcpy/" not in c]
    import tempfile
    counts = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wirezip-cal-") as tmp:
        for _ in range(trials + 1):
            counts.append([icount.count_case(sides[0], ICOUNT_ARGS, c, False, tmp, args.run_timeout) for c in cases])
        wall = (time.monotonic() - started) / (trials + 1)
        other = [icount.count_case(sides[1], ICOUNT_ARGS, c.replace(sides[0]["label"], sides[1]["label"]), False,
                                   tmp, args.run_timeout) for c in cases]
    alarms = sum(any(r["verdict"] != "same" for r in icount.verdicts(a, b, threshold)) for a, b in zip(counts, counts[1:]))
    spread = max(abs(r["ratio"] - 1) for a, b in zip(counts, counts[1:]) for r in icount.verdicts(a, b, 0))
    power = icount.verdicts(counts[0], other, threshold)
    log(f"calibrate: icount A/A {alarms}/{trials} (largest |B/A - 1| {spread:.2e}); power {power}")
    return alarms, spread, power, 2 * wall


def main(args, log=print):
    binary = binary_in(args.build, "bench_codec")
    if args.bench != "bench_codec":
        raise BadInput("--calibrate measures the gate on bench_codec's cases")
    trials = args.trials
    if trials < 1:
        raise BadInput(f"--trials: need at least 1 (got {trials})")
    codec = args.codec_a or DEFAULT_CODEC
    slower = args.codec_b
    if not slower:
        raise BadInput("--calibrate needs --codec-b: a codec spec measurably slower than --codec-a "
                       f"(default {DEFAULT_CODEC}) for the power trials")
    bench_args = list(args.bench_args) or DEFAULT_ARGS
    table = []
    report = {"binary": binary, "bench_args": bench_args, "codec_a": codec, "codec_b": slower, "trials": trials,
              "rounds": args.rounds, "threshold": args.threshold, "icount_threshold": args.icount_threshold,
              "load_before": os.getloadavg()}
    started = time.monotonic()
    a = side("a", binary, [f"--codecs={codec}"] + bench_args)
    if "kept" in args.methods:
        alarms, wall = kept_baseline(args, binary, [f"--codecs={codec}"] + bench_args, trials, log)
        table.append(["kept-baseline (compare, 5+5 reps)", trials, alarms["bytes_per_second"], None, wall])
        table.append(["vs_memcpy (compare, 5+5 reps)", trials, alarms["vs_memcpy"], None, wall])
    if "ab" in args.methods:
        aa, _ = interleaved(args, [a, dict(a, name="b")], trials, log)
        pa = side("a", binary, [f"--codecs={codec}"] + bench_args, codec_rename(codec))
        pb = side("b", binary, [f"--codecs={slower}"] + bench_args, codec_rename(slower))
        power, pooled = interleaved(args, [pa, pb], trials, log, lambda case: "/codec/" in case and "/compress" in case)
        truth = {case: {"median_ratio": statistics.median(r), "ci": paired.median_ci(r, 0.01)[:2], "rounds": len(r)}
                 for case, r in pooled.items()}
        report["power_truth"] = truth
        wall = statistics.median(o["wall_s"] for o in aa + power)
        table.append([f"interleaved A/B ({args.rounds} rounds)", trials, sum(o["alarm"] for o in aa),
                      sum(o["detected"] for o in power) / trials, wall])
    if "icount" in args.methods:
        ia = side("a", binary, [f"--codecs={codec}"], codec_rename(codec), codec)
        ib = side("b", binary, [f"--codecs={slower}"], codec_rename(slower), slower)
        alarms, spread, power, wall = icount_trials(args, [ia, ib], trials, log)
        report["icount_power"] = power
        report["icount_aa_largest_change"] = spread
        table.append(["instruction counts (cachegrind)", trials, alarms,
                      sum(r["verdict"] == "regression" for r in power) / len(power), wall])
    report["load_after"] = os.getloadavg()
    report["wall_s"] = time.monotonic() - started
    report["table"] = [dict(zip(("method", "trials", "aa_false_alarms", "power", "minutes_per_trial"),
                                row[:4] + [row[4] / 60])) for row in table]
    log("| method | trials | A/A false alarms | power at the --codec-b difference | minutes per trial |")
    log("|---|---|---|---|---|")
    for method, n, alarms, power, wall in table:
        log(f"| {method} | {n} | {alarms}/{n} ({100 * alarms / n:.0f}%) | "
            f"{'—' if power is None else f'{100 * power:.0f}%'} | {wall / 60:.2f} |")
    for case, t in report.get("power_truth", {}).items():
        log(f"true B/A of {case}: {t['median_ratio']:.3f} (99% CI {t['ci'][0]:.3f}..{t['ci'][1]:.3f}, {t['rounds']} rounds)")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "calibration.json"), "w") as f:
        json.dump(report, f, indent=1)
    return 0
