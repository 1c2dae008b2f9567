"""Absolute floors and ceilings for an acceptance test (`--expect=FILE`), in the spirit of nccl-tests'
NCCL_TESTS_MIN_BW: a firmware or host is accepted when each case reaches a fixed value, whatever
its history.

FILE holds one rule a line, `CASE_GLOB METRIC >= VALUE` or `CASE_GLOB METRIC <= VALUE` (a shell glob
over case names, a metric as the JSON writes it, a plain number); blank lines and `#` comments are
skipped. A rule that matches no case fails: a floor nobody measured is not met.
"""
import fnmatch
import math
import re

from compare_input import BadInput

RULE = re.compile(r"^(\S+)\s+(\S+)\s+(>=|<=)\s+(\S+)$")


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
        value = None
        if match:
            try:
                value = float(match.group(4))
            except ValueError:
                value = None
        if value is None or not math.isfinite(value):
            raise BadInput(f"{path}:{number}: expected 'CASE_GLOB METRIC >= VALUE' (or <=), got {text!r}")
        rules.append({"glob": match.group(1), "metric": match.group(2), "op": match.group(3), "value": value,
                      "where": f"{path}:{number}"})
    if not rules:
        raise BadInput(f"{path}: no rule in the file")
    return rules


def judge(rules, newest):
    """Failures of the rules against newest: {(label, case): {metric: value or None}} (None: the case
    has no usable value). Returns [line], one per case outside its bound and per rule matching nothing."""
    failures = []
    for rule in rules:
        matched = [(label, case, metrics) for (label, case), metrics in sorted(newest.items())
                   if fnmatch.fnmatchcase(case, rule["glob"]) and rule["metric"] in metrics]
        if not matched:
            failures.append(f"NO CASE     {rule['glob']} {rule['metric']}: no case measured it ({rule['where']})")
        for label, case, metrics in matched:
            value = metrics[rule["metric"]]
            ok = value is not None and (value >= rule["value"] if rule["op"] == ">=" else value <= rule["value"])
            if not ok:
                shown = "no value" if value is None else f"{value:.6g}"
                failures.append(f"OUT OF BOUND {case} [{label}] {rule['metric']} {shown}, expected "
                                f"{rule['op']} {rule['value']:g} ({rule['where']})")
    return failures
