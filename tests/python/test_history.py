"""scripts/history: recording runs into SQLite and the check's verdicts on synthetic series with a
known answer (a step, a slow drift, pure noise, a failed case). Every series is seeded."""
import contextlib
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import numpy

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "history")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "compare")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import history  # noqa: E402
import history_changes  # noqa: E402

CASE = "codec/lz4/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"
DATASET_KEY = "dataset_sha256:synthetic:weights:size=2MiB:seed=1"
REPS = 5
ALPHA = 0.05


def context(run, **extra):
    return {"date": f"2026-01-01T{run // 60:02d}:{run % 60:02d}:00+00:00", "executable": "bench_codec",
            "cpu_model": "AMD EPYC", "kernel": "Linux 6.1.0", "simd_path": "avx2", "thp_enabled": "madvise",
            "thp_defrag": "madvise", "wirezip_git_sha": f"sha{run:03d}", DATASET_KEY: "ab12", **extra}


def entries(name, level, rng, failed=None):
    """A case's repetitions around level (1% noise each) and its median aggregate."""
    if failed:
        return [{"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                 "error_message": failed}]
    values = [level * (1 + rng.gauss(0, 0.01)) for _ in range(REPS)]
    out = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": REPS, "repetition_index": i,
            "family_index": 0, "per_family_instance_index": 0, "iterations": 10, "real_time": 1e9 / v,
            "cpu_time": 1e9 / v, "time_unit": "ns", "bytes_per_second": v, "ratio": 2.0, "verified": 1}
           for i, v in enumerate(values)]
    median = sorted(values)[REPS // 2]
    out.append({"name": name + "_median", "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
                "repetitions": REPS, "real_time": 1e9 / median, "time_unit": "ns", "bytes_per_second": median,
                "verified": 1})
    return out


def levels(kind, runs, rng):
    """Per-run levels of a series: 1% run-to-run noise times the shape."""
    shape = {"flat": lambda i: 1.0, "step": lambda i: 0.88 if i >= runs - 6 else 1.0,
             "drift": lambda i: 0.98 ** min(5, max(0, (i - (runs - 10)) // 2 + 1))}[kind]
    return [1e9 * shape(i) * (1 + rng.gauss(0, 0.01)) for i in range(runs)]


class HistoryRun(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.dir.name, "h.sqlite")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, run, benchmarks, **extra):
        path = os.path.join(self.dir.name, f"run{run:03d}.json")
        with open(path, "w") as f:
            json.dump({"context": context(run, **extra), "benchmarks": benchmarks}, f)
        return path

    def history(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = history.main([*argv, f"--db={self.db}"])
        return code, out.getvalue(), err.getvalue()

    def series(self, shapes, runs=30, seed=1, last_failed=()):
        """Records `runs` files, each holding one case per shape; returns the check's JSON."""
        rng = random.Random(seed)
        curves = {name: levels(kind, runs, rng) for name, kind in shapes.items()}
        paths = [self.write(i, [e for name, curve in curves.items() for e in entries(
            name, curve[i], rng, "verify: XXH3 mismatch" if i == runs - 1 and name in last_failed else None)])
            for i in range(runs)]
        self.assertEqual(self.history("record", *paths)[0], 0)
        out = os.path.join(self.dir.name, "check.json")
        code, text, err = self.history("check", f"--json-out={out}")
        with open(out) as f:
            return code, text, {f["case"]: f for f in json.load(f)["findings"]}


class Record(HistoryRun):
    def count(self, table):
        return sqlite3.connect(self.db).execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def test_every_repetition_and_aggregate_is_kept_once(self):
        path = self.write(0, entries(CASE, 1e9, random.Random(1)))
        self.assertEqual(self.history("record", path)[0], 0)
        code, out, _ = self.history("record", path)
        self.assertEqual(code, 0)
        self.assertIn("already recorded", out)
        self.assertEqual(self.count("runs"), 1)
        rows = sqlite3.connect(self.db).execute(
            "SELECT kind, count(*) FROM samples WHERE metric = 'bytes_per_second' GROUP BY kind").fetchall()
        self.assertEqual(dict(rows), {"repetition": REPS, "median": 1})
        sha, klass = sqlite3.connect(self.db).execute("SELECT git_sha, runner_class FROM runs JOIN cases").fetchone()
        self.assertEqual(sha, "sha000")
        self.assertEqual(len(klass), 16)

    def test_the_database_comes_from_wirezip_history_without_db(self):
        env = dict(os.environ, WIREZIP_HISTORY=self.db)
        result = subprocess.run([sys.executable, SCRIPT, "record", os.path.join(FIXTURES, "base.json")], env=env,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.count("runs"), 1)

    def test_runner_class_follows_the_kernel_and_the_data_set_not_the_host_name(self):
        rng = random.Random(1)
        paths = [self.write(0, entries(CASE, 1e9, rng), hostname="a"),
                 self.write(1, entries(CASE, 1e9, rng), hostname="b"),
                 self.write(2, entries(CASE, 1e9, rng), kernel="Linux 6.8.0"),
                 self.write(3, entries(CASE, 1e9, rng), **{DATASET_KEY: "cd34"})]
        self.history("record", *paths)
        classes = [r[0] for r in sqlite3.connect(self.db).execute("SELECT runner_class FROM cases ORDER BY id")]
        self.assertEqual(classes[0], classes[1])
        self.assertEqual(len(set(classes)), 3)

    def test_a_failed_case_is_recorded_with_its_reason(self):
        self.history("record", os.path.join(FIXTURES, "failed.json"))
        status, reason = sqlite3.connect(self.db).execute("SELECT status, reason FROM cases").fetchone()
        self.assertEqual(status, "failed")
        self.assertIn("XXH3 mismatch", reason)

    def test_a_truncated_file_records_nothing_and_is_named(self):
        good = self.write(0, entries(CASE, 1e9, random.Random(1)))
        bad = os.path.join(self.dir.name, "cut.json")
        with open(good) as f, open(bad, "w") as g:
            g.write(f.read()[:200])
        code, _, err = self.history("record", good, bad)
        self.assertEqual(code, 2)
        self.assertIn("cut.json: not JSON", err)
        self.assertEqual(self.count("runs"), 0)

    def test_a_foreign_or_corrupt_database_is_refused_untouched(self):
        foreign = sqlite3.connect(self.db)
        foreign.execute("CREATE TABLE accounts (id)")
        foreign.commit()
        foreign.close()
        for content in (None, b"this is not sqlite" * 100):
            if content:
                with open(self.db, "wb") as f:
                    f.write(content)
            with open(self.db, "rb") as f:
                before = f.read()
            code, _, err = self.history("record", os.path.join(FIXTURES, "base.json"))
            self.assertEqual(code, 2)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            with open(self.db, "rb") as f:
                self.assertEqual(f.read(), before)

    def test_merge_copies_the_runs_the_database_lacks_once(self):
        rng = random.Random(6)
        paths = [self.write(i, entries(CASE, 1e9, rng)) for i in range(3)]
        other = os.path.join(self.dir.name, "other.sqlite")
        self.history("record", *paths[:2])
        self.assertEqual(history.main(["record", f"--db={other}", *paths[1:]]), 0)
        for copied in ("1 run(s) copied", "0 run(s) copied"):
            code, out, _ = self.history("merge", other)
            self.assertEqual(code, 0)
            self.assertIn(copied, out)
        self.assertEqual(self.count("runs"), 3)
        direct = os.path.join(self.dir.name, "direct.sqlite")
        history.main(["record", f"--db={direct}", *paths])
        query = "SELECT source, name, kind, metric, repetition, value FROM samples " \
                "JOIN cases ON cases.id = case_id " \
                "JOIN runs ON runs.id = run_id ORDER BY 1, 2, 3, 4, 5"
        self.assertEqual(sqlite3.connect(self.db).execute(query).fetchall(),
                         sqlite3.connect(direct).execute(query).fetchall())
        code, _, err = self.history("merge", os.path.join(self.dir.name, "absent.sqlite"))
        self.assertEqual(code, 2, err)

    def test_two_recorders_at_once_both_keep_their_runs(self):
        rng = random.Random(1)
        batches = [[self.write(b * 100 + i, entries(CASE, 1e9, rng)) for i in range(20)] for b in range(2)]
        procs = [subprocess.Popen([sys.executable, SCRIPT, "record", f"--db={self.db}", *paths],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for paths in batches]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(self.count("runs"), 40)


class Check(HistoryRun):
    def test_a_known_step_is_found_at_its_commit(self):
        code, text, found = self.series({CASE: "step"})
        self.assertEqual(code, 1, text)
        f = found[CASE]
        self.assertEqual(f["verdict"], "regression")
        self.assertIn("e-divisive", f["rules"])
        self.assertEqual(f["change"]["points"][0]["git_sha"], "sha024")
        self.assertAlmostEqual(f["change"]["delta_pct"], -12, delta=2)
        self.assertIn("since sha024", text)
        code, text, _ = self.history("check", "--last=5")
        self.assertEqual(code, 0, "the five newest runs all come after the step")

    def test_a_step_in_the_newest_run_alone_is_found_by_the_u_test(self):
        rng = random.Random(3)
        paths = [self.write(i, entries(CASE, 1e9 if i < 15 else 0.85e9, rng)) for i in range(16)]
        self.history("record", *paths)
        code, text, _ = self.history("check")
        self.assertEqual(code, 1, text)
        self.assertIn("mann-whitney step: -15", text)

    def test_a_slow_drift_of_five_two_percent_steps_is_found(self):
        code, text, found = self.series({CASE: "drift"})
        self.assertEqual(code, 1, text)
        f = found[CASE]
        self.assertEqual(f["rules"], ["e-divisive"], "each step is inside the step test's threshold")
        self.assertLess(f["change"]["delta_pct"], -5)

    def test_pure_noise_stays_under_the_false_alarm_rate(self):
        shapes = {f"{CASE}/series:{i}": "flat" for i in range(100)}
        code, text, found = self.series(shapes, runs=20)
        alarms = [f for f in found.values() if f["verdict"] != "same"]
        self.assertLessEqual(len(alarms), ALPHA * 100, text)
        self.assertEqual(code, 1 if any(f["verdict"] == "regression" for f in alarms) else 0)

    def test_a_failed_newest_run_is_a_broken_case(self):
        other = CASE.replace("lz4", "zstd")
        code, text, found = self.series({CASE: "flat", other: "flat"}, runs=8, last_failed={other})
        self.assertEqual(code, 1)
        self.assertEqual(found[other]["verdict"], "broken")
        self.assertIn("XXH3 mismatch", found[other]["reason"])
        self.assertEqual(found[CASE]["verdict"], "same")

    def test_a_zero_rate_in_the_newest_run_is_broken(self):
        rng = random.Random(4)
        paths = [self.write(i, entries(CASE, 1e9, rng)) for i in range(4)]
        zero = [dict(e, bytes_per_second=0.0) for e in entries(CASE, 1e9, rng)]
        self.history("record", *paths, self.write(4, zero))
        code, out, _ = self.history("check")
        self.assertEqual(code, 1, out)
        self.assertIn("BROKEN", out)
        self.assertIn("bytes_per_second=0: no relative change exists", out)

    def test_a_missing_database_or_a_bad_option_is_one_line_and_exit_2(self):
        for argv in (["check"], ["check", "--alpha=2"]):
            if len(argv) == 2:
                self.history("record", os.path.join(FIXTURES, "base.json"))
            code, out, err = self.history(*argv)
            self.assertEqual(code, 2, out)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("--alpha", err)

    def test_change_points_of_pure_noise_stay_near_alpha(self):
        rng = numpy.random.default_rng(7)
        hits = sum(bool(history_changes.change_points(rng.normal(0, 1, 30), ALPHA, 99, rng)) for _ in range(100))
        self.assertLessEqual(hits, 11, "binomial(100, 0.05) exceeds 11 with probability < 1%")


class Expect(HistoryRun):
    def check_with(self, text, failed=False):
        rng = random.Random(5)
        other = CASE.replace("lz4", "zstd")
        failures = [None, None, "boom" if failed else None]
        paths = [self.write(i, entries(CASE, 2e9, rng) + entries(other, 1e9, rng, failures[i])) for i in range(3)]
        self.history("record", *paths)
        rules = os.path.join(self.dir.name, "expect.txt")
        with open(rules, "w") as f:
            f.write(text)
        return self.history("check", f"--expect={rules}")

    def test_a_floor_met_passes_and_a_floor_missed_fails_naming_the_case(self):
        code, out, _ = self.check_with("# acceptance\ncodec/lz4/* bytes_per_second >= 1.5e9\n")
        self.assertEqual(code, 0, out)
        code, out, _ = self.check_with("codec/lz4/* bytes_per_second >= 2.5e9\ncodec/lz4/* real_time <= 1e9\n")
        self.assertEqual(code, 1, out)
        self.assertIn(f"OUT OF BOUND {CASE}", out)
        self.assertIn("expected >= 2.5e+09 (", out)
        self.assertIn("expect.txt:1)", out)
        self.assertNotIn("expect.txt:2)", out)

    def test_a_failed_case_or_a_rule_matching_nothing_misses(self):
        code, out, _ = self.check_with("codec/zstd*/* bytes_per_second >= 1\ncodec/nope/* ratio >= 1\n",
                                        failed=True)
        self.assertEqual(code, 1, out)
        self.assertRegex(out, r"OUT OF BOUND codec/zstd\S* \[\w+\] bytes_per_second no value")
        self.assertIn("NO CASE     codec/nope/* ratio", out)

    def test_a_line_that_is_not_a_rule_is_exit_2_with_its_line(self):
        code, _, err = self.check_with("codec/* bytes_per_second >= 1\ncodec/* bytes_per_second > fast\n")
        self.assertEqual(code, 2)
        self.assertIn("expect.txt:2: expected 'CASE_GLOB METRIC >= VALUE'", err)


if __name__ == "__main__":
    unittest.main()
