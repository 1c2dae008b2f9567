"""Reading the benchmarks' Google Benchmark JSON: cases by name, their axes, the host context.

Case names are the binaries' interface (README): family/axis:value/..., so each one parses into
a dict of axes. With repetitions, the median aggregate stands for a case; without, the one run.
"""
import json
import os
import statistics

SUFFIXES = ("/real_time", "/manual_time")


def load(path):
    """The parsed JSON of one result file; ValueError with the path when it is not one."""
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}") from e
    if "benchmarks" not in report:
        raise ValueError(f"{path}: not Google Benchmark JSON (no 'benchmarks')")
    return report


def _strip(name):
    for suffix in SUFFIXES:
        name = name.replace(suffix, "")
    return name


def parse_name(name):
    """Axes of a case name: codec/, rdma/ and pipeline/ families (see README)."""
    parts = _strip(name).split("/")
    family = parts[0]
    axes = {"family": family}
    threads = [p for p in parts if p.startswith("threads:")]
    parts = [p for p in parts if not p.startswith("threads:")]
    if threads:
        axes["threads"] = int(threads[0].split(":")[1])
    if family == "codec":
        axes.update(codec=parts[1], dataset=parts[2], chunk=int(parts[3].split(":")[1]), direction=parts[4])
    elif family == "rdma":
        axes["transport"] = parts[1]
        for part in parts[2:]:
            key, _, value = part.partition(":")
            axes[key] = value if key == "pages" else int(value)
    elif family == "pipeline":
        axes.update(transport=parts[1], mode=parts[2], codec=parts[3], dataset=parts[-1])
        for part in parts[4:-1]:
            key, _, value = part.partition(":")
            axes[key] = value if key == "pages" else int(value)
    return axes


def cases(report):
    """One dict per case: its axes, its counters (median over repetitions), and error if any."""
    runs, medians, errors = {}, {}, {}
    for bench in report["benchmarks"]:
        name = bench.get("run_name", bench["name"])
        if bench.get("error_occurred"):
            errors[name] = bench.get("error_message", "error")
        elif bench.get("run_type") == "aggregate":
            if bench.get("aggregate_name") == "median":
                medians[name] = bench
        else:
            runs.setdefault(name, []).append(bench)
    out = []
    for name in list(dict.fromkeys([*runs, *medians, *errors])):
        case = {"name": name, **parse_name(name)}
        if name in errors:
            case["error"] = errors[name]
        elif name in medians:
            case.update(_counters(medians[name]))
        else:
            samples = runs[name]
            keys = set().union(*(_counters(s).keys() for s in samples))
            case.update({k: statistics.median(_counters(s)[k] for s in samples if k in _counters(s)) for k in keys})
        out.append(case)
    return out


def _counters(bench):
    skip = {"name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "family_index",
            "per_family_instance_index", "repetitions", "repetition_index", "threads", "iterations",
            "time_unit", "label", "error_occurred", "error_message"}
    return {k: v for k, v in bench.items() if k not in skip and isinstance(v, (int, float))}


def host_label(report):
    """'host, date' for plot titles and tables."""
    context = report.get("context", {})
    return f"{context.get('hostname', 'unknown host')}, {context.get('date', '')[:10]}"


def load_dir(directory):
    """results/*.json by role: codec, rdma (list), pipeline; missing ones are None / []."""
    found = {"codec": None, "rdma": [], "pipeline": None, "linkbed": None}
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if not entry.endswith(".json"):
            continue
        if entry == "codec.json":
            found["codec"] = load(path)
        elif entry.startswith("rdma-"):
            found["rdma"].append(load(path))
        elif entry == "pipeline.json":
            found["pipeline"] = load(path)
        elif entry == "linkbed.json":  # scripts/linkbed's own merged format
            with open(path) as f:
                found["linkbed"] = json.load(f)
    return found
