"""plots/perftest.py (scripts/perftest-compare): parsing ib_write_bw's client output, picking the
matching bench_rdma verbs cases, the ratio per size and the exit statuses. Captured outputs, no qemu."""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "perftest-compare")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import perftest  # noqa: E402

DASHES = "-" * 87
# perftest 4.5+0.17 (Debian 12), client side, in the soft-RoCE test bed; tabs as it prints them.
CLIENT_64K = f"""{DASHES}
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : rxe0
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 TX depth        : 16
 CQ Moderation   : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 1
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
{DASHES}
 local address: LID 0000 QPN 0x0032 PSN 0xc20cfc RKey 0x0032a9 VAddr 0x005645de35a000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:01
 remote address: LID 0000 QPN 0x0031 PSN 0x48d15a RKey 0x0033a8 VAddr 0x0055ab1ad60000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:01
{DASHES}
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      2000             76.24              73.01  \t\t   0.001168
{DASHES}
"""
# The same run with --report_gbits (Gb = 10^9 bits) and -a (several sizes).
CLIENT_GBITS_ALL = f"""{DASHES}
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 4096       200              0.66               0.62  \t\t   0.018922
 65536      200              0.64               0.61  \t\t   0.001164
{DASHES}
"""
# What the server side prints for RDMA WRITE: the header, no result row.
SERVER = f"""{DASHES}
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
{DASHES}
"""


def bench_report(rates, pages="4k", errors=()):
    """bench_rdma JSON as the verbs run writes it: {size: bytes_per_second}, plus failed sizes."""
    benches = []
    for size, bps in rates.items():
        name = f"rdma/verbs/pages:{pages}/size:{size}/depth:16/qps:1/manual_time"
        benches.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                        "iterations": 4, "real_time": 1e5, "time_unit": "us", "bytes_per_second": bps,
                        "mr_reg_us": 900.0, "huge_fraction": 0.0})
        memcpy = f"rdma/memcpy/pages:{pages}/size:{size}/manual_time"
        benches.append({"name": memcpy, "run_name": memcpy, "run_type": "iteration", "bytes_per_second": 4e9})
    for size in errors:
        name = f"rdma/verbs/pages:{pages}/size:{size}/depth:16/qps:1/manual_time"
        benches.append({"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                        "error_message": "ibv_poll_cq: transport retry counter exceeded"})
    return {"context": {"rdma_device": "rxe0", "rdma_fw_ver": "0.0.0", "rdma_active_mtu": "1024"},
            "benchmarks": benches}


class ParseIbWriteBw(unittest.TestCase):
    def test_bw_average_in_mib_per_second(self):
        parsed = perftest.parse_ib_write_bw(CLIENT_64K)
        self.assertEqual(parsed["bw"], {65536: 73.01 * 2**20})  # MB/sec is 2^20 bytes, not 10^6

    def test_banner_settings_both_columns(self):
        settings = perftest.parse_ib_write_bw(CLIENT_64K)["settings"]
        self.assertEqual(settings["Device"], "rxe0")
        self.assertEqual(settings["TX depth"], "16")
        self.assertEqual(settings["Number of qps"], "1")
        self.assertEqual(settings["rdma_cm QPs"], "OFF")
        self.assertEqual(settings["Mtu"], "1024[B]")

    def test_report_gbits_and_several_sizes(self):
        bw = perftest.parse_ib_write_bw(CLIENT_GBITS_ALL)["bw"]
        self.assertAlmostEqual(bw[4096], 0.62e9 / 8)
        self.assertAlmostEqual(bw[65536], 0.61e9 / 8)

    def test_server_output_or_garbage_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "no result row"):
            perftest.parse_ib_write_bw(SERVER, "srv.txt")
        with self.assertRaisesRegex(ValueError, "no ib_write_bw result header"):
            perftest.parse_ib_write_bw("Couldn't connect to 10.0.0.1:18515\n", "cli.txt")
        with self.assertRaisesRegex(ValueError, r"unknown bandwidth unit \[KB/sec\]"):
            perftest.parse_ib_write_bw(CLIENT_64K.replace("average[MB/sec]", "average[KB/sec]"))


class Compare(unittest.TestCase):
    def test_ratio_per_size_on_the_chosen_pages(self):
        report = bench_report({65536: 72.2e6, 1048576: 75.1e6})
        report["benchmarks"] += bench_report({65536: 1.0}, pages="thp")["benchmarks"]  # must be ignored
        ours, errors = perftest.bench_bandwidth(report, "4k")
        self.assertEqual(ours, {65536: 72.2e6, 1048576: 75.1e6})
        rows = perftest.compare({65536: 76.6e6, 1048576: 73.6e6}, ours, errors)
        self.assertEqual([r["size"] for r in rows], [65536, 1048576])
        self.assertAlmostEqual(rows[0]["ratio"], 72.2 / 76.6)
        self.assertAlmostEqual(rows[1]["ratio"], 75.1 / 73.6)

    def test_missing_and_failed_sizes_have_no_ratio(self):
        ours, errors = perftest.bench_bandwidth(bench_report({65536: 70e6}, errors=[1048576]))
        rows = perftest.compare({65536: 75e6, 1048576: 75e6, 4096: 60e6}, ours, errors)
        by_size = {r["size"]: r for r in rows}
        self.assertIsNone(by_size[4096]["ratio"])
        self.assertIsNone(by_size[1048576]["ratio"])
        self.assertIn("retry counter", by_size[1048576]["bench_rdma_error"])
        table = perftest.markdown(rows, "caption")
        self.assertIn("| 4 KiB | 60.0 | missing | - |", table)
        self.assertIn("| 64 KiB | 75.0 | 70.0 | 0.93 |", table)
        self.assertIn("| 1 MiB | 75.0 | error: ibv_poll_cq", table)


class Script(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        return path

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = perftest.main(list(args))
        return status, out.getvalue(), err.getvalue()

    def test_table_and_json_out(self):
        bench = self.write("rdma-verbs.json", bench_report({65536: 72.2e6}))
        json_out = os.path.join(self.dir.name, "cmp.json")
        status, out, _ = self.run_main(f"--bench={bench}", f"--json-out={json_out}", self.write("p.txt", CLIENT_64K))
        self.assertEqual(status, 0)
        self.assertIn("| size | ib_write_bw MB/s | bench_rdma MB/s | ratio |", out)
        self.assertIn("| 64 KiB | 76.6 | 72.2 | 0.94 |", out)  # 73.01 MiB/s = 76.6 MB/s
        self.assertIn("device rxe0", out)
        with open(json_out) as f:
            saved = json.load(f)
        self.assertAlmostEqual(saved["rows"][0]["ratio"], 72.2e6 / (73.01 * 2**20))
        self.assertEqual(saved["perftest_settings"]["TX depth"], "16")

    def test_min_ratio_is_the_acceptance_check(self):
        bench = self.write("rdma-verbs.json", bench_report({65536: 72.2e6}))
        perf = self.write("p.txt", CLIENT_64K)
        self.assertEqual(self.run_main(f"--bench={bench}", "--min-ratio=0.9", perf)[0], 0)
        status, _, err = self.run_main(f"--bench={bench}", "--min-ratio=0.95", perf)
        self.assertEqual(status, 1)
        self.assertIn("below --min-ratio 0.95: 64 KiB", err)

    def test_bad_input_exits_2_with_one_line(self):
        bench = self.write("rdma-verbs.json", bench_report({1048576: 72.2e6}))
        cases = [
            (f"--bench={bench}", self.write("srv.txt", SERVER)),                     # server's output
            (f"--bench={bench}", os.path.join(self.dir.name, "absent.txt")),         # no such file
            (f"--bench={self.write('x.json', {'x': 1})}", self.write("p.txt", CLIENT_64K)),  # not benchmark JSON
            (f"--bench={bench}", self.write("p.txt", CLIENT_64K)),                    # no common size
        ]
        for args in cases:
            status, out, err = self.run_main(*args)
            self.assertEqual(status, 2, args)
            self.assertEqual(out, "")
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertTrue(err.startswith("perftest-compare: "), err)

    def test_wrapper_runs_under_debian_python(self):
        bench = self.write("rdma-verbs.json", bench_report({65536: 72.2e6}))
        done = subprocess.run([SCRIPT, f"--bench={bench}", self.write("p.txt", CLIENT_64K)],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("0.94", done.stdout)


if __name__ == "__main__":
    unittest.main()
