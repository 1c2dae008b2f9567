"""Shared by the compare tests: Google Benchmark JSON built in code, and compare.main() run in this
process with its output captured (one scipy import instead of one per run)."""
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import types
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "compare")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "compare")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import compare  # noqa: E402

CASE = "codec/lz4/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"
OTHER = "codec/zstd:level=1/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"


def context(fw="2.42.5000", host="node1"):
    """A context block like our binaries write (Google Benchmark's keys plus our own)."""
    return {"date": "2026-01-01T00:00:00+00:00", "host_name": host, "executable": "bench_rdma",
            "num_cpus": 2, "library_build_type": "release", "hostname": host,
            "kernel": "Linux 6.1.0", "cpu_model": "AMD EPYC", "rdma_device": "mlx5_0",
            "rdma_fw_ver": fw, "transport": "verbs", "wirezip_git_sha": "abc123"}


def samples(center, n, noise=0.005, seed=1):
    """n repetition values around center, +-noise relative."""
    rng = random.Random(seed)
    return [center * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def entry(run_name, run_type, bps, ratio, reps, **extra):
    e = {"name": run_name, "family_index": 0, "per_family_instance_index": 0, "run_name": run_name,
         "run_type": run_type, "repetitions": reps, "threads": 1, "iterations": 100,
         "real_time": 2.0e6 / bps * 1e9, "cpu_time": 2.0e6 / bps * 1e9, "time_unit": "ns",
         "bytes_per_second": bps, "compressed_bytes": 2.0e6 / ratio, "ratio": ratio}
    e.update(extra)
    return e


def report(cases, ctx=None, aggregates_only=False, errors=None):
    """Google Benchmark JSON: cases maps name -> bytes_per_second samples (ratio 2.0); with more
    than one sample it adds the mean/median/stddev/cv aggregates; errors maps name -> message."""
    benchmarks = []
    for name, values in cases.items():
        n = len(values)
        if not aggregates_only:
            for i, v in enumerate(values):
                extra = {"repetition_index": i} if n > 1 else {}
                benchmarks.append(entry(name, "iteration", v, 2.0, n, **extra))
        if n > 1 or aggregates_only:
            med = sorted(values)[n // 2] if n % 2 else sum(sorted(values)[n // 2 - 1:n // 2 + 1]) / 2
            for agg, v in (("mean", sum(values) / n), ("median", med), ("stddev", 1e6), ("cv", 0.001)):
                benchmarks.append(entry(name, "aggregate", v, 2.0, n, name=f"{name}_{agg}",
                                        aggregate_name=agg, aggregate_unit="time" if agg != "cv" else "percentage"))
    for name, message in (errors or {}).items():
        benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                           "threads": 1, "error_occurred": True, "error_message": message,
                           "iterations": 0, "real_time": 0.0, "cpu_time": 0.0, "time_unit": "ns"})
    return {"context": ctx or context(), "benchmarks": benchmarks}


class CompareRun(unittest.TestCase):
    """Helpers: fixture files in a temporary directory, compare.main() with its output captured."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def run_compare(self, *args):
        """Runs compare.main(); returns (an object with returncode, stdout, stderr like a
        CompletedProcess, the --json-out contents or None)."""
        out = os.path.join(self.tmp.name, "cmp.json")
        if os.path.exists(out):
            os.remove(out)
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = compare.main([*args, f"--json-out={out}"])
            except SystemExit as e:  # argparse refusing the command line
                code = e.code
        result = types.SimpleNamespace(returncode=code, stdout=stdout.getvalue(), stderr=stderr.getvalue())
        data = None
        if os.path.exists(out):
            with open(out) as f:
                data = json.load(f)
        return result, data

    def pair(self, base, new, *args, **kw):
        return self.run_compare(self.write("base.json", report(base, **kw)),
                                self.write("new.json", report(new, **kw)), *args)

    def verdicts(self, data):
        return {(r["case"], r["metric"]): r["verdict"] for r in data["rows"]}


