"""build/bin/wirezip: round trips through files and pipes, inspect's fields, extracted planes that
Python's zlib decodes, and bad input that ends in one line, exit status 1 and no output file."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

from bench_process import binary

WIREZIP = binary("wirezip")


def weights(n_bytes, seed=1):
    """bf16-like bytes: a narrow exponent range in the high byte, noisy low bytes; odd sizes allowed."""
    rng = random.Random(seed)
    elements = [(0x3c00 + int(rng.gauss(0, 60))) & 0xFFFF for _ in range(n_bytes // 2 + 1)]
    return struct.pack(f"<{len(elements)}H", *elements)[:n_bytes]


def run(*args, data=None):
    return subprocess.run([WIREZIP, *args], input=data, capture_output=True, timeout=120)


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.data = weights(300_001)
        self.src = self.path("in.bin")
        with open(self.src, "wb") as f:
            f.write(self.data)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def ok(self, *args, data=None):
        result = run(*args, data=data)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        return result.stdout

    def compress(self, codec="bytegroup+deflate", chunk="64KiB"):
        out = self.path("in.wz")
        self.ok("compress", "--force", f"--codec={codec}", f"--chunk={chunk}", self.src, out)
        return out

    def one_line_failure(self, result, status=1):
        self.assertEqual(result.returncode, status, result.stderr.decode())
        lines = result.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("wirezip: "), lines[0])
        return lines[0]


class RoundTrips(CliTest):
    def test_files_for_every_kind_of_codec_and_chunk(self):
        for codec in ["bytegroup+deflate", "bytegroup+huff", "bytegroup+lz4", "lz4", "memcpy",
                      "bytegroup:width=4+deflate", "zstd:level=1"]:
            for chunk in ["64KiB", "1MiB", "100000"]:
                with self.subTest(codec=codec, chunk=chunk):
                    packed = self.compress(codec, chunk)
                    self.ok("decompress", "-f", packed, self.path("out.bin"))
                    with open(self.path("out.bin"), "rb") as f:
                        self.assertEqual(f.read(), self.data)

    def test_stdin_and_stdout_with_every_inflater(self):
        packed = self.ok("compress", "--codec=bytegroup+deflate", "--chunk=32KiB", "-", "-", data=self.data)
        for decoder in ["isal", "libdeflate", "zlib"]:
            with self.subTest(decoder=decoder):
                self.assertEqual(self.ok("decompress", f"--decoder={decoder}", "-", "-", data=packed), self.data)
        with open(self.path("piped.wz"), "wb") as f:
            f.write(packed)
        self.assertEqual(self.ok("decompress", self.path("piped.wz"), "-"), self.data)

    def test_empty_input(self):
        packed = self.ok("compress", "-", "-", data=b"")
        self.assertEqual(self.ok("decompress", "-", "-", data=packed), b"")
        report = json.loads(self.ok("inspect", "--json", "-", data=packed))
        self.assertEqual((report["frame_count"], report["original_bytes"]), (0, 0))


class Inspect(CliTest):
    def test_json_fields_describe_every_frame(self):
        packed = self.compress("bytegroup+deflate", "64KiB")
        report = json.loads(self.ok("inspect", "--json", packed))
        self.assertEqual(report["container_version"], 1)
        self.assertEqual(report["codec"], "bytegroup+deflate")
        self.assertEqual(report["chunk_bytes"], 65536)
        self.assertEqual(report["frame_count"], -(-len(self.data) // 65536))
        self.assertEqual(report["original_bytes"], len(self.data))
        self.assertEqual(report["frame_bytes"], sum(f["frame_bytes"] for f in report["frames"]))
        for i, frame in enumerate(report["frames"]):
            size = min(65536, len(self.data) - i * 65536)
            self.assertEqual((frame["version"], frame["coder"], frame["width"]), (4, "deflate", 2))
            self.assertEqual((frame["original_bytes"], frame["tail_bytes"]), (size, size % 2))
            self.assertRegex(frame["checksum"], r"^[0-9a-f]{16}$")
            self.assertEqual([p["mode"] for p in frame["planes"]][1], "coded")  # the high bytes
            planes = sum(p["stored_bytes"] for p in frame["planes"])
            self.assertEqual(frame["frame_bytes"], 24 + 5 * 2 + planes + frame["tail_bytes"])
            self.assertEqual(frame["planes"][0]["offset"], 34)

    def test_text_names_the_same_fields(self):
        text = self.ok("inspect", self.compress("bytegroup+lz4", "1MiB")).decode()
        self.assertTrue(text.startswith("container version 1, codec bytegroup+lz4, chunk 1048576 bytes\n"), text)
        self.assertRegex(text, r"\n1 frames, 300001 original bytes in \d+ frame bytes\n$")
        self.assertRegex(text, r"frame 0: version 4, coder lz4, width 2, 300001 original bytes \(1 tail\), "
                               r"\d+ frame bytes, xxh3 [0-9a-f]{16}")
        self.assertRegex(text, r"  plane 1: coded, \d+ bytes")

    def test_memory_stays_flat_however_many_frames(self):
        # 200 000 one-byte frames: each is printed as it is read, none is kept.
        with open(self.src, "wb") as f:
            f.write(bytes(range(256)) * 782)
        packed = self.compress("memcpy", "1")
        measure = ("import resource, subprocess, sys\n"
                   "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, timeout=120)\n"
                   "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        for args in (["inspect", packed], ["inspect", "--json", packed]):
            result = subprocess.run([sys.executable, "-c", measure, WIREZIP, *args], capture_output=True,
                                    timeout=180, check=True)
            status, peak_kib = map(int, result.stdout.split())
            self.assertEqual(status, 0, args)
            self.assertLess(peak_kib, 32 << 10, args)  # a kept record per frame took ~1 KB each

    def test_constant_planes_cost_one_byte(self):
        with open(self.src, "wb") as f:
            f.write(bytes(1 << 20))
        report = json.loads(self.ok("inspect", "--json", self.compress("bytegroup+deflate", "1MiB")))
        frame = report["frames"][0]
        self.assertEqual([p["mode"] for p in frame["planes"]], ["constant", "constant"])
        self.assertEqual(frame["frame_bytes"], 24 + 10 + 2)

    def test_extracted_plane_is_raw_deflate_that_python_zlib_decodes(self):
        packed = self.compress("bytegroup+deflate", "64KiB")
        report = json.loads(self.ok("inspect", "--json", packed))
        extracted = self.path("plane1.bin")
        self.ok("inspect", "--extract-plane=1", packed, extracted)
        with open(extracted, "rb") as f:
            streams = f.read()
        self.assertEqual(len(streams), sum(frame["planes"][1]["stored_bytes"] for frame in report["frames"]))
        at, restored = 0, b""
        for frame in report["frames"]:
            size = frame["planes"][1]["stored_bytes"]
            self.assertEqual(frame["planes"][1]["mode"], "coded")
            restored += zlib.decompress(streams[at:at + size], -15)  # one whole raw DEFLATE stream each
            at += size
        whole = len(self.data) // 2 * 2
        self.assertEqual(restored, self.data[1:whole:2])
        # Each stream also ends itself: a decoder walking the concatenation finds the same planes.
        walked, rest = b"", streams
        while rest:
            d = zlib.decompressobj(-15)
            walked += d.decompress(rest)
            self.assertTrue(d.eof)
            rest = d.unused_data
        self.assertEqual(walked, restored)


class BadInput(CliTest):
    def assert_no_output(self, out):
        self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.bin", "in.wz"], "a temporary file was left behind")

    def test_truncated_files_fail_with_one_line_and_no_output(self):
        packed = self.compress("bytegroup+deflate", "64KiB")
        with open(packed, "rb") as f:
            whole = f.read()
        out = self.path("out.bin")
        for cut in [0, 5, 20, 60, 70_000, len(whole) // 2, len(whole) - 17, len(whole) - 1]:
            with self.subTest(cut=cut):
                with open(packed, "wb") as f:
                    f.write(whole[:cut])
                line = self.one_line_failure(run("decompress", packed, out))
                self.assertIn("in.wz", line)
                self.assert_no_output(out)
                self.one_line_failure(run("inspect", packed))
                self.one_line_failure(run("inspect", "--extract-plane=1", packed, out))
                self.assert_no_output(out)

    def test_a_corrupt_frame_fails_and_an_existing_output_is_kept(self):
        packed = self.compress("bytegroup+deflate", "64KiB")
        with open(packed, "r+b") as f:
            f.seek(200)
            byte = f.read(1)
            f.seek(200)
            f.write(bytes([byte[0] ^ 0x40]))
        out = self.path("old.bin")
        with open(out, "wb") as f:
            f.write(b"keep me")
        self.assertIn("frame 0", self.one_line_failure(run("decompress", "--force", packed, out)))
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"keep me")
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.bin", "in.wz", "old.bin"])

    def test_not_a_wirezip_file(self):
        self.assertIn("bad magic", self.one_line_failure(run("inspect", self.src)))
        self.assertIn("cannot open", self.one_line_failure(run("inspect", self.path("missing.wz"))))

    def test_bad_usage_is_status_2(self):
        for args in [[], ["compress", "--chunk=0", self.src, "x"], ["compress", "--codec=lz5", self.src, "x"],
                     ["compress", "--codec=blosc:shuffle+lz4", self.src, "x"], ["inspect", "--extract-plane=1", "f"],
                     ["inspect", "--extract-plane=99", "f", "o"], ["frobnicate"]]:
            with self.subTest(args=args):
                self.one_line_failure(run(*args), status=2)
        self.assertFalse(os.path.exists("x"))

    def test_a_decoder_that_cannot_decode_the_file(self):
        packed = self.compress("bytegroup+lz4", "64KiB")
        self.assertIn("valid: lz4", self.one_line_failure(run("decompress", "--decoder=zlib", packed, "-")))


if __name__ == "__main__":
    unittest.main()
