"""A case that fails in some of its repetitions only: bench_pipeline --peer through a proxy that ends
the link once, when the sender starts its K-th case run, and forwards later links again (a peer that
dies and comes back). With --benchmark_min_time=0 every repetition is exactly one run, so the K-th
case start is the K-th repetition. Google Benchmark 1.7 aborts (failed later repetition) or crashes
(failed first repetition followed by passing ones) when it aggregates such runs; the binaries must
instead fail the case from its first failed repetition on, write valid JSON and the failure summary,
and exit 1."""
import socket
import threading
import unittest

import fake_peer as fp
from bench_process import ServeProcess, binary, failure_summary, run_json

BENCH = binary("bench_pipeline")
DATA = "synthetic:weights:size=1MiB:seed=2"
CASE = f"pipeline/tcp/raw/none/pages:4k/chunk:262144/depth:8/workers:1/{DATA}/manual_time"
REPETITIONS = 5


class CaseStartCutter(fp.LocalListener):
    """A tcp proxy to 127.0.0.1:`upstream`. It reads what the sender sends (a hello, then frames, as
    fake_peer knows them) and, at the `cut_at`-th case record (a start notify with a payload), closes
    that link on both sides instead of forwarding it. Every other byte passes unchanged."""

    def __init__(self, upstream, cut_at):
        self.upstream, self.cut_at = upstream, cut_at
        self.case_starts = 0
        self.lock = threading.Lock()
        super().__init__()

    def on_connection(self, client):
        server = socket.create_connection((fp.HOST, self.upstream), timeout=10)
        for sock in (client, server):
            sock.settimeout(30)
        threading.Thread(target=self._sender_to_server, args=(client, server), daemon=True).start()
        threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _sender_to_server(self, client, server):
        try:
            server.sendall(fp.recv_exact(client, fp.HELLO.size))
            while True:
                head = fp.recv_exact(client, fp.FRAME.size)
                kind, imm, _, length = fp.FRAME.unpack(head)
                payload = fp.recv_exact(client, length) if kind in (fp.WRITE, fp.NOTIFY, fp.READ_RESPONSE) else b""
                if kind == fp.NOTIFY and fp.kind_of(imm) == fp.START and length > 0:
                    with self.lock:
                        self.case_starts += 1
                        cut = self.case_starts == self.cut_at
                    if cut:
                        break
                server.sendall(head + payload)
        except (EOFError, OSError):
            pass
        for sock in (client, server):
            self._close(sock)

    def _pump(self, source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            self._close(sock)

    @staticmethod
    def _close(sock):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already shut
        sock.close()


class PartlyFailedRepetitions(unittest.TestCase):
    def run_cut_at(self, cut_at):
        """bench_pipeline with 5 repetitions, its link ended at the `cut_at`-th repetition's case
        start; returns (result, the case's per-repetition rows, {case: reason} of the summary)."""
        server = ServeProcess(BENCH, "--bind=127.0.0.1", "--port=0", "--transport=tcp", "--idle-s=30")
        proxy = CaseStartCutter(server.port, cut_at)
        try:
            result, report = run_json(BENCH, "--transport=tcp", "--modes=raw", f"--peer=127.0.0.1:{proxy.port}",
                                      f"--datasets={DATA}", "--chunks=256KiB", "--timeout-ms=5000",
                                      "--benchmark_min_time=0", f"--benchmark_repetitions={REPETITIONS}",
                                      timeout=120)
        finally:
            proxy.stop()
            server.stop()
        self.assertNotIn(result.returncode, (-6, -11), result.stderr)  # SIGABRT, SIGSEGV
        runs = [b for b in report["benchmarks"] if b["name"] == CASE and b.get("run_type") == "iteration"]
        self.assertEqual(len(runs), REPETITIONS, [b["name"] for b in report["benchmarks"]])
        return result, runs, failure_summary(self, result, "bench_pipeline")

    def test_a_later_failed_repetition_fails_the_rest_of_the_case(self):
        result, runs, failed = self.run_cut_at(3)
        for run in runs[:2]:
            self.assertFalse(run.get("error_occurred"), run.get("error_message"))
            self.assertEqual(run["verified"], 1)
        reasons = {run["error_message"] for run in runs[2:] if run.get("error_occurred")}
        self.assertEqual(len(reasons), 1, runs)  # all three failed, with the first reason
        self.assertEqual(failed, {CASE: reasons.pop()})

    def test_a_failed_first_repetition_fails_every_repetition(self):
        result, runs, failed = self.run_cut_at(1)
        self.assertTrue(all(run.get("error_occurred") for run in runs), runs)
        reasons = {run["error_message"] for run in runs}
        self.assertEqual(len(reasons), 1, runs)
        self.assertEqual(failed, {CASE: reasons.pop()})


if __name__ == "__main__":
    unittest.main()
