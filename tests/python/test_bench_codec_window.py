"""bench_codec reads file data sets through a bounded window (--window): a safetensors file, the same
file split into shards (safetensors:DIR/*.safetensors) and a raw bf16 file, each run once held whole
(window larger than the file) and once by windows much smaller than it. Every figure that is not a
timing must be equal to the last bit, and the shards must give the figures of the file they came from."""
import json
import os
import subprocess
import tempfile
import unittest

from bench_process import binary, one_line_error
from window_datasets import SHARD_COUNT, write_window_datasets

BENCH = binary("bench_codec")
EXACT = ["ratio", "compressed_bytes", "entropy_bound_ratio", "exponent_bound_ratio", "value_bound_ratio"]


def run_json(out, *args):
    result = subprocess.run([BENCH, *args, "--benchmark_min_time=0.01", f"--benchmark_out={out}",
                             "--benchmark_out_format=json"], capture_output=True, text=True, timeout=300)
    with open(out) as f:
        return result, json.load(f)


class WindowEqualsWholeFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = cls.tmp.name
        cls.shard_count = SHARD_COUNT
        cls.specs = write_window_datasets(tmp)  # a file, its shards, a raw file: 130 chunks of 8 KiB and 98
        common = ["--codecs=bytegroup+huff", f"--datasets={','.join(cls.specs)}", "--chunks=8KiB", "--threads=1,2"]
        cls.whole_result, cls.whole = run_json(os.path.join(tmp, "whole.json"), *common, "--window=1GiB")
        cls.windowed_result, cls.windowed = run_json(os.path.join(tmp, "windowed.json"), *common, "--window=64KiB")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def cases(self, report):
        return {b["name"]: b for b in report["benchmarks"]}

    def test_both_runs_pass_every_case(self):
        for result, report in [(self.whole_result, self.whole), (self.windowed_result, self.windowed)]:
            self.assertEqual(result.returncode, 0, result.stderr)
            for case in report["benchmarks"]:
                self.assertFalse(case.get("error_occurred", False), f"{case['name']}: {case.get('error_message')}")

    def test_windowed_cases_walk_many_windows_and_whole_ones_none(self):
        for name, case in self.cases(self.windowed).items():
            self.assertGreater(case.get("windows", 0), 5, name)
        for name, case in self.cases(self.whole).items():
            self.assertNotIn("windows", case, name)
        self.assertEqual(self.windowed["context"]["window_bytes"], str(64 * 1024))
        for spec in self.specs:
            self.assertIn(f"dataset_windowed:{spec}", self.windowed["context"])
            self.assertNotIn(f"dataset_windowed:{spec}", self.whole["context"])

    def test_ratio_bounds_and_digest_equal_the_whole_file_figures(self):
        whole, windowed = self.cases(self.whole), self.cases(self.windowed)
        self.assertEqual(set(whole), set(windowed))
        for name in whole:
            for counter in EXACT:
                self.assertEqual(whole[name][counter], windowed[name][counter], f"{name} {counter}")
        for spec in self.specs:
            key = f"dataset_sha256:{spec}"
            self.assertEqual(self.whole["context"][key], self.windowed["context"][key], key)

    def test_shards_give_the_figures_of_the_file_they_were_split_from(self):
        context = self.windowed["context"]
        model, shards = self.specs[0], self.specs[1]
        self.assertEqual(context[f"dataset_sha256:{model}"], context[f"dataset_sha256:{shards}"])
        self.assertIn(f"({self.shard_count} files)", context[f"dataset:{shards}"])
        for report in [self.whole, self.windowed]:
            cases = self.cases(report)
            label = lambda spec: spec.replace("/", "_")
            for name, case in cases.items():
                if label(model) + "/" not in name:
                    continue
                twin = cases[name.replace(label(model) + "/", label(shards) + "/")]
                for counter in EXACT:
                    self.assertEqual(case[counter], twin[counter], f"{name} {counter}")

    def test_every_case_reports_its_peak_memory(self):
        for report in [self.whole, self.windowed]:
            self.assertIn("max_rss_method", report["context"])
            self.assertGreater(int(report["context"]["max_rss_bytes"]), 0)
            for name, case in self.cases(report).items():
                self.assertGreater(case["max_rss_bytes"], 0, name)


class WindowedCpuTime(unittest.TestCase):
    def test_cpu_time_counts_the_timed_passes_only(self):
        # One thread's CPU time cannot exceed the wall time of the passes it ran, so a cpu_time well
        # over real_time means the reading and checking of windows (several times a pass) got in.
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw.bf16")
            with open(raw, "wb") as f:
                f.write(bytes(range(256)) * (32 * 1024))  # 8 MiB: 8 windows of 1 MiB
            result, report = run_json(os.path.join(tmp, "cpu.json"), "--codecs=lz4,memcpy", f"--datasets=file:{raw}",
                                      "--chunks=256KiB", "--window=1MiB")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [r for r in report["benchmarks"] if r.get("run_type") != "aggregate"]
        self.assertEqual(len(rows), 4)
        for row in rows:
            self.assertEqual(row["windows"], 8, row["name"])
            self.assertLess(row["cpu_time"], 1.25 * row["real_time"], row["name"])


class PerTensorShards(unittest.TestCase):
    def per_tensor(self, tmp, spec, *flags):
        out = os.path.join(tmp, "per_tensor.json")
        result = subprocess.run([BENCH, "--per-tensor", f"--per-tensor-out={out}", "--codecs=bytegroup+huff,lz4",
                                 f"--datasets={spec}", "--chunks=8KiB,64KiB", *flags],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            return json.load(f)

    def test_the_shards_records_are_those_of_the_file_they_were_split_from(self):
        with tempfile.TemporaryDirectory() as tmp:
            model, shards, _ = write_window_datasets(tmp)
            whole, split = self.per_tensor(tmp, model), self.per_tensor(tmp, shards)
        self.assertGreater(len(whole["tensors"]), 20)
        strip = lambda records: [{k: v for k, v in r.items() if k != "dataset"} for r in records]
        self.assertEqual(strip(whole["tensors"]), strip(split["tensors"]))  # every field, in the same order
        self.assertEqual({r["dataset"] for r in split["tensors"]}, {shards})
        self.assertEqual(whole["context"][f"dataset_sha256:{model}"], split["context"][f"dataset_sha256:{shards}"])
        self.assertIn(f"({SHARD_COUNT} files)", split["context"][f"dataset:{shards}"])

    def test_tensors_larger_than_the_window_give_the_records_of_the_whole_tensor(self):
        with tempfile.TemporaryDirectory() as tmp:
            model, _, _ = write_window_datasets(tmp)
            whole = self.per_tensor(tmp, model, "--window=1GiB")
            pieces = self.per_tensor(tmp, model, "--window=64KiB")  # lm_head in 4 pieces, zeros.bias in 2
        self.assertTrue(any(r["bf16_bytes"] > 64 * 1024 for r in whole["tensors"]))
        self.assertEqual(whole["tensors"], pieces["tensors"])  # every field of every record, in the same order
        self.assertEqual(whole["context"][f"dataset_sha256:{model}"], pieces["context"][f"dataset_sha256:{model}"])

    def test_chunk_sizes_whose_pieces_pass_the_window_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            model, _, _ = write_window_datasets(tmp)
            result = subprocess.run([BENCH, "--per-tensor", f"--per-tensor-out={tmp}/p.json", "--codecs=lz4",
                                     f"--datasets={model}", "--chunks=64KiB,1000001", "--window=1GiB"],
                                    capture_output=True, text=True, timeout=300)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("a piece must hold a whole number of every chunk size, 65536065536 bytes, which is over "
                      "--window=1073741824", result.stderr)

    def test_a_regex_that_some_shards_do_not_match_selects_from_the_others(self):
        with tempfile.TemporaryDirectory() as tmp:
            model, shards, _ = write_window_datasets(tmp)
            whole = self.per_tensor(tmp, model + ":tensors=lm_head|layers\\.0\\.")
            split = self.per_tensor(tmp, shards + ":tensors=lm_head|layers\\.0\\.")
        names = [r["name"] for r in split["tensors"]]
        self.assertIn("lm_head.weight", names)
        self.assertIn("layers.0.mlp.weight", names)
        self.assertEqual([r["name"] for r in whole["tensors"]], names)


class WindowUsage(unittest.TestCase):
    def test_a_glob_matching_nothing_is_one_clear_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            one_line_error(self, BENCH, [f"--datasets=safetensors:{tmp}/*.safetensors", "--codecs=lz4"],
                           "matches no file")

    def test_a_chunk_over_the_window_is_refused_before_the_file_is_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw.bf16")
            with open(raw, "wb") as f:
                f.write(bytes(4 << 20))
            one_line_error(self, BENCH, [f"--datasets=file:{raw}", "--window=1MiB", "--chunks=2MiB", "--codecs=lz4"],
                           "--window=1048576 cannot hold one 2097152-byte chunk of 'file:")

    def test_a_window_of_zero_is_a_usage_error(self):
        one_line_error(self, BENCH, ["--window=0", "--codecs=lz4"], "--window")


if __name__ == "__main__":
    unittest.main()
