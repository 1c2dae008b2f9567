"""build/bin/wirezip's outputs and inputs, handled as zstd and lz4 handle theirs: an existing file or
symbolic link is replaced only with --force (keeping mode, owner and hard links), devices and FIFOs
are written straight and stay what they are, every write is checked (/dev/full), a signal leaves no
temporary file, named inputs that are not regular files are refused without waiting, and
--max-output refuses a file that declares more output than the cap. Device nodes are replicas made
with os.mknod in a temporary directory: the real /dev/null and /dev/full are never an OUT here."""
import os
import signal
import stat
import subprocess
import threading
import time
import unittest

from test_wirezip_cli import CliTest, WIREZIP, run


class Outputs(CliTest):
    def setUp(self):
        super().setUp()
        self.packed = self.compress()

    def write(self, name, content=b"old bytes"):
        with open(self.path(name), "wb") as f:
            f.write(content)
        return self.path(name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def assert_no_temporary(self):
        self.assertEqual([n for n in os.listdir(self.dir) if ".wirezip-" in n], [])

    def device(self, name, major, minor):
        try:
            os.mknod(self.path(name), 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        except PermissionError:
            self.skipTest("creating a device node is not permitted here")
        os.chmod(self.path(name), 0o666)  # what the umask took
        return self.path(name)

    def test_an_existing_output_is_refused_without_force(self):
        for args in [["decompress", self.packed], ["compress", self.src],
                     ["inspect", "--extract-plane=1", self.packed]]:
            with self.subTest(args=args):
                out = self.write("old.bin")
                line = self.one_line_failure(run(*args, out))
                self.assertEqual(line, f"wirezip: '{out}' exists; use -f/--force to replace it")
                self.assertEqual(self.read("old.bin"), b"old bytes")
                self.assert_no_temporary()

    def test_force_replaces_a_file_keeping_its_mode_and_owner(self):
        for flag in ["-f", "--force"]:
            with self.subTest(flag=flag):
                out = self.write("old.bin")
                os.chmod(out, 0o600)
                owner = (4321, 8765) if os.geteuid() == 0 else (os.getuid(), os.getgid())
                os.chown(out, *owner)
                self.ok("decompress", flag, self.packed, out)
                self.assertEqual(self.read("old.bin"), self.data)
                info = os.stat(out)
                self.assertEqual((stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid), (0o600, *owner))
                self.assert_no_temporary()

    def test_a_symbolic_link_is_refused_without_force_and_its_target_written_with_it(self):
        target = self.write("target.bin")
        os.chmod(target, 0o640)
        link = self.path("link.bin")
        os.symlink("target.bin", link)
        line = self.one_line_failure(run("decompress", self.packed, link))
        self.assertIn("is a symbolic link; use -f/--force to write to its target", line)
        self.assertEqual(self.read("target.bin"), b"old bytes")
        self.ok("decompress", "--force", self.packed, link)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(self.read("target.bin"), self.data)
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o640)
        self.assert_no_temporary()

    def test_a_file_with_hard_links_is_rewritten_in_place(self):
        first = self.write("first.bin")
        os.link(first, self.path("second.bin"))
        self.assertIn("exists", self.one_line_failure(run("decompress", self.packed, first)))
        self.ok("decompress", "-f", self.packed, first)
        self.assertEqual(self.read("second.bin"), self.data)  # the other name sees the new bytes
        self.assertEqual(os.stat(first).st_ino, os.stat(self.path("second.bin")).st_ino)
        self.assertEqual(os.stat(first).st_nlink, 2)
        self.assert_no_temporary()

    def test_the_input_itself_is_refused_as_output(self):
        line = self.one_line_failure(run("decompress", "-f", self.packed, self.packed))
        self.assertIn("is the input file", line)
        self.ok("decompress", self.packed, "-")  # still intact

    def test_stdin_redirected_from_the_output_is_refused_even_with_hard_links(self):
        # A file with another link is rewritten in place (truncated first): were it also stdin,
        # its bytes would be gone before they were read.
        os.link(self.src, self.path("other.bin"))
        with open(self.src, "rb") as stdin:
            result = subprocess.run([WIREZIP, "compress", "-f", "-", self.src], stdin=stdin,
                                    capture_output=True, timeout=120)
        self.assertIn("is the input file", self.one_line_failure(result))
        self.assertEqual(self.read(os.path.basename(self.src)), self.data)

    def test_a_null_device_is_written_straight_and_stays_a_device(self):
        null = self.device("null", 1, 3)
        before = os.stat(null)
        self.assertEqual(self.ok("decompress", self.packed, null), b"")  # no --force needed
        self.ok("compress", self.src, null)
        after = os.stat(null)
        self.assertTrue(stat.S_ISCHR(after.st_mode))
        self.assertEqual((after.st_ino, after.st_rdev, stat.S_IMODE(after.st_mode)),
                         (before.st_ino, before.st_rdev, 0o666))
        self.assert_no_temporary()

    def test_a_user_who_may_not_write_the_directory_can_still_write_a_device(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to run the command as another user")
        null = self.device("null", 1, 3)
        os.chmod(self.dir, 0o755)  # readable by nobody, not writable: no temporary file can go beside
        os.chmod(self.packed, 0o644)
        result = subprocess.run([WIREZIP, "decompress", self.packed, null], capture_output=True, timeout=60,
                                user=65534, group=65534, extra_groups=[])
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode))

    def test_a_fifo_is_written_straight(self):
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        received = []
        reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
        reader.start()
        self.ok("decompress", self.packed, fifo)
        reader.join(timeout=60)
        self.assertEqual(received, [self.data])
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_a_full_device_is_an_error_on_a_path_and_on_stdout(self):
        with open("/dev/full", "wb") as full:  # the shell's redirection: the device itself is not at stake
            for args in [["inspect", self.packed], ["inspect", "--json", self.packed],
                         ["decompress", self.packed, "-"], ["compress", self.src, "-"]]:
                with self.subTest(args=args):
                    result = subprocess.run([WIREZIP, *args], stdout=full, stderr=subprocess.PIPE, timeout=60)
                    self.assertIn("No space left on device", self.one_line_failure(result))
        full = self.device("full", 1, 7)
        line = self.one_line_failure(run("decompress", self.packed, full))
        self.assertEqual(line, f"wirezip: writing '{full}' failed: No space left on device")
        self.assertTrue(stat.S_ISCHR(os.stat(full).st_mode))

    def test_a_signal_leaves_no_temporary_file(self):
        with open(self.packed, "rb") as f:
            head = f.read(1000)  # the header and part of the first frame: the command waits for the rest
        for sig in [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]:
            with self.subTest(signal=sig):
                out = self.path("out.bin")
                process = subprocess.Popen([WIREZIP, "decompress", "-", out], stdin=subprocess.PIPE,
                                           stderr=subprocess.PIPE)
                process.stdin.write(head)
                process.stdin.flush()
                deadline = time.monotonic() + 30
                while not [n for n in os.listdir(self.dir) if ".wirezip-" in n]:  # it made its temporary file
                    self.assertLess(time.monotonic(), deadline, "no temporary file appeared")
                    time.sleep(0.01)
                process.send_signal(sig)
                self.assertEqual(process.wait(timeout=30), -sig)
                process.stdin.close()
                process.stderr.close()
                self.assert_no_temporary()
                self.assertFalse(os.path.exists(out))

    def test_a_signal_while_waiting_for_a_fifo_reader(self):
        # No temporary file is ever made for a FIFO: the command waits in open() for a reader.
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        process = subprocess.Popen([WIREZIP, "decompress", self.packed, fifo], stderr=subprocess.PIPE)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(timeout=30), -signal.SIGTERM)
        process.stderr.close()
        self.assert_no_temporary()
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))


class Inputs(CliTest):
    def test_a_named_input_that_is_not_a_regular_file_is_refused_without_waiting(self):
        fifo = self.path("in.fifo")
        os.mkfifo(fifo)
        for args in [["decompress", fifo, "-"], ["compress", fifo, "-"], ["inspect", fifo],
                     ["inspect", "--extract-plane=0", fifo, "-"]]:
            with self.subTest(args=args):
                line = self.one_line_failure(run(*args))
                self.assertEqual(line, f"wirezip: '{fifo}' is a FIFO, not a regular file (use - to read a stream "
                                       "from stdin)")
        self.assertIn("is a directory, not a regular file", self.one_line_failure(run("inspect", self.dir)))


class MaxOutput(CliTest):
    def setUp(self):
        super().setUp()
        with open(self.src, "wb") as f:
            f.write(bytes(8 << 20))  # 8 frames of 1 MiB, each a few bytes compressed
        self.packed = self.compress("bytegroup+deflate", "1MiB")
        self.out = self.path("out.bin")

    def test_a_file_declaring_more_than_the_cap_is_refused(self):
        line = self.one_line_failure(run("decompress", "--max-output=4MiB", self.packed, self.out))
        self.assertEqual(line, f"wirezip: {self.packed}: frame 4: original size 1048576 takes the output past "
                               "--max-output of 4194304 bytes (4194304 before this frame)")
        self.assertFalse(os.path.exists(self.out))
        self.assertEqual(self.ok("decompress", "--max-output=8MiB", self.packed, "-"), bytes(8 << 20))

    def test_extracted_planes_are_capped_too(self):
        # A constant plane stores one byte per frame: 8 bytes in all.
        line = self.one_line_failure(run("inspect", "--max-output=5", "--extract-plane=1", self.packed, self.out))
        self.assertIn("frame 5: plane 1 of 1 bytes takes the output past --max-output of 5 bytes", line)
        self.assertEqual(len(self.ok("inspect", "--max-output=8", "--extract-plane=1", self.packed, "-")), 8)

    def test_the_default_is_in_help_and_bad_values_are_usage_errors(self):
        help_text = self.ok("decompress", "--help").decode()
        self.assertRegex(help_text, r"--max-output.*RAM/4, at most 8GiB; here \d+")
        self.assertIn("--force", help_text)
        for value in ["0", "-1", "lots"]:
            with self.subTest(value=value):
                self.assertIn("--max-output", self.one_line_failure(
                    run("decompress", f"--max-output={value}", self.packed, "-"), status=2))


if __name__ == "__main__":
    unittest.main()
