"""The MPI parts, through mpirun on this host (scripts/test runs this file; unittest discovery
does not, as it needs mpirun): bench_collective with 2, 3 and 4 ranks, every collective x codec
bit for bit against the raw ring on odd sizes, over MPI and over wirezip's tcp links; a killed
and a stalled rank end the job in bounded time (both transports); pairs mode with 4 ranks gives 2
pairs in one JSON. Checks outcomes, never timings."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid

from bench_process import binary

MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_tcp_if_include="lo")
OPS = ["all_gather", "reduce_scatter", "all_reduce"]
# The watchdog's line for a rank that stops: inside the run ("a rank died or stalls"), or still
# inside MPI_Init when the stop lands, which a loaded host makes slow ("a rank died, stalls or never
# started"). Both end the job in bounded time, which is what the stall tests check.
STALL = "a rank died(,| or) stalls"
CODECS = ["memcpy", "bytegroup+lz4", "bytegroup:split=exponent+huff"]  # the ceiling, a fast peer, the best codec


def mpirun(ranks, *args):
    return [MPIRUN, "--oversubscribe", "-np", str(ranks), *args]


def run_json(ranks, bench, *args, timeout=120, env=None):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        result = subprocess.run(mpirun(ranks, binary(bench), *args, f"--benchmark_out={out}",
                                       "--benchmark_out_format=json"),
                                capture_output=True, text=True, timeout=timeout, env=dict(ENV, **(env or {})))
        if not os.path.exists(out):
            return result, None
        with open(out) as f:
            return result, json.load(f)


def rank_pids(token, rank):
    """Processes of this test's job (by the token in their environment) with the given MPI rank."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"WIREZIP_TEST_TOKEN={token}".encode() in env and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            pids.append(int(entry))
    return pids


@unittest.skipIf(MPIRUN is None, "mpirun is not installed")
class Collectives(unittest.TestCase):
    def check_every_case(self, ranks, sizes, transport="mpi"):
        result, report = run_json(ranks, "bench_collective", f"--sizes={sizes}", "--chunk=64KiB",
                                  f"--codecs={','.join(CODECS[1:])}", "--benchmark_min_time=0.01",
                                  f"--transport={transport}")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        names = {case["name"] for case in report["benchmarks"]}
        cases = 0
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            self.assertEqual(case["verified"], 1, case["name"])
            self.assertEqual(case["ranks"], ranks)
            self.assertGreater(case["busbw"], 0)
            self.assertEqual(case["wrong"], 0, case["name"])  # nccl-tests' #wrong
            self.assertGreater(case["count"], 0)
            cases += 1
        # Ring cases over another transport carry it in their names; MPI's own keep theirs.
        ring_tail = f"/ranks:{ranks}/manual_time" if transport == "mpi" else f"/ranks:{ranks}/transport:{transport}/manual_time"
        for op in OPS:
            for impl in ["ring/none", "mpi/none"] + [f"ring/{codec}" for codec in CODECS]:
                tail = f"/ranks:{ranks}/manual_time" if impl.startswith("mpi/") else ring_tail
                for placement in ["", "/inplace:1"]:  # out-of-place and in-place, as nccl-tests runs both
                    ending = tail.replace("/manual_time", placement + "/manual_time")
                    self.assertEqual(sum(n.startswith(f"collective/{op}/{impl}/size:") and n.endswith(ending)
                                         for n in names), 2, (op, impl, placement, sorted(names)))
        for case in report["benchmarks"]:
            if "/bytegroup+" in case["name"] and "/size:6" not in case["name"]:
                self.assertGreater(case["ratio"], 1.05, case["name"])  # bf16 gradients do compress (frames aside)
            if "/mpi/" not in case["name"]:
                self.assertIn("model_busbw", case)
        self.assertEqual(report["context"]["mpi_ranks"], str(ranks))
        self.assertEqual(report["context"]["transport"], transport)
        # nccl-tests' table: every op/impl/codec and size once, both placements, none wrong.
        rows = [line for line in result.stdout.splitlines() if re.match(r" (all_gather|reduce_scatter|all_reduce)/", line)]
        self.assertEqual(len(rows), 3 * 5 * 2, result.stdout[-3000:])
        self.assertTrue(all(line.split()[-1] == "0" and line.split()[-5] == "0" for line in rows), rows)
        self.assertIn("# Out of bounds values : 0 OK", result.stdout)
        self.assertRegex(result.stdout, r"# Avg bus bandwidth    : \d+\.\d+")
        return cases

    def test_every_collective_and_codec_matches_the_raw_ring_with_2_3_4_ranks(self):
        # Odd sizes: 6002 bytes leaves shards smaller than a chunk; 1000002 does not divide by 4
        # ranks or by the chunk.
        for ranks in [2, 3, 4]:
            with self.subTest(ranks=ranks):
                self.assertEqual(self.check_every_case(ranks, "6002,1000002"), 3 * 2 * 5 * 2)

    def test_every_collective_and_codec_over_tcp_links_with_2_and_3_ranks(self):
        # The same cases, the ring's chunks over wirezip's tcp links: still bit for bit the raw
        # MPI ring's result (the expected result is computed over MPI).
        for ranks in [2, 3]:
            with self.subTest(ranks=ranks):
                self.assertEqual(self.check_every_case(ranks, "6002,1000002", transport="tcp"), 3 * 2 * 5 * 2)

    def test_bad_flags_are_one_line(self):
        for args, expect in [(["--sizes=1MiB:4KiB:x2"], "--sizes"), (["--codecs=lz5"], "valid forms"),
                             (["--ops=all_to_all"], "unknown collective"), (["--transport=udp"], "--transport=udp"),
                             (["--transport=mem"], "expected mpi, tcp or verbs"),
                             (["--placements=sideways"], "--placements=sideways"), (["--bind=127.0.0.1"], "--bind"),
                             (["--timeout-ms=9223372036854775807"], "at most a day"),
                             (["--benchmark_repetitions=-1"], "--benchmark_repetitions: '-1'")]:
            result = subprocess.run(mpirun(2, binary("bench_collective"), *args), capture_output=True, text=True,
                                    timeout=60, env=ENV)
            self.assertNotEqual(result.returncode, 0)
            ours = [line for line in result.stderr.splitlines() if line.startswith("bench_collective:")]
            self.assertEqual(len(ours), 1, result.stderr)
            self.assertIn(expect, ours[0])

    @unittest.skipIf(os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"),
                     "an RDMA device is here: the verbs ring would not fail")
    def test_a_case_that_fails_before_measuring_keeps_its_row_and_the_run_fails(self):
        # Without an RDMA device every verbs ring case fails while it sets up, before any timing;
        # MPI's own collective (no links) still runs. Each keeps its row in nccl-tests' table.
        result, report = run_json(2, "bench_collective", "--transport=verbs", "--sizes=64KiB", "--chunk=16KiB",
                                  "--ops=all_gather", "--codecs=bytegroup+lz4", "--benchmark_min_time=0.01",
                                  "--timeout-ms=5000", "--benchmark_format=console")
        self.assertNotEqual(result.returncode, 0, result.stdout[-2000:])
        failed = [case["name"] for case in report["benchmarks"] if case.get("error_occurred")]
        self.assertEqual(len(failed), 6, failed)  # in the JSON too, each with its error
        self.assertTrue(all("/ring/" in name for name in failed), failed)
        rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()
                if re.match(r" all_gather/", line)}
        self.assertEqual(sorted(rows), ["all_gather/mpi/none", "all_gather/ring/bytegroup+lz4",
                                        "all_gather/ring/memcpy", "all_gather/ring/none"], result.stdout[-3000:])
        for what in ["all_gather/ring/none", "all_gather/ring/memcpy", "all_gather/ring/bytegroup+lz4"]:
            # size, count, type, redop, then time algbw busbw #wrong out-of-place and in-place
            self.assertEqual(rows[what][5:], ["-", "-", "-", "failed"] * 2, rows[what])
        self.assertEqual(rows["all_gather/mpi/none"][8], "0")
        self.assertIn("# Failed cases         : 6", result.stdout)
        self.assertIn("6 of 8 cases failed", result.stderr)

    def fault(self, action, transport="mpi"):
        """Starts a long run with 3 ranks, hits rank 1 with `action` mid-run; returns (status, stderr, seconds)."""
        token = uuid.uuid4().hex
        env = dict(ENV, WIREZIP_TEST_TOKEN=token)
        job = subprocess.Popen(mpirun(3, "-x", "WIREZIP_TEST_TOKEN", binary("bench_collective"), "--sizes=8MiB",
                                      "--ops=all_reduce", "--codecs=bytegroup+lz4", "--benchmark_min_time=60",
                                      "--timeout-ms=5000", f"--transport={transport}"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            deadline = time.monotonic() + 30
            while not rank_pids(token, 1) and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3)  # well inside the timed loop
            if job.poll() is not None:
                self.fail("the job ended before the fault was injected: " + job.stderr.read()[-1500:])
            victims = rank_pids(token, 1)
            self.assertTrue(victims, "rank 1 never started")
            for pid in victims:
                os.kill(pid, action)
            start = time.monotonic()
            _, err = job.communicate(timeout=60)
            return job.returncode, err, time.monotonic() - start
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
            for pid in rank_pids(token, 0) + rank_pids(token, 1) + rank_pids(token, 2):
                os.kill(pid, signal.SIGKILL)

    def test_a_rank_that_never_reaches_mpi_init_ends_the_job_within_the_timeout(self):
        # Rank 1 stops itself before it starts bench_collective: rank 0 waits inside MPI_Init for it.
        token = uuid.uuid4().hex
        env = dict(ENV, WIREZIP_TEST_TOKEN=token)
        command = [MPIRUN, "--oversubscribe", "-x", "WIREZIP_TEST_TOKEN", "-np", "1", binary("bench_collective"),
                   "--timeout-ms=2000", ":", "-np", "1", "sh", "-c", 'kill -STOP $$; exec "$0" "$@"',
                   binary("bench_collective"), "--timeout-ms=2000"]
        start = time.monotonic()
        job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            _, err = job.communicate(timeout=60)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
            for pid in rank_pids(token, 0) + rank_pids(token, 1):
                os.kill(pid, signal.SIGKILL)
        self.assertNotEqual(job.returncode, 0)
        self.assertLess(time.monotonic() - start, 30)
        self.assertRegex(err, r"bench_collective: process \d+ on \S+: MPI_Init did not finish within 2000 ms")

    def test_a_killed_rank_ends_the_job_with_an_error(self):
        status, err, seconds = self.fault(signal.SIGKILL)
        self.assertNotEqual(status, 0)
        self.assertLess(seconds, 30)
        self.assertRegex(err, "signal 9|Killed|exited on signal|rank died")

    def test_a_stalled_rank_ends_the_job_within_the_timeout(self):
        status, err, seconds = self.fault(signal.SIGSTOP)
        self.assertNotEqual(status, 0)
        self.assertLess(seconds, 30)  # --timeout-ms=5000: the ring's wait, then the watchdog
        self.assertRegex(err, STALL)

    def test_a_killed_rank_over_tcp_ends_the_job_with_an_error(self):
        status, err, seconds = self.fault(signal.SIGKILL, "tcp")
        self.assertNotEqual(status, 0)
        self.assertLess(seconds, 30)
        self.assertRegex(err, "signal 9|Killed|exited on signal|rank died")

    def test_a_stalled_rank_over_tcp_ends_the_job_within_the_timeout(self):
        status, err, seconds = self.fault(signal.SIGSTOP, "tcp")
        self.assertNotEqual(status, 0)
        self.assertLess(seconds, 30)
        self.assertRegex(err, STALL)
        # Where the stall caught a rank inside the ring (most runs; else inside an MPI step), the
        # watchdog's line carries the ring's own reason: a wait on the tcp link.
        for reason in re.findall(r"failed here: (ring [^\n]*)", err):
            self.assertIn("over tcp", reason)


@unittest.skipIf(MPIRUN is None, "mpirun is not installed")
class Pairs(unittest.TestCase):
    def test_four_ranks_are_two_pairs_in_one_json(self):
        result, report = run_json(4, "bench_pipeline", "--mpi", "--transport=tcp", "--modes=overlap",
                                  "--codecs=bytegroup+huff", "--datasets=synthetic:weights:size=2MiB",
                                  "--chunks=256KiB", "--benchmark_min_time=0.01", "--timeout-ms=5000")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        names = [case["name"] for case in report["benchmarks"]]
        for suffix in ["pair:0", "pair:1", "pair:sum", "pair:min"]:
            self.assertEqual(sum(n.endswith("/" + suffix) for n in names), 2, (suffix, names))  # raw + overlap
        rows = {case["name"]: case for case in report["benchmarks"]}
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            self.assertEqual(case["verified"], 1)
        for name, case in rows.items():
            if name.endswith("/pair:sum"):
                base = name[: -len("pair:sum")]
                self.assertAlmostEqual(case["bytes_per_second"],
                                       rows[base + "pair:0"]["bytes_per_second"] + rows[base + "pair:1"]["bytes_per_second"],
                                       delta=1)
                self.assertEqual(case["pairs"], 2)
        context = report["context"]
        self.assertEqual(context["mpi_pairs"], "2")
        for key in ["pair0_hostname", "pair0_peer_hostname", "pair1_cpu_model", "pair1_peer_rdma_device"]:
            self.assertIn(key, context)
        self.assertEqual(context["pair1_peer_mpi_rank"], "2")  # neighbor pairing: 2 serves 3
        self.assertIn("peer_hostname", context)  # the handshake's view of the server, as in two-host mode

    def test_a_pair_authenticates_with_the_users_secret_or_the_jobs_own(self):
        with tempfile.TemporaryDirectory() as tmp:
            secret = os.path.join(tmp, "secret")
            with open(secret, "wb") as f:
                f.write(b"correct horse battery staple\n")
            os.chmod(secret, 0o600)
            for env in ({}, {"WIREZIP_SECRET_FILE": secret}):
                with self.subTest(env=env):
                    result, report = run_json(2, "bench_rdma", "--mpi", "--transport=tcp", "--pages=4k",
                                              "--sizes=64KiB", "--buffer=4MiB", "--benchmark_min_time=0.01",
                                              "--timeout-ms=5000", env=env)
                    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
                    for case in report["benchmarks"]:
                        self.assertFalse(case.get("error_occurred"), case.get("error_message"))

    def test_odd_rank_count_is_one_error(self):
        result = subprocess.run(mpirun(3, binary("bench_rdma"), "--mpi", "--transport=tcp"), capture_output=True,
                                text=True, timeout=60, env=ENV)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("even number of ranks", result.stderr)


if __name__ == "__main__":
    unittest.main()
