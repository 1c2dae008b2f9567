"""The gate of scripts/compare: broken and unverified cases, cases the new side did not measure,
metric directions, context differences (warned, or fatal with --require-same), --group-by on a
peer's key, one committed fixture per verdict (tests/python/fixtures/compare/), and one per way the
gate could pass on missing data (gate_*.json, made by generate_gate_fixtures.py)."""
import os
import subprocess
import unittest

from compare_helpers import CASE, FIXTURES, OTHER, SCRIPT, CompareRun, context, report, samples

import benchjson  # noqa: E402  (compare_helpers put plots/ on sys.path)


class CompareGate(CompareRun):
    def test_missing_cases_are_listed_on_each_side_and_fail_unless_allowed(self):
        result, data = self.pair({CASE: [1e9], OTHER: [1e9]}, {CASE: [1e9], "new/only": [1e9]})
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(f"Only in base:\n- {OTHER}", result.stdout)
        self.assertIn("Only in new:\n- new/only", result.stdout)
        self.assertEqual(data["only_in_base"], [OTHER])
        self.assertEqual(data["only_in_new"], ["new/only"])
        self.assertEqual(data["not_measured"], [{"case": OTHER, "side": 1, "why": "absent"}])
        self.assertIn("gate: FAIL: 1 case(s) of base not measured", result.stdout)
        result, data = self.pair({CASE: [1e9], OTHER: [1e9]}, {CASE: [1e9], "new/only": [1e9]}, "--allow-missing")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertTrue(data["gate"]["pass"])
        self.assertIn("accepted by --allow-missing", result.stdout)

    def test_a_case_only_in_new_does_not_fail_the_gate(self):
        result, _ = self.pair({CASE: [1e9]}, {CASE: [1e9], "new/only": [1e9]})
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_failed_case_in_new_is_broken_and_listed_not_compared(self):
        base = self.write("base.json", report({CASE: samples(1e9, 5), OTHER: samples(1e9, 5)}))
        new = self.write("new.json", report({CASE: samples(1e9, 5)}, errors={OTHER: "no RDMA device"}))
        result, data = self.run_compare(base, new)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(f"Broken in new (fails the gate):\n- {OTHER}: failed: no RDMA device", result.stdout)
        self.assertNotIn(OTHER, {r["case"] for r in data["rows"]})
        self.assertEqual(data["errors"], [{"case": OTHER, "side": 1, "message": "failed: no RDMA device"}])
        self.assertEqual(data["broken"], [{"case": OTHER, "side": 1, "reason": "failed: no RDMA device"}])
        self.assertEqual(data["only_in_base"], [])

    def test_failed_case_in_base_is_listed_and_does_not_fail_the_gate(self):
        base = self.write("base.json", report({CASE: samples(1e9, 5)}, errors={OTHER: "no RDMA device"}))
        new = self.write("new.json", report({CASE: samples(1e9, 5), OTHER: samples(1e9, 5)}))
        result, data = self.run_compare(base, new)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn(f"Broken or skipped in base (not compared):\n- {OTHER}: failed: no RDMA device", result.stdout)
        self.assertEqual(data["broken"], [])

    def test_a_skipped_case_in_new_counts_as_not_measured(self):
        base = self.write("base.json", report({CASE: samples(1e9, 5), OTHER: samples(1e9, 5)}))
        new = report({CASE: samples(1e9, 5)})
        new["benchmarks"].append({"name": OTHER, "run_name": OTHER, "run_type": "iteration", "skipped": True,
                                  "skip_message": "needs hugetlb pages", "iterations": 0})
        result, data = self.run_compare(base, self.write("new.json", new))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(data["not_measured"], [{"case": OTHER, "side": 1, "why": "skipped: needs hugetlb pages"}])
        self.assertIn(f"Skipped in new:\n- {OTHER}: skipped: needs hugetlb pages", result.stdout)
        self.assertEqual(data["broken"], [])

    def test_one_unverified_repetition_breaks_the_case(self):
        new = report({CASE: samples(1e9, 5)})
        new["benchmarks"][2]["verified"] = 0  # the third repetition; the others carry no counter at all
        result, data = self.run_compare(self.write("base.json", report({CASE: samples(1e9, 5)})),
                                        self.write("new.json", new))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(data["broken"][0]["reason"], "verified=0: the data did not arrive intact")

    def test_time_is_lower_is_better(self):
        # entry() derives real_time from the rate: 10% less throughput is 11% more time per iteration.
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5, seed=2)},
                                 "--metrics=real_time,cpu_time")
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(self.verdicts(data), {(CASE, "real_time"): "regression", (CASE, "cpu_time"): "regression"})
        self.assertEqual(data["directions"], {"real_time": "lower", "cpu_time": "lower"})
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(1.2e9, 5, seed=2)}, "--metrics=real_time")
        self.assertEqual((result.returncode, self.verdicts(data)[(CASE, "real_time")]), (0, "improvement"))
        self.assertRegex(result.stdout, r"\| real_time \| 2\.00 ms \| 1\.6\d ms \| -1\d\.\d% \|")

    def test_a_metric_of_unknown_direction_must_say_it(self):
        result, _ = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5)}, "--metrics=compressed_bytes")
        self.assertEqual(result.returncode, 2)
        self.assertIn("compressed_bytes:higher or compressed_bytes:lower", result.stderr)
        result, data = self.pair({CASE: samples(1.0e9, 5)}, {CASE: samples(0.9e9, 5)}, "--metrics=compressed_bytes:lower")
        self.assertEqual(result.returncode, 0, result.stdout)  # ratio 2.0 on both sides: the same bytes
        self.assertEqual(data["directions"], {"compressed_bytes": "lower"})

    def test_times_in_different_units_compare_in_nanoseconds(self):
        base, new = report({CASE: samples(1.0e9, 5)}), report({CASE: samples(1.0e9, 5)})
        for e in new["benchmarks"]:
            e["real_time"], e["time_unit"] = e["real_time"] / 1e6, "ms"
        result, data = self.run_compare(self.write("base.json", base), self.write("new.json", new), "--metrics=real_time")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertAlmostEqual(data["rows"][0]["delta_pct"], 0.0, places=6)

    def test_context_differences_are_printed_above_the_table(self):
        other = dict(context(), kernel="Linux 6.12.0", version_zstd="1.5.6", peer_cpu_model="Arm Neoverse-V2")
        result, data = self.run_compare(self.write("base.json", report({CASE: samples(1e9, 5)}, ctx=dict(
                                            context(), version_zstd="1.5.4"))),
                                        self.write("new.json", report({CASE: samples(1e9, 5)}, ctx=other)))
        self.assertEqual(result.returncode, 0, result.stdout)
        head = result.stdout.split("**base**")[0]
        self.assertIn("Context differs", head)
        self.assertIn("- kernel: 'Linux 6.1.0' in base, 'Linux 6.12.0' in new", head)
        self.assertIn("- version_zstd: '1.5.4' in base, '1.5.6' in new", head)
        self.assertIn("- peer_cpu_model: '(unset)' in base, 'Arm Neoverse-V2' in new", head)
        self.assertNotIn("rdma_fw_ver", head)  # not watched unless required
        self.assertEqual({d["key"] for d in data["context_differences"]}, {"kernel", "version_zstd", "peer_cpu_model"})

    def test_require_same_makes_a_difference_fatal_with_one_line_per_key(self):
        base = self.write("base.json", report({CASE: samples(1e9, 5)}, ctx=dict(context(), version_zstd="1.5.4")))
        new = self.write("new.json", report({CASE: samples(1e9, 5)}, ctx=dict(context("2.0"), version_zstd="1.5.6")))
        result, data = self.run_compare(base, new, "--require-same=kernel,version_*,rdma_fw_ver")
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr.strip().splitlines(), [
            f"compare: context key rdma_fw_ver differs: '2.42.5000' in {base}, '2.0' in {new} (--require-same)",
            f"compare: context key version_zstd differs: '1.5.4' in {base}, '1.5.6' in {new} (--require-same)"])
        result, _ = self.run_compare(base, new, "--require-same=kernel,cpu_model")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_require_same_of_a_key_no_file_has_is_bad_input(self):
        result, _ = self.pair({CASE: [1e9]}, {CASE: [1e9]}, "--require-same=kernal")
        self.assertEqual(result.returncode, 2)
        self.assertIn("kernal", result.stderr)

    def test_group_by_a_peer_key(self):
        files = [self.write(f"{fw}-{i}.json", report({CASE: samples(rate, 5, seed=i)},
                                                     ctx=dict(context(), peer_rdma_fw_ver=fw)))
                 for i, (fw, rate) in enumerate([("28.39", 1.0e9), ("28.41", 1.0e9), ("28.41", 1.3e9)])]
        result, data = self.run_compare("--group-by=peer_rdma_fw_ver", "--metrics=bytes_per_second", *files)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual([g["value"] for g in data["groups"]], ["28.39", "28.41"])
        self.assertEqual(data["context_differences"], [])  # the grouping key itself is no warning
        self.assertIn("| case | metric | peer_rdma_fw_ver=28.39 | peer_rdma_fw_ver=28.41 |", result.stdout)
        self.assertEqual(data["rows"][0]["cells"][1]["n_new"], 10)

    def test_group_by_a_key_no_file_has_is_bad_input(self):
        result, _ = self.pair({CASE: [1e9]}, {CASE: [1e9]}, "--group-by=peer_rdma_fw_ver")
        self.assertEqual(result.returncode, 2)
        self.assertIn("peer_rdma_fw_ver", result.stderr)

    def test_the_script_runs_and_exits_with_the_gate(self):
        result = subprocess.run(["/usr/bin/python3", SCRIPT, os.path.join(FIXTURES, "base.json"),
                                 os.path.join(FIXTURES, "regression.json")], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertTrue(result.stdout.rstrip().endswith("gate: FAIL: 1 regression(s) past 5%"), result.stdout)



class CompareFixtures(CompareRun):
    """One committed fixture per verdict, each against tests/python/fixtures/compare/base.json.
    The new side's case PIPE changes; RAW stays as in base."""

    PIPE = ("pipeline/tcp/overlap/bytegroup+huff/pages:4k/chunk:1048576/depth:8/workers:1/"
            "synthetic:weights:size=64MiB:seed=1/manual_time")
    EXPECTED = [  # new file, extra arguments, verdict of PIPE's bytes_per_second (or why it is set apart), exit
        ("improvement.json", [], "improvement", 0),
        ("regression.json", [], "regression", 1),
        ("noise.json", [], "same", 0),
        ("failed.json", [], "broken: failed: receiver: chunk 3: XXH3 mismatch after decompression", 1),
        ("unverified.json", [], "broken: verified=0: the data did not arrive intact", 1),
        ("missing.json", [], "not measured: absent", 1),
        ("missing.json", ["--allow-missing"], "not measured: absent", 0),
        ("other_kernel.json", [], "same", 0),
        ("other_kernel.json", ["--require-same=kernel"], "context: kernel", 1),
    ]

    def outcome(self, data, stderr):
        """What happened to PIPE: its verdict, why it was set apart, or the fatal context key."""
        if data is None:
            return "context: " + stderr.split("context key ")[1].split(" ")[0]
        rows = {(r["case"], r["metric"]): r["verdict"] for r in data["rows"]}
        if (self.PIPE, "bytes_per_second") in rows:
            return rows[(self.PIPE, "bytes_per_second")]
        broken = [b["reason"] for b in data["broken"] if b["case"] == self.PIPE]
        missing = [n["why"] for n in data["not_measured"] if n["case"] == self.PIPE]
        return f"broken: {broken[0]}" if broken else f"not measured: {missing[0]}"

    def test_every_verdict_and_its_exit_status(self):
        base = os.path.join(FIXTURES, "base.json")
        for new, args, verdict, status in self.EXPECTED:
            with self.subTest(new=new, args=args):
                result, data = self.run_compare(base, os.path.join(FIXTURES, new), *args)
                self.assertEqual((self.outcome(data, result.stderr), result.returncode), (verdict, status),
                                 result.stdout + result.stderr)

    def test_context_difference_is_warned_not_fatal_by_default(self):
        result, _ = self.run_compare(os.path.join(FIXTURES, "base.json"), os.path.join(FIXTURES, "other_kernel.json"))
        self.assertIn("- kernel: 'Linux 6.1.0-28-amd64' in base, 'Linux 6.12.0-1-amd64' in new", result.stdout)
        self.assertIn("- version_zstd: '1.5.4' in base, '1.5.6' in new", result.stdout)


class GateRefusesMissingData(CompareRun):
    """Each way NEW (or BASE) can lack data: the gate's last line and exit status, or for bad input
    the one stderr line. PIPE is the case each gate_*.json fixture breaks (see the generator)."""

    PIPE = CompareFixtures.PIPE
    FAILS = [  # base, new, extra arguments, last line printed, exit status
        ("base.json", "gate_nan_all.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_nan_4_of_5.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_metric_absent.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_metric_string.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_no_verified.json", [], "gate: FAIL: 2 broken case(s), nothing compared for new", 1),
        ("base.json", "gate_verified_partial.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_aggregates_only.json", [], "gate: pass", 0),
        ("base.json", "gate_aggregates_verified.json", [], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_aggregates_worst.json", [], "gate: FAIL: 1 regression(s) past 5%", 1),
        ("base.json", "gate_stddev_only.json", [], "gate: FAIL: 2 broken case(s), nothing compared for new", 1),
        ("base.json", "gate_disjoint.json", ["--allow-missing"], "gate: FAIL: nothing compared for new", 1),
        ("gate_base_zero.json", "base.json", [], "gate: FAIL: 1 row(s) without a usable base value", 1),
        ("gate_base_nan.json", "base.json", [], "gate: FAIL: 1 row(s) without a usable base value", 1),
        ("base.json", "gate_nan_all.json", ["--group-by=wirezip_git_sha"], "gate: FAIL: 1 broken case(s)", 1),
        ("base.json", "gate_no_verified.json", ["--group-by=wirezip_git_sha"],
         "gate: FAIL: 2 broken case(s), nothing compared for wirezip_git_sha=4a7e0c2", 1),
        ("base.json", "gate_aggregates_worst.json", ["--group-by=wirezip_git_sha"],
         "gate: FAIL: 1 regression(s) past 5%", 1),
        ("base.json", "noise.json", ["--group-by=kernel"],
         "gate: FAIL: nothing compared for kernel=Linux 6.1.0-28-amd64 alone (no other group)", 1),
    ]
    WHY = {  # new file -> why PIPE is broken (the listing and --json-out's broken)
        "gate_nan_all.json": "bytes_per_second=nan in 5 of 5 repetition(s)",
        "gate_nan_4_of_5.json": "bytes_per_second=nan in 4 of 5 repetition(s)",
        "gate_metric_absent.json": "bytes_per_second absent",
        "gate_metric_string.json": "bytes_per_second='2000000000.0' in 5 of 5 repetition(s)",
        "gate_no_verified.json": "no verified counter (the base has one)",
        "gate_verified_partial.json": "verified absent in 1 of 5 repetition(s) (the base has it)",
        "gate_aggregates_verified.json": "verified=0.6 (mean aggregate): the data did not arrive intact",
        "gate_stddev_only.json": "only stddev/cv aggregates: no value to use",
    }
    METRIC_BROKEN = ("gate_nan_all.json", "gate_nan_4_of_5.json", "gate_metric_absent.json", "gate_metric_string.json")
    BAD_INPUT = [  # base, new, extra arguments, the stderr line holds
        ("base.json", "noise.json", ["--threshold=nan"], "--threshold: must be a finite percentage >= 0: nan"),
        ("base.json", "noise.json", ["--threshold=inf%"], "--threshold: must be a finite percentage >= 0: inf%"),
        ("base.json", "noise.json", ["--threshold=-5%"], "--threshold: must be a finite percentage >= 0: -5%"),
        ("base.json", "noise.json", ["--alpha=nan"], "--alpha: must be a number in (0, 1]: nan"),
        ("base.json", "noise.json", ["--alpha=inf"], "--alpha: must be a number in (0, 1]: inf"),
        ("base.json", "noise.json", ["--alpha=often"], "--alpha: not a number: often"),
        ("base.json", "gate_duplicate_repetition.json", [], f"duplicate case name {PIPE}: repetition 0 appears twice"),
        ("base.json", "gate_duplicate_benchmark.json", [], f"duplicate case name {PIPE}: written by two benchmarks"),
        ("base.json", "gate_time_unit.json", [], f"{PIPE}: unknown time_unit 'fortnight'"),
        ("base.json", "gate_duplicate_repetition.json", ["--group-by=wirezip_git_sha"], "duplicate case name"),
    ]

    def compare(self, base, new, args):
        return self.run_compare(os.path.join(FIXTURES, base), os.path.join(FIXTURES, new), *args)

    def test_missing_data_fails_the_gate(self):
        for base, new, args, last, status in self.FAILS:
            with self.subTest(base=base, new=new, args=args):
                result, data = self.compare(base, new, args)
                self.assertEqual((result.stdout.rstrip().splitlines()[-1], result.returncode), (last, status),
                                 result.stdout + result.stderr)
                self.assertEqual(data["gate"]["pass"], status == 0)

    def test_broken_rows_say_why_and_are_no_regression(self):
        for new, why in self.WHY.items():
            with self.subTest(new=new):
                result, data = self.compare("base.json", new, [])
                self.assertIn({"case": self.PIPE, "side": 1, "reason": why}, data["broken"])
                self.assertIn(f"- {self.PIPE}: {why}", result.stdout)
                self.assertEqual(data["regressions"], 0)
                pipe = {r["metric"]: r["verdict"] for r in data["rows"] if r["case"] == self.PIPE}
                self.assertNotIn("regression", pipe.values())
                if new in self.METRIC_BROKEN:  # the case's other metric is still compared
                    self.assertEqual(pipe, {"bytes_per_second": "broken", "ratio": "same"})
                    row = f"| {self.PIPE} | bytes_per_second | 2.00 GB/s | — | — | — | broken |"
                    self.assertIn(row, result.stdout)

    def test_a_bad_base_value_is_its_own_verdict(self):
        result, data = self.compare("gate_base_zero.json", "base.json", [])
        self.assertEqual(data["bad_base"], [{"case": self.PIPE, "metric": "bytes_per_second",
                                             "reason": "base median 0 <= 0: no relative change"}])
        self.assertEqual(self.verdicts(data)[(self.PIPE, "bytes_per_second")], "bad base")
        result, data = self.compare("gate_base_nan.json", "base.json", [])
        self.assertEqual(data["bad_base"][0]["reason"], "bytes_per_second=nan in 5 of 5 repetition(s)")

    def test_bad_input_is_one_line_naming_the_field_or_case(self):
        for base, new, args, says in self.BAD_INPUT:
            with self.subTest(new=new, args=args):
                result, data = self.compare(base, new, args)
                self.assertEqual((result.returncode, result.stdout, data), (2, "", None))
                lines = result.stderr.splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn(says, lines[0])

    def test_a_run_with_repetitions_and_aggregates_is_no_duplicate(self):
        result, _ = self.pair({CASE: samples(1e9, 5)}, {CASE: samples(1e9, 5, seed=2)})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        twice = report({CASE: [1e9]})
        twice["benchmarks"] *= 2  # one run each, no repetition_index: the name is written twice
        result, _ = self.run_compare(self.write("base.json", report({CASE: [1e9]})), self.write("new.json", twice))
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"duplicate case name {CASE}: 2 runs without a repetition_index for 1 repetition(s)",
                      result.stderr)

    def test_files_of_one_group_may_repeat_a_case(self):
        files = [self.write(f"{i}.json", report({CASE: samples(1e9, 5, seed=i)}, ctx=context(fw)))
                 for i, fw in enumerate(["1.0", "2.0", "2.0"])]
        result, data = self.run_compare("--group-by=rdma_fw_ver", *files)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(data["rows"][0]["cells"][1]["n_new"], 10)


class BenchjsonValues(unittest.TestCase):
    def test_nan_and_strings_stay_out_of_the_samples(self):
        entries = [{"name": CASE, "run_type": "iteration", "bytes_per_second": v, "time_unit": "ns"}
                   for v in (1.0, float("nan"), "2.0", True)]
        case = benchjson.read_cases(entries)[CASE]
        self.assertEqual(case["samples"]["bytes_per_second"], [1.0])
        self.assertEqual(case["invalid"]["bytes_per_second"][1:], ["2.0", True])
        self.assertEqual(case["runs"], 4)
        self.assertEqual(benchjson.median(case, "bytes_per_second"), 1.0)

    def test_an_unknown_time_unit_names_the_case(self):
        with self.assertRaisesRegex(ValueError, f"{CASE}: unknown time_unit 'min'"):
            benchjson.read_cases([{"name": CASE, "run_type": "iteration", "real_time": 1.0, "time_unit": "min"}])

    def test_verified_true_is_not_one(self):
        case = benchjson.read_cases([{"name": CASE, "verified": True}])[CASE]
        self.assertEqual(benchjson.broken_reason(case), "verified=True: the data did not arrive intact")


if __name__ == "__main__":
    unittest.main()
