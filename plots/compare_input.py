"""What scripts/compare reads, checked before anything is compared: each file's entries (one name
per benchmark, each repetition once, times in a known unit), each case's points for each gated
metric (or why it has none), and the files of one side pooled.

A side's value of a metric comes from its repetitions; a file (or a case) holding only aggregates
is judged on its worst statistic: the gate takes the worse of the mean and the median on a side
after the first (the base keeps its median), and `verified` must be 1 in every repetition and in
every mean or median aggregate. A case with only stddev/cv aggregates has no value at all.
"""
import json

import benchjson


class BadInput(Exception):
    """An input that cannot be compared; compare.main() turns it into exit status 2."""


def load(path):
    """(context, {name: case}) of one Google Benchmark JSON file (cases as benchjson reads them)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise BadInput(f"{path}: not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) or not data["benchmarks"]:
        raise BadInput(f"{path}: no benchmarks (expected Google Benchmark JSON with a 'benchmarks' list)")
    if not all(isinstance(entry, dict) and isinstance(entry.get("name"), str)
               and isinstance(entry.get("run_name", ""), str) for entry in data["benchmarks"]):
        raise BadInput(f"{path}: a benchmark entry without a name")
    try:
        check_unique(data["benchmarks"])
        cases = benchjson.read_cases(data["benchmarks"])
    except ValueError as e:
        raise BadInput(f"{path}: {e}") from None
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    return context, cases


def check_unique(benchmarks):
    """ValueError naming the case when one name stands for more than one measurement. Google
    Benchmark marks a case's rows: family_index and per_family_instance_index name the benchmark
    that wrote it, repetition_index the repetition (0..repetitions-1), aggregate_name the
    statistic. So a name is duplicated when two benchmarks write it, when a repetition index or an
    aggregate comes twice, or, where a writer gives no repetition_index, when it has more runs
    than its `repetitions`. Rows of a scripts/ab side file carry ab_round: each round is a run of its
    own, so the checks hold within a round. Why: pooling two different measurements under one name
    is silent."""
    seen = {}
    for entry in benchmarks:
        name = benchjson.case_name(entry)
        record = seen.setdefault((name, entry.get("ab_round")), {"instance": None, "indices": set(), "unindexed": 0, "aggregates": set()})
        instance = (entry.get("family_index"), entry.get("per_family_instance_index"))
        if None not in instance:
            if record["instance"] not in (None, instance):
                raise ValueError(f"duplicate case name {name}: written by two benchmarks (family_index, "
                                 f"per_family_instance_index) {record['instance']} and {instance}")
            record["instance"] = instance
        if entry.get("run_type") == "aggregate":
            kind = str(entry.get("aggregate_name"))
            if kind in record["aggregates"]:
                raise ValueError(f"duplicate case name {name}: two {kind} aggregates")
            record["aggregates"].add(kind)
        elif "repetition_index" in entry:
            index = entry["repetition_index"]
            if not isinstance(index, int) or isinstance(index, bool):
                raise ValueError(f"{name}: repetition_index {index!r} is not an integer")
            if index in record["indices"]:
                raise ValueError(f"duplicate case name {name}: repetition {index} appears twice")
            record["indices"].add(index)
        else:
            record["unindexed"] += 1
            repetitions = entry.get("repetitions")
            limit = repetitions if isinstance(repetitions, int) and repetitions >= 1 else 1
            if record["unindexed"] > limit:
                raise ValueError(f"duplicate case name {name}: {record['unindexed']} runs without a "
                                 f"repetition_index for {limit} repetition(s)")


def shown(v):
    return f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)


def metric_points(case, metric, worst=None):
    """(points, all points are repetitions, problem) of one metric of one file's case. problem says
    why the case has no usable value (a NaN, a string, a repetition without it); all three are
    None when the case does not carry the metric at all. worst ('higher'/'lower', the metric's
    direction): from aggregates alone, take the worse of mean and median; else the median."""
    runs = case["runs"]
    if runs:
        good, bad = case["samples"].get(metric, []), case["invalid"].get(metric, [])
        if bad:
            return None, None, f"{metric}={shown(bad[0])} in {len(bad)} of {runs} repetition(s)"
        if not good:
            return None, None, None
        if len(good) < runs:
            return None, None, f"{metric} absent in {runs - len(good)} of {runs} repetition(s)"
        return good, True, None
    stats = {a: case["aggregates"][a][metric] for a in ("median", "mean") if metric in case["aggregates"].get(a, {})}
    bad = [(a, v) for a, v in stats.items() if not benchjson.is_number(v)]
    if bad:
        return None, None, f"{metric}={shown(bad[0][1])} ({bad[0][0]} aggregate)"
    if not stats:
        return None, None, None
    values = list(stats.values())
    point = values[0] if worst is None else min(values) if worst == "higher" else max(values)
    return [point], False, None


def verified_count(case):
    """(runs or mean/median aggregates carrying `verified`, how many there are)."""
    if case["runs"]:
        return len(case["samples"].get("verified", []) + case["invalid"].get("verified", [])), case["runs"]
    locations = benchjson.location_aggregates(case).values()
    return sum("verified" in values for values in locations), len(locations)


def pool(loaded, metrics, worst=False):
    """Merges the cases of several loaded files into one side. Why: runs of one group (e.g. one
    firmware version) measured in several files are the same population. A file with repetitions
    contributes its samples; an aggregates-only file one point (see metric_points; worst: judge it
    on its worst statistic), and then the side has no repetition samples for a U test. A case
    broken in any file is broken on the side; so is a metric that is unusable in any file, or
    present in some files and not in others."""
    side = {}
    for _context, cases in loaded:
        for name, case in cases.items():
            merged = side.setdefault(name, {"points": {}, "reps": {}, "problems": {}, "absent": set(),
                                            "broken": None, "skipped": None, "verified": [0, 0]})
            broken = benchjson.broken_reason(case)
            if broken or case["skipped"]:
                merged["broken"] = merged["broken"] or broken
                merged["skipped"] = merged["skipped"] or (case["skipped"] and f"skipped: {case['skipped']}")
                continue
            merged["verified"] = [a + b for a, b in zip(merged["verified"], verified_count(case))]
            for metric, direction in metrics:
                points, reps, problem = metric_points(case, metric, direction if worst else None)
                if problem:
                    merged["problems"].setdefault(metric, problem)
                elif points is None:
                    merged["absent"].add(metric)
                else:
                    merged["points"].setdefault(metric, []).extend(points)
                    merged["reps"][metric] = merged["reps"].get(metric, True) and reps
    for case in side.values():  # measured in one file and skipped in another: measured
        if case["points"] or case["problems"] or case["verified"][1]:
            case["skipped"] = None
    return side


def metric_state(case, metric):
    """(points, reps, problem) of a pooled case: problem set when unusable, points None when absent."""
    if metric in case["problems"]:
        return None, None, case["problems"][metric]
    if metric not in case["points"]:
        return None, None, None
    if metric in case["absent"]:
        return None, None, f"{metric} absent in some of the side's files"
    return case["points"][metric], case["reps"][metric], None
