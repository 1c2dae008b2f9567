"""Interleaved A/B runs of wirezip's benchmarks with paired statistics: a gate that does not cry
wolf on a host whose speed drifts.

Two separate runs (a kept baseline against a new run) compare two machine states as much as two
codes: on a shared 2-vCPU runner one build's rate spans 45% within minutes. scripts/ab instead
runs side A and side B alternately for --rounds rounds (the order within each round drawn from a
seeded RNG, the seed printed), each run --reps short repetitions of every selected case of which
the round keeps the best, and judges the per-round ratio B/A: both sides of a round saw the same
machine state, so the drift cancels in the ratio. The statistic (Wilcoxon signed-rank on
log-ratios, Holm-corrected over the cases) is explained in plots/paired.py; the rounds and the gate
are plots/ab_rounds.py.

Sides: --build-a/--build-b (two build directories), --rev-a/--rev-b (two git revisions, built
here), --codec-a/--codec-b (two codec specs, one build), --flags-a/--flags-b (two sets of the
binary's flags, one build: a window or page policy against another), --peer-a/--peer-b (two servers).
Everything after `--` goes to the benchmark binary on both sides. Output in --out: a.json and
b.json (each a Google Benchmark JSON whose rows carry ab_side and ab_round; `scripts/compare
a.json b.json` then uses the paired statistics too) and ab.json (both sides' rows and the
verdicts). --icount: instruction counts under cachegrind instead (plots/icount.py);
--calibrate: measure the gate itself (plots/ab_calibrate.py).
Exit status: 0 the gate passes, 1 a regression (or a broken case on side B), 2 bad input.
"""
import argparse
import json
import os
import random
import sys
import time

import paired
from ab_rounds import GATED_FLAGS, analyse, gate, percent, run_rounds
from ab_sides import BENCHES, BadInput, make_sides

# Per binary: the gated metric, rounds and repetitions per run when no flag says otherwise.
# bench_codec's were chosen by --calibrate (docs/GATE.md): 30 short rounds detect a 10% change
# where 10 longer ones missed a quarter of them, and the CPU-time rate drifts less than wall time.
DEFAULTS = {"bench_codec": {"metric": "cpu_bytes_per_second", "rounds": 30, "reps": 3},
            "bench_rdma": {"metric": "bytes_per_second", "rounds": 10, "reps": 5},
            "bench_pipeline": {"metric": "bytes_per_second", "rounds": 10, "reps": 5},
            "bench_collective": {"metric": "busbw", "rounds": 10, "reps": 5}}
LOWER_IS_BETTER = ("real_time", "cpu_time", "mr_reg_us", "first_touch_us", "instructions_per_byte")
OWN_FLAGS = ("--benchmark_repetitions", "--benchmark_out", "--benchmark_out_format", "--benchmark_format")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="ab", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: scripts/ab --rev-a=main --rev-b=HEAD -- --codecs=bytegroup+lz4 "
                                       "--datasets=synthetic:weights:size=8MiB:seed=1")
    p.add_argument("--bench", default="bench_codec", choices=BENCHES)
    for side in ("a", "b"):
        p.add_argument(f"--build-{side}", metavar="DIR", help=f"build directory of side {side.upper()}")
        p.add_argument(f"--rev-{side}", metavar="REV", help=f"git revision of side {side.upper()} (built here)")
        p.add_argument(f"--codec-{side}", metavar="SPEC", help=f"codec spec of side {side.upper()}")
        p.add_argument(f"--flags-{side}", metavar="FLAGS",
                       help=f"flags only side {side.upper()} runs with, on one build (shell words)")
        p.add_argument(f"--peer-{side}", metavar="HOST:PORT", help=f"server of side {side.upper()}")
    p.add_argument("--build", default=os.path.join(paired_repo(), "build"),
                   help="the build of --codec-X / --flags-X / --peer-X runs (default: build/ of this checkout)")
    p.add_argument("--cases", default="gated", choices=("gated", "all"),
                   help="bench_codec without --codecs/--datasets/--chunks after --: the gated set (default; "
                        "docs/GATE.md) or all: the binary's own defaults")
    p.add_argument("--rounds", type=int, help="rounds, each one run of A and one of B (default 30 for bench_codec, "
                   "10 for the others)")
    p.add_argument("--seed", type=int, help="seed of the per-round order (default: drawn, and printed)")
    p.add_argument("--min-time", default="0.01", help="--benchmark_min_time of each run in s (default 0.01)")
    p.add_argument("--reps", type=int, help="repetitions per run; a round keeps the best (default 3 for "
                   "bench_codec, 5 for the others)")
    p.add_argument("--threshold", default="5%", help="relative change counted as a regression (default 5%%)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--metric", default=None, help="comma-separated gated metrics, NAME or NAME:higher|lower "
                   "(default: cpu_bytes_per_second for bench_codec, chosen by --calibrate; busbw for bench_collective; bytes_per_second otherwise)")
    p.add_argument("--ranks", type=int, default=2, help="bench_collective: mpirun -np (default 2)")
    p.add_argument("--peer-wait", type=float, default=30,
                   help="--peer-X: seconds a refused connection is retried while a server restarts (default 30)")
    p.add_argument("--run-timeout", type=float, default=900, help="seconds one run may take (default 900)")
    p.add_argument("--out", default="ab-out", help="directory for a.json, b.json, ab.json (default ab-out)")
    p.add_argument("--cache-dir", help="where --rev worktrees are built (default ~/.cache/wirezip-ab)")
    p.add_argument("--icount", action="store_true", help="instruction counts under cachegrind (bench_codec)")
    p.add_argument("--icount-threshold", default="0.5%", help="--icount gate (default 0.5%%)")
    p.add_argument("--icount-cache", action="store_true", help="--icount: also simulated D1/LL misses per byte")
    p.add_argument("--calibrate", action="store_true", help="measure the gate's false alarms and power here")
    p.add_argument("--trials", type=int, default=30, help="--calibrate: trials per method (default 30)")
    p.add_argument("--methods", default="kept,ab,icount", help="--calibrate: which methods (default kept,ab,icount)")
    p.add_argument("bench_args", nargs="*", metavar="-- FLAG", help="flags for the benchmark binary, after --")
    args = p.parse_args(argv)
    for key in ("rounds", "reps"):
        if getattr(args, key) is None:
            setattr(args, key, DEFAULTS[args.bench][key])
    return args


def paired_repo():
    return os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))


def parse_metric_list(text, bench):
    out = []
    for item in filter(None, (text or DEFAULTS[bench]["metric"]).split(",")):
        name, _, direction = item.partition(":")
        direction = direction or ("lower" if name in LOWER_IS_BETTER else "higher")
        if direction not in ("higher", "lower"):
            raise BadInput(f"--metric: direction of '{name}' must be higher or lower (got {direction})")
        out.append((name, direction))
    if not out:
        raise BadInput("--metric: no metric given")
    return out


def refuse_own_flags(flags):
    for flag in flags:
        if flag.split("=")[0] in OWN_FLAGS:
            raise BadInput(f"{flag.split('=')[0]} is set by scripts/ab (one repetition per run, its own JSON)")


def gated_args(args, sides=()):
    """The flags after -- plus the gated set's flags the user did not give (--cases=gated). A
    --codec-a/--codec-b pair brings its own --codecs, a --flags-a/--flags-b pair its own flags."""
    given = {flag.split("=")[0] for flag in args.bench_args + [f for side in sides for f in side["flags"]]}
    extra = GATED_FLAGS.get(args.bench, {}) if args.cases == "gated" else {}
    return list(args.bench_args) + [f"{flag}={value}" for flag, value in extra.items() if flag not in given]


def report(rows, broken, threshold):
    lines = ["| case | metric | A median | B median | B/A median | CI | p | verdict |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = (f"{r['ci_low']:.3f}..{r['ci_high']:.3f} ({100 * r['ci_level']:.0f}%)"
              if r["ci_low"] is not None else "—")
        ratio = f"{r['median_ratio']:.3f}" if r["median_ratio"] is not None else "—"
        p = f"{r['p_value']:.3g}" if r["p_value"] is not None else "—"
        p += f" ({r['p_adjusted']:.3g} Holm)" if r["p_adjusted"] is not None else ""
        lines.append(f"| {r['case']} | {r['metric']} | {r['base']:.4g} | {r['new']:.4g} | {ratio} | {ci} | {p} | "
                     f"{r['verdict']}{' (' + r['note'] + ')' if r['note'] else ''} |")
    for b in broken:
        lines.append(f"broken: side {b['side']} round {b['round']}: {b['case']}: {b['reason']}")
    return "\n".join(lines)


def run_ab(args, log=print):
    """The A/B comparison; returns (exit status, ab.json's document)."""
    threshold = percent(args.threshold, "--threshold")
    metrics = parse_metric_list(args.metric, args.bench)
    if args.reps < 1:
        raise BadInput(f"--reps: need at least 1 (got {args.reps})")
    if args.rounds < 2:
        raise BadInput(f"--rounds: need at least 2 (got {args.rounds}); {paired.MIN_ROUNDS}+ for the test")
    refuse_own_flags(args.bench_args)  # before make_sides, which may build revisions
    kind, sides = make_sides(args, log)
    for side in sides:
        refuse_own_flags(side["flags"])
    args.bench_args = gated_args(args, sides)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    log(f"ab: {args.bench}, {kind} A={sides[0]['label']} B={sides[1]['label']}, {args.rounds} rounds, seed {seed}")
    started = time.monotonic()
    merged, orders, statuses = run_rounds(args, sides, seed, log)
    rows, broken = analyse(merged, metrics, threshold, args.alpha)
    if not rows and not broken:
        raise BadInput(f"no case carries the metric(s) {', '.join(m for m, _ in metrics)} on both sides")
    ok, line = gate(rows, broken, threshold)
    log(report(rows, broken, threshold))
    log(line)
    doc = {"ab": {"bench": args.bench, "kind": kind, "seed": seed, "rounds": args.rounds, "orders": orders,
                  "threshold_pct": 100 * threshold, "alpha": args.alpha, "statistic": "wilcoxon signed-rank on log(B/A)",
                  "sides": {s["name"].upper(): {"label": s["label"], "command": s["command"] + list(args.bench_args)}
                            for s in sides},
                  "exit_statuses": statuses, "wall_s": time.monotonic() - started, "pass": ok},
           "results": rows, "broken": broken,
           "context": merged["a"]["context"], "context_b": merged["b"]["context"],
           "benchmarks": merged["a"]["benchmarks"] + merged["b"]["benchmarks"]}
    os.makedirs(args.out, exist_ok=True)
    for name in ("a", "b"):
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump(merged[name], f, indent=1)
    with open(os.path.join(args.out, "ab.json"), "w") as f:
        json.dump(doc, f, indent=1)
    return (0 if ok else 1), doc


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.calibrate:
            import ab_calibrate
            return ab_calibrate.main(args)
        if args.icount:
            import icount
            return icount.main(args)
        return run_ab(args)[0]
    except BadInput as e:
        print(f"ab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
