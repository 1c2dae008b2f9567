"""Absolute floors and ceilings for an acceptance test (`--expect=FILE`), in the spirit of nccl-tests'
NCCL_TESTS_MIN_BW: a firmware or host is accepted when each case reaches a fixed value, whatever
its history.

FILE holds one rule a line, `CASE_GLOB METRIC >= BOUND` or `CASE_GLOB METRIC <= BOUND` (a shell glob
over case names, a metric as the JSON writes it); BOUND is a plain number, or `context:KEY` or
`FACTOR * context:KEY` for a share of a number the run's own context carries (`0.9 *
context:rdma_speed_bytes`: 90% of the link's data rate, bytes/s). Blank lines and `#` comments are
skipped. A rule that matches no case fails, and so does a case whose run lacks the context key: a
floor nobody measured is not met.
"""
import fnmatch
import math
import re
import statistics

import benchjson
from compare_input import BadInput

RULE = re.compile(r"^(\S+)\s+(\S+)\s+(>=|<=)\s+(.+?)$")
CONTEXT_BOUND = re.compile(r"^(?:(\S+?)\s*\*\s*)?context:(\S+)$")


def parse_bound(text):
    """(factor, context key or None) of a bound; None when it is neither form."""
    match = CONTEXT_BOUND.match(text)
    number, key = (match.group(1) or "1", match.group(2)) if match else (text, None)
    try:
        factor = float(number)
    except ValueError:
        return None
    return (factor, key) if math.isfinite(factor) else None


def parse(path):
    """[{"glob", "metric", "op", "value", "where"}]; BadInput naming the file and line when a line is
    not a rule."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    rules = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = RULE.match(text)
        bound = parse_bound(match.group(4)) if match else None
        if bound is None:
            raise BadInput(f"{path}:{number}: expected 'CASE_GLOB METRIC >= VALUE' (or <=; VALUE a number or "
                           f"[FACTOR *] context:KEY), got {text!r}")
        rules.append({"glob": match.group(1), "metric": match.group(2), "op": match.group(3), "value": bound[0],
                      "context_key": bound[1], "where": f"{path}:{number}"})
    if not rules:
        raise BadInput(f"{path}: no rule in the file")
    return rules


def file_values(cases, metrics):
    """{case: {metric: value or None}} of one result file (compare_input.load's cases): the median
    aggregate, else the mean, else the median of the repetitions; None for a case that failed, was
    skipped or did not verify. Why: scripts/compare --expect holds the rules against its NEW file."""
    out = {}
    for name, case in cases.items():
        bad = case["failed"] or case["skipped"] or benchjson.broken_reason(case)
        for metric in metrics:
            aggregate = case["median"].get(metric, case["aggregates"].get("mean", {}).get(metric))
            reps = case["samples"].get(metric, [])
            if bad:
                out.setdefault(name, {})[metric] = None
            elif benchjson.is_number(aggregate):
                out.setdefault(name, {})[metric] = aggregate
            elif reps:
                out.setdefault(name, {})[metric] = statistics.median(reps)
    return out


def bound_of(rule, context):
    """The rule's bound for a run of this context, or a reason it has none."""
    if rule["context_key"] is None:
        return rule["value"], None
    raw = context.get(rule["context_key"])
    try:
        base = float(raw)
    except (TypeError, ValueError):
        base = math.nan
    if not math.isfinite(base):
        return None, f"context:{rule['context_key']} is {'absent' if raw is None else repr(raw)} in the run"
    return rule["value"] * base, None


def describe_bound(rule):
    if rule["context_key"] is None:
        return f"{rule['value']:g}"
    return f"{rule['value']:g} * context:{rule['context_key']}"


def judge(rules, newest, contexts=None):
    """Failures of the rules against newest: {(label, case): {metric: value or None}} (None: the case
    has no usable value); contexts: {(label, case): the run's context} for context:KEY bounds.
    Returns [line], one per case outside its bound and per rule matching nothing."""
    failures = []
    for rule in rules:
        matched = [(label, case, metrics) for (label, case), metrics in sorted(newest.items())
                   if fnmatch.fnmatchcase(case, rule["glob"]) and rule["metric"] in metrics]
        if not matched:
            failures.append(f"NO CASE     {rule['glob']} {rule['metric']}: no case measured it ({rule['where']})")
        for label, case, metrics in matched:
            value = metrics[rule["metric"]]
            bound, why = bound_of(rule, (contexts or {}).get((label, case), {}))
            ok = value is not None and bound is not None and (value >= bound if rule["op"] == ">=" else value <= bound)
            if not ok:
                shown = "no value" if value is None else f"{value:.6g}"
                wanted = f"{rule['op']} {describe_bound(rule)}" + (f" = {bound:.6g}" if rule["context_key"] and
                                                                     bound is not None else "")
                failures.append(f"OUT OF BOUND {case} [{label}] {rule['metric']} {shown}, expected {wanted}"
                                + (f" ({why})" if why else "") + f" ({rule['where']})")
    return failures
