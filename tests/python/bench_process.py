"""Running the benchmark binaries from tests: one JSON run, and a --serve process with its port."""
import json
import os
import re
import subprocess
import tempfile

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


def one_line_error(test, bench, args, expect):
    """Asserts that `bench args` is refused as bad usage: exit status 2 and exactly one stderr line
    containing `expect`, before any case ran (nothing on stdout)."""
    result = subprocess.run([bench, *args], capture_output=True, text=True, timeout=60)
    test.assertEqual(result.returncode, 2, (args, result.stderr))
    lines = result.stderr.strip().splitlines()
    test.assertEqual(len(lines), 1, result.stderr)
    test.assertIn(expect, lines[0])
    test.assertEqual(result.stdout, "", args)


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
