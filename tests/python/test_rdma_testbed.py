"""scripts/rdma-testbed stops its guest when it is stopped: a fake qemu on PATH (with a cached kernel
and initramfs, so nothing is downloaded or built) stands in for the real one."""
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
        for cached in ("vmlinuz", "initramfs.cpio.gz"):  # newer than build-initramfs.sh: nothing is rebuilt
            open(os.path.join(self.cache, cached), "w").close()
        self.pid_file = os.path.join(self.tmp, "qemu.pid")
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", WIREZIP_TESTBED_DIR=self.cache,
                        FAKE_QEMU_PID=self.pid_file)

    def qemu_pid(self):
        with open(self.pid_file) as f:
            return int(f.read())

    def check_signal_stops_qemu(self, signum, status, group):
        """Starts the script in a session of its own and sends signum to it (group: to its whole
        process group, as a terminal's Ctrl-C does)."""
        testbed = subprocess.Popen([TESTBED, "--no-install", "--timeout=120", "--", "true"], env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.addCleanup(lambda: testbed.poll() is None and testbed.kill())
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

    def test_ctrl_c_stops_qemu(self):
        self.check_signal_stops_qemu(signal.SIGINT, 130, group=True)


if __name__ == "__main__":
    unittest.main()
