"""The report's arithmetic, table and plots on small hand-made results (no benchmark runs)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))

import model  # noqa: E402
import results  # noqa: E402
import table  # noqa: E402

GB = 1e9
CONTEXT = {"hostname": "testhost", "date": "2026-11-29T10:00:00+00:00", "kernel": "Linux 6.1", "cpu_model": "cpu",
           "thp_enabled": "madvise"}


def bench(name, **counters):
    return {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1, "real_time": 1.0,
            "cpu_time": 1.0, "time_unit": "ms", **counters}


def write(directory, filename, benchmarks, **context):
    with open(os.path.join(directory, filename), "w") as f:
        json.dump({"context": {**CONTEXT, **context}, "benchmarks": benchmarks}, f)


def fixture(directory):
    data = "synthetic:weights:size=64MiB:seed=1"
    codec = []
    for spec, c, d, r in [("memcpy", 10, 12, 1.0), ("bytegroup+huff", 4, 5, 1.5), ("lz4", 7, 14, 1.0)]:
        for direction, rate in [("compress", c), ("decompress", d)]:
            for threads in [1, 2]:
                codec.append(bench(f"codec/{spec}/{data}/chunk:1048576/{direction}/real_time/threads:{threads}",
                                   bytes_per_second=rate * GB * threads, ratio=r, entropy_bound_ratio=1.503))
    write(directory, "codec.json", codec)
    rdma = [bench(f"rdma/tcp/pages:{p}/size:{s}/depth:16/manual_time", bytes_per_second=bw * GB, huge_fraction=h)
            for p, h, bw4 in [("4k", 0.0, 3.0), ("thp", 1.0, 6.0)] for s, bw in [(65536, bw4 / 2), (1048576, bw4)]]
    rdma.append({"name": "rdma/verbs/pages:4k/size:65536/depth:16/qps:1/manual_time", "error_occurred": True,
                 "error_message": "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem"})
    write(directory, "rdma-tcp.json", rdma, transport="tcp")
    prefix = "pipeline/tcp/{}/{}/pages:4k/chunk:{}/depth:8/workers:1/" + data + "/manual_time"
    pipeline = []
    for chunk in [262144, 1048576]:
        pipeline.append(bench(prefix.format("raw", "none", chunk), bytes_per_second=3.0 * GB, ratio=1.0))
        stages = dict(ratio=1.5, stage_compress=4 * GB, stage_decompress=5 * GB, stage_link=4.5 * GB)
        pipeline.append(bench(prefix.format("serial", "bytegroup+huff", chunk), bytes_per_second=1.2 * GB, **stages))
        pipeline.append(bench(prefix.format("overlap", "bytegroup+huff", chunk), bytes_per_second=2.0 * GB, **stages))
    write(directory, "pipeline.json", pipeline)


class Model(unittest.TestCase):
    def test_hand_computed_rates(self):
        self.assertAlmostEqual(model.overlap_rate(4, 1.5, 2, 5), 3.0)            # R L is the slowest
        self.assertAlmostEqual(model.serial_rate(4, 2, 2, 4), 1 / (0.25 + 0.25 + 0.25))
        self.assertAlmostEqual(model.step_speedup(0.5, 2), 1 / (0.5 + 0.25))
        self.assertAlmostEqual(model.step_speedup(0.0, 10), 1.0)

    def test_the_papers_numbers_never_pay(self):
        # BlueField-3: C = 9 GB/s against a 10.9 GB/s link: no ratio makes it pay.
        for r in [1.1, 1.5, 2, 4, 100]:
            self.assertFalse(model.pays(9, r, 10.9, 9))
            self.assertFalse(model.pays(9, r, 10.9, 9, serial=True))
            self.assertFalse(model.pays(9, r, 24.6, 30))

    def test_break_even(self):
        self.assertEqual(model.break_even_link(9, 1.5, 12), 9)
        self.assertEqual(model.break_even_link(9, 1.0, 12), 0)  # no saving, never pays
        link = model.break_even_link(4, 2, 4, serial=True)     # (1 - 1/2) / (1/4 + 1/4) = 1
        self.assertAlmostEqual(link, 1.0)
        self.assertFalse(model.pays(4, 2, link * 1.01, 4, serial=True))
        self.assertTrue(model.pays(4, 2, link * 0.99, 4, serial=True))
        self.assertAlmostEqual(model.serial_min_ratio(4, 4, 1), 2.0)
        self.assertEqual(model.serial_min_ratio(4, 4, 3), float("inf"))


class Report(unittest.TestCase):
    def test_case_names_parse_into_axes(self):
        axes = results.parse_name("pipeline/tcp/overlap/bytegroup+zstd:level=1/pages:thp/chunk:1048576/depth:8/"
                                  "workers:2/synthetic:weights:size=64MiB:seed=1/manual_time")
        self.assertEqual((axes["transport"], axes["mode"], axes["codec"], axes["pages"], axes["chunk"],
                          axes["workers"]), ("tcp", "overlap", "bytegroup+zstd:level=1", "thp", 1048576, 2))
        axes = results.parse_name("codec/lz4:accel=8/file:x.bin/chunk:65536/decompress/real_time/threads:2")
        self.assertEqual((axes["codec"], axes["chunk"], axes["direction"], axes["threads"]),
                         ("lz4:accel=8", 65536, "decompress", 2))

    def test_table_rows_and_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            text = table.build(results.load_dir(tmp))
        self.assertIn("| lossless compressed, best configuration, sender side, original bytes | 2.00 GB/s", text)
        self.assertIn("| uncompressed, 4 KiB pages | 3.00 GB/s (1024 KiB messages, huge 0.00) | ~10.9 GB/s |", text)
        self.assertIn("| uncompressed, Transparent Huge Pages | 6.00 GB/s (1024 KiB messages, huge 1.00)", text)
        self.assertIn("compression does not pay", text)
        self.assertIn("0.67x", text)  # 2.0 compressed against 3.0 raw
        self.assertIn("THP / 4 KiB = 2.00x", text)

    def test_report_writes_table_and_every_plot(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            result = subprocess.run([os.path.join(ROOT, "scripts", "report"), tmp], capture_output=True, text=True,
                                    timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            plots = sorted(os.listdir(os.path.join(tmp, "plots")))
            self.assertEqual(plots, ["codec_ratio.png", "codec_threads.png", "feasibility.png", "pipeline_chunks.png",
                                     "rdma_bandwidth.png"])
            for plot in plots:
                with open(os.path.join(tmp, "plots", plot), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertTrue(os.path.exists(os.path.join(tmp, "table.md")))

    def test_report_and_envelope_refuse_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            for tool, args in [("report", [tmp]), ("envelope", [os.path.join(tmp, "missing.json")])]:
                result = subprocess.run([os.path.join(ROOT, "scripts", tool), *args], capture_output=True, text=True)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_envelope_verdicts(self):
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            run = lambda *a: subprocess.run([os.path.join(ROOT, "scripts", "envelope"), os.path.join(tmp, "codec.json"),
                                             *a], capture_output=True, text=True, check=True).stdout  # noqa: E731
            fast_link = run("--link", "10.9", "--p", "0.5")
            self.assertRegex(fast_link, r"\| bytegroup\+huff \| 4.00 \| 5.00 \| 1.500 \| 4.00 \| [0-9.]+ \| no \| 4.00 \|")
            slow_link = run("--link", "1")
            self.assertIn("| bytegroup+huff | 4.00 | 5.00 | 1.500 | 1.50 |", slow_link)
            self.assertRegex(slow_link, r"\| bytegroup\+huff \|[^\n]*\| yes \|")
            measured = run("--link-from", os.path.join(tmp, "rdma-tcp.json"))
            self.assertIn("link L = 6.00 GB/s", measured)


if __name__ == "__main__":
    unittest.main()
