"""scripts/history export: Bencher's BMF and github-action-benchmark's custom JSON, each checked against
the format's documented fields; and Google Benchmark's own tools/compare.py (Debian's
libbenchmark-tools) reading two runs of bench_codec."""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest

from bench_process import binary
from test_history import HistoryRun, entries

COMPARE_PY = "/usr/share/benchmark/compare.py"
CASES = ["codec/lz4/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1",
         "codec/zstd/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"]
FAILED = "codec/blosc/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def bmf_errors(doc):
    """What breaks https://bencher.dev/bmf.json (draft-07): an object of benchmarks (non-empty names of
    at most 1024 characters), each an object of measures (non-empty, at most 64 characters), each an
    object with a number `value` and optional number `lower_value` / `upper_value`."""
    if not isinstance(doc, dict) or not doc:
        return ["top level: not a non-empty object"]
    errors = []
    for name, measures in doc.items():
        if not 0 < len(name) <= 1024 or not isinstance(measures, dict) or not measures:
            errors.append(f"{name!r}: bad name or not an object of measures")
            continue
        for slug, metric in measures.items():
            if not 0 < len(slug) <= 64 or not isinstance(metric, dict) or not is_number(metric.get("value")):
                errors.append(f"{name}/{slug!r}: bad measure name or no number value")
            elif any(k in metric and not is_number(metric[k]) for k in ("lower_value", "upper_value")):
                errors.append(f"{name}/{slug}: a bound is not a number")
    return errors


def gab_errors(doc):
    """What breaks github-action-benchmark's custom tools' input: a list of objects with string `name`,
    string `unit`, number `value`, and optional string `range` / `extra`."""
    if not isinstance(doc, list) or not doc:
        return ["top level: not a non-empty list"]
    errors = []
    for i, entry in enumerate(doc):
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("unit"), str)
                and is_number(entry.get("value"))):
            errors.append(f"entry {i}: needs string name and unit and a number value")
        elif any(k in entry and not isinstance(entry[k], str) for k in ("range", "extra")):
            errors.append(f"entry {i}: range / extra not a string")
    return errors


class Export(HistoryRun):
    def setUp(self):
        super().setUp()
        rng = random.Random(5)
        self.levels = [[1e9 * (1 + 0.1 * c) * (1 + rng.gauss(0, 0.01)) for c in range(len(CASES))] for _ in range(3)]
        paths = [self.write(i, [e for c, name in enumerate(CASES) for e in entries(name, self.levels[i][c], rng)]
                            + entries(FAILED, 1e9, rng, "verify: XXH3 mismatch")) for i in range(3)]
        self.assertEqual(self.history("record", *paths)[0], 0)

    def export(self, *args):
        out = os.path.join(self.dir.name, "export.json")
        code, _, err = self.history("export", *args, f"--output={out}")
        if code:
            return code, err
        with open(out) as f:
            return code, json.load(f)

    def test_bmf_follows_the_schema_with_the_newest_median_and_its_spread(self):
        code, doc = self.export("--format=bmf", "--metrics=bytes_per_second,real_time")
        self.assertEqual(code, 0, doc)
        self.assertEqual(bmf_errors(doc), [])
        self.assertEqual(sorted(doc), sorted(CASES))  # the failed case has no value to export
        for c, name in enumerate(CASES):
            rate = doc[name]["bytes_per_second"]
            self.assertLessEqual(rate["lower_value"], rate["value"])
            self.assertLessEqual(rate["value"], rate["upper_value"])
            self.assertAlmostEqual(rate["value"] / self.levels[-1][c], 1, delta=0.05)
            self.assertAlmostEqual(doc[name]["latency"]["value"] * rate["value"] / 1e9, 1, delta=0.05)  # ns per byte

    def test_github_action_benchmark_follows_its_custom_format(self):
        code, doc = self.export("--format=github-action-benchmark")
        self.assertEqual(code, 0, doc)
        self.assertEqual(gab_errors(doc), [])
        self.assertEqual([e["name"] for e in doc], [f"{name} bytes_per_second" for name in CASES])
        self.assertEqual({e["unit"] for e in doc}, {"bytes/s"})
        self.assertTrue(all("sha002" in e["extra"] for e in doc))

    def test_one_github_action_benchmark_file_holds_one_direction(self):
        code, err = self.export("--format=github-action-benchmark", "--metrics=bytes_per_second,real_time")
        self.assertEqual(code, 2)
        self.assertIn("one direction per file", err)

    def test_the_schema_checks_fail_on_what_breaks_the_formats(self):
        self.assertNotEqual(bmf_errors({"case": {"latency": {"lower_value": 1.0}}}), [])
        self.assertNotEqual(bmf_errors({"case": {"x" * 65: {"value": 1.0}}}), [])
        self.assertNotEqual(gab_errors([{"name": "case", "value": 1.0}]), [])
        self.assertNotEqual(gab_errors([{"name": "case", "unit": "ns", "value": "1"}]), [])


@unittest.skipUnless(os.path.isfile(COMPARE_PY), "Google Benchmark's compare.py is not installed (Debian's "
                                                 "libbenchmark-tools; scripts/setup installs it)")
class GoogleBenchmarkCompare(unittest.TestCase):
    def test_compare_py_reads_two_bench_codec_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            runs = []
            for n in range(2):
                out = os.path.join(tmp, f"run{n}.json")
                result = subprocess.run([binary("bench_codec"), "--codecs=memcpy,lz4",
                                         "--datasets=synthetic:weights:size=2MiB", "--chunks=1MiB",
                                         "--benchmark_repetitions=3", "--benchmark_min_time=0.01",
                                         f"--benchmark_out={out}", "--benchmark_out_format=json"],
                                        capture_output=True, text=True, timeout=180)
                self.assertEqual(result.returncode, 0, result.stderr)
                runs.append(out)
            dump = os.path.join(tmp, "compare.json")
            result = subprocess.run([sys.executable, COMPARE_PY, "--no-color", "-d", dump, "benchmarks", *runs],
                                    capture_output=True, text=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(runs[0]) as f:
                ours = {b["run_name"] for b in json.load(f)["benchmarks"] if b["run_type"] == "iteration"}
            with open(dump) as f:
                theirs = json.load(f)
        self.assertEqual(len(ours), 4)
        compared = {c["name"]: c for c in theirs if c["run_type"] == "iteration"}
        self.assertEqual(set(compared), ours)
        for name, c in compared.items():
            self.assertEqual(len(c["measurements"]), 3, name)
            self.assertTrue(all(m["real_time"] > 0 and m["real_time_other"] > 0 for m in c["measurements"]), name)
            self.assertTrue(c["utest"]["have_optimal_repetitions"] is False, name)  # 3 < the 9 it asks for
            self.assertIn(name, result.stdout)


if __name__ == "__main__":
    unittest.main()
