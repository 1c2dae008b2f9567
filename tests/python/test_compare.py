"""scripts/compare is a CI gate: its exit status and verdicts are the interface. Check them on small
Google Benchmark JSON fixtures (repetitions, aggregates only, thresholds, --group-by, units)."""
import os
import unittest

from compare_helpers import CASE, OTHER, CompareRun, context, report, samples  # puts plots/ on sys.path

import benchjson  # noqa: E402
import compare_report  # noqa: E402
import compare_sides  # noqa: E402

class CompareCli(CompareRun):

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
        self.assertEqual(benchjson.case_name(e), CASE)
        self.assertEqual(benchjson.case_name({"name": CASE, "run_type": "iteration"}), CASE)

    def test_smallest_p_needs_four_repetitions_per_side(self):
        self.assertAlmostEqual(compare_sides.min_p(3, 3), 0.1)
        self.assertLess(compare_sides.min_p(4, 4), 0.05)

    def test_human_units(self):
        self.assertEqual(compare_report.fmt_value("bytes_per_second", 0.9e9), "0.900 GB/s")
        self.assertEqual(compare_report.fmt_value("bytes_per_second", 12.345e9), "12.3 GB/s")
        self.assertEqual(compare_report.fmt_value("bytes_per_second", 123.4e9), "123 GB/s")
        self.assertEqual(compare_report.fmt_value("bytes_per_second", 0.9996e9), "1.00 GB/s")
        self.assertEqual(compare_report.fmt_value("bytes_per_second", 1234.5e9), "1230 GB/s")
        self.assertEqual(compare_report.fmt_value("ratio", 2.0), "2.00")
        self.assertEqual(compare_report.fmt_value("msg_rate", 1.5e6), "1.50M")


if __name__ == "__main__":
    unittest.main()

