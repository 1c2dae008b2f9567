"""scripts/real-weights on small models the test writes: an ncnn .param/.bin pair (float16 and float32
weights, a bias, a PReLU) and a float32 safetensors file. Checks the tensors, the conversions
(bf16 rounded to nearest even, the model's own type unchanged) and one clear line for bad input."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "real-weights")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import real_weights  # noqa: E402

PARAM = """7767517
6 6
Input            data     0 1 data
Convolution      conv     1 1 data c 0=2 1=1 5=1 6=6
InnerProduct     fc       1 1 c f 0=2 2=4
PReLU            act      1 1 f g 0=3
Scale            gate     2 1 g c out 0=-233
BatchNorm        norm     1 1 out n 0=1
"""


def ncnn_bin(conv, bias, fc, slope, tag=real_weights.FP16_TAG):
    data = struct.pack("<I", tag) + np.asarray(conv, np.float16).tobytes()
    data += b"\0" * (-len(data) % 4)  # ncnn pads float16 weights to 4 bytes
    data += np.asarray(bias, np.float32).tobytes()
    data += struct.pack("<I", real_weights.FP32_TAG) + np.asarray(fc, np.float32).tobytes()
    # A two-input Scale loads nothing; the BatchNorm's slope, mean, var and bias: one channel each.
    return data + np.asarray(slope, np.float32).tobytes() + np.asarray([2.0, 0.5, 1.5, -1.0], np.float32).tobytes()


def run(*args):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)


class RealWeights(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.conv = [0.5, -0.25, 1.5, 0.001, -3.0, 0.0]
        self.bias, self.fc, self.slope = [0.1, -0.2], [1.0, 2.0, -1.0 / 3, 7.0], [0.25, 0.25, 0.5]

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write_ncnn(self, data, param=PARAM):
        with open(self.path("m.param"), "wb") as f:
            f.write(param if isinstance(param, bytes) else param.encode())
        with open(self.path("m.bin"), "wb") as f:
            f.write(data)
        return self.path("m.bin")

    def test_ncnn_model_in_three_types(self):
        model = self.write_ncnn(ncnn_bin(self.conv, self.bias, self.fc, self.slope))
        result = run(self.path("out"), model)
        self.assertEqual(result.returncode, 0, result.stderr)
        want = [("conv.weight", self.conv), ("conv.bias", self.bias), ("fc.weight", self.fc), ("act.slope", self.slope),
                ("norm.slope", [2.0]), ("norm.mean", [0.5]), ("norm.var", [1.5]), ("norm.bias", [-1.0])]
        for suffix in ("bf16", "fp16", "fp32"):
            got = real_weights.read_safetensors(self.path(f"out/m.{suffix}.safetensors"))
            self.assertEqual([name for name, _ in got], [name for name, _ in want])
            for (name, values), (_, expected) in zip(got, want):
                expected = np.asarray(expected, np.float16 if name == "conv.weight" else np.float32).astype(np.float32)
                if suffix == "bf16":
                    expected = real_weights.from_bf16_bits(real_weights.to_bf16_bits(expected))
                if suffix == "fp16":
                    expected = expected.astype(np.float16).astype(np.float32)
                np.testing.assert_array_equal(values, expected, err_msg=f"{suffix} {name}")
        # The model's own float16 weights are the same bytes.
        with open(self.path("out/m.fp16.safetensors"), "rb") as f:
            data = f.read()
        (length,) = struct.unpack_from("<Q", data)
        begin, end = json.loads(data[8 : 8 + length])["conv.weight"]["data_offsets"]
        self.assertEqual(data[8 + length + begin : 8 + length + end], np.asarray(self.conv, np.float16).tobytes())

    def test_bf16_rounds_to_nearest_even(self):
        values = np.array([1 + 2**-8, 1 + 2**-8 + 2**-16, 1 + 3 * 2**-8, -2.0, np.nan, np.inf], np.float32)
        bits = real_weights.to_bf16_bits(values)
        self.assertEqual(list(bits[:4]), [0x3F80, 0x3F81, 0x3F82, 0xC000])  # ties go to the even one
        self.assertEqual(bits[4] & 0x7FC0, 0x7FC0)  # still a NaN
        self.assertEqual(bits[5], 0x7F80)

    def test_safetensors_model(self):
        values = np.linspace(-1, 1, 10, dtype=np.float32)
        header = json.dumps({"b": {"dtype": "F32", "shape": [4], "data_offsets": [24, 40]},
                             "a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}).encode()
        with open(self.path("s.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header + values.tobytes())
        result = run(self.path("out"), self.path("s.safetensors"))
        self.assertEqual(result.returncode, 0, result.stderr)
        got = real_weights.read_safetensors(self.path("out/s.fp32.safetensors"))
        self.assertEqual([name for name, _ in got], ["a", "b"])  # data order, not header order
        np.testing.assert_array_equal(np.concatenate([v for _, v in got]), values)

    def test_bad_models_end_with_one_line(self):
        good = ncnn_bin(self.conv, self.bias, self.fc, self.slope)
        cases = [
            ("no param", lambda: self.path("none.bin"), "none.param"),
            ("short bin", lambda: self.write_ncnn(good[:-4]), "norm.bias: 1 weights run past the end"),
            ("long bin", lambda: self.write_ncnn(good + b"\0" * 4), "size: the layers load"),
            ("odd tag", lambda: self.write_ncnn(ncnn_bin(self.conv, self.bias, self.fc, self.slope, tag=7)), "tag 0x7"),
            ("no sizes", lambda: self.write_ncnn(good, PARAM.replace(" 6=6", "")), "conv: a Convolution layer"),
            ("not param", lambda: self.write_ncnn(good, "hello\n"), "magic"),
            ("other file", lambda: self.path("m.txt"), "neither a .safetensors file"),
        ]
        for what, make, message in cases:
            with self.subTest(what):
                result = run(self.path("out"), make())
                self.assertEqual(result.returncode, 2)
                self.assertEqual(len(result.stderr.strip().split("\n")), 1, result.stderr)
                self.assertIn(message, result.stderr)
        header = json.dumps({"x": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}}).encode()
        with open(self.path("i.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header + b"\0" * 4)
        result = run(self.path("out"), self.path("i.safetensors"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("x: dtype I32", result.stderr)

    def test_hostile_headers_and_names(self):
        def safetensors(header_bytes):
            with open(self.path("h.safetensors"), "wb") as f:
                f.write(struct.pack("<Q", len(header_bytes)) + header_bytes + b"\0" * 8)
            return self.path("h.safetensors")

        good = ncnn_bin(self.conv, self.bias, self.fc, self.slope)
        cases = [
            ("list header", lambda: safetensors(b"[]"), "header: not a JSON object"),
            ("deep header", lambda: safetensors(b"[" * 100000), "header: not JSON"),
            ("entry not object", lambda: safetensors(b'{"t": 1}'), "t: dtype None"),
            ("one offset", lambda: safetensors(b'{"t": {"dtype": "F32", "data_offsets": [0]}}'), "t: data_offsets [0]"),
            ("float offsets", lambda: safetensors(b'{"t": {"dtype": "F32", "data_offsets": [0.0, 4.0]}}'),
             "is not two integers"),
            ("text offsets", lambda: safetensors(b'{"t": {"dtype": "F32", "data_offsets": ["0", "4"]}}'),
             "is not two integers"),
            ("binary param", lambda: self.write_ncnn(good, b"7767517\n\xff\xfe\n"), "text: not UTF-8"),
            ("same layer name", lambda: self.write_ncnn(good, PARAM.replace("fc       1 1", "conv     1 1")),
             "conv.weight: two tensors"),
            ("unread weights", lambda: self.write_ncnn(good, PARAM.replace("PReLU            act", "Embed            act")),
             "act: a Embed layer"),
        ]
        for what, make, message in cases:
            with self.subTest(what):
                result = run(self.path("out"), make())
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().split("\n")), 1, result.stderr)
                self.assertIn(message, result.stderr)
        # Two models that would write the same files.
        model = self.write_ncnn(good)
        os.makedirs(self.path("b"))
        result = run(self.path("out"), model, os.path.join(self.path("b"), "m.safetensors"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("writes m.*.safetensors", result.stderr)

    def test_usage(self):
        self.assertEqual(run().returncode, 2)
        result = run("--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("ncnn", result.stdout)


if __name__ == "__main__":
    unittest.main()
