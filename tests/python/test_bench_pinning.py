"""--cpus and --threads=all: bad CPU lists are refused in one line, the chosen CPUs land in the
JSON context, and --threads=all registers 1, 2, 4, ... up to the CPU count, that count included."""
import os
import re
import subprocess
import unittest

from bench_process import binary, one_line_error, run_json

CODEC = binary("bench_codec")
PIPELINE = binary("bench_pipeline")
DATASET = "synthetic:weights:size=256KiB:seed=1"
ALLOWED = sorted(os.sched_getaffinity(0))


def doubling_up_to(n):
    """What --threads=all must sweep over n CPUs (written out here, not imported from the binary)."""
    counts, t = [], 1
    while t < n:
        counts.append(t)
        t *= 2
    return counts + [n]


def listed_threads(*args):
    result = subprocess.run([CODEC, "--codecs=memcpy", f"--datasets={DATASET}", "--chunks=4KiB",
                             "--benchmark_list_tests", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return sorted({int(m[1]) for m in re.finditer(r"/threads:(\d+)$", result.stdout, re.M)})


class BadCpuLists(unittest.TestCase):
    def test_both_binaries_refuse_bad_lists_in_one_line(self):
        outside = max(ALLOWED) + 1
        for bench in (CODEC, PIPELINE):
            one_line_error(self, bench, ["--cpus=1-0"], "--cpus: '1-0' is a reversed range")
            one_line_error(self, bench, [f"--cpus={outside}"], f"--cpus: CPU {outside} is not one this process may run on")
            one_line_error(self, bench, ["--cpus=x"], "--cpus: 'x' is not a CPU number")
            one_line_error(self, bench, ["--cpus=0,,1"], "--cpus")
            one_line_error(self, bench, ["--cpus="], "--cpus: no value")


class Pinned(unittest.TestCase):
    def test_codec_run_on_one_cpu_records_it(self):
        cpu = ALLOWED[0]
        result, report = run_json(CODEC, "--codecs=bytegroup+huff", f"--datasets={DATASET}", "--chunks=64KiB",
                                  f"--cpus={cpu}", "--threads=1", "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["context"]["cpus"], str(cpu))
        self.assertEqual(report["context"]["host_cpus"], str(len(ALLOWED)))  # what the process may use, unchanged
        self.assertTrue(all(not b.get("error_occurred") for b in report["benchmarks"]))

    def test_pipeline_run_on_one_cpu_records_it(self):
        cpu = ALLOWED[0]
        result, report = run_json(PIPELINE, "--transport=mem", "--modes=overlap", "--codecs=bytegroup+huff",
                                  f"--datasets={DATASET}", "--chunks=64KiB", f"--cpus={cpu}",
                                  "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["context"]["cpus"], str(cpu))
        self.assertEqual(report["context"]["host_cpus"], "1")  # the whole process is on that one CPU
        self.assertTrue(all(not b.get("error_occurred") for b in report["benchmarks"]))

    def test_unpinned_runs_have_no_cpus_key(self):
        result, report = run_json(CODEC, "--codecs=memcpy", f"--datasets={DATASET}", "--chunks=64KiB",
                                  "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("cpus", report["context"])


class ThreadsAll(unittest.TestCase):
    def test_all_sweeps_up_to_the_allowed_cpus(self):
        self.assertEqual(listed_threads("--threads=all"), doubling_up_to(len(ALLOWED)))

    def test_all_sweeps_up_to_the_cpus_given(self):
        self.assertEqual(listed_threads("--threads=all", f"--cpus={ALLOWED[0]}"), [1])
        if len(ALLOWED) >= 2:
            self.assertEqual(listed_threads("--threads=all", f"--cpus={ALLOWED[0]},{ALLOWED[1]}"), [1, 2])

    def test_the_sweep_itself(self):
        self.assertEqual(doubling_up_to(1), [1])
        self.assertEqual(doubling_up_to(6), [1, 2, 4, 6])
        self.assertEqual(doubling_up_to(16), [1, 2, 4, 8, 16])


if __name__ == "__main__":
    unittest.main()
