"""The newest run of each case and runner class judged against that class's earlier runs.

Two rules, each with the metric's direction and the --threshold of scripts/compare:
- change point (history_changes: E-divisive means over the series of per-run values): a change
  point among the last `recent` runs moved the case; its size is the newest segment's median
  against the median of the segment before the first such point, so five steps of 2% add up.
- step (compare_sides.compare_metric: Mann-Whitney U): the newest run's repetitions against the
  pooled repetitions of the previous `window` runs; it sees a move in the newest run alone, which
  a change point cannot (a segment needs two runs).
A case whose newest run failed, was skipped, did not verify, or lost a metric its earlier runs had
is broken. Regressions and broken cases fail the check.
"""
import json
import statistics
import zlib

import numpy as np

import history_changes
from compare_sides import compare_metric

REPETITION = "repetition"


def load_series(db, metric):
    """{(runner class, case): [run]} with runs oldest first; a run is {"run_id", "git_sha", "date", "status",
    "reason", "reps": [values], "value": the run's median aggregate, else its mean, else the median
    of its repetitions, or None}."""
    cases = {}
    rows = db.execute("SELECT c.id, c.runner_class, c.name, c.status, c.reason, r.id, r.git_sha, r.date, s.kind, "
                      "s.value "
                      "FROM cases c JOIN runs r ON r.id = c.run_id "
                      "LEFT JOIN samples s ON s.case_id = c.id AND s.metric = ? "
                      "ORDER BY r.date, r.id, c.id, s.repetition", (metric,))
    for case_id, klass, name, status, reason, run_id, sha, date, kind, value in rows:
        run = cases.setdefault(case_id, {"key": (klass, name), "run_id": run_id, "git_sha": sha, "date": date,
                                         "status": status, "reason": reason, "values": {}})
        if kind is not None:
            run["values"].setdefault(kind, []).append(value)
    series = {}
    for run in cases.values():  # dicts keep the query's order: oldest run first
        values = run.pop("values")
        reps = values.get(REPETITION, [])
        aggregate = values.get("median") or values.get("mean")
        run["reps"] = reps
        run["value"] = aggregate[0] if aggregate else statistics.median(reps) if reps else None
        series.setdefault(run.pop("key"), []).append(run)
    return series


def step_rule(runs, metric, direction, threshold, alpha, window):
    """compare_metric of the newest run against the previous `window` runs."""
    newest, earlier = runs[-1], runs[-1 - window:-1]
    if all(r["reps"] for r in earlier + [newest]):
        base, new = ([v for r in earlier for v in r["reps"]], True), (newest["reps"], True)
    else:
        base, new = ([r["value"] for r in earlier], False), ([newest["value"]], False)
    return compare_metric(base, new, threshold, alpha, direction)


def change_rule(runs, direction, threshold, alpha, permutations, recent, rng):
    """The recent change points of the series and the move they add up to, or None."""
    values = [r["value"] for r in runs]
    points = history_changes.change_points(values, alpha, permutations, rng)
    late = [(i, p) for i, p in points if i >= len(values) - recent]
    if not late:
        return None
    before_start = max([i for i, _ in points if i < late[0][0]], default=0)
    after = statistics.median(values[late[-1][0]:])
    before = statistics.median(values[before_start:late[0][0]])
    delta = after / before - 1
    worse = delta < -threshold if direction == "higher" else delta > threshold
    better = delta > threshold if direction == "higher" else delta < -threshold
    return {"verdict": "regression" if worse else "improvement" if better else "same", "delta_pct": 100 * delta,
            "before": before, "after": after,
            "points": [{"git_sha": runs[i]["git_sha"], "date": runs[i]["date"], "index": i, "p_value": p}
                       for i, p in late]}


def judge(key, runs, metric, direction, opts):
    """One finding for one (runner class, case) series, or None when the newest run has no value
    and never had one (the metric is not this case's)."""
    klass, name = key
    newest = runs[-1]
    finding = {"case": name, "runner_class": klass, "metric": metric, "git_sha": newest["git_sha"],
               "date": newest["date"], "runs": len(runs), "verdict": "same", "rules": [], "step": None, "change": None}
    if newest["status"] != "ok":
        return {**finding, "verdict": "broken", "reason": f"{newest['status']}: {newest['reason']}"}
    usable = [r for r in runs if r["status"] == "ok" and r["value"] is not None and r["value"] > 0][-opts["last"]:]
    if newest["value"] is None:
        if len(usable) == 0:
            return None
        return {**finding, "verdict": "broken", "reason": f"{metric} missing in the newest run (earlier runs have it)"}
    if newest["value"] <= 0:
        return {**finding, "verdict": "broken", "reason": f"{metric}={newest['value']:g}: no relative change exists"}
    if len(usable) < 2:
        return {**finding, "verdict": "new", "reason": "no earlier run in this runner class"}
    seed = [opts["seed"], zlib.crc32(f"{klass}/{name}/{metric}".encode())]
    step = step_rule(usable, metric, direction, opts["threshold"], opts["alpha"], opts["window"])
    change = change_rule(usable, direction, opts["threshold"], opts["alpha"], opts["permutations"], opts["recent"],
                         np.random.default_rng(seed))
    verdicts = {"mann-whitney step": step["verdict"], "e-divisive": change["verdict"] if change else "same"}
    for verdict in ("regression", "improvement"):
        rules = [rule for rule, v in verdicts.items() if v == verdict]
        if rules:
            return {**finding, "verdict": verdict, "rules": rules, "step": step, "change": change}
    return {**finding, "step": step, "change": change}


def check(db, metrics, opts):
    """Every finding for every gated metric, in case order."""
    findings = []
    for metric, direction in metrics:
        for key, runs in sorted(load_series(db, metric).items(), key=lambda kv: (kv[0][1], kv[0][0])):
            finding = judge(key, runs, metric, direction, opts)
            if finding:
                findings.append(finding)
    return findings


def newest_values(db, metrics):
    """({(runner class, case): {metric: the newest run's value}}, {(runner class, case): that run's
    context}) for --expect; None where the newest run failed or did not verify, and no entry where
    the case never carried the metric."""
    out, run_ids = {}, {}
    for metric in metrics:
        for key, runs in load_series(db, metric).items():
            newest = runs[-1]
            if newest["status"] != "ok":
                out.setdefault(key, {})[metric] = None
            elif newest["value"] is not None:
                out.setdefault(key, {})[metric] = newest["value"]
            run_ids[key] = newest["run_id"]
    contexts = {run: json.loads(text) for run, text in db.execute("SELECT id, context FROM runs")
                if run in set(run_ids.values())}
    return out, {key: contexts[run] for key, run in run_ids.items()}


def describe(f):
    """One line for a finding that moved or broke."""
    head = f"{f['verdict'].upper():<11} {f['case']} [{f['runner_class']}] {f['metric']}"
    if f["verdict"] in ("broken", "new"):
        return f"{head}: {f['reason']} (run {f['git_sha']}, {f['date']})"
    parts = []
    if f["change"] and f["change"]["verdict"] != "same":
        c = f["change"]
        where = ", ".join(f"{p['git_sha']} ({p['date'][:10]}, p={p['p_value']:.3g})" for p in c["points"])
        parts.append(f"e-divisive: {c['delta_pct']:+.1f}% since {where}")
    s = f["step"]
    if s and s["verdict"] != "same":
        p = f"p={s['p_value']:.3g}" if s["u_test"] else "threshold alone"
        parts.append(f"mann-whitney step: {s['delta_pct']:+.1f}% in {f['git_sha']} vs the previous runs ({p})")
    return f"{head}: " + "; ".join(parts)
