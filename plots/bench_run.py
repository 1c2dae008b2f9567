"""Runs one benchmark binary for scripts/reproduce: prints "[binary k/N] case" as each case
finishes, and stops at the first case that failed, with its reason.

    bench_run.py --out results/codec.json --log results/bench_codec.log [--keep-going] -- BINARY ARGS...

A case fails when Google Benchmark reports an error for it or its `verified` counter is not 1.
Both are read from the console as the case ends (so a failure stops the run at once: the binary is
terminated and its unfinished JSON removed) and again from the JSON afterwards, because a binary
may exit 0 with failed cases in it. --keep-going runs every case and lists the failures instead.
Exit status: 0 every case passed; 1 a case failed or the binary failed; 2 usage.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import benchjson

CASE_LINE = re.compile(r"^((?:codec|rdma|pipeline)/\S+)")
ERROR = re.compile(r"ERROR OCCURRED: '(.*)'")
VERIFIED = re.compile(r"\bverified=(\S+)")


def case_of(line):
    """(case name without aggregate suffix, failure reason or None) of a console line, or None."""
    match = CASE_LINE.match(line)
    if not match:
        return None
    name = match[1]
    aggregate = next((s for s in benchjson.AGGREGATE_SUFFIXES if name.endswith(s)), "")
    name = name[: len(name) - len(aggregate)]
    error, verified = ERROR.search(line), VERIFIED.search(line)
    if error:
        return name, error[1]
    if verified and verified[1] != "1" and aggregate in ("", "_mean", "_median"):  # stddev and cv of 1s are 0
        return name, f"verified={verified[1]}: the data did not arrive intact"
    return name, None


def json_failures(path):
    """[(case, reason)] of the failed or unverified cases in a finished JSON file."""
    try:
        with open(path) as f:
            cases = benchjson.read_cases(json.load(f)["benchmarks"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [(name, why) for name, case in cases.items() if (why := benchjson.broken_reason(case))]


def count_cases(command):
    listing = subprocess.run([*command, "--benchmark_list_tests=true"], capture_output=True, text=True)
    return sum(1 for line in listing.stdout.splitlines() if line.strip())


def run(command, out, log, keep_going):
    """Runs the binary; returns [(case, reason)] of failures (stopping at the first unless
    keep_going) and the binary's exit status."""
    name = os.path.basename(command[0])
    total = count_cases(command)
    print(f"== {name}: {total} cases -> {out}", flush=True)
    seen, failures = [], []
    with open(log, "w") as log_file:
        process = subprocess.Popen([*command, f"--benchmark_out={out}", "--benchmark_out_format=json"],
                                   stdout=subprocess.PIPE, stderr=log_file, text=True)
        for line in process.stdout:
            parsed = case_of(line)
            if not parsed:
                continue
            case, reason = parsed
            new_case, new_failure = case not in seen, bool(reason) and (case, reason) not in failures
            if new_case:
                seen.append(case)
            if new_case or new_failure:
                print(f"[{name} {len(seen)}/{total}] {case}" + (f" FAILED: {reason}" if new_failure else ""), flush=True)
            if new_failure:
                failures.append((case, reason))
                if not keep_going:
                    process.terminate()  # the rest of the sweep would only hide this failure
                    break
        process.stdout.close()
        status = process.wait()
    if failures and not keep_going:
        if os.path.exists(out):
            os.remove(out)  # a terminated run leaves JSON without its closing brackets
        return failures, status
    failures += [f for f in json_failures(out) if f[0] not in {case for case, _ in failures}]
    return failures, status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the binary's --benchmark_out")
    parser.add_argument("--log", required=True, help="where the binary's stderr goes")
    parser.add_argument("--keep-going", action="store_true", help="run every case; list the failures at the end")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- BINARY ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no binary given (expected -- BINARY ARGS...)")
    name = os.path.basename(command[0])
    failures, status = run(command, args.out, args.log, args.keep_going)
    if failures and args.keep_going:
        print(f"reproduce: {name}: {len(failures)} case(s) failed, kept going:", file=sys.stderr)
        for case, reason in failures:
            print(f"- {case}: {reason}", file=sys.stderr)
    elif failures:
        print(f"reproduce: {name}: {failures[0][0]} failed: {failures[0][1]}", file=sys.stderr)
    if failures:
        return 1
    if status != 0:
        with open(args.log) as f:
            tail = f.read().splitlines()[-5:]
        print(f"reproduce: {name} exited with status {status}:", *tail, sep="\n", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
