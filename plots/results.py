"""Reading the benchmarks' Google Benchmark JSON: cases by name, their axes, the host context.

Case names are the binaries' interface (docs/BINARIES.md): family/axis:value/..., so each one
parses into a dict of axes. With repetitions, the median aggregate stands for a case; without, the
one run.
"""
import json
import os

import benchjson

SUFFIXES = ("/real_time", "/manual_time")


def read_json(path):
    """The parsed JSON of a file; ValueError with the path when it cannot be read or parsed."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}") from e


def load(path):
    """The parsed JSON of one result file; ValueError with the path when it is not one."""
    report = read_json(path)
    if not isinstance(report, dict) or "benchmarks" not in report:
        raise ValueError(f"{path}: not Google Benchmark JSON (no 'benchmarks')")
    return report


def _strip(name):
    for suffix in SUFFIXES:
        name = name.replace(suffix, "")
    return name


def parse_name(name):
    """Axes of a case name: codec/, rdma/, pipeline/ (docs/BINARIES.md) and collective/ (docs/MPI.md)
    families."""
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
    elif family == "collective":
        axes.update(op=parts[1], impl=parts[2], codec=parts[3])
        for part in parts[4:]:
            key, _, value = part.partition(":")
            axes[key] = value if key == "transport" else int(value)
    return axes


def cases(report):
    """One dict per case: its axes, each counter's median over repetitions, the repetitions of
    each counter under "samples", and "error" when the case failed (its message), was skipped or
    did not verify (the reason); such a case has no counters."""
    out = []
    for name, case in benchjson.read_cases(report["benchmarks"]).items():
        axes = {"name": name, **parse_name(name)}
        why = case["failed"] or (case["skipped"] and f"skipped: {case['skipped']}") or benchjson.broken_reason(case)
        if why:
            out.append({**axes, "error": why})
            continue
        metrics = set(case["samples"]) | set(case["median"])
        out.append({**axes, **{m: benchjson.median(case, m) for m in metrics}, "samples": case["samples"]})
    return out


def host_label(report):
    """'host, date' for plot titles and tables."""
    context = report.get("context", {})
    return f"{context.get('hostname', 'unknown host')}, {context.get('date', '')[:10]}"


def load_dir(directory):
    """results/*.json by role: codec, rdma (list), pipeline, linkbed, and the headline runs
    scripts/reproduce makes of the declared configuration (headline-pipeline.json,
    headline-rdma-<transport>.json); missing ones are None / []."""
    found = {"codec": None, "rdma": [], "pipeline": None, "linkbed": None, "headline_pipeline": None,
             "headline_rdma": []}
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
        elif entry == "headline-pipeline.json":
            found["headline_pipeline"] = load(path)
        elif entry.startswith("headline-rdma-"):
            found["headline_rdma"].append(load(path))
        elif entry == "linkbed.json":  # scripts/linkbed's own merged format
            with open(path) as f:
                found["linkbed"] = json.load(f)
    return found
