"""scripts/rdma-testbed stops its guest when it is stopped: a fake qemu on PATH (with a cached kernel
and initramfs, named by release so nothing is looked up, downloaded or built) stands in for the real one."""
import os
import signal
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TESTBED = os.path.join(ROOT, "scripts", "rdma-testbed")

# Writes its pid where the test can find it, then waits as a booting guest would.
FAKE_QEMU = """#!/bin/sh
echo $$ > "$FAKE_QEMU_PID"
exec sleep 300
"""


RELEASE = "6.1.0-50-amd64"  # named on the command line, so no apt lookup happens


def cache_kernel(cache):
    """A cached kernel and initramfs for RELEASE, newer than build-initramfs.sh: nothing is rebuilt."""
    kernel = os.path.join(cache, "kernels", RELEASE)
    os.makedirs(os.path.join(kernel, "kroot"))
    for cached in ("vmlinuz", "initramfs.cpio.gz"):
        open(os.path.join(kernel, cached), "w").close()


def running(pid):
    """Is pid a live process (not gone, not a zombie waiting for its parent)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(predicate, seconds):
    """Polls predicate until it holds or seconds pass; returns its last value."""
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def check_term_during_start(test, delays):
    """Sends TERM at each delay after the script starts (before a guest is forked, between its fork
    and the script reading its pid, or after): the script ends and no fake qemu outlives it (a forked
    child is found in the script's job table, not only by a pid it may not have read yet).
    test: a TestCase with start() (the script, running), pid_file and read_pids()."""
    for delay in delays:
        with test.subTest(delay=delay):
            if os.path.exists(test.pid_file):
                os.unlink(test.pid_file)
            testbed = test.start()
            time.sleep(delay)
            testbed.send_signal(signal.SIGTERM)
            _, stderr = testbed.communicate(timeout=60)
            test.assertIn(testbed.returncode, (143, -signal.SIGTERM), stderr)  # killed before its traps were set
            time.sleep(0.5)  # a guest left behind would have written its pid by now
            for pid in test.read_pids():
                test.addCleanup(lambda p=pid: running(p) and os.kill(p, signal.SIGKILL))
                test.assertTrue(wait_for(lambda: not running(pid), 10), f"qemu {pid} outlived the script")


class StopsQemu(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        bin_dir, self.cache = os.path.join(self.tmp, "bin"), os.path.join(self.tmp, "cache")
        os.makedirs(bin_dir)
        os.makedirs(self.cache)
        with open(os.path.join(bin_dir, "qemu-system-x86_64"), "w") as f:
            f.write(FAKE_QEMU)
        os.chmod(os.path.join(bin_dir, "qemu-system-x86_64"), 0o755)
        cache_kernel(self.cache)
        self.pid_file = os.path.join(self.tmp, "qemu.pid")
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", WIREZIP_TESTBED_DIR=self.cache,
                        FAKE_QEMU_PID=self.pid_file)

    def qemu_pid(self):
        with open(self.pid_file) as f:
            return int(f.read())

    def read_pids(self):
        return [self.qemu_pid()] if os.path.exists(self.pid_file) and os.path.getsize(self.pid_file) > 0 else []

    def start(self):
        testbed = subprocess.Popen([TESTBED, "--no-install", "--timeout=120", f"--kernel={RELEASE}", "--", "true"], env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.addCleanup(lambda: testbed.poll() is None and testbed.kill())
        return testbed

    def check_signal_stops_qemu(self, signum, status, group):
        """Starts the script in a session of its own and sends signum to it (group: to its whole
        process group, as a terminal's Ctrl-C does)."""
        testbed = self.start()
        started = lambda: os.path.exists(self.pid_file) and os.path.getsize(self.pid_file) > 0  # noqa: E731
        self.assertTrue(wait_for(started, 60), "the fake qemu never started")
        pid = self.qemu_pid()
        self.addCleanup(lambda: running(pid) and os.kill(pid, signal.SIGKILL))
        self.assertTrue(running(pid))
        if group:
            os.killpg(testbed.pid, signum)
        else:
            testbed.send_signal(signum)
        _, stderr = testbed.communicate(timeout=60)
        self.assertEqual(testbed.returncode, status, stderr)
        self.assertIn("qemu stopped", stderr)
        self.assertTrue(wait_for(lambda: not running(pid), 10), f"qemu {pid} outlived the script")

    def test_term_stops_qemu(self):
        self.check_signal_stops_qemu(signal.SIGTERM, 143, group=False)

    def test_term_at_any_moment_of_the_start_leaves_no_qemu(self):
        check_term_during_start(self, (0.0, 0.02, 0.05, 0.1, 0.2, 0.4))

    def test_ctrl_c_stops_qemu(self):
        self.check_signal_stops_qemu(signal.SIGINT, 130, group=True)

    def test_a_kernel_apt_does_not_know_is_a_usage_error(self):
        for args, expect in [(["--kernel=0.0-no-such"], "apt knows no such bookworm kernel"),
                             (["--hosts=2", "--kernel=6.1.0-50"], "--kernel is the one guest's")]:
            run = subprocess.run([TESTBED, "--no-install", *args, "--", "true"], env=self.env, capture_output=True,
                                 text=True, timeout=120)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn(expect, run.stderr)
            self.assertFalse(os.path.exists(self.pid_file), "a guest was started")


# Two-host mode: each fake guest appends its pid; the one given FAKE_FAIL_ROLE's command script
# prints what a guest whose rxe0 cannot be added prints, then waits like the other. It fails only
# once both pids are written (at most 60 s), as a real guest's setup fails only after both booted:
# otherwise a loaded host could run the script's cleanup before the other fake had started.
FAKE_QEMU_TWO = """#!/bin/sh
echo $$ >> "$FAKE_QEMU_PID"
case "$*" in *wzcmd=cmd-$FAKE_FAIL_ROLE.sh*)
  i=0; while [ "$(wc -l < "$FAKE_QEMU_PID")" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  echo "WZTB: root ready, uptime 1.0";
  echo "WZTB: setup failed: guest B: rdma link add rxe0 type rxe netdev eth0 failed";; esac
exec sleep 300
"""
class TwoHosts(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        bin_dir, self.cache = os.path.join(tmp.name, "bin"), os.path.join(tmp.name, "cache")
        os.makedirs(bin_dir)
        cache_kernel(self.cache)
        with open(os.path.join(bin_dir, "qemu-system-x86_64"), "w") as f:
            f.write(FAKE_QEMU_TWO)
        os.chmod(os.path.join(bin_dir, "qemu-system-x86_64"), 0o755)
        self.pid_file = os.path.join(tmp.name, "qemu.pids")
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", WIREZIP_TESTBED_DIR=self.cache,
                        FAKE_QEMU_PID=self.pid_file, FAKE_FAIL_ROLE="none")

    def start(self, *args):
        # --net=dgram: the fake qemu opens no TCP port for the other guest to connect to
        testbed = subprocess.Popen([TESTBED, "--hosts=2", "--no-install", "--net=dgram", f"--kernel-a={RELEASE}",
                                    f"--kernel-b={RELEASE}", *args, "--", "true"], env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.addCleanup(lambda: testbed.poll() is None and testbed.kill())
        return testbed

    def qemu_pids(self):
        self.assertTrue(wait_for(lambda: len(self.read_pids()) == 2, 60), "the two fake guests never started")
        pids = self.read_pids()
        for pid in pids:
            self.addCleanup(lambda p=pid: running(p) and os.kill(p, signal.SIGKILL))
        return pids

    def read_pids(self):
        if not os.path.exists(self.pid_file):
            return []
        with open(self.pid_file) as f:
            return [int(line) for line in f if line.strip()]

    def test_usage_errors(self):
        for args, expect in [(["--hosts=3"], "--hosts must be 1 or 2"), (["--kernel-b=6.1.0-50"], "needs --hosts=2"),
                             (["--hosts=2", "--mtu=100"], "--mtu must be 576..9000"),
                             (["--hosts=2", "--iommu=c"], "usage")]:
            result = subprocess.run([TESTBED, "--no-install", *args, "--", "true"], env=self.env,
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(expect, result.stderr)

    def test_term_stops_both_guests(self):
        testbed = self.start()
        pids = self.qemu_pids()
        testbed.send_signal(signal.SIGTERM)
        _, stderr = testbed.communicate(timeout=60)
        self.assertEqual(testbed.returncode, 143, stderr)
        self.assertIn("both guests stopped", stderr)
        for pid in pids:
            self.assertTrue(wait_for(lambda: not running(pid), 10), f"qemu {pid} outlived the script")

    def test_term_at_any_moment_of_the_start_leaves_no_guest(self):
        check_term_during_start(self, (0.0, 0.05, 0.1, 0.2, 0.3, 0.5))

    def test_a_guest_whose_setup_fails_is_named_and_both_are_stopped(self):
        self.env["FAKE_FAIL_ROLE"] = "b"
        testbed = self.start()
        pids = self.qemu_pids()
        _, stderr = testbed.communicate(timeout=60)
        self.assertEqual(testbed.returncode, 125, stderr)
        self.assertIn("guest B: rdma link add rxe0 type rxe netdev eth0 failed", stderr)
        for pid in pids:
            self.assertTrue(wait_for(lambda: not running(pid), 10), f"qemu {pid} outlived the script")

    def test_cleanup_stops_the_guests_of_a_killed_run(self):
        testbed = self.start()
        pids = self.qemu_pids()
        testbed.kill()  # SIGKILL: no trap runs, the guests stay (and its log viewers keep stderr open)
        testbed.wait(timeout=30)
        testbed.stderr.close()
        self.assertTrue(all(running(pid) for pid in pids))
        result = subprocess.run([TESTBED, "--cleanup"], env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("stopped qemu process group", result.stderr)
        for pid in pids:
            self.assertTrue(wait_for(lambda: not running(pid), 10), f"qemu {pid} outlived --cleanup")


if __name__ == "__main__":
    unittest.main()
