"""Google Benchmark JSON regrouped by case. Why: one case's repetitions, its aggregates and its
failure are separate entries in the file, and a failed case carries no counters at all; the
report, the comparison and scripts/reproduce all need them back together under one name.

A case is {"samples": {metric: [value per repetition]}, "median": {metric: median aggregate},
"failed": message or None, "skipped": message or None, "runs": number of measured repetitions,
"invalid": {metric: [value, one per repetition holding something that is not a finite number]},
"aggregates": {aggregate name: {metric: value as written}}}. samples and median hold finite
numbers only, so a NaN or a string never becomes a median; invalid keeps them for whoever must
not overlook them. Times (real_time, cpu_time) are in nanoseconds whatever the entry's time_unit;
an entry with another time_unit is a ValueError naming its case.
"""
import math
import statistics

AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")
# Aggregates that describe a spread, not a value: a stddev of 1s is 0, not a failure.
DISPERSION = ("stddev", "cv", "BigO", "RMS")
TIME_METRICS = ("real_time", "cpu_time")
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BOOKKEEPING = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
               "iterations"}
# Google Benchmark's descriptive fields: text by design, never a metric.
DESCRIPTIVE = {"name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "time_unit", "label",
               "error_occurred", "error_message", "skipped", "skip_message", "big_o"}


def case_name(entry):
    """The name shared by a case's repetitions and aggregates: run_name when the writer gave it,
    else the name with the aggregate suffix stripped (older Google Benchmark versions)."""
    if entry.get("run_name"):
        return entry["run_name"]
    name = entry["name"]
    if entry.get("run_type") == "aggregate":
        for suffix in ("_" + str(entry.get("aggregate_name", "")),) + AGGREGATE_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)]
    return name


def is_number(v):
    """A finite int or float (a JSON true is not a measurement)."""
    try:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def fields(entry):
    """The entry's metric fields as written (numbers, NaN, strings...), times converted to ns.
    ValueError when its time_unit is not one Google Benchmark writes."""
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in NS_PER_UNIT:
        raise ValueError(f"{case_name(entry)}: unknown time_unit {unit!r} (expected ns, us, ms or s)")
    out = {k: v for k, v in entry.items() if k not in BOOKKEEPING and k not in DESCRIPTIVE}
    for k in TIME_METRICS:
        if is_number(out.get(k)):
            out[k] *= NS_PER_UNIT[unit]
    return out


def read_cases(benchmarks):
    """{name: case} from the 'benchmarks' list, in the order cases first appear. An entry that
    failed (error_occurred) or was skipped by design (skipped) marks its case so; the mean
    aggregate stands in where a file has no median."""
    cases = {}
    for entry in benchmarks:
        case = cases.setdefault(case_name(entry), {"samples": {}, "median": {}, "failed": None, "skipped": None,
                                                   "runs": 0, "invalid": {}, "aggregates": {}})
        if entry.get("error_occurred"):
            case["failed"] = entry.get("error_message") or "no message"
            continue
        if entry.get("skipped"):
            case["skipped"] = entry.get("skip_message") or "no message"
            continue
        values = fields(entry)
        if entry.get("run_type") == "aggregate":
            name = str(entry.get("aggregate_name"))
            case["aggregates"][name] = values
            finite = {k: v for k, v in values.items() if is_number(v)}
            if name == "median":
                case["median"].update(finite)
            elif name == "mean":
                for k, v in finite.items():
                    case["median"].setdefault(k, v)
            continue
        case["runs"] += 1
        for k, v in values.items():
            (case["samples"] if is_number(v) else case["invalid"]).setdefault(k, []).append(v)
    return cases


def location_aggregates(case):
    """{aggregate name: values} of the aggregates that stand for a value (mean, median, ...)."""
    return {name: values for name, values in case["aggregates"].items() if name not in DISPERSION}


def broken_reason(case):
    """Why a case's result cannot be trusted, or None: it failed; its `verified` counter says the
    data did not arrive intact (every repetition and every mean or median aggregate must say 1: a
    mean of 0.8 hides one bad run behind a median of 1); or it holds no value at all, only
    stddev/cv aggregates."""
    if case["failed"]:
        return f"failed: {case['failed']}"
    locations = location_aggregates(case)
    if not case["runs"] and not locations and case["aggregates"]:
        return "only stddev/cv aggregates: no value to use"
    verified = [(v, "") for v in case["samples"].get("verified", []) + case["invalid"].get("verified", [])]
    verified += [(values["verified"], f" ({name} aggregate)") for name, values in locations.items()
                 if "verified" in values]
    for v, where in verified:
        if not (is_number(v) and v == 1):
            shown = f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)
            return f"verified={shown}{where}: the data did not arrive intact"
    return None


def median(case, metric):
    """The case's median of metric: the median aggregate when the file has one, else the median
    of its repetitions; None when the case has no such metric."""
    if metric in case["median"]:
        return case["median"][metric]
    samples = case["samples"].get(metric)
    return statistics.median(samples) if samples else None
