"""The report's arithmetic, table and plots on small hand-made results (no benchmark runs)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))

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


DATA = "synthetic:weights:size=64MiB:seed=1"
PIPELINE = "pipeline/tcp/{}/{}/pages:4k/chunk:{}/depth:8/workers:1/" + DATA + "/manual_time"


def fixture(directory):
    codec = []
    for spec, c, d, r in [("memcpy", 10, 12, 1.0), ("bytegroup+huff", 4, 5, 1.5), ("lz4", 7, 14, 1.0)]:
        for direction, rate in [("compress", c), ("decompress", d)]:
            for threads in [1, 2]:
                codec.append(bench(f"codec/{spec}/{DATA}/chunk:1048576/{direction}/real_time/threads:{threads}",
                                   bytes_per_second=rate * GB * threads, ratio=r, entropy_bound_ratio=1.503))
    write(directory, "codec.json", codec)
    rdma = [bench(f"rdma/tcp/pages:{p}/size:{s}/depth:16/manual_time", bytes_per_second=bw * GB, huge_fraction=h)
            for p, h, bw4 in [("4k", 0.0, 3.0), ("thp", 1.0, 6.0)] for s, bw in [(65536, bw4 / 2), (1048576, bw4)]]
    rdma.append({"name": "rdma/verbs/pages:4k/size:65536/depth:16/qps:1/manual_time", "error_occurred": True,
                 "error_message": "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem"})
    write(directory, "rdma-tcp.json", rdma, transport="tcp")
    pipeline = []
    for chunk, overlap in [(262144, 2.6), (1048576, 2.0)]:  # the faster 256 KiB case must not reach the headline
        pipeline.append(bench(PIPELINE.format("raw", "none", chunk), bytes_per_second=3.0 * GB, ratio=1.0))
        stages = dict(ratio=1.5, stage_compress=4 * GB, stage_decompress=5 * GB, stage_link=4.5 * GB)
        pipeline.append(bench(PIPELINE.format("serial", "bytegroup+huff", chunk), bytes_per_second=1.2 * GB, **stages))
        pipeline.append(bench(PIPELINE.format("overlap", "bytegroup+huff", chunk), bytes_per_second=overlap * GB,
                              **stages))
    write(directory, "pipeline.json", pipeline)


def repetitions(name, rates, **counters):
    """One iteration entry per repetition, as --benchmark_repetitions writes them (aggregates left out)."""
    return [bench(name, bytes_per_second=r, repetition_index=i, **counters) for i, r in enumerate(rates)]


def headline(directory, compressed, raw, **counters):
    """headline-pipeline.json as scripts/reproduce writes it: the declared cases with repetitions."""
    stages = dict(ratio=1.49, stage_compress=3.9 * GB, stage_decompress=4.9 * GB, stage_link=5.8 * GB, **counters)
    write(directory, "headline-pipeline.json",
          repetitions(PIPELINE.format("raw", "none", 1048576), raw, ratio=1.0, verified=1)
          + repetitions(PIPELINE.format("overlap", "bytegroup+huff", 1048576), compressed, verified=1, **stages),
          link="loopback, both ends in this process", host_cpus="2")


class Report(unittest.TestCase):
    def test_case_names_parse_into_axes(self):
        axes = results.parse_name("pipeline/tcp/overlap/bytegroup+zstd:level=1/pages:thp/chunk:1048576/depth:8/"
                                  "workers:2/synthetic:weights:size=64MiB:seed=1/manual_time")
        self.assertEqual((axes["transport"], axes["mode"], axes["codec"], axes["pages"], axes["chunk"],
                          axes["workers"]), ("tcp", "overlap", "bytegroup+zstd:level=1", "thp", 1048576, 2))
        axes = results.parse_name("codec/lz4:accel=8/file:x.bin/chunk:65536/decompress/real_time/threads:2")
        self.assertEqual((axes["codec"], axes["chunk"], axes["direction"], axes["threads"]),
                         ("lz4:accel=8", 65536, "decompress", 2))

    def table(self, config=None, extra=None):
        """table.md's text from the sweep fixture plus what extra(directory) adds."""
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            if extra:
                extra(tmp)
            return table.build(results.load_dir(tmp), config or table.declared("bytegroup+huff", DATA))

    def test_table_shows_the_declared_configuration_not_the_fastest_case(self):
        text = self.table()
        self.assertIn(f"Declared configuration, every column: data set {DATA}, codec bytegroup+huff, 1024 KiB chunks, "
                      "4k pages, overlap; transfers of 1024 KiB messages.", text)
        self.assertIn("| lossless compressed, original bytes | 2.00 GB/s (bytegroup+huff, weights:size=64MiB:seed=1, "
                      "1024 KiB chunks, 4k pages, overlap, median of 1) | ~9 GB/s |", text)
        self.assertNotIn("2.60", text)  # the 256 KiB case is faster but not declared
        self.assertIn("| uncompressed pipeline, same chunks | 3.00 GB/s (weights:size=64MiB:seed=1, 1024 KiB chunks, "
                      "4k pages, median of 1) | - |", text)
        self.assertIn("| uncompressed transfer, 4 KiB pages | 3.00 GB/s (1024 KiB messages, huge 0.00, median of 1) |",
                      text)
        self.assertIn("| uncompressed transfer, Transparent Huge Pages | 6.00 GB/s (1024 KiB messages, huge 1.00", text)
        self.assertIn("- **tcp**: compression does not pay (5% margin, 1 vs 1 repetitions (too few for the U test)): "
                      "2.00 GB/s of original bytes compressed against 3.00 GB/s uncompressed, 0.67x.", text)
        self.assertIn("no 'link' in the context", text)  # the sweep fixture is an old file: the model says so
        self.assertIn("THP / 4 KiB = 2.00x", text)
        self.assertIn("- verbs was not measured: no RDMA device found", text)

    def test_overriding_the_declared_chunk(self):
        text = self.table(table.declared("bytegroup+huff", DATA, chunk="256KiB"))
        self.assertIn("2.60 GB/s (bytegroup+huff, weights:size=64MiB:seed=1, 256 KiB chunks", text)
        self.assertIn("| uncompressed transfer, 4 KiB pages | not measured |", text)  # no 256 KiB transfer was run
        self.assertIn("compression does not pay (5% margin", text)  # 2.6 against 3.0: -13%

    def test_headline_repetitions_decide_with_the_u_test_and_the_model_counts_shared_cores(self):
        text = self.table(extra=lambda d: headline(d, [2.15e9, 2.16e9, 2.14e9, 2.17e9, 2.13e9],
                                                   [3.93e9, 3.95e9, 3.91e9, 3.94e9, 3.92e9], link_cpu_per_byte=0.4e-9))
        self.assertIn("| lossless compressed, original bytes | 2.15 GB/s (bytegroup+huff, weights:size=64MiB:seed=1, "
                      "1024 KiB chunks, 4k pages, overlap, median of 5) |", text)
        self.assertIn("compression does not pay (Mann-Whitney U p = 0.00794, 5 vs 5 repetitions)", text)
        # min(3.9, 1.49 x 3.93, 4.9) = 3.90; 2 / (1/3.9 + 1/4.9 + 0.4) = 2.32; measured 2.15 is 7.5% below
        self.assertIn("min(C, R L, D) = 3.90 GB/s; both ends share 2 CPUs, c_L = 0.40 CPU s/GB: "
                      "N / (w/C + w/D + c_L) = 2.32 GB/s; predicted 2.32 GB/s, measured 7.5% below it", text)

    def test_a_clear_win_pays(self):
        text = self.table(extra=lambda d: headline(d, [3.6e9, 3.61e9, 3.59e9, 3.62e9], [3.0e9, 3.01e9, 2.99e9, 3.02e9]))
        self.assertIn("- **tcp**: compression pays (Mann-Whitney U p = 0.0286, 4 vs 4 repetitions)", text)

    def test_overlapping_repetitions_are_no_difference(self):
        text = self.table(extra=lambda d: headline(d, [3.0e9, 3.3e9, 2.8e9, 3.1e9, 2.9e9],
                                                   [3.05e9, 3.2e9, 2.85e9, 2.95e9, 3.15e9]))
        self.assertIn("- **tcp**: no difference within noise (Mann-Whitney U p = ", text)

    def test_three_repetitions_fall_back_to_the_margin(self):
        within = self.table(extra=lambda d: headline(d, [3.1e9, 3.12e9, 3.08e9], [3.0e9, 3.01e9, 2.99e9]))
        self.assertIn("no difference within noise (5% margin, 3 vs 3 repetitions (too few for the U test))",
                      within)
        beyond = self.table(extra=lambda d: headline(d, [3.2e9, 3.22e9, 3.18e9], [3.0e9, 3.01e9, 2.99e9]))
        self.assertIn("compression pays (5% margin, 3 vs 3", beyond)  # +6.7%

    def test_a_failed_declared_case_says_why_in_its_cell(self):
        def failed(directory):
            name = PIPELINE.format("overlap", "bytegroup+huff", 1048576)
            write(directory, "headline-pipeline.json",
                  repetitions(PIPELINE.format("raw", "none", 1048576), [3e9, 3e9, 3e9], verified=1)
                  + [{"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                      "error_message": "receiver: chunk 3: XXH3 mismatch"}])
        text = self.table(extra=failed)
        self.assertIn("| lossless compressed, original bytes | failed: receiver: chunk 3: XXH3 mismatch |", text)
        self.assertIn("- tcp: no verdict (the declared pipeline cases were not both measured).", text)

    def test_a_transport_whose_declared_cases_all_failed_keeps_its_column(self):
        refused = "connect to 10.0.0.2:18516: Connection refused"
        failed = lambda name: {"name": name, "run_name": name, "run_type": "iteration",  # noqa: E731
                               "error_occurred": True, "error_message": refused}
        with tempfile.TemporaryDirectory() as tmp:
            write(tmp, "headline-pipeline.json", [failed(PIPELINE.format(m, c, 1048576))
                                                  for m, c in (("raw", "none"), ("overlap", "bytegroup+huff"))])
            write(tmp, "headline-rdma-tcp.json", [failed(f"rdma/tcp/pages:{p}/size:1048576/depth:16/manual_time")
                                                  for p in ("4k", "thp")])
            text = table.build(results.load_dir(tmp), table.declared("bytegroup+huff", DATA))
        self.assertIn("| path | tcp | paper (BlueField-3) |", text)
        for row in ("lossless compressed, original bytes", "uncompressed pipeline, same chunks",
                    "uncompressed transfer, 4 KiB pages", "uncompressed transfer, Transparent Huge Pages"):
            self.assertIn(f"| {row} | failed: {refused} |", text)

    def test_declared_defaults_come_from_the_headers_and_sizes_parse(self):
        config = table.declared()
        self.assertRegex(config["codec"], r"^[a-z0-9]+[a-z0-9+:=.-]*$")
        self.assertTrue(config["dataset"].startswith("synthetic:weights:"), config["dataset"])
        self.assertEqual((config["chunk"], config["pages"]), (1 << 20, "4k"))
        self.assertEqual([table.parse_size(s) for s in ("256KiB", "4MiB", "65536")], [262144, 4 << 20, 65536])
        with self.assertRaises(ValueError):
            table.parse_size("1MB")

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
            with open(os.path.join(tmp, "scaling.md")) as f:  # the fixture scales perfectly: 2 threads, twice the rate
                self.assertIn("| bytegroup+huff | compress | synthetic:weights:size=64MiB:seed=1 | 1048576 | 2 | 8.00 | "
                              "8.00 | 1.00 |", f.read())

    def test_report_survives_a_file_of_failed_cases(self):
        # scripts/reproduce --keep-going against a dead peer: every pipeline case failed
        with tempfile.TemporaryDirectory() as tmp:
            fixture(tmp)
            # the report declares the binaries' default codec (kBestCodecSpec): fail that case
            name = PIPELINE.format("overlap", table.source_default("codec"), 1048576)
            write(tmp, "pipeline.json", [{"name": name, "run_name": name, "run_type": "iteration",
                                          "error_occurred": True, "error_message": "connect to 10.0.0.2:18516: refused"}])
            result = subprocess.run([os.path.join(ROOT, "scripts", "report"), tmp], capture_output=True, text=True,
                                    timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertNotIn("pipeline_chunks.png", os.listdir(os.path.join(tmp, "plots")))
            with open(os.path.join(tmp, "table.md")) as f:
                self.assertIn("| lossless compressed, original bytes | failed: connect to 10.0.0.2:18516: refused |",
                              f.read())

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
            # 3 GB/s: min(C, R L, D) = 4 pays, but two shared cores give 2 / (1/4 + 1/5 + 0.4) = 2.35, which does not
            self.assertRegex(run("--link", "3"), r"\| bytegroup\+huff \| 4.00 \| 5.00 \| 1.500 \| 4.00 \|[^\n]*\| yes \|")
            shared = run("--link", "3", "--shared-cores", "2", "--link-cpu", "0.4")
            self.assertRegex(shared, r"\| bytegroup\+huff \| 4.00 \| 5.00 \| 1.500 \| 2.35 \| [0-9.]+ \| no \| 2.35 \|")
            self.assertIn("both ends share 2 CPUs", shared)


if __name__ == "__main__":
    unittest.main()
