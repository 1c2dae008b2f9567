"""`scripts/history export --format=bmf|github-action-benchmark`: the newest run of every series in the
input format of a hosted tracker, so a runner with network can push what the local history holds.

- bmf: Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format): an object
  {benchmark name: {measure: {"value", "lower_value", "upper_value"}}}; the value is the run's
  median, the bounds the smallest and largest repetition. real_time goes to Bencher's built-in
  `latency` measure (ns); every other metric to a measure of its own name, which Bencher creates.
- github-action-benchmark: its custom tools' input, a list of {"name", "unit", "value", "range",
  "extra"}; one file holds one direction, so every metric given must be higher-is-better (the
  action's `tool: customBiggerIsBetter`) or every one lower-is-better (`customSmallerIsBetter`).
A case recorded under more than one runner class gets the class in its name, so no two series merge.
"""
import json

import history_check
from compare_input import BadInput

FORMATS = ("bmf", "github-action-benchmark")
BENCHER_MEASURES = {"real_time": "latency", "cpu_time": "cpu-latency"}
UNITS = {"bytes_per_second": "bytes/s", "items_per_second": "items/s", "real_time": "ns", "cpu_time": "ns"}


def newest(db, metrics):
    """[(name, metric, direction, run)] of each series' newest run that has the metric and is ok."""
    out = []
    for metric, direction in metrics:
        series = history_check.load_series(db, metric)
        names = {}
        for klass, case in series:
            names.setdefault(case, []).append(klass)
        for (klass, case), runs in sorted(series.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            run = runs[-1]
            if run["status"] != "ok" or run["value"] is None:
                continue
            name = case if len(names[case]) == 1 else f"{case} [{klass}]"
            out.append((name, metric, direction, run))
    return out


def bounds(run):
    reps = run["reps"] or [run["value"]]
    return min(reps), max(reps)


def bmf(rows):
    out = {}
    for name, metric, _, run in rows:
        lower, upper = bounds(run)
        out.setdefault(name, {})[BENCHER_MEASURES.get(metric, metric)] = {
            "value": run["value"], "lower_value": lower, "upper_value": upper}
    return out


def github_action_benchmark(rows):
    directions = {direction for _, _, direction, _ in rows}
    if len(directions) > 1:
        raise BadInput("--format=github-action-benchmark: the metrics mix higher- and lower-is-better; "
                       "export one direction per file (one --metrics each)")
    out = []
    for name, metric, _, run in rows:
        lower, upper = bounds(run)
        out.append({"name": f"{name} {metric}", "unit": UNITS.get(metric, metric), "value": run["value"],
                    "range": f"{lower:.6g} .. {upper:.6g}",
                    "extra": f"commit {run['git_sha']}, {run['date']}, {len(run['reps'])} repetition(s)"})
    return out


def export(db, fmt, metrics):
    """The export as a JSON-ready object; BadInput when nothing in the history has the metrics."""
    rows = newest(db, metrics)
    if not rows:
        raise BadInput(f"no usable run in the history has any of {', '.join(m for m, _ in metrics)}")
    return bmf(rows) if fmt == "bmf" else github_action_benchmark(rows)


def write(obj, path):
    text = json.dumps(obj, indent=1) + "\n"
    if path in (None, "-"):
        print(text, end="")
        return
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise BadInput(f"{path}: cannot write: {e.strerror}") from None
