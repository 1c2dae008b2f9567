"""Running the benchmark binaries from tests: one JSON run, and a --serve process with its port (or
with its log lines as they come: ServeProcess)."""
import json
import os
import queue
import re
import subprocess
import tempfile
import threading
import time

BIN = os.environ.get("WIREZIP_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin"))


def binary(name):
    return os.path.join(BIN, name)


def run_json(bench, *args, timeout=180):
    """Runs `bench` with JSON output to a file; returns (CompletedProcess, parsed JSON)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        result = subprocess.run([bench, *args, f"--benchmark_out={out}", "--benchmark_out_format=json"],
                                capture_output=True, text=True, timeout=timeout)
        with open(out) as f:
            return result, json.load(f)


def stop(process):
    """Kills a child process and closes its pipes."""
    process.kill()
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream:
            stream.close()


def start_server(bench, *args):
    """Starts `bench --serve --port=0`; returns (process, the port it announced)."""
    server = subprocess.Popen([bench, "--serve", "--port=0", "--idle-s=20", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    match = re.search(r"serving \w+ on port (\d+)", line)
    if not match:
        stop(server)
        raise AssertionError(f"server did not announce its port: {line!r}")
    return server, int(match[1])


def wait_for_cpu_seconds(process, seconds, timeout_s=120):
    """Until the process has used `seconds` of CPU (all threads, from /proc/PID/stat): a link's
    set-up costs a server a few milliseconds, so past this it is receiving a case's writes."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with open(f"/proc/{process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
            return
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}) before using {seconds} s of CPU")
        time.sleep(0.05)
    raise AssertionError(f"the server used under {seconds} s of CPU in {timeout_s} s")


def one_line_error(test, bench, args, expect):
    """Asserts that `bench args` is refused as bad usage: exit status 2 and exactly one stderr line
    containing `expect`, before any case ran (nothing on stdout)."""
    result = subprocess.run([bench, *args], capture_output=True, text=True, timeout=60)
    test.assertEqual(result.returncode, 2, (args, result.stderr))
    lines = result.stderr.strip().splitlines()
    test.assertEqual(len(lines), 1, result.stderr)
    test.assertIn(expect, lines[0])
    test.assertEqual(result.stdout, "", args)


def one_line_errors(test, bench, cases):
    """one_line_error for each (args, expect) of `cases`, each its own subTest."""
    for args, expect in cases:
        with test.subTest(args=args):
            one_line_error(test, bench, args, expect)


def failure_summary(test, result, binary):
    """Asserts exit status 1 and the summary Google Benchmark's output ends with on stderr:
    "BINARY: K of N cases failed:" then "  CASE: REASON" per failed case. Returns {case: reason}."""
    test.assertEqual(result.returncode, 1, result.stderr)
    lines = result.stderr.rstrip("\n").splitlines()
    heads = [i for i, line in enumerate(lines) if re.match(rf"^{binary}: \d+ of \d+ cases failed:$", line)]
    test.assertEqual(len(heads), 1, result.stderr)
    failed = {}
    for line in lines[heads[0] + 1:]:
        match = re.match(r"^  (\S+): (.+)$", line)
        test.assertIsNotNone(match, line)
        failed[match[1]] = match[2]
    count = int(re.match(r"^\S+ (\d+) of", lines[heads[0]])[1])
    test.assertEqual(count, len(failed), result.stderr)
    return failed


class ServeProcess:
    """`bench --serve ARGS` (which must include --bind=127.0.0.1 --port=0) with its stdout and stderr
    lines collected by reader threads, so a test can wait for a log line without blocking."""

    def __init__(self, bench, *args):
        self.name = os.path.basename(bench)
        self.process = subprocess.Popen([bench, "--serve", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out, self.err = queue.Queue(), []
        self.err_changed = threading.Condition()
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for reader in self.readers:
            reader.start()
        self.seen = 0  # stderr lines already matched by a test
        try:
            first = self.out.get(timeout=10)
        except queue.Empty:
            first = ""
        match = re.search(r"listening on [\d.]+:(\d+)", first)
        if not match:
            self.stop()
            raise AssertionError(f"{self.name} did not announce its port: {first!r} {self.err}")
        self.port = int(match[1])

    def _read_out(self):
        for line in self.process.stdout:
            self.out.put(line)

    def _read_err(self):
        for line in self.process.stderr:
            with self.err_changed:
                self.err.append(line.rstrip("\n"))
                self.err_changed.notify_all()

    def running(self):
        return self.process.poll() is None

    def log_line(self, text, timeout=5.0):
        """The next new stderr line containing `text` (waits for it); lines before it are passed over."""
        deadline = time.monotonic() + timeout
        with self.err_changed:
            while True:
                for i in range(self.seen, len(self.err)):
                    if text in self.err[i]:
                        self.seen = i + 1
                        return self.err[i]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name} never logged {text!r}; its stderr: {self.err}")
                self.err_changed.wait(left)

    def rss_kb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+) kB", f.read())[1])

    def wait(self, timeout=10):
        code = self.process.wait(timeout=timeout)
        for reader in self.readers:
            reader.join(timeout=5)
        return code

    def stop(self):
        if self.running():
            self.process.kill()
        self.wait()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()
