"""The interleaved rounds of scripts/ab and their paired verdict: run side A and side B in a seeded
random order per round, keep each round's best repetition, judge B/A per case (plots/paired.py)
and gate on it. scripts/ab, its --calibrate (plots/ab_calibrate.py) and --icount (plots/icount.py)
all build on these; the command line and the output files are plots/ab.py's.
"""
import json
import os
import random
import subprocess
import tempfile
import time

import paired
from ab_sides import BadInput, run_env

# The gated cases of bench_codec (--cases=gated): the default codec, a fast LZ codec and memcpy
# (always in the run), compress and decompress, on 1 MiB: one round takes ~2 s on 2 vCPUs, so the
# default rounds fit in the 3-minute CI budget. Each flag applies only where the user gave none.
GATED_FLAGS = {"bench_codec": {"--codecs": "bytegroup:split=exponent+huff,bytegroup+lz4",
                               "--datasets": "synthetic:weights:size=1MiB:seed=1", "--chunks": "1MiB"}}


def percent(text, flag):
    try:
        value = float(str(text).rstrip("%")) / 100
    except ValueError:
        raise BadInput(f"{flag}: not a percentage: {text}") from None
    if not 0 <= value < 1:
        raise BadInput(f"{flag}: must be in [0%, 100%) (got {text})")
    return value


def add_cpu_rate(row):
    """cpu_bytes_per_second: the original bytes per CPU-second of the benchmark's threads. Why: on
    a shared runner a run gets a varying share of a CPU (a wall-time rate drops while it waits
    for one); the CPU time counts only the time it ran, so the rate moves far less. It means
    nothing for cases that wait on a link, whose default gate stays bytes_per_second."""
    if all(isinstance(row.get(k), (int, float)) for k in ("bytes_per_second", "real_time", "cpu_time")) \
            and row["cpu_time"] > 0:
        row["cpu_bytes_per_second"] = row["bytes_per_second"] * row["real_time"] / row["cpu_time"]


def run_once(side, args, round_index, workdir):
    """One run of one side: its JSON rows, each tagged with the side and round, names shared by
    both sides. Raises BadInput when the binary fails without any JSON (a flag it rejects, a
    peer it cannot reach): a run like that would fail the same way every round."""
    out = os.path.join(workdir, f"{side['name']}-{round_index}.json")
    argv = side["command"] + list(args.bench_args) + [
        f"--benchmark_repetitions={args.reps}", f"--benchmark_min_time={args.min_time}", f"--benchmark_out={out}",
        "--benchmark_out_format=json"]
    # A --serve side quits after each client run: with --peer-X, a refused connection is retried
    # while the server restarts (in the loop docs/GATE.md shows), for at most --peer-wait seconds.
    deadline = time.monotonic() + (args.peer_wait if side.get("peer") else 0)
    while True:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout, env=run_env(args))
        except subprocess.TimeoutExpired:
            raise BadInput(f"side {side['name'].upper()} round {round_index}: no result within "
                           f"{args.run_timeout:g} s (--run-timeout)") from None
        try:
            with open(out) as f:
                data = json.load(f)
            break
        except (OSError, ValueError):
            lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
            if "Connection refused" in lines[-1] and time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            raise BadInput(f"side {side['name'].upper()} ({side['label']}) failed: {lines[-1]}") from None
    for row in data.get("benchmarks", []):
        add_cpu_rate(row)
        row["ab_name"] = row["name"]
        row["name"] = side["rename"](row["name"])
        if row.get("run_name"):
            row["run_name"] = side["rename"](row["run_name"])
        row["ab_side"], row["ab_round"] = side["name"].upper(), round_index
    return data, done.returncode


def run_rounds(args, sides, seed, log):
    """Runs the rounds; returns ({side: {"context", "benchmarks"}}, orders, exit statuses)."""
    rng = random.Random(seed)
    merged = {s["name"]: {"context": None, "benchmarks": []} for s in sides}
    orders, statuses = [], []
    with tempfile.TemporaryDirectory(prefix="wirezip-ab-") as workdir:
        for r in range(args.rounds):
            order = sides[:]
            rng.shuffle(order)
            orders.append("".join(s["name"].upper() for s in order))
            for side in order:
                data, status = run_once(side, args, r, workdir)
                statuses.append((side["name"], r, status))
                target = merged[side["name"]]
                target["context"] = target["context"] or data.get("context", {})
                target["benchmarks"].extend(data.get("benchmarks", []))
            log(f"ab: round {r + 1}/{args.rounds} done ({orders[-1]})")
    return merged, orders, statuses


def best(direction, kept, value):
    """The best of a round's repetitions. Why: a neighbour's load only ever slows a run down, so
    the fastest of a few short repetitions is the least disturbed one."""
    if kept is None:
        return value
    return max(kept, value) if direction == "higher" else min(kept, value)


def analyse(merged, metrics, threshold, alpha):
    """Per case and metric, the paired comparison; plus the cases broken on a side."""
    values = {}
    broken = []
    for side, data in merged.items():
        for row in data["benchmarks"]:
            if row.get("run_type") == "aggregate":
                continue
            if row.get("error_occurred") or row.get("verified", 1) != 1:
                broken.append({"side": side.upper(), "case": row["name"], "round": row["ab_round"],
                               "reason": row.get("error_message") or f"verified={row.get('verified')}"})
                continue
            for metric, direction in metrics:
                if isinstance(row.get(metric), (int, float)):
                    by_round = values.setdefault((row["name"], metric), {}).setdefault(side, {})
                    by_round[row["ab_round"]] = best(direction, by_round.get(row["ab_round"]), row[metric])
    rows = []
    for (case, metric), sides in values.items():
        direction = dict(metrics)[metric]
        if "a" in sides and "b" in sides:
            rows.append({"case": case, "metric": metric,
                         **paired.compare_paired(sides["a"], sides["b"], threshold, alpha, direction)})
    return paired.holm(rows, alpha), broken


def gate(rows, broken, threshold):
    regressions = [r for r in rows if r["verdict"] == "regression"]
    broken_b = [b for b in broken if b["side"] == "B"]
    ok = not regressions and not broken_b
    why = [f"{len(regressions)} regression(s) past {100 * threshold:g}%"] if regressions else []
    why += [f"{len(broken_b)} broken run(s) of a case on side B"] if broken_b else []
    return ok, ("ab: gate: PASS" if ok else "ab: gate: FAIL: " + ", ".join(why))
