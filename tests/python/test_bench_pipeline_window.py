"""bench_pipeline sends file data sets through a bounded window (--window): a safetensors file, the
same file split into shards and a raw bf16 file with a partial last chunk, over mem and tcp in
loopback and through a --serve side, each run once held whole (window larger than the file) and once
by windows much smaller than it. Every case must be verified, and every figure that is not a timing
must be equal to the last bit. Outcomes, never timings."""
import os
import tempfile
import unittest

from bench_process import binary, failure_summary, one_line_error, run_json, start_server, stop
from window_datasets import write_window_datasets

BENCH = binary("bench_pipeline")
EXACT = ["ratio", "compressed_bytes", "wire_bytes"]


def cases(report):
    return {b["name"]: b for b in report["benchmarks"]}


class WindowEqualsWholeFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.specs = write_window_datasets(cls.tmp.name)
        cls.common = ["--modes=raw,overlap", "--codecs=bytegroup+huff", f"--datasets={','.join(cls.specs)}",
                      "--chunks=8KiB", "--depth=4", "--benchmark_min_time=0.01", "--timeout-ms=5000"]
        cls.whole = run_json(BENCH, "--transport=mem,tcp", *cls.common, "--window=1GiB", timeout=300)
        cls.windowed = run_json(BENCH, "--transport=mem,tcp", *cls.common, "--window=64KiB", timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_case_runs_and_is_verified(self):
        for result, report in [self.whole, self.windowed]:
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(len(report["benchmarks"]), 2 * 3 * 2)  # transports x data sets x (raw, overlap)
            for name, case in cases(report).items():
                self.assertFalse(case.get("error_occurred", False), f"{name}: {case.get('error_message')}")
                self.assertEqual(case["verified"], 1, name)
                check_plain_writes(self, name, case)

    def test_windowed_cases_walk_many_windows_and_whole_ones_none(self):
        for name, case in cases(self.windowed[1]).items():
            self.assertGreater(case["windows"], 10, name)
        for name, case in cases(self.whole[1]).items():
            self.assertNotIn("windows", case, name)
        self.assertEqual(self.windowed[1]["context"]["window_bytes"], str(64 * 1024))
        for spec in self.specs:
            self.assertIn(f"dataset_windowed:{spec}", self.windowed[1]["context"])
            self.assertNotIn(f"dataset_windowed:{spec}", self.whole[1]["context"])

    def test_ratio_and_bytes_equal_the_whole_file_figures(self):
        whole, windowed = cases(self.whole[1]), cases(self.windowed[1])
        self.assertEqual(set(whole), set(windowed))
        for name in whole:
            for counter in EXACT:
                if "/raw/" in name and counter == "compressed_bytes":
                    self.assertNotIn(counter, windowed[name], name)
                    continue
                self.assertEqual(whole[name][counter], windowed[name][counter], f"{name} {counter}")
        for spec in self.specs:
            key = f"dataset_sha256:{spec}"
            self.assertEqual(self.whole[1]["context"][key], self.windowed[1]["context"][key], key)

    def test_shards_move_the_bytes_of_the_file_they_were_split_from(self):
        model, shards = (spec.replace("/", "_") + "/" for spec in self.specs[:2])  # as case names hold them
        for _, report in [self.whole, self.windowed]:
            by_name = cases(report)
            pairs = [(case, by_name[name.replace(model, shards)]) for name, case in by_name.items() if model in name]
            self.assertEqual(len(pairs), 4)  # (mem, tcp) x (raw, overlap)
            for case, twin in pairs:
                for counter in ["ratio", "wire_bytes"]:
                    self.assertEqual(case[counter], twin[counter], f"{case['name']} {counter}")

    def test_every_case_reports_its_peak_memory(self):
        for _, report in [self.whole, self.windowed]:
            self.assertIn("max_rss_method", report["context"])
            self.assertGreater(int(report["context"]["max_rss_bytes"]), 0)
            for name, case in cases(report).items():
                self.assertGreater(case["max_rss_bytes"], 0, name)

    def test_a_serving_side_receives_the_windows(self):
        server, port = start_server(BENCH, "--transport=tcp")
        try:
            result, report = run_json(BENCH, "--transport=tcp", f"--peer=127.0.0.1:{port}", *self.common,
                                      "--window=64KiB", timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(server.wait(timeout=30), 0)
        finally:
            stop(server)
        whole = cases(self.whole[1])
        for name, case in cases(report).items():
            self.assertEqual(case["verified"], 1, name)
            self.assertGreater(case["windows"], 10, name)
            check_plain_writes(self, name, case)
            for counter in ["ratio", "wire_bytes"]:
                self.assertEqual(case[counter], whole[name][counter], f"{name} {counter}")


def check_plain_writes(test, name, case):
    """A raw case times bench_rdma's loop over every window of an iteration, no fewer bytes."""
    if "/raw/" not in name:
        test.assertNotIn("plain_writes_bytes", case, name)
        return
    test.assertEqual(case["plain_writes_bytes"], case["wire_bytes"], name)  # raw: the data set, once
    test.assertGreater(case["raw_vs_writes"], 0, name)


class WindowUsage(unittest.TestCase):
    def test_a_glob_matching_nothing_is_one_clear_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            one_line_error(self, BENCH, [f"--datasets=safetensors:{tmp}/*.safetensors", "--transport=mem"],
                           "matches no file")

    def test_a_window_of_zero_is_a_usage_error(self):
        one_line_error(self, BENCH, ["--window=0", "--transport=mem"], "--window")

    def test_a_window_smaller_than_a_chunk_fails_its_cases_naming_the_window(self):
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "raw.bf16")
            with open(raw, "wb") as f:
                f.write(bytes(range(256)) * 1024)
            result, report = run_json(BENCH, "--transport=mem", "--modes=raw", f"--datasets=file:{raw}",
                                      "--chunks=64KiB", "--window=16KiB", "--benchmark_min_time=0.01")
        failed = failure_summary(self, result, "bench_pipeline")
        self.assertEqual(len(failed), 1, failed)
        for reason in failed.values():
            self.assertIn("--window=16384 cannot hold one 65536-byte chunk", reason)


if __name__ == "__main__":
    unittest.main()
