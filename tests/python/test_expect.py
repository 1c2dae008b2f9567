"""--expect bounds (plots/expect.py) as a fraction of a number in the run's context (`0.9 *
context:rdma_speed_bytes`), in `scripts/history check` and in `scripts/compare`, which holds the
rules against its NEW file."""
import contextlib
import io
import json
import os
import random
import sys
import unittest

from test_history import CASE, ROOT, HistoryRun, entries

sys.path.insert(0, os.path.join(ROOT, "plots"))
import compare  # noqa: E402

LINK = 12.5e9  # a 100 Gb/s link's data rate, bytes/s


class ContextBounds(HistoryRun):
    def run_file(self, run, rate, **context):
        return self.write(run, entries(CASE, rate, random.Random(run)), **context)

    def rules(self, text):
        path = os.path.join(self.dir.name, "expect.txt")
        with open(path, "w") as f:
            f.write(text)
        return path

    def compare(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = compare.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_history_check_holds_a_share_of_the_link_rate(self):
        paths = [self.run_file(i, 0.95 * LINK, rdma_speed_bytes=str(int(LINK))) for i in range(2)]
        self.history("record", *paths)
        rule = self.rules("codec/* bytes_per_second >= 0.9 * context:rdma_speed_bytes")
        code, out, _ = self.history("check", f"--expect={rule}")
        self.assertEqual(code, 0, out)
        rule = self.rules("codec/* bytes_per_second >= 0.99*context:rdma_speed_bytes")
        code, out, _ = self.history("check", f"--expect={rule}")
        self.assertEqual(code, 1, out)
        self.assertIn("expected >= 0.99 * context:rdma_speed_bytes = 1.2375e+10", out)

    def test_compare_expect_passes_and_fails_on_the_new_file(self):
        base = self.run_file(0, 0.95 * LINK, rdma_speed_bytes=str(int(LINK)))
        new = self.run_file(1, 0.95 * LINK, rdma_speed_bytes=str(int(LINK)))
        rules = self.rules("codec/* bytes_per_second >= 0.9 * context:rdma_speed_bytes\n"
                           "codec/* bytes_per_second >= 1e10\n")
        code, out, _ = self.compare(f"--expect={rules}", base, new)
        self.assertEqual(code, 0, out)
        self.assertIn("2 expect rule(s), 0 missed", out)
        json_out = os.path.join(self.dir.name, "cmp.json")
        code, out, _ = self.compare("--expect=" + self.rules("codec/* bytes_per_second >= 1.2e10\n"), base, new,
                                    f"--json-out={json_out}")
        self.assertEqual(code, 1, out)
        self.assertIn(f"OUT OF BOUND {CASE} [{new}] bytes_per_second", out)
        self.assertTrue(out.rstrip().endswith("1 expect bound(s) missed"), out)
        with open(json_out) as f:
            self.assertEqual(len(json.load(f)["gate"]["expect_failures"]), 1)

    def test_a_context_key_the_run_lacks_misses_and_a_bad_bound_is_exit_2(self):
        base, new = self.run_file(0, LINK), self.run_file(1, LINK)
        rules = self.rules("codec/* bytes_per_second >= 0.9 * context:rdma_speed_bytes\n")
        code, out, _ = self.compare(f"--expect={rules}", base, new)
        self.assertEqual(code, 1, out)
        self.assertIn("context:rdma_speed_bytes is absent in the run", out)
        new = self.run_file(2, LINK, rdma_speed_bytes="unknown")
        code, out, _ = self.compare("--expect=" + self.rules("codec/* bytes_per_second >= context:rdma_speed_bytes\n"),
                                    base, new)
        self.assertEqual(code, 1, out)
        self.assertIn("context:rdma_speed_bytes is 'unknown' in the run", out)
        code, _, err = self.compare("--expect=" + self.rules("codec/* bytes_per_second >= 0.9 * rdma_speed_bytes\n"),
                                    base, new)
        self.assertEqual(code, 2)
        self.assertIn("expect.txt:1: expected 'CASE_GLOB METRIC >= VALUE'", err)


if __name__ == "__main__":
    unittest.main()
