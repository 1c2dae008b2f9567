"""Where a loopback pipeline's idle CPU time goes, from a scheduler trace.

    scripts/sched-trace [--build=DIR] [--last=SECONDS] [--keep=DIR] -- BENCH_PIPELINE_FLAGS...
    scripts/sched-trace --timehist=FILE [--last=SECONDS]

The first form records `perf sched record` around build/bin/bench_pipeline with those flags, then
reads `perf sched timehist --state`; the second reads such a timehist text already made.

Over the last SECONDS before the last run of the receiving thread (`wz-receiver`, loopback's), per
CPU: the share of the time no task ran on it (idle), and how much of that idle time a thread was
runnable but not running: on another CPU's run queue (the scheduler left it there: placement), or
woken onto this CPU and not yet running (the wake-up from idle). A thread is runnable from its
wake-up until it runs (timehist's "sch delay"), or, when it was preempted (state R at its last
switch-out), all the time until it runs again ("wait time"); it counts on the CPU it then ran on.
Idle gaps of --untimed-gap-ms or more are left out, on every CPU: in a bench_pipeline run they are
the receiving thread filling its destination between runs, outside the timed region.

Exit 2 on bad input (no perf, no such thread in the trace), with one line saying what was wrong.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# time  [cpu]  task[tid/pid]  wait  sch-delay  run  state   (times in ms, time in s)
ROW = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(\S.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$")
TASK = re.compile(r"^(.*)\[(-?\d+)(?:/-?\d+)?\]$")


def parse_timehist(text):
    """Rows (time_s, cpu, name, tid, wait_s, delay_s, run_s, state) of `perf sched timehist --state`."""
    rows = []
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        task = TASK.match(m[3])
        name, tid = (task[1], int(task[2])) if task else (m[3], -1)
        rows.append((float(m[1]), int(m[2]), name, tid, float(m[4]) / 1e3, float(m[5]) / 1e3, float(m[6]) / 1e3, m[7]))
    return rows


def union(intervals):
    """Sorted, merged [start, end) intervals."""
    out = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(i) for i in out]


def length(intervals):
    return sum(e - s for s, e in intervals)


def intersect(a, b):
    """The intersection of two merged interval lists."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a, b):
    """a minus b, both merged."""
    out = []
    for s, e in a:
        at = s
        for bs, be in b:
            if be <= at or bs >= e:
                continue
            if bs > at:
                out.append((at, bs))
            at = max(at, be)
        if at < e:
            out.append((at, e))
    return out


# Idle gaps by length: how long the scheduler left a CPU idle at a time.
GAP_CLASSES = [("<0.1ms", 1e-4), ("0.1-0.5ms", 5e-4), ("0.5-2ms", 2e-3), (">=2ms", float("inf"))]


def summarize(rows, last_s=1.5, anchor="wz-receiver", untimed_gap_s=0.01):
    anchored = [r[0] for r in rows if r[2] == anchor]
    if not anchored:
        raise ValueError(f"no thread named {anchor} in the trace: was it a loopback bench_pipeline run?")
    hi = max(anchored)
    lo = hi - last_s
    cpus = sorted({r[1] for r in rows})
    busy, queued = collections.defaultdict(list), collections.defaultdict(list)
    run_time = collections.Counter()
    last_state = {}
    for t, cpu, name, tid, wait, delay, run, state in rows:
        preempted = last_state.get(tid) == "R"
        last_state[tid] = state
        if name == "<idle>" or tid == 0:  # perf prints some CPUs' idle rows, not all: idle is what no task covers
            continue
        start = t - run
        busy[cpu].append((max(start, lo), min(t, hi)))
        run_time[(f"{name}[{tid}]", cpu)] += max(0.0, min(t, hi) - max(start, lo))
        waited = wait if preempted else delay
        queued[cpu].append((max(start - waited, lo), min(start, hi)))
    window = [(lo, hi)]
    idle = {c: subtract(window, union(busy[c])) for c in cpus}
    untimed = union([g for c in cpus for g in idle[c] if g[1] - g[0] >= untimed_gap_s])
    timed = subtract(window, untimed)
    span = length(timed)
    if span <= 0:
        raise ValueError("no timed time left in the window")
    out = {"window_s": last_s, "anchor": anchor, "untimed_s": length(untimed), "timed_s": span, "cpus": [], "threads": []}
    for c in cpus:
        idle_c = intersect(subtract(idle[c], untimed), timed)
        elsewhere = union([q for o in cpus if o != c for q in queued[o]])
        here = union(queued[c])
        i = length(idle_c)
        gaps = collections.Counter()
        for g0, g1 in idle_c:
            gaps[next(label for label, below in GAP_CLASSES if g1 - g0 < below)] += (g1 - g0) / i
        out["cpus"].append({"cpu": c, "idle": i / span, "idle_by_gap": {label: gaps[label] for label, _ in GAP_CLASSES},
                            "waiting_elsewhere": length(intersect(idle_c, elsewhere)) / i if i else 0.0,
                            "woken_here": length(intersect(idle_c, here)) / i if i else 0.0})
    for (name, cpu), t in run_time.most_common():
        out["threads"].append({"thread": name, "cpu": cpu, "share": t / (hi - lo)})
    return out


def render(summary, top=10):
    lines = [f"sched-trace: the last {summary['window_s'] * 1e3:.0f} ms before {summary['anchor']}'s last run; "
             f"{summary['untimed_s'] * 1e3:.0f} ms of idle gaps left out as untimed",
             "",
             "| cpu | idle | of it, a thread waited on another CPU's queue | of it, a thread woken onto this CPU had not run |",
             "|---|---|---|---|"]
    for c in summary["cpus"]:
        lines.append(f"| {c['cpu']} | {100 * c['idle']:.1f}% | {100 * c['waiting_elsewhere']:.0f}% | "
                     f"{100 * c['woken_here']:.0f}% |")
    for c in summary["cpus"]:
        if c["idle"] >= 0.01:
            parts = ", ".join(f"{label} {100 * share:.0f}%" for label, share in c["idle_by_gap"].items())
            lines.append(f"cpu {c['cpu']}'s idle time by gap length: {parts}")
    lines += ["", "Run time by thread and CPU (share of the window):"]
    for t in summary["threads"][:top]:
        lines.append(f"  {t['thread']:28s} cpu{t['cpu']} {100 * t['share']:5.1f}%")
    return "\n".join(lines)


def record(build, flags, keep):
    """Runs bench_pipeline under perf sched record; returns the timehist text."""
    perf = shutil.which("perf")
    if not perf:
        raise ValueError("perf is not installed (Debian: linux-perf)")
    bench = os.path.join(build, "bin", "bench_pipeline")
    if not os.access(bench, os.X_OK):
        raise ValueError(f"{bench} is not there: build first (cmake --build {build})")
    out = keep or tempfile.mkdtemp(prefix="sched-trace.")
    os.makedirs(out, exist_ok=True)
    data = os.path.join(out, "sched.data")
    run = subprocess.run([perf, "sched", "record", "-o", data, "--", bench, *flags])
    if run.returncode != 0:
        raise ValueError(f"perf sched record around bench_pipeline exited {run.returncode}")
    text = subprocess.run([perf, "sched", "timehist", "-i", data, "--state"], capture_output=True, text=True,
                          check=True).stdout
    with open(os.path.join(out, "timehist.txt"), "w") as f:
        f.write(text)
    if not keep:
        shutil.rmtree(out)
    return text


def main(argv=None):
    p = argparse.ArgumentParser(prog="sched-trace", description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--timehist", help="a `perf sched timehist --state` text to read instead of recording")
    p.add_argument("--last", type=float, default=1.5, help="seconds before the receiving thread's last run")
    p.add_argument("--untimed-gap-ms", type=float, default=10.0)
    p.add_argument("--anchor", default="wz-receiver", help="the thread whose last run ends the window")
    p.add_argument("--keep", help="keep sched.data and timehist.txt in this directory")
    p.add_argument("--json", action="store_true")
    p.add_argument("flags", nargs="*", help="bench_pipeline's flags, after --")
    args = p.parse_args(argv)
    try:
        if args.last <= 0 or args.untimed_gap_ms <= 0:
            raise ValueError("--last and --untimed-gap-ms must be positive")
        if args.timehist:
            with open(args.timehist) as f:
                text = f.read()
        else:
            text = record(args.build, args.flags, args.keep)
        summary = summarize(parse_timehist(text), args.last, args.anchor, args.untimed_gap_ms / 1e3)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"sched-trace: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=1) if args.json else render(summary))
    return 0
