"""Scaling as a result: parallel efficiency, the projection to more cores (hand-computed), the
scaling table and scripts/envelope --cores on a small hand-made bench_codec JSON."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))

import model  # noqa: E402
import scaling  # noqa: E402

GB = 1e9
NAME = "codec/{}/synthetic:weights:size=64MiB:seed=1/chunk:1048576/{}/manual_time/threads:{}"


def bench(name, rate):
    return {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1, "real_time": 1.0,
            "cpu_time": 1.0, "time_unit": "ms", "bytes_per_second": rate, "ratio": 1.5}


def report(rates):
    """rates: {(codec, direction): {threads: GB/s}} -> a bench_codec JSON."""
    benchmarks = [bench(NAME.format(codec, direction, n), gbs * GB)
                  for (codec, direction), by_threads in rates.items() for n, gbs in by_threads.items()]
    return {"context": {"hostname": "testhost", "date": "2026-11-30"}, "benchmarks": benchmarks}


# bytegroup+huff: 1 thread 1.0 GB/s, 2 threads 1.8 (E = 1.8 / 2 = 0.9), 4 threads 3.2 (E = 0.8)
# decompress: 1 thread 2.0, 2 threads 3.0 (E = 3.0 / 4 = 0.75)
RATES = {("bytegroup+huff", "compress"): {1: 1.0, 2: 1.8, 4: 3.2},
         ("bytegroup+huff", "decompress"): {1: 2.0, 2: 3.0},
         ("memcpy", "compress"): {1: 10.0, 2: 12.0}, ("memcpy", "decompress"): {1: 10.0, 2: 12.0}}


class Arithmetic(unittest.TestCase):
    def test_parallel_efficiency_is_rate_n_over_n_times_rate_1(self):
        self.assertAlmostEqual(model.parallel_efficiency(1.8, 2, 1.0), 0.9)
        self.assertAlmostEqual(model.parallel_efficiency(3.2, 4, 1.0), 0.8)
        self.assertAlmostEqual(model.parallel_efficiency(5.0, 1, 5.0), 1.0)

    def test_projection_is_cores_times_rate_1_times_efficiency(self):
        self.assertAlmostEqual(model.projected_rate(1.0, 0.8, 16), 12.8)   # 16 x 1.0 x 0.8
        self.assertAlmostEqual(model.projected_rate(2.0, 0.75, 16), 24.0)  # 16 x 2.0 x 0.75

    def test_the_projection_uses_the_largest_thread_count(self):
        rate, threads, efficiency = scaling.projection({1: 1.0, 2: 1.8, 4: 3.2}, 16)
        self.assertEqual(threads, 4)
        self.assertAlmostEqual(efficiency, 0.8)
        self.assertAlmostEqual(rate, 12.8)

    def test_series_and_efficiencies_from_json(self):
        series = scaling.series(report(RATES))
        rates = series[("bytegroup+huff", "synthetic:weights:size=64MiB:seed=1", 1048576)]
        self.assertEqual(rates, {1: 1.0 * GB, 2: 1.8 * GB, 4: 3.2 * GB})
        efficiencies = scaling.efficiencies(rates)
        self.assertEqual(sorted(efficiencies), [1, 2, 4])
        for n, expected in [(1, 1.0), (2, 0.9), (4, 0.8)]:
            self.assertAlmostEqual(efficiencies[n], expected)

    def test_the_table_prints_efficiency_per_thread_count(self):
        text = scaling.table(report(RATES))
        self.assertIn("| bytegroup+huff | compress | synthetic:weights:size=64MiB:seed=1 | 1048576 | 4 | 3.20 | 4.00 "
                      "| 0.80 |", text)
        self.assertIn("| bytegroup+huff | decompress | synthetic:weights:size=64MiB:seed=1 | 1048576 | 2 | 3.00 | "
                      "4.00 | 0.75 |", text)

    def test_one_thread_count_is_no_scaling_result(self):
        self.assertFalse(scaling.measured(report({("lz4", "compress"): {1: 1.0}})))
        self.assertTrue(scaling.measured(report(RATES)))


class EnvelopeCores(unittest.TestCase):
    def run_envelope(self, rates, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "codec.json")
            with open(path, "w") as f:
                json.dump(report(rates), f)
            return subprocess.run([os.path.join(ROOT, "scripts", "envelope"), path, *args], capture_output=True,
                                  text=True, timeout=60)

    def test_sixteen_cores_says_it_is_a_projection_and_from_what(self):
        result = self.run_envelope(RATES, "--cores=16")
        self.assertEqual(result.returncode, 0, result.stderr)
        # C: 16 x 1.0 x 0.8 = 12.8; D: 16 x 2.0 x 0.75 = 24.0; min 12.8 reaches 10.9, not 24.6
        self.assertIn("| bytegroup+huff | 12.80 | 24.00 | yes | no |", result.stdout)
        self.assertIn("projection to 16 cores (not a measurement", result.stdout)
        self.assertIn("bytegroup+huff C: projection: 16 cores from 4 thread(s) measured at efficiency 0.80",
                      result.stdout)
        self.assertIn("bytegroup+huff D: projection: 16 cores from 2 thread(s) measured at efficiency 0.75",
                      result.stdout)
        self.assertNotIn("| memcpy | 1", result.stdout.split("projection to")[1])  # the ceiling is not projected

    def test_bad_cores_is_one_line_and_exit_2(self):
        result = self.run_envelope(RATES, "--cores=0")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.strip().count("\n"), 0, result.stderr)
        self.assertIn("--cores must be positive", result.stderr)


if __name__ == "__main__":
    unittest.main()
