"""plots/sched_trace.py (scripts/sched-trace): a hand-made `perf sched timehist --state` text with
known intervals, and the idle shares and runnable waits it must give; bad input exits 2."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "sched-trace")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import sched_trace  # noqa: E402

HEADER = """           time    cpu  task name                       wait time  sch delay   run time  state
                        [tid/pid]                          (msec)     (msec)     (msec)
--------------- ------  ------------------------------  ---------  ---------  ---------  -----
"""


def row(t, cpu, task, wait_ms, delay_ms, run_ms, state):
    """One line as perf prints it: switch-out time in s, the rest in ms."""
    return f"{t:15.6f} [{cpu:04d}]  {task:<30s}  {wait_ms:9.3f}  {delay_ms:9.3f}  {run_ms:9.3f}      {state} \n"


# Over 10 ms: CPU 1 runs the compressing thread, then the receiving thread, which had been preempted
# and waited runnable on CPU 1 from 100.000 to 100.006. CPU 0 runs a reader for 2 ms, idles 6 ms,
# then runs a writer woken at 100.007 (1 ms before it ran).
PLACEMENT = HEADER + "".join([
    row(99.990, 1, "wz-receiver[11/10]", 0.0, 0.0, 1.0, "R"),
    row(100.002, 0, "wz-tcp-recv[12/10]", 5.0, 0.0, 2.0, "S"),
    row(100.006, 1, "bench_pipeline[10]", 0.0, 0.0, 6.0, "R"),
    row(100.008, 0, "<idle>", 0.0, 0.0, 6.0, " "),
    row(100.010, 0, "wz-tcp-send[13/10]", 3.0, 1.0, 2.0, "S"),
    row(100.010, 1, "wz-receiver[11/10]", 6.0, 0.0, 4.0, "S"),
])


class Summary(unittest.TestCase):
    def test_idle_time_is_split_into_placement_and_wake_up(self):
        s = sched_trace.summarize(sched_trace.parse_timehist(PLACEMENT), last_s=0.010)
        cpu0, cpu1 = s["cpus"]
        self.assertAlmostEqual(s["timed_s"], 0.010)
        self.assertAlmostEqual(cpu0["idle"], 0.6)
        self.assertAlmostEqual(cpu0["waiting_elsewhere"], 4 / 6)  # the receiver, queued on CPU 1
        self.assertAlmostEqual(cpu0["woken_here"], 1 / 6)  # the writer, woken onto CPU 0
        self.assertAlmostEqual(cpu0["idle_by_gap"]["0.5-2ms"], 0.0)
        self.assertAlmostEqual(cpu0["idle_by_gap"][">=2ms"], 1.0)  # one 6 ms gap
        self.assertAlmostEqual(cpu1["idle"], 0.0)
        shares = {(t["thread"], t["cpu"]): t["share"] for t in s["threads"]}
        self.assertAlmostEqual(shares[("bench_pipeline[10]", 1)], 0.6)
        self.assertAlmostEqual(shares[("wz-receiver[11]", 1)], 0.4)
        self.assertNotIn(("<idle>[0]", 0), shares)

    def test_long_gaps_are_left_out_as_untimed_on_every_cpu(self):
        # CPU 0 idles 20 ms (the receiving thread filling its destination on CPU 1, untimed), then
        # 5 ms while nothing waits anywhere.
        text = HEADER + "".join([
            row(100.010, 0, "bench_pipeline[10]", 0.0, 0.0, 10.0, "S"),
            row(100.035, 1, "wz-receiver[11/10]", 0.0, 0.0, 35.0, "S"),
            row(100.035, 0, "bench_pipeline[10]", 20.0, 0.0, 5.0, "S"),
            row(100.040, 1, "wz-receiver[11/10]", 0.0, 0.0, 5.0, "S"),
        ])
        s = sched_trace.summarize(sched_trace.parse_timehist(text), last_s=0.040)
        self.assertAlmostEqual(s["untimed_s"], 0.020)
        self.assertAlmostEqual(s["timed_s"], 0.020)
        cpu0 = s["cpus"][0]
        self.assertAlmostEqual(cpu0["idle"], 5 / 20)
        self.assertAlmostEqual(cpu0["waiting_elsewhere"], 0.0)
        self.assertAlmostEqual(cpu0["woken_here"], 0.0)

    def test_a_trace_without_the_receiving_thread_is_refused(self):
        with self.assertRaisesRegex(ValueError, "no thread named wz-receiver in the trace"):
            sched_trace.summarize(sched_trace.parse_timehist(HEADER + row(1.0, 0, "x[5/5]", 0, 0, 1, "S")))


class Script(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def test_reads_a_timehist_file_and_prints_the_table_or_json(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write(PLACEMENT)
            f.flush()
            text = self.run_script("--timehist", f.name, "--last", "0.010")
            self.assertEqual(text.returncode, 0, text.stderr)
            self.assertIn("| 0 | 60.0% | 67% | 17% |", text.stdout)
            self.assertIn("cpu 0's idle time by gap length: <0.1ms 0%, 0.1-0.5ms 0%, 0.5-2ms 0%, >=2ms 100%", text.stdout)
            as_json = self.run_script("--timehist", f.name, "--last", "0.010", "--json")
            self.assertEqual(as_json.returncode, 0, as_json.stderr)
            self.assertAlmostEqual(json.loads(as_json.stdout)["cpus"][0]["idle"], 0.6)

    def test_bad_input_is_one_line_and_exit_2(self):
        missing = self.run_script("--timehist", "/nonexistent/timehist.txt")
        self.assertEqual(missing.returncode, 2)
        self.assertEqual(len(missing.stderr.strip().splitlines()), 1, missing.stderr)
        self.assertTrue(missing.stderr.startswith("sched-trace: "), missing.stderr)
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write(PLACEMENT)
            f.flush()
            bad = self.run_script("--timehist", f.name, "--last", "0")
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--last and --untimed-gap-ms must be positive", bad.stderr)


if __name__ == "__main__":
    unittest.main()
