"""bench_pipeline's exit statuses: 2 for a flag out of range (one line, before any case), 1 when a
case failed (with the summary naming it), 0 for a run where every case ran. Outcomes, never timings."""
import os
import unittest

from bench_process import binary, failure_summary, one_line_errors, run_json

BENCH = binary("bench_pipeline")
TINY = ["--datasets=synthetic:weights:size=1MiB:seed=3", "--chunks=256KiB", "--modes=overlap",
        "--codecs=bytegroup+huff", "--benchmark_min_time=0.01", "--timeout-ms=3000"]


def has_verbs_device():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


class ExitStatus(unittest.TestCase):
    def test_flags_out_of_range_are_one_line_usage_errors(self):
        one_line_errors(self, BENCH, [(["--depth=-1"], "--depth: '-1' is not a whole number in [1, 256]"),
                                      (["--depth=0"], "--depth: '0' is not a whole number in [1, 256]"),
                                      (["--depth=257"], "--depth: '257' is not a whole number in [1, 256]"),
                                      (["--workers=0"], "--workers: '0' is not a whole number"),
                                      (["--workers=-2"], "--workers: '-2' is not a whole number"),
                                      (["--chunks=0"], "--chunks: '0' is less than the minimum"),
                                      (["--chunks=2GiB"], "--chunks: '2GiB' is more than the maximum, 1GiB"),
                                      (["--chunks=256KiB,"], "--chunks: empty item"),
                                      # an empty value must not take the next argument as its value
                                      (["--chunks=", "--depth=2"], "--chunks: no value"),
                                      (["--modes=", "--depth=2"], "--modes: no value"),
                                      (["--codecs", "--depth=2"], "--codecs: no value"),
                                      (["--pages=4k,,thp"], "--pages: empty item"),
                                      (["--datasets="], "--datasets: no value")])

    def test_a_run_where_every_case_ran_exits_0(self):
        result, report = run_json(BENCH, "--transport=mem", *TINY)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("cases failed", result.stderr)
        self.assertEqual(len(report["benchmarks"]), 2)  # raw + overlap

    @unittest.skipIf(has_verbs_device(), "this host has an RDMA device")
    def test_verbs_asked_for_without_a_device_exits_1_naming_each_case(self):
        result, report = run_json(BENCH, "--transport=verbs", *TINY)
        failed = failure_summary(self, result, "bench_pipeline")
        names = [case["name"] for case in report["benchmarks"]]
        self.assertEqual(sorted(failed), sorted(names))  # every case is a verbs case, every one failed
        self.assertIn("bench_pipeline: 2 of 2 cases failed:", result.stderr)
        for reason in failed.values():
            self.assertIn("no RDMA device", reason)


if __name__ == "__main__":
    unittest.main()
