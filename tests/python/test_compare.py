"""scripts/compare is a CI gate: its exit status and verdicts are the interface. Check them on small
Google Benchmark JSON fixtures (repetitions, aggregates only, errors, missing cases, --group-by)."""
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "compare")
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


class CompareCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def run_compare(self, *args):
        """Runs scripts/compare; returns (CompletedProcess, --json-out contents)."""
        out = os.path.join(self.tmp.name, "cmp.json")
        result = subprocess.run(["/usr/bin/python3", SCRIPT, *args, f"--json-out={out}"],
                                capture_output=True, text=True, timeout=60)
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

    def test_ten_percent_regression_with_five_repetitions_is_caught(self):
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5, seed=2)})
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(self.verdicts(data)[(CASE, "bytes_per_second")], "regression")
        self.assertEqual(self.verdicts(data)[(CASE, "ratio")], "same")
        row = next(r for r in data["rows"] if r["metric"] == "bytes_per_second")
        self.assertTrue(row["u_test"])
        self.assertLess(row["p_value"], 0.05)
        self.assertAlmostEqual(row["delta_pct"], -10, delta=1.5)
        line = next(li for li in result.stdout.splitlines() if CASE in li and "bytes_per_second" in li)
        self.assertIn("regression", line)
        self.assertRegex(line, r"\| 1\.00 GB/s \| 0\.9\d\d GB/s \| -\d+\.\d% \|")
        self.assertIn("rdma_fw_ver=2.42.5000", result.stdout)
        self.assertIn("wirezip_git_sha=abc123", result.stdout)

    def test_noise_within_threshold_passes(self):
        result, data = self.pair({CASE: samples(1.0e9, 5, noise=0.01)}, {CASE: samples(1.0e9, 5, noise=0.01, seed=3)})
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(set(self.verdicts(data).values()), {"same"})

    def test_improvement_is_not_a_regression(self):
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(1.2e9, 5, seed=2)})
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(self.verdicts(data)[(CASE, "bytes_per_second")], "improvement")

    def test_big_drop_that_the_u_test_rejects_is_not_significant(self):
        base = [1.0e9, 1.3e9, 0.7e9, 1.2e9, 0.8e9]
        result, data = self.pair({CASE: base}, {CASE: [0.93e9, 1.25e9, 0.65e9, 1.15e9, 0.6e9]})
        self.assertEqual(result.returncode, 0, result.stdout)
        row = next(r for r in data["rows"] if r["metric"] == "bytes_per_second")
        self.assertLess(row["delta_pct"], -5)
        self.assertGreater(row["p_value"], 0.05)

    def test_three_repetitions_fall_back_to_the_threshold_and_say_so(self):
        result, data = self.pair({CASE: samples(1.0e9, 3)}, {CASE: samples(0.9e9, 3, seed=2)})
        self.assertEqual(result.returncode, 1)
        row = next(r for r in data["rows"] if r["metric"] == "bytes_per_second")
        self.assertEqual(row["verdict"], "regression")
        self.assertFalse(row["u_test"])
        self.assertAlmostEqual(row["p_value"], 0.1)
        self.assertIn("underpowered", result.stdout)
        self.assertIn("need >= 4 per side", result.stdout)

    def test_missing_cases_are_listed_on_each_side(self):
        result, data = self.pair({CASE: [1e9], OTHER: [1e9]}, {CASE: [1e9], "new/only": [1e9]})
        self.assertEqual(result.returncode, 0)
        self.assertIn(f"Only in base:\n- {OTHER}", result.stdout)
        self.assertIn("Only in new:\n- new/only", result.stdout)
        self.assertEqual(data["only_in_base"], [OTHER])
        self.assertEqual(data["only_in_new"], ["new/only"])

    def test_error_cases_are_listed_not_compared(self):
        base = self.write("base.json", report({CASE: samples(1e9, 5), OTHER: samples(1e9, 5)}))
        new = self.write("new.json", report({CASE: samples(1e9, 5)}, errors={OTHER: "no RDMA device"}))
        result, data = self.run_compare(base, new)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn(f"Errors:\n- {OTHER} (new): skipped: no RDMA device", result.stdout)
        self.assertNotIn(OTHER, {r["case"] for r in data["rows"]})
        self.assertEqual(data["errors"], [{"case": OTHER, "side": 1, "message": "skipped: no RDMA device"}])
        self.assertEqual(data["only_in_base"], [])

    def test_aggregates_only_input_uses_the_median_and_the_threshold(self):
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5, seed=2)}, aggregates_only=True)
        self.assertEqual(result.returncode, 1, result.stdout)
        row = next(r for r in data["rows"] if r["metric"] == "bytes_per_second")
        self.assertEqual((row["verdict"], row["u_test"], row["p_value"]), ("regression", False, None))
        self.assertIn("no U test", result.stdout)

    def test_threshold_option(self):
        result, _ = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5, seed=2)}, "--threshold=15")
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_group_by_pools_files_with_the_same_value(self):
        old = self.write("a.json", report({CASE: samples(1.0e9, 5), OTHER: samples(2e9, 5)}, ctx=context("1.0")))
        new1 = self.write("b.json", report({CASE: samples(0.8e9, 3, seed=2), OTHER: samples(2e9, 5)}, ctx=context("2.0")))
        new2 = self.write("c.json", report({CASE: samples(0.8e9, 3, seed=3)}, ctx=context("2.0", "node2")))
        result, data = self.run_compare("--group-by=rdma_fw_ver", "--metrics=bytes_per_second", old, new1, new2)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual([g["value"] for g in data["groups"]], ["1.0", "2.0"])
        self.assertEqual(data["groups"][1]["files"], [new1, new2])
        self.assertEqual([(r["case"], r["metric"]) for r in data["rows"]],
                         [(CASE, "bytes_per_second"), (OTHER, "bytes_per_second")])
        pooled = data["rows"][0]["cells"][1]
        self.assertEqual((pooled["n_base"], pooled["n_new"], pooled["verdict"]), (5, 6, "regression"))
        self.assertIn("| case | metric | rdma_fw_ver=1.0 | rdma_fw_ver=2.0 |", result.stdout)
        rows = [li for li in result.stdout.splitlines() if li.startswith(f"| {CASE} |")]
        self.assertEqual(len(rows), 1)
        self.assertRegex(rows[0], r"\| 1\.00 GB/s \| 0\.8\d\d GB/s \(-\d+\.\d%, regression\) \|$")

    def test_bad_input_exits_2_with_one_stderr_line(self):
        good = self.write("good.json", report({CASE: [1e9]}))
        for bad in (os.path.join(self.tmp.name, "missing.json"), self.write("text.json", "not json {"),
                    self.write("empty.json", {"context": {}, "benchmarks": []})):
            result, _ = self.run_compare(good, bad)
            self.assertEqual(result.returncode, 2, bad)
            lines = result.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, result.stderr)
            self.assertIn(os.path.basename(bad), lines[0])

    def test_json_out_holds_the_verdicts(self):
        result, data = self.pair({CASE: samples(1.0e9, 5), OTHER: samples(1e9, 5)},
                                 {CASE: samples(0.9e9, 5, seed=2), OTHER: samples(1e9, 5, seed=4)})
        self.assertEqual(result.returncode, 1)
        self.assertEqual(data["regressions"], 1)
        self.assertEqual(self.verdicts(data), {(CASE, "bytes_per_second"): "regression", (CASE, "ratio"): "same",
                                               (OTHER, "bytes_per_second"): "same", (OTHER, "ratio"): "same"})
        self.assertEqual(data["groups"][0]["label"]["rdma_device"], "mlx5_0")


class CompareUnits(unittest.TestCase):
    def test_aggregate_names_without_run_name_lose_their_suffix(self):
        e = {"name": CASE + "_median", "run_type": "aggregate", "aggregate_name": "median"}
        self.assertEqual(compare.case_name(e), CASE)
        self.assertEqual(compare.case_name({"name": CASE, "run_type": "iteration"}), CASE)

    def test_smallest_p_needs_four_repetitions_per_side(self):
        self.assertAlmostEqual(compare.min_p(3, 3), 0.1)
        self.assertLess(compare.min_p(4, 4), 0.05)

    def test_human_units(self):
        self.assertEqual(compare.fmt_value("bytes_per_second", 0.9e9), "0.900 GB/s")
        self.assertEqual(compare.fmt_value("bytes_per_second", 12.345e9), "12.3 GB/s")
        self.assertEqual(compare.fmt_value("bytes_per_second", 123.4e9), "123 GB/s")
        self.assertEqual(compare.fmt_value("bytes_per_second", 0.9996e9), "1.00 GB/s")
        self.assertEqual(compare.fmt_value("bytes_per_second", 1234.5e9), "1230 GB/s")
        self.assertEqual(compare.fmt_value("ratio", 2.0), "2.00")
        self.assertEqual(compare.fmt_value("msg_rate", 1.5e6), "1.50M")


if __name__ == "__main__":
    unittest.main()
