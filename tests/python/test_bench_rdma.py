"""bench_rdma's interfaces and its two-process mode, on the transports every host has (tcp, mem),
plus the verbs no-device report. Checks outcomes, never timings."""
import json
import os
import re
import subprocess
import time
import unittest

from bench_process import binary, failure_summary, one_line_errors, run_json, start_server, stop, wait_for_cpu_seconds

BENCH = binary("bench_rdma")
QUICK = ["--sizes=64KiB,1MiB", "--buffer=8MiB", "--benchmark_min_time=0.01", "--timeout-ms=3000"]


def has_verbs_device():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


class Loopback(unittest.TestCase):
    def test_tcp_and_mem_cases_names_counters_backing(self):
        for transport in ["tcp", "mem"]:
            result, report = run_json(BENCH, f"--transport={transport}", "--pages=4k,thp", *QUICK)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(report["context"]["transport"], transport)
            names = [b["name"] for b in report["benchmarks"]]
            self.assertIn(f"rdma/{transport}/pages:4k/size:65536/depth:16/manual_time", names)
            self.assertIn(f"rdma/{transport}/pages:thp/size:1048576/depth:16/manual_time", names)
            self.assertIn("rdma/memcpy/pages:4k/size:65536/manual_time", names)  # the ceiling, side by side
            for case in report["benchmarks"]:
                self.assertFalse(case.get("error_occurred"), case.get("error_message"))
                for counter in ["bytes_per_second", "msg_rate", "huge_fraction", "first_touch_us"]:
                    self.assertIn(counter, case)
                if "pages:4k" in case["name"]:
                    self.assertEqual(case["huge_fraction"], 0.0)
                else:
                    self.assertGreater(case["huge_fraction"], 0.5)  # measured: THP is in madvise mode here

    def test_default_transport_is_recorded_with_its_reason(self):
        result, report = run_json(BENCH, "--pages=4k", "--sizes=64KiB", "--buffer=4MiB", "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("transport_choice", report["context"])
        if not has_verbs_device():
            self.assertEqual(report["context"]["transport"], "tcp")

    @unittest.skipIf(has_verbs_device(), "this host has an RDMA device")
    def test_verbs_asked_for_without_a_device_fails_every_verbs_case_and_exits_1(self):
        result, report = run_json(BENCH, "--transport=verbs", "--pages=4k", "--sizes=64KiB,1MiB",
                                  "--buffer=4MiB", "--benchmark_min_time=0.01")
        reason = "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem"
        failed = failure_summary(self, result, "bench_rdma")
        self.assertIn("bench_rdma: 2 of 4 cases failed:", result.stderr)
        verbs_cases = [case for case in report["benchmarks"] if case["name"].startswith("rdma/verbs/")]
        self.assertEqual(len(verbs_cases), 2)
        for case in verbs_cases:
            self.assertTrue(case["error_occurred"])
            self.assertEqual(case["error_message"], reason)
            self.assertNotIn("bytes_per_second", case)
            self.assertEqual(failed[case["name"]], reason)
        self.assertIn("rdma/verbs/pages:4k/size:65536/depth:16/qps:1/manual_time", failed)
        # The memcpy ceiling beside them ran: one missing transport does not hide the rest.
        for case in report["benchmarks"]:
            if case["name"].startswith("rdma/memcpy/"):
                self.assertFalse(case.get("error_occurred"), case.get("error_message"))

    def test_bad_inputs_are_one_line_errors(self):
        one_line_errors(self, BENCH, [(["--transport=udp"], "unknown transport"), (["--pages=2m"], "unknown page policy"),
                                      (["--sizes=1XB"], "bad size"), (["--peer=127.0.0.1:0"], "bad peer address"),
                                      (["--depth=-1"], "--depth: '-1' is not a whole number"),
                                      (["--depth=0"], "--depth: '0' is not a whole number"),
                                      (["--sizes=0"], "--sizes: '0' is less than the minimum"),
                                      (["--sizes=4KiB,"], "--sizes: empty item"),
                                      (["--sizes=", "--pages=4k"], "--sizes: no value"),
                                      (["--pages", "--sizes=4KiB"], "--pages: no value"),
                                      (["--buffer=0"], "--buffer: '0' is less than the minimum"),
                                      (["--buffer=1000000GiB"], "--buffer: '1000000GiB' is more than this host's physical memory"),
                                      (["--buffer=1MiB", "--sizes=2MiB"], "--sizes: 2097152 bytes do not fit"),
                                      (["--port=-1"], "--port"), (["--qps=0"], "--qps")])


class TwoProcesses(unittest.TestCase):
    def test_serve_and_peer_on_localhost(self):
        server, port = start_server(BENCH, "--transport=tcp")
        try:
            result, report = run_json(BENCH, "--transport=tcp", f"--peer=127.0.0.1:{port}", "--pages=4k,thp", *QUICK)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("two hosts", report["context"]["link"])
            for case in report["benchmarks"]:
                self.assertFalse(case.get("error_occurred"), case.get("error_message"))
                if case["name"].startswith("rdma/tcp/"):
                    self.assertIn("remote_huge_fraction", case)
            self.assertEqual(report["context"]["peer_host_cpus"], report["context"]["host_cpus"])  # the server's facts
            self.assertEqual(server.wait(timeout=30), 0)  # the peer's quit ends the server
            # One link per page policy, and the one that fetched the server's context.
            self.assertIn("served 3 link(s)", server.stdout.read())
        finally:
            stop(server)

    def test_bind_takes_an_interface_name(self):
        # "lo" stands for its IPv4 address: the server listens there, and a peer reaches it there.
        server = subprocess.Popen([BENCH, "--serve", "--transport=tcp", "--bind=lo", "--port=0", "--idle-s=20"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            announced = server.stdout.readline()
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)$", announced.strip())
            self.assertTrue(match, announced)
            result, _ = run_json(BENCH, "--transport=tcp", f"--peer=127.0.0.1:{match[1]}", "--pages=4k", *QUICK)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(server.wait(timeout=30), 0)
        finally:
            stop(server)

    def test_unreachable_peer_is_a_clear_error(self):
        start = time.monotonic()
        result = subprocess.run([BENCH, "--transport=tcp", "--peer=127.0.0.1:1", "--pages=4k", "--sizes=64KiB",
                                 "--timeout-ms=2000", "--benchmark_min_time=0.01"],
                                capture_output=True, text=True, timeout=60)
        self.assertLess(time.monotonic() - start, 30)
        # The server's context is fetched before any case: an unreachable peer stops the run there,
        # as a set-up error (exit 2) in one line naming the peer.
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("127.0.0.1:1", lines[0])
        self.assertIn("refused", lines[0])

    def test_server_killed_mid_transfer_fails_the_case_in_time(self):
        server, port = start_server(BENCH, "--transport=tcp")
        client = subprocess.Popen([BENCH, "--transport=tcp", f"--peer=127.0.0.1:{port}", "--pages=4k",
                                   "--sizes=1MiB", "--buffer=64MiB", "--benchmark_min_time=5", "--timeout-ms=3000",
                                   "--benchmark_format=json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_cpu_seconds(server, 0.5)  # the case is writing, however slow or busy this host is
        stop(server)
        start = time.monotonic()
        out, err = client.communicate(timeout=60)
        self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(client.returncode, 1, err)
        report = json.loads(out)
        case = report["benchmarks"][0]
        self.assertTrue(case.get("error_occurred"), case)
        self.assertRegex(case["error_message"], "closed|reset|Broken pipe|peer")


if __name__ == "__main__":
    unittest.main()
