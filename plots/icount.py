"""`scripts/ab --icount`: a deterministic gate for CPU-bound codec cases, on instructions instead of
time. Each bench_codec case of each side runs once under valgrind, which counts the instructions
executed (Ir) and, with --icount-cache, simulates the D1 and last-level caches. The tool is
callgrind, cachegrind's sibling on the same simulator: it has --toggle-collect, which Debian 12's
cachegrind (valgrind 3.19) lacks, and its summary line has the same event names.
Neither depends on the host's clock or a neighbour's load: identical code gives identical counts,
so the gate can be a small threshold (--icount-threshold, default 0.5%) with no statistics.

Isolating one case: --benchmark_filter selects exactly that case, --benchmark_min_time=0 makes
Google Benchmark (1.7.1 has no fixed-iteration flag) stop after its first iteration, and
callgrind collects only inside the harness's timed_codec_pass (--toggle-collect), so the data
set's generation, the setup compress, the round-trip check and the harness cost nothing. The
count is divided by the original bytes of the iterations run (instructions_per_byte, and
d1_misses_per_byte / ll_misses_per_byte).

Where it applies: code whose cost is its instructions (the codecs on a warm, small input). Where
it does not: links and memory-bound stages (memcpy, the pipeline, RDMA), whose time is bandwidth
and waiting, which instruction counts do not see; the simulated caches are a model, not the
host's. Valgrind runs code ~50x slower: use a small data set (e.g. size=1MiB).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from ab_rounds import percent
from ab_sides import BadInput, make_sides

TOGGLE = "*timed_codec_pass*"
OWN_FLAGS = ("--benchmark_filter", "--benchmark_min_time", "--benchmark_repetitions", "--benchmark_out",
             "--threads", "--benchmark_list_tests")


def list_cases(side, bench_args, timeout):
    done = subprocess.run(side["command"] + bench_args + ["--benchmark_list_tests=true"], capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
        raise BadInput(f"side {side['name'].upper()} ({side['label']}): {lines[-1]}")
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def read_summary(path):
    """{event: count} from a callgrind or cachegrind output file's events: and summary: lines."""
    events, summary = None, None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(x) for x in line.split()[1:]]
    if not events or summary is None:
        raise BadInput(f"{path}: no events/summary lines (not a callgrind output)")
    return dict(zip(events, summary))


def count_case(side, bench_args, case, cache_sim, workdir, timeout):
    """One case of one side under cachegrind: a row with instructions_per_byte (and miss rates)."""
    tag = re.sub(r"[^A-Za-z0-9]+", "_", case)[-80:]
    out_cg = os.path.join(workdir, f"{side['name']}-{tag}.cg")
    out_json = os.path.join(workdir, f"{side['name']}-{tag}.json")
    argv = ["valgrind", "--tool=callgrind", f"--cache-sim={'yes' if cache_sim else 'no'}",
            f"--toggle-collect={TOGGLE}", f"--callgrind-out-file={out_cg}", *side["command"], *bench_args,
            f"--benchmark_filter=^{re.escape(case)}$", "--benchmark_min_time=0", "--benchmark_repetitions=1",
            f"--benchmark_out={out_json}", "--benchmark_out_format=json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise BadInput(f"side {side['name'].upper()} {case}: under valgrind: {lines[-1]}")
    with open(out_json) as f:
        entry = next(e for e in json.load(f)["benchmarks"] if e.get("run_type") != "aggregate")
    if entry.get("error_occurred"):
        raise BadInput(f"side {side['name'].upper()} {case}: {entry.get('error_message')}")
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry.get("time_unit", "ns")]
    # Bytes of one iteration: rate x time per iteration, exact up to rounding (no timing in it).
    nbytes = round(entry["bytes_per_second"] * entry["real_time"] * scale) * entry["iterations"]
    events = read_summary(out_cg)
    if not events.get("Ir"):
        raise BadInput(f"side {side['name'].upper()} {case}: valgrind counted no instructions inside "
                       f"{TOGGLE}: this bench_codec has no timed_codec_pass")
    row = {"name": side["rename"](case), "ab_name": case, "ab_side": side["name"].upper(),
           "iterations": entry["iterations"], "bytes": nbytes, "instructions": events["Ir"],
           "instructions_per_byte": events["Ir"] / nbytes}
    if cache_sim:
        row["d1_misses_per_byte"] = (events.get("D1mr", 0) + events.get("D1mw", 0)) / nbytes
        row["ll_misses_per_byte"] = (events.get("DLmr", 0) + events.get("DLmw", 0)) / nbytes
    return row


def verdicts(rows_a, rows_b, threshold):
    """Per case in both sides: B/A of instructions_per_byte and the verdict (more instructions is
    worse); cases on one side only are listed apart."""
    b_by_name = {r["name"]: r for r in rows_b}
    out = []
    for a in rows_a:
        b = b_by_name.get(a["name"])
        if b is None:
            continue
        ratio = b["instructions_per_byte"] / a["instructions_per_byte"]
        verdict = "regression" if ratio > 1 + threshold else "improvement" if ratio < 1 - threshold else "same"
        out.append({"case": a["name"], "metric": "instructions_per_byte", "base": a["instructions_per_byte"],
                    "new": b["instructions_per_byte"], "ratio": ratio, "delta_pct": 100 * (ratio - 1),
                    "verdict": verdict})
    return out


def measure(args, sides, bench_args, log):
    """Counts every case of both sides; returns (rows of A, rows of B)."""
    rows = {}
    with tempfile.TemporaryDirectory(prefix="wirezip-icount-") as workdir:
        for side in sides:
            cases = list_cases(side, bench_args, args.run_timeout)
            rows[side["name"]] = [count_case(side, bench_args, c, args.icount_cache, workdir, args.run_timeout)
                                  for c in cases]
            log(f"icount: side {side['name'].upper()}: {len(cases)} case(s) counted")
    return rows["a"], rows["b"]


def check_args(args):
    if args.bench != "bench_codec":
        raise BadInput(f"--icount counts bench_codec's codec work; {args.bench} is bound by links or memory")
    if args.peer_a or args.peer_b:
        raise BadInput("--icount compares builds, revisions or codec specs, not servers")
    if shutil.which("valgrind") is None:
        raise BadInput("--icount needs valgrind (scripts/setup installs it)")
    for flag in args.bench_args:
        if flag.split("=")[0] in OWN_FLAGS:
            raise BadInput(f"{flag.split('=')[0]} is set by --icount (one case, one iteration, one thread)")


def main(args, log=print):
    threshold = percent(args.icount_threshold, "--icount-threshold")
    check_args(args)
    kind, sides = make_sides(args, log)
    bench_args = list(args.bench_args) + ["--threads=1"]
    started = time.monotonic()
    rows_a, rows_b = measure(args, sides, bench_args, log)
    results = verdicts(rows_a, rows_b, threshold)
    if not results:
        raise BadInput("no case measured on both sides")
    log("| case | A instr/byte | B instr/byte | B/A | verdict |\n|---|---|---|---|---|")
    for r in results:
        log(f"| {r['case']} | {r['base']:.4f} | {r['new']:.4f} | {r['ratio']:.5f} | {r['verdict']} |")
    regressions = sum(r["verdict"] == "regression" for r in results)
    ok = regressions == 0
    log("icount: gate: PASS" if ok else f"icount: gate: FAIL: {regressions} case(s) past {100 * threshold:g}% "
        "more instructions per byte")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "icount.json"), "w") as f:
        json.dump({"icount": {"kind": kind, "threshold_pct": 100 * threshold, "tool": "valgrind callgrind",
                              "toggle_collect": TOGGLE, "wall_s": time.monotonic() - started, "pass": ok,
                              "sides": {s["name"].upper(): s["label"] for s in sides}},
                   "results": results, "benchmarks": rows_a + rows_b}, f, indent=1)
    return 0 if ok else 1
