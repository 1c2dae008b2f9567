"""scripts/ab and its paired statistics: the Wilcoxon signed-rank verdict, the order-statistic CI,
the compare hook on synthetic rounds (no timing anywhere), the per-binary defaults and gated case
set, the calibration's re-judging of fewer rounds, the instruction-count verdicts and the
cachegrind reader; then short interleaved runs of bench_codec checking the JSON's shape, the cases
run and the exit status (never a timing)."""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest

from bench_process import BIN

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import ab  # noqa: E402
import ab_calibrate  # noqa: E402
import icount  # noqa: E402
import paired  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "ab")
COMPARE = os.path.join(ROOT, "scripts", "compare")


def drifting(n, ratio, seed):
    """Rounds of a host whose speed drifts 2x over the run while B/A stays `ratio` (+-1%)."""
    rng = random.Random(seed)
    a, b = {}, {}
    for r in range(n):
        speed = 1e9 * (1 + r / n) * rng.uniform(0.8, 1.2)
        a[r] = speed
        b[r] = speed * ratio * rng.uniform(0.99, 1.01)
    return a, b


class PairedStatistics(unittest.TestCase):
    def test_drift_cancels_for_identical_sides(self):
        a, b = drifting(10, 1.0, seed=1)
        row = paired.compare_paired(a, b, 0.05, 0.05)
        self.assertEqual(row["verdict"], "same")
        self.assertAlmostEqual(row["median_ratio"], 1.0, delta=0.01)
        self.assertLessEqual(row["ci_low"], row["median_ratio"])
        self.assertGreaterEqual(row["ci_high"], row["median_ratio"])

    def test_a_ten_percent_drop_is_a_significant_regression(self):
        a, b = drifting(10, 0.9, seed=2)
        row = paired.compare_paired(a, b, 0.05, 0.05)
        self.assertEqual(row["verdict"], "regression")
        self.assertLess(row["p_value"], 0.01)
        self.assertLess(row["ci_high"], 0.95)

    def test_a_gain_is_an_improvement_and_times_read_the_other_way(self):
        a, b = drifting(10, 1.1, seed=3)
        self.assertEqual(paired.compare_paired(a, b, 0.05, 0.05)["verdict"], "improvement")
        self.assertEqual(paired.compare_paired(a, b, 0.05, 0.05, "lower")["verdict"], "regression")

    def test_a_change_within_the_threshold_is_same_even_when_significant(self):
        a, b = drifting(10, 0.97, seed=4)
        row = paired.compare_paired(a, b, 0.05, 0.05)
        self.assertLess(row["p_value"], 0.05)
        self.assertEqual(row["verdict"], "same")

    def test_one_outlier_round_does_not_make_a_regression(self):
        a, b = drifting(10, 1.0, seed=5)
        b[3] = a[3] * 0.5
        self.assertEqual(paired.compare_paired(a, b, 0.05, 0.05)["verdict"], "same")

    def test_only_rounds_both_sides_measured_pair_up(self):
        row = paired.compare_paired({0: 1.0, 1: 1.0, 2: 1.0}, {1: 0.5, 2: 0.5, 3: 9.0}, 0.05, 0.05)
        self.assertEqual(row["rounds"], 2)
        self.assertEqual(row["ratios"], [0.5, 0.5])

    def test_too_few_rounds_say_so_and_give_no_verdict(self):
        a, b = drifting(4, 0.8, seed=6)
        row = paired.compare_paired(a, b, 0.05, 0.05)
        self.assertFalse(row["u_test"])
        self.assertIn("need >= 5", row["note"])
        self.assertEqual(row["verdict"], "same")

    def test_identical_values_give_p_one_and_same(self):
        row = paired.compare_paired({r: 5.0 for r in range(8)}, {r: 5.0 for r in range(8)}, 0.0, 0.05)
        self.assertEqual(row["p_value"], 1.0)
        self.assertEqual(row["verdict"], "same")

    def test_holm_keeps_a_clear_regression_and_drops_a_borderline_one(self):
        clear = paired.compare_paired(*drifting(10, 0.8, seed=9), 0.05, 0.05)
        ratios = [0.9, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 1.035, 1.045]  # one-sided p = 14/1024
        borderline = paired.compare_paired({r: 1.0 for r in range(10)}, dict(enumerate(ratios)), 0.05, 0.05)
        self.assertAlmostEqual(borderline["p_value"], 14 / 1024)
        self.assertEqual(borderline["verdict"], "regression")
        paired.holm([clear, borderline] + [paired.compare_paired(*drifting(10, 1.0, seed=s), 0.05, 0.05)
                                           for s in range(11, 14)], 0.05)
        self.assertEqual(clear["verdict"], "regression")
        self.assertEqual(borderline["verdict"], "same")
        self.assertGreater(borderline["p_adjusted"], borderline["p_value"])

    def test_signed_rank_p_is_exact_and_one_sided_in_the_median_direction(self):
        self.assertAlmostEqual(paired.signed_rank_p([-0.1] * 10), 2 / 1024)
        self.assertAlmostEqual(paired.signed_rank_p([-0.1] * 10, "less"), 1 / 1024)
        row = paired.compare_paired({r: 1.0 for r in range(10)}, {r: 0.8 for r in range(10)}, 0.05, 0.05)
        self.assertAlmostEqual(row["p_value"], 1 / 1024)
        self.assertAlmostEqual(row["p_two_sided"], 2 / 1024)

    def test_median_ci_uses_order_statistics(self):
        low, high, level = paired.median_ci(list(range(1, 11)), 0.05)
        self.assertEqual((low, high), (2, 9))
        self.assertAlmostEqual(level, 1 - 22 / 1024)
        low, high, level = paired.median_ci([3, 1, 2], 0.05)
        self.assertEqual((low, high), (1, 3))
        self.assertAlmostEqual(level, 0.75)


def side_file(path, values):
    """A scripts/ab side file: one row per (case, round) with bytes_per_second."""
    rows = [{"name": case, "run_name": case, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
             "iterations": 1, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ns", "bytes_per_second": v,
             "ab_side": "A", "ab_round": r} for case, by_round in values.items() for r, v in by_round.items()]
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": rows}, f)


class CompareHook(unittest.TestCase):
    def run_compare(self, a, b):
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, n) for n in ("a.json", "b.json", "out.json")]
            side_file(paths[0], a)
            side_file(paths[1], b)
            result = subprocess.run([COMPARE, "--metrics=bytes_per_second", f"--json-out={paths[2]}", *paths[:2]],
                                    capture_output=True, text=True, timeout=60)
            with open(paths[2]) as f:
                return result, json.load(f)

    def test_rounds_pair_up_so_drift_does_not_fail_the_gate(self):
        a, b = drifting(10, 1.0, seed=7)  # the host's 2x drift is in both sides' rounds alike
        result, data = self.run_compare({"codec/x": a}, {"codec/x": b})
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(data["rows"][0]["test"], "wilcoxon signed-rank (paired)")
        self.assertEqual(data["rows"][0]["rounds"], 10)

    def test_a_round_written_twice_is_a_duplicate(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            side_file(a, {"codec/x": {0: 1.0, 1: 1.0}})
            side_file(b, {"codec/x": {0: 1.0, 1: 1.0}})
            with open(b) as f:
                data = json.load(f)
            data["benchmarks"].append(dict(data["benchmarks"][0]))  # round 0 again
            with open(b, "w") as f:
                json.dump(data, f)
            result = subprocess.run([COMPARE, a, b], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("duplicate case name codec/x", result.stderr)

    def test_a_paired_regression_fails_the_gate(self):
        a, b = drifting(10, 0.85, seed=8)
        result, data = self.run_compare({"codec/x": a}, {"codec/x": b})
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(data["rows"][0]["verdict"], "regression")


class Defaults(unittest.TestCase):
    def test_bench_codec_defaults_to_twenty_rounds_of_three_and_the_others_to_ten_of_five(self):
        codec = ab.parse_args(["--codec-a=x", "--codec-b=y"])
        self.assertEqual((codec.rounds, codec.reps), (30, 3))
        rdma = ab.parse_args(["--bench=bench_rdma", "--peer-a=h:1", "--peer-b=h:2"])
        self.assertEqual((rdma.rounds, rdma.reps), (10, 5))
        given = ab.parse_args(["--rounds=7", "--reps=2"])
        self.assertEqual((given.rounds, given.reps), (7, 2))

    def test_the_gated_set_fills_only_the_flags_not_given(self):
        args = ab.parse_args(["--", "--datasets=synthetic:weights:size=64KiB", "--benchmark_filter=compress"])
        flags = ab.gated_args(args)
        self.assertEqual(flags[:2], ["--datasets=synthetic:weights:size=64KiB", "--benchmark_filter=compress"])
        self.assertEqual(sorted(f.split("=")[0] for f in flags), ["--benchmark_filter", "--chunks", "--codecs",
                                                                  "--datasets"])
        self.assertIn("--codecs=bytegroup:split=exponent+huff,bytegroup+lz4", flags)
        # A side's own flags (a codec pair's --codecs, a flags pair's) are not filled in; --cases=all and
        # the other binaries add nothing.
        codec_sides = [{"flags": ["--codecs=memcpy"]}, {"flags": ["--codecs=lz4"]}]
        self.assertFalse(any(f.startswith("--codecs") for f in ab.gated_args(args, codec_sides)))
        flag_sides = [{"flags": ["--chunks=64KiB", "--window=1MiB"]}, {"flags": ["--window=2MiB"]}]
        self.assertFalse(any(f.startswith("--chunks") for f in ab.gated_args(args, flag_sides)))
        self.assertEqual(ab.gated_args(ab.parse_args(["--cases=all"])), [])
        self.assertEqual(ab.gated_args(ab.parse_args(["--bench=bench_rdma"])), [])

    def test_flag_pairs_split_into_words_and_refuse_what_is_not_a_flag(self):
        args = ab.parse_args(["--flags-a=--window=1MiB --threads=1", "--flags-b=--window='2 MiB'",
                              f"--build={os.path.dirname(os.path.abspath(BIN))}"])
        if os.path.exists(os.path.join(BIN, "bench_codec")):
            kind, sides = ab.make_sides(args, log=lambda *_: None)
            self.assertEqual(kind, "flags")
            self.assertEqual([s["flags"] for s in sides], [["--window=1MiB", "--threads=1"], ["--window=2 MiB"]])
        for bad, reason in (("--flags-a=window=1MiB", "every word must be a --flag"),
                            ("--flags-a=--window='1MiB", "No closing quotation")):
            with self.assertRaisesRegex(ab.BadInput, reason):
                ab.make_sides(ab.parse_args([bad, "--flags-b=--window=2MiB",
                                             f"--build={os.path.dirname(os.path.abspath(BIN))}"]))


class Calibration(unittest.TestCase):
    def test_rejudging_fewer_rounds_uses_only_the_first_ones(self):
        ratios = {"codec/x": [0.9] * 10 + [1.0] * 10, "memcpy/x": [1.0, 1.01] * 10}
        rows = {r["case"]: r for r in ab_calibrate.rejudge(ratios, 10, 0.05, 0.05)}
        self.assertEqual(rows["codec/x"]["rounds"], 10)
        self.assertEqual(rows["codec/x"]["verdict"], "regression")  # all 10 rounds 10% slower
        self.assertEqual(rows["memcpy/x"]["verdict"], "same")
        self.assertIsNotNone(rows["codec/x"]["p_adjusted"])  # Holm over both cases
        few = ab_calibrate.rejudge(ratios, 4, 0.05, 0.05)
        self.assertTrue(all(r["verdict"] == "same" and r["rounds"] == 4 for r in few))  # too few for a verdict

    def test_the_power_pair_pairs_cases_across_chunk_sizes(self):
        self.assertEqual(ab_calibrate.chunk_rename("codec/c/data/chunk:393216/compress/manual_time"),
                         "codec/c/data/chunk/compress/manual_time")


class InstructionCounts(unittest.TestCase):
    def rows(self, side, values):
        return [{"name": n, "ab_side": side, "instructions_per_byte": v} for n, v in values.items()]

    def test_identical_counts_are_same_and_one_percent_more_is_caught(self):
        a = self.rows("A", {"c1": 10.0, "c2": 4.0})
        same = icount.verdicts(a, self.rows("B", {"c1": 10.0, "c2": 4.0}), 0.005)
        self.assertEqual([r["verdict"] for r in same], ["same", "same"])
        worse = icount.verdicts(a, self.rows("B", {"c1": 10.1, "c2": 3.96}), 0.005)
        self.assertEqual([r["verdict"] for r in worse], ["regression", "improvement"])

    def test_cachegrind_summary_is_read_by_event_name(self):
        with tempfile.NamedTemporaryFile("w", suffix=".cg", delete=False) as f:
            f.write("desc: I1 cache: 32768 B\ncmd: x\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n"
                    "fl=a.c\nfn=f\n1 5 0 0 1 0 0 1 0 0\nsummary: 1000 1 1 300 20 5 200 10 2\n")
        try:
            events = icount.read_summary(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(events["Ir"], 1000)
        self.assertEqual(events["D1mw"], 10)


@unittest.skipUnless(os.path.exists(os.path.join(BIN, "bench_codec")), "bench_codec is not built")
class EndToEnd(unittest.TestCase):
    def test_three_rounds_of_two_codec_specs_give_paired_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run(
                [SCRIPT, f"--build={os.path.dirname(os.path.abspath(BIN))}", "--codec-a=bytegroup+lz4",
                 "--codec-b=bytegroup+lz4", "--rounds=3", "--seed=11", "--min-time=0.001", f"--out={tmp}",
                 "--", "--datasets=synthetic:weights:size=256KiB:seed=1", "--chunks=64KiB"],
                capture_output=True, text=True, timeout=300)
            self.assertIn(result.returncode, (0, 1), result.stderr)
            self.assertIn("seed 11", result.stdout)
            with open(os.path.join(tmp, "ab.json")) as f:
                doc = json.load(f)
        self.assertEqual(doc["ab"]["seed"], 11)
        self.assertEqual(len(doc["ab"]["orders"]), 3)
        self.assertTrue(all(sorted(o) == ["A", "B"] for o in doc["ab"]["orders"]))
        rows = [r for r in doc["benchmarks"] if r["name"].startswith("codec/codec/")]
        self.assertEqual(sorted({(r["ab_side"], r["ab_round"]) for r in rows}),
                         [(s, r) for s in "AB" for r in range(3)])
        self.assertTrue(all(r["ab_name"].startswith("codec/bytegroup+lz4/") for r in rows))
        results = {(r["case"], r["metric"]) for r in doc["results"]}
        self.assertIn(("codec/codec/synthetic:weights:size=256KiB:seed=1/chunk:65536/compress/manual_time/threads:1",
                       "cpu_bytes_per_second"), results)  # bench_codec's default gated metric
        for r in doc["results"]:
            self.assertEqual(r["rounds"], 3)
            self.assertTrue(math.isfinite(r["median_ratio"]))
            self.assertIn(r["verdict"], ("same", "regression", "improvement"))
        self.assertEqual(result.returncode, 0 if doc["ab"]["pass"] else 1)
        # instructions_per_byte is in every case where the PMU counts, in none (with the reason) where not.
        measured = [r for r in doc["benchmarks"] if r.get("run_type") != "aggregate"]
        if doc["context"]["instructions"].startswith("unavailable: "):
            self.assertFalse(any("instructions_per_byte" in r for r in measured))
        else:
            self.assertTrue(all(r["instructions_per_byte"] > 0 for r in measured))

    def test_without_case_flags_the_gated_set_runs(self):
        build = os.path.dirname(os.path.abspath(BIN))
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run([SCRIPT, f"--build-a={build}", f"--build-b={build}", "--rounds=2", "--reps=1",
                                     "--seed=3", "--min-time=0.001", f"--out={tmp}"],
                                    capture_output=True, text=True, timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr)  # 2 rounds: no verdict, so no regression
            with open(os.path.join(tmp, "ab.json")) as f:
                doc = json.load(f)
        codecs = {r["name"].split("/")[1] for r in doc["benchmarks"]}
        self.assertEqual(codecs, {"memcpy", "bytegroup:split=exponent+huff", "bytegroup+lz4"})
        self.assertTrue(all("/synthetic:weights:size=1MiB:seed=1/chunk:1048576/" in r["name"]
                            for r in doc["benchmarks"]))
        self.assertEqual(len({r["case"] for r in doc["results"]}), 6)  # compress and decompress each
        self.assertTrue(all(r["rounds"] == 2 and r["verdict"] == "same" for r in doc["results"]))

    def test_bad_input_exits_2_with_one_line(self):
        result = subprocess.run([SCRIPT, "--codec-a=memcpy", "--rounds=3"], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.strip().count("\n"), 0, result.stderr)
        self.assertIn("--codec-a and --codec-b go together", result.stderr)
        result = subprocess.run([SCRIPT, f"--build={os.path.dirname(os.path.abspath(BIN))}", "--codec-a=memcpy",
                                 "--codec-b=nonsense", "--rounds=2", "--", "--datasets=synthetic:weights:size=64KiB"],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("ab: error: side", result.stderr)


if __name__ == "__main__":
    unittest.main()
