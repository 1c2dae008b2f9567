"""bench_pipeline's interfaces, its two-process mode and its failure handling, on tcp and mem.
Checks outcomes (names, counters, verification, errors), never timings."""
import json
import subprocess
import time
import unittest

from bench_process import binary, one_line_error, run_json, start_server, stop, wait_for_cpu_seconds

BENCH = binary("bench_pipeline")
DATA = "synthetic:weights:size=4MiB:seed=2"
QUICK = [f"--datasets={DATA}", "--chunks=256KiB", "--benchmark_min_time=0.01", "--timeout-ms=3000"]


class Loopback(unittest.TestCase):
    def test_every_mode_on_tcp_and_mem_is_verified_with_its_counters(self):
        result, report = run_json(BENCH, "--transport=tcp,mem", "--modes=serial,overlap",
                                  "--codecs=bytegroup+huff,bytegroup+lz4", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        names = [case["name"] for case in report["benchmarks"]]
        for transport in ["tcp", "mem"]:
            # raw joins the run even though --modes did not name it, and comes first
            prefix = f"pipeline/{transport}/raw/none/pages:4k/chunk:262144/depth:8/workers:1/{DATA}"
            self.assertIn(prefix + "/manual_time", names)
            for mode in ["serial", "overlap"]:
                for codec in ["bytegroup+huff", "bytegroup+lz4"]:
                    self.assertIn(f"pipeline/{transport}/{mode}/{codec}/pages:4k/chunk:262144/depth:8/workers:1/"
                                  f"{DATA}/manual_time", names)
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            self.assertEqual(case["verified"], 1)
            for counter in ["bytes_per_second", "ratio", "compress_busy", "link_busy", "decompress_busy"]:
                self.assertIn(counter, case)
            # The runs' own CPU and the host's: both ends' CPU per byte, the host's busy share (from
            # /proc/stat's clock ticks: a case whose runs saw no tick has none).
            self.assertGreater(case["cpu_per_byte"], 0)
            if "host_busy" in case:
                self.assertTrue(0 <= case["host_busy"] <= 1 and 0 <= case["host_steal"] <= 1, case)
                self.assertGreaterEqual(case["host_cpu_per_byte"], 0)
            if "/raw/" in case["name"]:
                self.assertEqual(case["ratio"], 1.0)
                # bench_rdma's loop on the same link, beside the raw runs, and the ratio of the two
                self.assertGreater(case["plain_writes_rate"], 0)
                self.assertEqual(case["plain_writes_bytes"], 4 << 20)  # the data set, once per iteration
                self.assertAlmostEqual(case["raw_vs_writes"], case["bytes_per_second"] / case["plain_writes_rate"],
                                       delta=1e-3 * case["raw_vs_writes"])
            else:
                self.assertNotIn("raw_vs_writes", case)
                self.assertGreater(case["ratio"], 1.1)
                for counter in ["stage_compress", "stage_decompress", "stage_link", "link_cpu_per_byte"]:
                    self.assertGreater(case[counter], 0, counter)
                # Each mode is read against its own bound, and only that one.
                own, other = (("overlap_efficiency", "serial_efficiency") if "/overlap/" in case["name"]
                              else ("serial_efficiency", "overlap_efficiency"))
                self.assertGreater(case[own], 0, own)
                self.assertNotIn(other, case)
        self.assertTrue(any("host_busy" in case for case in report["benchmarks"]))

    def test_odd_sizes_depth_one_and_two_workers(self):
        result, report = run_json(BENCH, "--transport=mem", "--modes=overlap", "--depth=1", "--workers=2",
                                  "--datasets=synthetic:activations:size=1000002", "--chunks=300000",
                                  "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            self.assertEqual(case["verified"], 1)

    def test_bad_inputs_are_one_line_errors(self):
        for args, expect in [(["--modes=pipelined"], "unknown mode"), (["--codecs=lz5"], "valid forms"),
                             (["--transport=udp"], "unknown transport"), (["--chunks=0x"], "bad size"),
                             (["--datasets=file:/nonexistent.bin"], "/nonexistent.bin")]:
            one_line_error(self, BENCH, args, expect)


class TwoProcesses(unittest.TestCase):
    def test_serve_and_peer_on_localhost(self):
        server, port = start_server(BENCH, "--transport=tcp")
        try:
            result, report = run_json(BENCH, "--transport=tcp", f"--peer=127.0.0.1:{port}", "--modes=overlap", *QUICK)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("two hosts", report["context"]["link"])
            self.assertEqual(len(report["benchmarks"]), 2)  # raw + overlap
            for case in report["benchmarks"]:
                self.assertFalse(case.get("error_occurred"), case.get("error_message"))
                self.assertEqual(case["verified"], 1)
                self.assertGreater(case["cpu_per_byte"], 0)  # this process's and the server's, as reported
                if "/raw/" in case["name"]:
                    self.assertGreater(case["raw_vs_writes"], 0)  # plain writes the server never sees as messages
            self.assertEqual(server.wait(timeout=30), 0)
        finally:
            stop(server)

    def test_receiver_killed_mid_transfer_fails_the_case_in_time(self):
        server, port = start_server(BENCH, "--transport=tcp")
        client = subprocess.Popen([BENCH, "--transport=tcp", f"--peer=127.0.0.1:{port}", "--modes=overlap",
                                   "--datasets=synthetic:weights:size=32MiB", "--benchmark_min_time=5",
                                   "--timeout-ms=3000", "--benchmark_format=json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_cpu_seconds(server, 0.5)  # the case is under way, however slow or busy this host is
        stop(server)
        start = time.monotonic()
        out, _ = client.communicate(timeout=90)
        self.assertLess(time.monotonic() - start, 60)
        cases = json.loads(out)["benchmarks"]
        self.assertTrue(any(case.get("error_occurred") for case in cases), cases)
        for case in cases:
            if case.get("error_occurred"):
                self.assertRegex(case["error_message"], "closed|reset|Broken pipe|peer|refused")


if __name__ == "__main__":
    unittest.main()
