"""scripts/reproduce's runner (plots/bench_run.py) against a fake benchmark binary: it stops at the
first failed case with its reason, --keep-going runs every case, and a failure that only the JSON
shows (an old binary exiting 0, a verified=0 counter) still fails the run."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RUNNER = os.path.join(ROOT, "plots", "bench_run.py")
CASES = ["pipeline/tcp/raw/none/pages:4k/chunk:1048576/depth:8/workers:1/synthetic:weights/manual_time",
         "pipeline/tcp/overlap/bytegroup+huff/pages:4k/chunk:1048576/depth:8/workers:1/synthetic:weights/manual_time",
         "pipeline/mem/raw/none/pages:4k/chunk:1048576/depth:8/workers:1/synthetic:weights/manual_time"]

# Prints Google Benchmark's console lines for CASES and writes its JSON at the end, as the real
# binaries do. FAKE_FAIL: index of the case that reports an error; FAKE_VERIFIED_0: index of a
# case whose JSON (not its console line) says verified=0; FAKE_STATUS: exit status. Before the
# last case it sleeps and touches FAKE_REACHED, so a runner that did not stop it leaves that file.
FAKE = textwrap.dedent("""\
    import json, os, sys, time
    cases = json.loads(os.environ["FAKE_CASES"])
    if "--benchmark_list_tests=true" in sys.argv:
        print("\\n".join(cases))
        sys.exit(0)
    out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
    fail, unverified = int(os.environ.get("FAKE_FAIL", -1)), int(os.environ.get("FAKE_VERIFIED_0", -1))
    entries = []
    for i, name in enumerate(cases):
        if i == len(cases) - 1:
            time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
            open(os.environ["FAKE_REACHED"], "w").close()
        if i == fail:
            print(f"{name} ERROR OCCURRED: 'receiver: chunk 3: XXH3 mismatch'", flush=True)
            entries.append({"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                            "error_message": "receiver: chunk 3: XXH3 mismatch"})
            continue
        print(f"{name}  10.0 ms  4.0 ms  10 bytes_per_second=1.5G/s verified=1", flush=True)
        print(f"{name}_stddev  0.1 ms  0.1 ms  10 bytes_per_second=1.0M/s verified=0", flush=True)
        entries.append({"name": name, "run_name": name, "run_type": "iteration", "bytes_per_second": 1.5e9,
                        "verified": 0 if i == unverified else 1})
    json.dump({"context": {}, "benchmarks": entries}, open(out, "w"))
    sys.exit(int(os.environ.get("FAKE_STATUS", 0)))
""")


class Runner(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.fake = os.path.join(self.tmp, "bench_pipeline")
        with open(self.fake, "w") as f:
            f.write(f"#!{sys.executable}\n" + FAKE)
        os.chmod(self.fake, 0o755)
        self.out, self.reached = os.path.join(self.tmp, "pipeline.json"), os.path.join(self.tmp, "reached")

    def run_fake(self, *flags, **env):
        environment = dict(os.environ, FAKE_CASES=json.dumps(CASES), FAKE_REACHED=self.reached,
                           **{k: str(v) for k, v in env.items()})
        return subprocess.run(["/usr/bin/python3", RUNNER, f"--out={self.out}", f"--log={self.tmp}/log", *flags,
                               "--", self.fake, "--transport=tcp"], capture_output=True, text=True, env=environment,
                              timeout=120)

    def test_every_case_passing_prints_progress_and_exits_0(self):
        result = self.run_fake()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([line for line in result.stdout.splitlines() if line.startswith("[")],
                         [f"[bench_pipeline {i + 1}/3] {name}" for i, name in enumerate(CASES)])  # stddev lines ignored

    def test_stops_at_the_first_failed_case_with_its_reason(self):
        result = self.run_fake(FAKE_FAIL=1, FAKE_SLEEP=5)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.strip(), f"reproduce: bench_pipeline: {CASES[1]} failed: "
                                                "receiver: chunk 3: XXH3 mismatch")
        self.assertFalse(os.path.exists(self.reached), "the binary ran on after the failure")
        self.assertFalse(os.path.exists(self.out), "a terminated run's unfinished JSON was left behind")

    def test_keep_going_runs_every_case_and_still_fails(self):
        result = self.run_fake("--keep-going", FAKE_FAIL=1, FAKE_STATUS=1)
        self.assertEqual(result.returncode, 1)
        self.assertTrue(os.path.exists(self.reached))
        self.assertIn(f"[bench_pipeline 2/3] {CASES[1]} FAILED: receiver: chunk 3: XXH3 mismatch", result.stdout)
        self.assertIn(f"[bench_pipeline 3/3] {CASES[2]}", result.stdout)
        self.assertIn("1 case(s) failed, kept going", result.stderr)
        with open(self.out) as f:
            self.assertEqual(len(json.load(f)["benchmarks"]), 3)  # the JSON is complete for the report

    def test_a_failure_only_the_json_shows_fails_the_run(self):
        result = self.run_fake(FAKE_VERIFIED_0=2)  # exit status 0, console says verified=1
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn(f"{CASES[2]} failed: verified=0: the data did not arrive intact", result.stderr)

    def test_a_binary_that_fails_without_a_failed_case_shows_its_log(self):
        result = self.run_fake(FAKE_STATUS=3)
        self.assertEqual(result.returncode, 1)
        self.assertIn("reproduce: bench_pipeline exited with status 3", result.stderr)


class Options(unittest.TestCase):
    def test_reproduce_refuses_an_option_without_a_value(self):
        for args in (["--codec"], ["--chunk", "--quick"]):
            result = subprocess.run([os.path.join(ROOT, "scripts", "reproduce"), *args], capture_output=True,
                                    text=True, timeout=30)
            self.assertEqual((result.returncode, result.stderr.strip()), (2, f"reproduce: {args[0]} needs a value"))


if __name__ == "__main__":
    unittest.main()
