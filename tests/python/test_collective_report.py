"""plots/collective.py: bench_collective's JSON -> results/collective.md and the busbw plot. Rows per
op and size, MPI beside the raw and compressed rings; failed or unverified cases listed, never
tabled; bad input is one line and exit 2."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(ROOT, "plots", "collective.py")
sys.path.insert(0, os.path.join(ROOT, "plots"))

import collective  # noqa: E402

GB = 1e9
CONTEXT = {"mpi_ranks": "4", "mpi_hosts": "1 host", "mpi_library": "Open MPI 4.1.4", "transport": "mpi",
           "chunk_bytes": "1048576", "dataset": "synthetic:gradients"}


def entry(name, repetition=None, **counters):
    """One iteration row as bench_collective writes it (manual time in milliseconds)."""
    row = {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1, "real_time": 5.0,
           "cpu_time": 5.0, "time_unit": "ms", **counters}
    if repetition is not None:
        row["repetition_index"] = repetition
    return row


def name(op, impl, codec, size, ranks=4):
    return f"collective/{op}/{impl}/{codec}/size:{size}/ranks:{ranks}/manual_time"


def benchmarks():
    """all_gather at two sizes with MPI, the raw ring and one codec; all_reduce with one failed
    ring case and one that did not verify."""
    rows = []
    for size, scale in [(1 << 20, 1.0), (1 << 24, 2.0)]:
        rows.append(entry(name("all_gather", "mpi", "none", size), busbw=0.30 * GB * scale, algbw=0.4 * GB, verified=1))
        rows.append(entry(name("all_gather", "ring", "none", size), busbw=0.33 * GB * scale, algbw=0.44 * GB,
                          ratio=1.0, model_busbw=0.35 * GB * scale, verified=1))
        rows.append(entry(name("all_gather", "ring", "bytegroup+lz4", size), busbw=0.07 * GB * scale, algbw=0.1 * GB,
                          ratio=1.17, model_busbw=0.08 * GB * scale, verified=1))
    rows.append(entry(name("all_reduce", "mpi", "none", 1 << 20), busbw=0.12 * GB, verified=1))
    rows.append({"name": name("all_reduce", "ring", "none", 1 << 20), "run_name": name("all_reduce", "ring", "none", 1 << 20),
                 "run_type": "iteration", "error_occurred": True, "error_message": "rank 2: peer vanished"})
    rows.append(entry(name("all_reduce", "ring", "bytegroup+lz4", 1 << 20), busbw=0.04 * GB, ratio=1.17, verified=0))
    return rows


def run(path, out):
    return subprocess.run([sys.executable, SCRIPT, path, "--out", out], capture_output=True, text=True, timeout=120)


class CollectiveReport(unittest.TestCase):
    def write(self, directory, rows, context=CONTEXT):
        path = os.path.join(directory, "collective.json")
        with open(path, "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f)
        return path

    def test_table_rows_ratios_and_failures(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = run(self.write(tmp, benchmarks()), tmp)
            self.assertEqual(result.returncode, 1, result.stderr)  # a failed case: the run failed
            with open(os.path.join(tmp, "collective.md")) as f:
                text = f.read()
            self.assertTrue(os.path.getsize(os.path.join(tmp, "plots", "collective_busbw.png")) > 0)
        lines = text.splitlines()
        self.assertEqual(lines[0], "# Collectives: busbw (GB/s), 4 ranks on 1 host")
        self.assertIn("| op | size | mpi | ring | ring+bytegroup+lz4 | ring / mpi | ratio bytegroup+lz4 |", lines)
        self.assertIn("| all_gather | 1048576 | 0.30 | 0.33 | 0.07 | 1.10 | 1.170 |", lines)
        self.assertIn("| all_gather | 16777216 | 0.60 | 0.66 | 0.14 | 1.10 | 1.170 |", lines)
        self.assertIn("| all_reduce | 1048576 | 0.12 | - | - | - | - |", lines)
        failed = lines[lines.index("Failed or unverified:") + 2:]
        self.assertEqual(len(failed), 2, failed)
        self.assertTrue(failed[0].startswith(f"- `{name('all_reduce', 'ring', 'none', 1 << 20)}`: rank 2: peer vanished"))
        self.assertTrue(failed[1].startswith(f"- `{name('all_reduce', 'ring', 'bytegroup+lz4', 1 << 20)}`: "))

    def test_every_case_verified_exits_0(self):
        rows = [r for r in benchmarks() if "all_reduce" not in r["name"]]
        with tempfile.TemporaryDirectory() as tmp:
            result = run(self.write(tmp, rows), tmp)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(tmp, "collective.md")) as f:
                self.assertNotIn("Failed", f.read())

    def test_repetitions_stand_as_their_median(self):
        big = 1 << 24
        rows = [entry(name("all_gather", "mpi", "none", big), i, busbw=v * GB, verified=1) for i, v in enumerate([0.2, 0.9, 0.3])]
        rows += [entry(name("all_gather", "ring", "none", big), i, busbw=v * GB, ratio=1.0, verified=1)
                 for i, v in enumerate([0.4, 0.5, 0.1])]
        with tempfile.TemporaryDirectory() as tmp:
            _, cases, failed = collective.load(self.write(tmp, rows))
        self.assertEqual(failed, [])
        self.assertAlmostEqual(cases[("all_gather", big)]["mpi"]["busbw"], 0.3 * GB)
        self.assertAlmostEqual(cases[("all_gather", big)]["ring"]["busbw"], 0.4 * GB)

    def test_bad_input_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = run(os.path.join(tmp, "absent.json"), tmp)
            codec_only = run(self.write(tmp, [entry("codec/memcpy/x/chunk:1/compress/manual_time", bytes_per_second=1.0)]), tmp)
            broken = os.path.join(tmp, "broken.json")
            with open(broken, "w") as f:
                f.write("{not json")
            not_json = run(broken, tmp)
        for result, why in [(missing, "absent.json"), (codec_only, "no collective/... cases"), (not_json, "broken.json")]:
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertTrue(result.stderr.startswith("collective: "), result.stderr)
            self.assertIn(why, result.stderr)


if __name__ == "__main__":
    unittest.main()
