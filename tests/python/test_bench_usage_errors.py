"""Bad values the binaries once took without a clear word: each is one line and exit status 2 before
any case runs. And a regex with a comma in a --datasets list stays one data set."""
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import numpy as np

from bench_process import binary, one_line_errors
from test_per_tensor import encode, write_safetensors

CODEC, PIPELINE, RDMA = binary("bench_codec"), binary("bench_pipeline"), binary("bench_rdma")
HUGE = "9223372036854775807"


class UsageErrors(unittest.TestCase):
    def test_repetitions_must_be_a_count(self):
        for bench in (CODEC, PIPELINE, RDMA):
            one_line_errors(self, bench, [
                (["--benchmark_repetitions=-1"], "--benchmark_repetitions: '-1' is not a whole number in [1, 1000000]"),
                (["--benchmark_repetitions=0"], "--benchmark_repetitions: '0'"),
                (["--benchmark_repetitions=two"], "--benchmark_repetitions: 'two'"),
            ])

    def test_absurd_timeouts_are_refused(self):
        day = "at most a day (86400000 ms)"
        one_line_errors(self, PIPELINE, [
            ([f"--timeout-ms={HUGE}", "--transport=mem"], f"--timeout-ms={HUGE}: over 600000 ms"),
            ([f"--timeout-ms={HUGE}", "--serve", "--port=0", "--bind=127.0.0.1", "--transport=tcp"], day),
            (["--max-timeout-ms=86400001", "--serve", "--port=0", "--bind=127.0.0.1", "--transport=tcp"], day),
            # Loopback: the receiving side in the process grants at most 600000 ms to a case.
            (["--timeout-ms=600001", "--transport=mem"], "--timeout-ms=600001: over 600000 ms"),
        ])
        one_line_errors(self, RDMA, [
            ([f"--timeout-ms={HUGE}", "--transport=mem"], day),
            ([f"--idle-s={HUGE}", "--transport=mem"], "must be at most a day"),
        ])

    def test_unknown_decoder_is_bad_usage(self):
        one_line_errors(self, PIPELINE, [
            (["--decoder=bogus", "--transport=mem", "--codecs=bytegroup+deflate"], "--decoder=bogus: no such decoder"),
            (["--decoder=lz4", "--transport=mem", "--codecs=bytegroup+huff"], "takes no decoder"),
        ])


class LinkFlagsSettleOnce(unittest.TestCase):
    """bench_rdma and bench_pipeline settle the transport and the secret in one place (LinkFlags):
    bench_rdma runs one transport; the secret file, named by --secret-file or WIREZIP_SECRET_FILE,
    is read when the flags are parsed, and a bad one is one line before anything runs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def secret(self, name, mode):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(b"correct horse battery staple\n")
        os.chmod(path, mode)
        return path

    def test_bench_rdma_runs_one_transport(self):
        one_line_errors(self, RDMA, [(["--transport=tcp,mem"], "--transport=tcp,mem: bench_rdma runs one transport at a time")])

    def test_a_bad_secret_from_the_environment_is_one_line(self):
        loose = self.secret("loose", 0o644)
        for bench in (RDMA, PIPELINE):
            with mock.patch.dict(os.environ, {"WIREZIP_SECRET_FILE": loose}):
                one_line_errors(self, bench, [(["--transport=mem"], f"secret file {loose}: readable or writable by group")])
            with mock.patch.dict(os.environ, {"WIREZIP_SECRET_FILE": ""}):
                one_line_errors(self, bench, [(["--transport=mem"], "WIREZIP_SECRET_FILE is set but empty")])

    def test_both_ends_of_a_loopback_link_authenticate_with_the_secret_from_the_environment(self):
        with mock.patch.dict(os.environ, {"WIREZIP_SECRET_FILE": self.secret("good", 0o600)}):
            result = subprocess.run([RDMA, "--transport=tcp", "--pages=4k", "--sizes=64KiB", "--buffer=4MiB",
                                     "--benchmark_min_time=0.01"], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)


class RegexInDatasetList(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model = os.path.join(cls.tmp.name, "m.safetensors")
        ones = encode(np.ones(64, np.float32), "BF16")
        write_safetensors(cls.model, {name: ("BF16", (64,), ones) for name in
                                      ["a.weight", "aa.weight", "aaaa.weight", "zeros.bias"]})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def per_tensor_names(self, datasets):
        out = os.path.join(self.tmp.name, "out.json")
        result = subprocess.run([CODEC, "--per-tensor", f"--per-tensor-out={out}", "--codecs=bytegroup+huff",
                                 f"--datasets={datasets}"], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            report = json.load(f)
        return [(r["dataset"], r["name"]) for r in report["tensors"]]

    def test_a_comma_inside_braces_or_escaped_stays_in_the_regex(self):
        braces = f"safetensors:{self.model}:tensors=^a{{1,2}}\\."
        self.assertEqual(self.per_tensor_names(braces), [(braces, "a.weight"), (braces, "aa.weight")])
        escaped = f"safetensors:{self.model}:tensors=zeros\\,?\\.bias"
        both = f"{escaped},{braces}"  # and the comma between the two still separates them
        self.assertEqual(self.per_tensor_names(both),
                         [(escaped, "zeros.bias"), (braces, "a.weight"), (braces, "aa.weight")])

    def test_a_huge_bad_regex_is_shown_shortened_once(self):
        spec = f"safetensors:{self.model}:tensors=(" + "a" * 100_000
        for args in (["--per-tensor", f"--datasets={spec}"], [f"--datasets={spec}"]):
            result = subprocess.run([CODEC, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 2, result.stderr[:500])
            lines = result.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, result.stderr[:500])
            self.assertIn("bad tensor regex", lines[0])
            self.assertLess(len(lines[0]), 600, lines[0])


if __name__ == "__main__":
    unittest.main()
