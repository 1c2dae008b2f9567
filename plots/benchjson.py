"""Google Benchmark JSON regrouped by case. Why: one case's repetitions, its aggregates and its
failure are separate entries in the file, and a failed case carries no counters at all; the
report, the comparison and scripts/reproduce all need them back together under one name.

A case is {"samples": {metric: [value per repetition]}, "median": {metric: median aggregate},
"failed": message or None, "skipped": message or None}. Times (real_time, cpu_time) are in
nanoseconds whatever the entry's time_unit.
"""
import statistics

AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")
TIME_METRICS = ("real_time", "cpu_time")
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BOOKKEEPING = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
               "iterations"}


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


def numbers(entry):
    """The entry's numeric fields but Google Benchmark's bookkeeping, times converted to ns."""
    out = {k: v for k, v in entry.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in BOOKKEEPING}
    scale = NS_PER_UNIT.get(entry.get("time_unit", "ns"), 1.0)
    for k in TIME_METRICS:
        if k in out:
            out[k] *= scale
    return out


def read_cases(benchmarks):
    """{name: case} from the 'benchmarks' list, in the order cases first appear. An entry that
    failed (error_occurred) or was skipped by design (skipped) marks its case so; the mean
    aggregate stands in where a file has no median."""
    cases = {}
    for entry in benchmarks:
        case = cases.setdefault(case_name(entry), {"samples": {}, "median": {}, "failed": None, "skipped": None})
        if entry.get("error_occurred"):
            case["failed"] = entry.get("error_message") or "no message"
            continue
        if entry.get("skipped"):
            case["skipped"] = entry.get("skip_message") or "no message"
            continue
        values = numbers(entry)
        if entry.get("run_type") == "aggregate":
            if entry.get("aggregate_name") == "median":
                case["median"].update(values)
            elif entry.get("aggregate_name") == "mean":
                for k, v in values.items():
                    case["median"].setdefault(k, v)
        else:
            for k, v in values.items():
                case["samples"].setdefault(k, []).append(v)
    return cases


def broken_reason(case):
    """Why a case's result cannot be trusted, or None: it failed, or its `verified` counter says
    the data did not arrive intact. Every repetition is checked (a mean of 0.8 hides one bad
    run), the aggregates only where a file has nothing else."""
    if case["failed"]:
        return f"failed: {case['failed']}"
    verified = case["samples"].get("verified") or ([case["median"]["verified"]] if "verified" in case["median"] else [])
    bad = [v for v in verified if v != 1]
    if bad:
        return f"verified={bad[0]:g}: the data did not arrive intact"
    return None


def median(case, metric):
    """The case's median of metric: the median aggregate when the file has one, else the median
    of its repetitions; None when the case has no such metric."""
    if metric in case["median"]:
        return case["median"][metric]
    samples = case["samples"].get(metric)
    return statistics.median(samples) if samples else None
