"""scripts/linkbed: namespaces made and always removed, byte-exact data across a shaped veth, and
the verdict flipping when the link is slow. Needs root and iproute2 (skips otherwise)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LINKBED = os.path.join(ROOT, "scripts", "linkbed")
sys.path.insert(0, os.path.join(ROOT, "plots"))

import linkbed  # noqa: E402


def namespaces():
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.startswith("wzlb-")]


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("tc"), "needs root and tc")
class Linkbed(unittest.TestCase):
    def test_shaped_link_flips_the_verdict_and_cleans_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "linkbed.json")
            result = subprocess.run([LINKBED, "--rates", "400mbit,unshaped", "--codecs", "bytegroup+huff",
                                     "--datasets", "weights", "--size", "8MiB", "--min-time", "0.05", "--out", out],
                                    capture_output=True, text=True, timeout=240)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out) as f:
                rows = linkbed.rows(json.load(f))
        self.assertEqual(namespaces(), [])
        self.assertEqual(len(rows), 2)
        shaped, unshaped = sorted(rows, key=lambda r: r["link"])
        self.assertTrue(shaped["verified"] and unshaped["verified"])  # byte-exact across the namespaces
        self.assertLess(shaped["link"], 0.06e9)                      # the shaper holds: 400 Mbit/s = 0.05 GB/s
        self.assertGreater(shaped["compressed"], shaped["raw"])       # slow link: compression pays
        self.assertLess(unshaped["compressed"], unshaped["predicted"] * 1.15)  # never beats the model

    def test_interrupted_run_leaves_no_namespace(self):
        run = subprocess.Popen([LINKBED, "--rates", "100mbit", "--datasets", "weights", "--size", "64MiB",
                                "--out", "/dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if namespaces():
                break
            time.sleep(0.1)
        self.assertTrue(namespaces())
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=30)
        self.assertEqual(namespaces(), [])

    def test_stale_namespaces_of_killed_runs_are_removed(self):
        subprocess.run(["ip", "netns", "add", "wzlb-999999-send"], check=True)  # no such pid: stale
        subprocess.run([LINKBED, "--cleanup"], check=True, timeout=30)
        self.assertEqual(namespaces(), [])

    def test_needs_root_and_says_so(self):
        if not shutil.which("setpriv"):
            self.skipTest("setpriv not available")
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", LINKBED],
                                capture_output=True, text=True, timeout=30)
        if "Permission denied" in result.stderr:
            self.skipTest("the unprivileged user cannot reach the checkout")
        self.assertEqual(result.returncode, 2)
        self.assertIn("needs root", result.stderr)


class Crossover(unittest.TestCase):
    def test_interpolates_where_compressed_meets_raw(self):
        series = [{"link": 1.0, "compressed": 1.5, "raw": 1.0}, {"link": 3.0, "compressed": 2.0, "raw": 3.0}]
        # difference +0.5 at 1.0, -1.0 at 3.0: zero a third of the way
        self.assertAlmostEqual(linkbed.crossover(series), 1.0 + 2.0 * 0.5 / 1.5)
        self.assertIsNone(linkbed.crossover(series[:1]))


if __name__ == "__main__":
    unittest.main()
