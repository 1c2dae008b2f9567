"""bench_codec's command line and JSON are interfaces (scripts, CI and users read them): check them
on a tiny run, including the verdicts that must hold on any machine (ratios, not timings)."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from bench_process import binary, failure_summary, one_line_errors

BENCH = binary("bench_codec")
DATASET = "synthetic:weights:size=2MiB:seed=1"


def run(*args):
    return subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=300)


class BenchCodecJson(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "codec.json")
            cls.result = run("--codecs=bytegroup+huff,lz4,blosc:bitshuffle+lz4", f"--datasets={DATASET}",
                             "--chunks=64KiB,1MiB", "--threads=1,2", "--benchmark_min_time=0.01",
                             f"--benchmark_out={out}", "--benchmark_out_format=json")
            with open(out) as f:
                cls.report = json.load(f)
        cls.cases = {b["name"]: b for b in cls.report["benchmarks"]}

    def test_a_run_without_failures_exits_0(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertNotIn("cases failed", self.result.stderr)

    def test_case_names_follow_the_documented_form(self):
        # manual_time: the wall time over all threads (Google Benchmark's real time is their mean)
        pattern = re.compile(r"^codec/(?P<spec>[^/]+)/(?P<dataset>[^/]+)/chunk:(?P<chunk>\d+)/"
                             r"(?P<dir>compress|decompress)/manual_time/threads:(?P<threads>\d+)$")
        seen = set()
        for name in self.cases:
            m = pattern.match(name)
            self.assertIsNotNone(m, name)
            seen.add((m["spec"], m["chunk"], m["dir"], m["threads"]))
        # memcpy joins every run as the ceiling even when not asked for.
        for spec in ["memcpy", "bytegroup+huff", "lz4", "blosc:bitshuffle+lz4"]:
            for chunk in ["65536", "1048576"]:
                for direction in ["compress", "decompress"]:
                    for threads in ["1", "2"]:
                        self.assertIn((spec, chunk, direction, threads), seen)

    def test_every_case_has_its_counters_and_no_error(self):
        for name, case in self.cases.items():
            self.assertFalse(case.get("error_occurred", False), f"{name}: {case.get('error_message')}")
            for counter in ["bytes_per_second", "ratio", "compressed_bytes", "entropy_bound_ratio",
                            "exponent_bound_ratio", "value_bound_ratio", "vs_memcpy"]:
                self.assertIn(counter, case, name)
            self.assertGreater(case["bytes_per_second"], 0, name)
            self.assertGreater(case["vs_memcpy"], 0, name)

    def test_vs_memcpy_is_the_rate_over_memcpys_in_the_same_configuration(self):
        # One repetition: memcpy's own case is exactly 1, and every other case's counter is its rate
        # over memcpy's rate of the same chunk size, direction and thread count.
        for name, case in self.cases.items():
            memcpy = self.cases[re.sub(r"^codec/[^/]+/", "codec/memcpy/", name)]
            self.assertAlmostEqual(case["vs_memcpy"], case["bytes_per_second"] / memcpy["bytes_per_second"],
                                   delta=1e-6 * case["vs_memcpy"], msg=name)
            if name.startswith("codec/memcpy/"):
                self.assertEqual(case["vs_memcpy"], 1.0)

    def test_ratios_tell_the_byte_grouping_story(self):
        def ratio(spec):
            return self.cases[f"codec/{spec}/{DATASET}/chunk:1048576/compress/manual_time/threads:1"]["ratio"]
        bound = self.cases[f"codec/memcpy/{DATASET}/chunk:1048576/compress/manual_time/threads:1"]["entropy_bound_ratio"]
        self.assertAlmostEqual(ratio("memcpy"), 1.0, delta=0.001)
        self.assertLess(ratio("lz4"), 1.01)  # LZ4 alone finds nothing in interleaved bf16
        self.assertGreater(ratio("bytegroup+huff"), ratio("blosc:bitshuffle+lz4"))
        self.assertGreater(ratio("bytegroup+huff"), 0.98 * bound)
        self.assertLessEqual(ratio("bytegroup+huff"), bound)

    def test_bounds_past_the_byte_planes(self):
        # Whole 16-bit values bound any split into planes (the split is a bijection, and entropy is
        # subadditive); on weights the exponent split's bound lies between the byte planes' and it.
        case = self.cases[f"codec/memcpy/{DATASET}/chunk:1048576/compress/manual_time/threads:1"]
        self.assertGreater(case["exponent_bound_ratio"], case["entropy_bound_ratio"])
        self.assertGreaterEqual(case["value_bound_ratio"], case["exponent_bound_ratio"])

    def test_threads_report_the_same_totals_and_a_rate(self):
        # Both thread counts compress the same chunks: the totals agree, and each has its wall-time rate.
        for spec in ["bytegroup+huff", "memcpy"]:
            one, two = (self.cases[f"codec/{spec}/{DATASET}/chunk:65536/compress/manual_time/threads:{t}"]
                        for t in (1, 2))
            self.assertEqual(one["compressed_bytes"], two["compressed_bytes"], spec)
            self.assertEqual(two["threads"], 2)
            self.assertGreater(two["bytes_per_second"], 0)

    def test_context_records_where_it_ran(self):
        context = self.report["context"]
        for key in ["wirezip_version", "wirezip_git_sha", "version_lz4", "version_zstd", "version_blosc",
                    "cpu_model", "kernel", "thp_enabled", "simd_path", "argv",
                    f"dataset_sha256:{DATASET}"]:
            self.assertIn(key, context)
        self.assertRegex(context[f"dataset_sha256:{DATASET}"], r"^[0-9a-f]{64}$")


class BenchCodecErrors(unittest.TestCase):
    def test_bad_inputs(self):
        one_line_errors(self, BENCH, [(["--codecs=lz5"], "valid forms"), (["--chunks=12XB"], "bad size"),
                                      (["--datasets=file:/nonexistent/x.bin"], "/nonexistent/x.bin")])

    def test_a_fifo_data_set_is_refused_without_waiting_for_a_writer(self):
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "model.fifo")
            os.mkfifo(fifo)
            one_line_errors(self, BENCH, [([f"--datasets=file:{fifo}"], f"'{fifo}' is a FIFO, not a regular file"),
                                          ([f"--datasets=safetensors:{fifo}"], "is a FIFO, not a regular file")])

    def test_bad_flag_values_are_refused_before_any_case(self):
        one_line_errors(self, BENCH, [(["--threads=0"], "--threads: '0' is not a whole number"),
                                      (["--threads=-1"], "--threads: '-1' is not a whole number"),
                                      (["--threads=1,,2"], "--threads: empty item"),
                                      (["--chunks=0"], "--chunks: '0' is less than the minimum"),
                                      (["--chunks=2GiB"], "--chunks: '2GiB' is more than the maximum, 1GiB"),
                                      (["--chunks=-1"], "--chunks: bad size '-1'"),
                                      # an empty value must not take the next argument as its value
                                      (["--chunks=", "--threads=2"], "--chunks: no value"),
                                      (["--chunks", "--threads=2"], "--chunks: no value"),
                                      (["--codecs=", "--chunks=1MiB"], "--codecs: no value"),
                                      (["--datasets="], "--datasets: no value"),
                                      (["--no-such-flag"], "--no-such-flag")])

    def test_uneven_thread_split_fails_the_case_and_the_exit_status(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "codec.json")
            result = run("--codecs=memcpy", "--datasets=synthetic:weights:size=3MiB", "--chunks=1MiB",
                         "--threads=1,2", "--benchmark_min_time=0.01", f"--benchmark_out={out}",
                         "--benchmark_out_format=json")
            with open(out) as f:
                cases = {case["name"]: case for case in json.load(f)["benchmarks"]}
        failed = failure_summary(self, result, "bench_codec")
        self.assertIn("bench_codec: 2 of 4 cases failed:", result.stderr)
        for name, case in cases.items():
            if name.endswith("/threads:2"):
                self.assertTrue(case.get("error_occurred"), name)
                self.assertIn("do not split evenly", case["error_message"])
                self.assertEqual(failed[name], case["error_message"])
            else:  # one thread splits anything: that case ran and is not in the summary
                self.assertFalse(case.get("error_occurred"), name)
                self.assertNotIn(name, failed)

    def test_list_codecs(self):
        result = run("--list-codecs")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("bytegroup+huff", result.stdout)
        self.assertIn("c-blosc", result.stdout)


if __name__ == "__main__":
    unittest.main()
