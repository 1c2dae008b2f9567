"""bench_codec --per-tensor on a safetensors file the test writes (24 tensors of F32, F16 and BF16,
among them an all-zero one, a constant one and a random one), and the report's per-tensor table and
histogram. Checks records and their consistency, never timings."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from bench_process import binary, one_line_error
from many_tensors import write_many_tensors

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))
import per_tensor  # noqa: E402

BENCH = binary("bench_codec")
CODECS = ["bytegroup+huff", "bytegroup+deflate"]


def tensors():
    """name -> (dtype, shape, little-endian bytes), in file order."""
    rng = np.random.default_rng(3)
    out = {}
    for layer in range(5):
        for name, shape, std in [("q_proj", (64, 256), 0.02), ("o_proj", (256, 64), 0.02), ("mlp", (128, 256), 0.01)]:
            values = (rng.standard_normal(shape) * std).astype(np.float32)
            dtype = ["F32", "F16", "BF16"][(layer + len(out)) % 3]
            out[f"layers.{layer}.{name}.weight"] = (dtype, shape, encode(values, dtype))
        out[f"layers.{layer}.norm.weight"] = ("BF16", (256,), encode(np.ones(256, np.float32), "BF16"))
    out["zeros.bias"] = ("F32", (256, 256), encode(np.zeros((256, 256), np.float32), "F32"))
    out["lm_head.weight"] = ("BF16", (512, 256), encode((rng.standard_normal((512, 256)) * 0.02).astype(np.float32), "BF16"))
    out["random.bits"] = ("BF16", (64, 64), rng.integers(0, 1 << 16, 64 * 64, dtype=np.uint16).astype("<u2").tobytes())
    out["scalar.step"] = ("F32", (), encode(np.array(3.0, np.float32), "F32"))
    return out


def encode(values, dtype):
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    return (values.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()  # bf16 by truncation


def write_safetensors(path, items):
    header, data, offset = {}, b"", 0
    for name, (dtype, shape, raw) in items.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + data)


class PerTensor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.items = tensors()
        cls.model = os.path.join(cls.tmp.name, "model.safetensors")
        write_safetensors(cls.model, cls.items)
        cls.out = os.path.join(cls.tmp.name, "per_tensor.json")
        result = subprocess.run([BENCH, "--per-tensor", f"--per-tensor-out={cls.out}", f"--codecs={','.join(CODECS)}",
                                 f"--datasets=safetensors:{cls.model}", "--chunks=16KiB"],
                                capture_output=True, text=True, timeout=300)
        cls.result = result
        with open(cls.out) as f:
            cls.report = json.load(f)
        cls.records = {r["name"]: r for r in cls.report["tensors"]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_one_record_per_tensor_with_its_fields(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertGreaterEqual(len(self.items), 20)
        self.assertEqual(list(self.records), list(self.items))  # file order, every tensor once
        for name, (dtype, shape, _) in self.items.items():
            r = self.records[name]
            elements = int(np.prod(shape))
            self.assertEqual((r["dtype"], r["shape"], r["elements"], r["bf16_bytes"], r["chunk"]),
                             (dtype, list(shape), elements, 2 * elements, 16384))
            self.assertEqual(sorted(r["codecs"]), sorted(CODECS))
            for codec in CODECS:
                self.assertGreater(r["codecs"][codec]["compressed_bytes"], 0)
                self.assertAlmostEqual(r["codecs"][codec]["ratio"], 2 * elements / r["codecs"][codec]["compressed_bytes"])
            self.assertIn("entropy_bound_ratio", r)
            self.assertIn("entropy_bound_ratio_bytes", r)
        self.assertIn("dataset_sha256:safetensors:" + self.model, self.report["context"])
        self.assertIn("--per-tensor", self.report["context"]["argv"])

    def test_constant_tensors_cost_a_few_bytes_and_random_ones_do_not_shrink(self):
        for name in ["zeros.bias", "layers.0.norm.weight"]:
            r = self.records[name]
            self.assertIsNone(r["entropy_bound_ratio"], name)  # zero entropy: an infinite bound
            for codec in CODECS:
                chunks = -(-r["bf16_bytes"] // 16384)
                self.assertEqual(r["codecs"][codec]["compressed_bytes"], chunks * (24 + 10 + 2), (name, codec))
        random_bits = self.records["random.bits"]
        for codec in CODECS:
            self.assertLess(random_bits["codecs"][codec]["ratio"], 1.0)  # stored raw, the frame header on top
        for codec in CODECS:  # deflate's ratio is huff's within 1% on every weight matrix
            weight = self.records["lm_head.weight"]["codecs"][codec]["ratio"]
            self.assertGreater(weight, 1.2, codec)
        huff = self.records["lm_head.weight"]["codecs"]["bytegroup+huff"]["ratio"]
        deflate = self.records["lm_head.weight"]["codecs"]["bytegroup+deflate"]["ratio"]
        self.assertGreater(deflate, huff * 0.99)

    def test_report_tables_and_histogram(self):
        with tempfile.TemporaryDirectory() as results:
            with open(os.path.join(results, "per_tensor.json"), "w") as f:
                json.dump(self.report, f)
            result = subprocess.run([os.path.join(ROOT, "scripts", "report"), results], capture_output=True,
                                    text=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(results, "per_tensor.md")) as f:
                text = f.read()
            with open(os.path.join(results, "plots", "per_tensor_ratios.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        largest = text.split("## The 10 largest tensors")[1].split("##")[0]
        rows = [line for line in largest.splitlines() if line.startswith("| ") and "tensor" not in line]
        self.assertTrue(rows[0].startswith("| lm_head.weight | BF16 | 512x256 | 131072 |"), rows[0])
        # 16 KiB chunks of zeros in 36-byte frames: 16384 / 36.
        self.assertTrue(rows[1].startswith("| zeros.bias | F32 | 256x256 | 65536 | inf | 455.111 | 455.111 |"),
                        rows[1])
        least = text.split("least compressible tensors (by bytegroup+huff)")[1]
        rows = [line for line in least.splitlines() if line.startswith("| ") and "tensor" not in line]
        # One element in a 36-byte frame, then random bits stored raw behind a header.
        self.assertTrue(rows[0].startswith("| scalar.step | F32 | scalar | 1 |"), rows[0])
        self.assertTrue(rows[1].startswith("| random.bits | BF16 | 64x64 |"), rows[1])
        self.assertIn(f"{len(self.items)} tensors of safetensors:{self.model}", text)

    def test_table_arithmetic_on_hand_made_records(self):
        report = {"context": {"hostname": "h"}, "tensors": [
            {"dataset": "d", "name": n, "dtype": "BF16", "shape": [e], "elements": e, "bf16_bytes": 2 * e,
             "chunk": 1 << 20, "entropy_bound_ratio": b, "entropy_bound_ratio_bytes": b,
             "codecs": {"c": {"compressed_bytes": 2 * e // r, "ratio": r}}}
            for n, e, r, b in [("a", 100, 2, 2.5), ("b", 1000, 1, 1.1), ("c", 10, 4, None)]]}
        text = per_tensor.build(report)
        self.assertIn("- c: 1.055 over all tensors (2220 bytes in 2105).", text)
        largest = text.split("largest")[1].split("##")[0]
        self.assertLess(largest.index("| b |"), largest.index("| a |"))
        self.assertIn("| c | BF16 | 10 | 10 | inf | 4.000 |", text)

    def test_refuses_data_sets_that_are_not_safetensors(self):
        one_line_error(self, BENCH, ["--per-tensor", "--datasets=synthetic:weights:size=1MiB"],
                       "is not safetensors:PATH")


# Runs argv[1:] as a child and prints its exit code and peak RSS (ru_maxrss, KiB). A child keeps
# the peak of the process it was forked from, so the figure is taken from this small interpreter,
# not from the test's (whose numpy alone outweighs a small run).
PEAK_RSS = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


class PerTensorMemory(unittest.TestCase):
    """The reader holds each tensor's entry once and compactly: a 64-byte view, its name and its
    dimensions (docs/METRICS.md). Peak RSS of a run over many one-element tensors, less that of a run
    over few, per extra tensor, stays under a bound that holding the header twice or as strings and
    vectors per tensor (over 500 bytes a tensor) exceeds. Memory, not time."""
    BYTES_PER_TENSOR = 350

    def peak_kib(self, path):
        result = subprocess.run([sys.executable, "-S", "-c", PEAK_RSS, BENCH, "--per-tensor",
                                 f"--per-tensor-out={path}.json", "--codecs=memcpy", "--chunks=64KiB",
                                 f"--datasets=safetensors:{path}"], capture_output=True, text=True, timeout=300)
        code, peak = map(int, result.stdout.split())
        self.assertEqual(code, 0, result.stderr)
        return peak

    def test_peak_memory_per_tensor_is_bounded(self):
        with tempfile.TemporaryDirectory() as tmp:
            sizes = {"few": 5_000, "many": 105_000}
            peaks = {}
            for label, count in sizes.items():
                path = os.path.join(tmp, f"{label}.safetensors")
                write_many_tensors(path, count)
                peaks[label] = self.peak_kib(path)
        per_tensor = (peaks["many"] - peaks["few"]) * 1024 / (sizes["many"] - sizes["few"])
        self.assertLess(per_tensor, self.BYTES_PER_TENSOR, f"peak RSS {peaks} KiB")


if __name__ == "__main__":
    unittest.main()
