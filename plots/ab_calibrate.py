"""`scripts/ab --calibrate`: measures the gate itself on this machine, for one build (--build) and
one small set of codec cases (the flags after --; default: the data set of scripts/ab's gated cases). Methods:
  kept-baseline  two separate runs of 5 repetitions each, scripts/compare's U test on bytes_per_second
  vs_memcpy      the same runs, gated on vs_memcpy instead
  interleaved    scripts/ab's rounds of the gated codecs on bytes_per_second and cpu_bytes_per_second,
                 judged on all --rounds rounds and again on the first half of them (same runs)
  icount         scripts/ab --icount's counts (codec cases, not memcpy)
A/A false alarms: trials of identical code whose gate failed (any case). Power: the gated codecs on
1 MiB vs 384 KiB chunks (or --codec-a vs --codec-b), two configurations of a true difference (its
size is the pooled median ratio of the default codec's compress case over every round of every
trial, with its 99% CI), detected as a regression in how many trials; each round runs A, A' (A
again) and B in a random order, so A/A and power trials share machine states and time. For
icount: two data sets whose counts differ by ~1.6%.
Consecutive kept-baseline runs form the pairs (n + 1 runs give n trials), as a CI runner
comparing each run with the last.
"""
import json
import os
import statistics
import subprocess
import tempfile
import time

import compare_sides
import icount
import paired
from ab_rounds import GATED_FLAGS, analyse, gate, percent, run_rounds
from ab_sides import BadInput, binary_in, codec_rename, same

DEFAULT_ARGS = [f"--datasets={GATED_FLAGS['bench_codec']['--datasets']}"]
GATED_CODECS = GATED_FLAGS["bench_codec"]["--codecs"]
# The power pair without --codec-b: the same codecs on 1 MiB and on 384 KiB chunks of the 1 MiB
# data set (one chunk vs three). Each chunk has its own tables and header, so three cost ~12%
# more time per byte of exponent+huff compress; the rounds measure how much (docs/GATE.md).
POWER_CHUNKS = ("1MiB", "384KiB")
DEFAULT_CODEC = "bytegroup:split=exponent+huff"
# Two data sets on which the default codec's compress (64 KiB chunks) runs 1.0% more instructions
# per byte on the second (8.601 vs 8.688): the icount power pair, the smallest change the gate
# promises to catch every time.
ICOUNT_DATA = ("synthetic:weights:size=256KiB:seed=2", "synthetic:weights:size=256KiB:seed=4")


def chunk_rename(name):
    """A case name with its chunk size as one name, so both chunk sizes of the power pair pair up."""
    return "/".join("chunk" if part.startswith("chunk:") else part for part in name.split("/"))


def rejudge(trial_ratios, rounds, threshold, alpha):
    """The gate on the first `rounds` per-round ratios of each case ({case: ratios}): how the same
    runs would have been judged with fewer rounds. Returns the rows, Holm-corrected over them."""
    rows = [{"case": case, **paired.compare_paired(dict(enumerate([1.0] * rounds)), dict(enumerate(r[:rounds])),
                                                   threshold, alpha)} for case, r in trial_ratios.items()]
    return paired.holm(rows, alpha)


def side(name, binary, flags, rename=same, label=None):
    return {"name": name, "label": label or " ".join(flags) or binary, "binary": binary, "flags": flags,
            "command": [binary] + flags, "rename": rename}


def kept_baseline(args, binary, bench_args, trials, log):
    """(false alarms on bytes_per_second, on vs_memcpy, wall s per trial) over consecutive runs."""
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


def interleaved(args, sides, trials, metric, target, log):
    """Trials of --rounds rounds, each round running sides A, A' (the same as A) and B in a random
    order: A vs A' is an A/A trial, A vs B a power trial on the same machine states. Returns
    per trial {alarm (A/A gate failed on any case), detected (B's `target` cases a regression),
    wall_s (of one A/B trial: two thirds of the round's time)}, and B/A's ratios pooled over
    every trial per target case (the true difference)."""
    threshold = percent(args.threshold, "--threshold")
    outcomes, pooled = [], {}
    for t in range(trials):
        started = time.monotonic()
        merged, _, _ = run_rounds(args, sides, args.seed + t if args.seed is not None else None, lambda _: None)
        outcome = {"wall_s": (time.monotonic() - started) * 2 / 3}
        for m in metric:
            aa, broken = analyse({"a": merged["a"], "b": merged["a2"]}, [(m, "higher")], threshold, args.alpha)
            ok, _ = gate(aa, broken, threshold)
            ab_rows, _ = analyse({"a": merged["a"], "b": merged["b"]}, [(m, "higher")], threshold, args.alpha)
            hits = [r for r in ab_rows if target(r["case"])]
            for r in hits:
                pooled.setdefault((m, r["case"]), []).extend(r["ratios"])
            outcome[m] = {"alarm": not ok, "detected": bool(hits) and all(r["verdict"] == "regression" for r in hits),
                          # every row's per-round ratios, so other statistics can be judged on the same runs
                          "aa": {r["case"]: r["ratios"] for r in aa}, "ab": {r["case"]: r["ratios"] for r in ab_rows}}
            half = args.rounds // 2
            half_hits = [r for r in rejudge(outcome[m]["ab"], half, threshold, args.alpha) if target(r["case"])]
            outcome[m]["half"] = {
                "alarm": not gate(rejudge(outcome[m]["aa"], half, threshold, args.alpha), [], threshold)[0],
                "detected": bool(half_hits) and all(r["verdict"] == "regression" for r in half_hits)}
        outcomes.append(outcome)
        log(f"calibrate: trial {t + 1}/{trials}: " + ", ".join(
            f"{m}: A/A {'ALARM' if outcome[m]['alarm'] else 'ok'}, B {'caught' if outcome[m]['detected'] else 'missed'}"
            for m in metric))
    return outcomes, pooled


def icount_trials(args, binary, codec, trials, log):
    """Counts every codec case of one data set trials+1 times (A/A pairs: consecutive counts), and
    in each trial the compress case on a second data set whose instructions per byte differ by
    ~1.0% (a real difference the gate must see). Returns (A/A false alarms, largest A/A
    |B/A - 1|, the power pair's verdicts per trial, wall s of one trial)."""
    threshold = percent(args.icount_threshold, "--icount-threshold")
    sides = [side(name, binary, [f"--codecs={codec}", f"--datasets={spec}", "--chunks=64KiB"],
                  lambda case, spec=spec: case.replace(spec, "data"), spec) for name, spec in zip("ab", ICOUNT_DATA)]
    cases = [[c for c in icount.list_cases(s, [], args.run_timeout) if "/memcpy/" not in c] for s in sides]
    compress = [c for c in cases[1] if "/compress/" in c]
    counts, power = [], []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wirezip-cal-") as tmp:
        counts.append([icount.count_case(sides[0], [], c, False, tmp, args.run_timeout) for c in cases[0]])
        for _ in range(trials):
            counts.append([icount.count_case(sides[0], [], c, False, tmp, args.run_timeout) for c in cases[0]])
            other = [icount.count_case(sides[1], [], c, False, tmp, args.run_timeout) for c in compress]
            power.extend(icount.verdicts(counts[-1], other, threshold))
    wall = (time.monotonic() - started) / trials
    alarms = sum(any(r["verdict"] != "same" for r in icount.verdicts(a, b, threshold)) for a, b in zip(counts, counts[1:]))
    spread = max(abs(r["ratio"] - 1) for a, b in zip(counts, counts[1:]) for r in icount.verdicts(a, b, 0))
    log(f"calibrate: icount A/A {alarms}/{trials} (largest |B/A - 1| {spread:.2e}); second data set: "
        + ", ".join(sorted({f"{r['ratio']:.4f} {r['verdict']}" for r in power})))
    return alarms, spread, power, wall


def main(args, log=print):
    binary = binary_in(args.build, "bench_codec")
    if args.bench != "bench_codec":
        raise BadInput("--calibrate measures the gate on bench_codec's cases")
    trials = args.trials
    if trials < 1:
        raise BadInput(f"--trials: need at least 1 (got {trials})")
    codec = args.codec_a or DEFAULT_CODEC
    slower = args.codec_b
    bench_args = list(args.bench_args) or DEFAULT_ARGS
    table = []
    report = {"binary": binary, "bench_args": bench_args, "codec_a": codec, "codec_b": slower, "trials": trials,
              "rounds": args.rounds, "reps": args.reps, "threshold": args.threshold,
              "icount_threshold": args.icount_threshold,
              "load_before": os.getloadavg()}
    started = time.monotonic()
    if "kept" in args.methods:
        alarms, wall = kept_baseline(args, binary, [f"--codecs={codec}"] + bench_args, trials, log)
        table.append(["kept-baseline (compare, 5+5 reps)", trials, alarms["bytes_per_second"], None, wall])
        table.append(["vs_memcpy (compare, 5+5 reps)", trials, alarms["vs_memcpy"], None, wall])
    if "ab" in args.methods:
        metrics = ("bytes_per_second", "cpu_bytes_per_second")
        args.bench_args = bench_args  # run_once adds them to each side's command
        if slower:  # two codec specs of a true difference
            pa = side("a", binary, [f"--codecs={codec}"], codec_rename(codec))
            pb = side("b", binary, [f"--codecs={slower}"], codec_rename(slower))
            target = "codec/codec/"
        else:  # the gated codecs (or --codec-a) on two chunk sizes; the power is read on one codec
            codecs = args.codec_a or GATED_CODECS
            pa, pb = (side(name, binary, [f"--codecs={codecs}", f"--chunks={chunk}"], chunk_rename)
                      for name, chunk in zip("ab", POWER_CHUNKS))
            target = f"codec/{codec}/"
        outcomes, pooled = interleaved(args, [pa, dict(pa, name="a2"), pb], trials, metrics,
                                       lambda case: case.startswith(target) and "/compress/" in case, log)
        report["power_truth"] = {f"{m} {case}": {"median_ratio": statistics.median(r), "ci": paired.median_ci(r, 0.01)[:2],
                                                 "rounds": len(r)} for (m, case), r in pooled.items()}
        report["interleaved_trials"] = outcomes
        wall = statistics.median(o["wall_s"] for o in outcomes)
        for m in metrics:
            table.append([f"interleaved A/B on {m} ({args.rounds} rounds of {args.reps} reps)", trials,
                          sum(o[m]["alarm"] for o in outcomes), sum(o[m]["detected"] for o in outcomes) / trials, wall])
            table.append([f"interleaved A/B on {m} (the first {args.rounds // 2} of those rounds)", trials,
                          sum(o[m]["half"]["alarm"] for o in outcomes),
                          sum(o[m]["half"]["detected"] for o in outcomes) / trials, wall / 2])
    if "icount" in args.methods:
        alarms, spread, power, wall = icount_trials(args, binary, codec, trials, log)
        report["icount_power"] = power[0] if power else None
        report["icount_aa_largest_change"] = spread
        table.append(["instruction counts (callgrind)", trials, alarms,
                      sum(r["verdict"] == "regression" for r in power) / len(power), wall])
    report["load_after"] = os.getloadavg()
    log("calibrate: load average (1/5/15 min) %.2f/%.2f/%.2f before, %.2f/%.2f/%.2f after"
        % (*report["load_before"], *report["load_after"]))
    report["wall_s"] = time.monotonic() - started
    report["table"] = [dict(zip(("method", "trials", "aa_false_alarms", "power", "minutes_per_trial"),
                                row[:4] + [row[4] / 60])) for row in table]
    log("| method | trials | A/A false alarms | power (true difference below) | minutes per trial |")
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
