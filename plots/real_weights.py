"""Real trained weights as safetensors files of one float type each, for bench_codec's real-file figures.

    scripts/real-weights OUT_DIR MODEL...

MODEL is a safetensors file (F32, F16 or BF16 tensors) or an ncnn model's .bin with its .param beside
it (the format of the ncnn-vulkan upscalers and frame interpolators on GitHub, whose weights are
committed in their repositories rather than downloaded). For each MODEL this writes
OUT_DIR/NAME.bf16.safetensors, NAME.fp16.safetensors and NAME.fp32.safetensors: every tensor of the
model, in file order, as that type (bf16 rounded to nearest even from the values as float32). A
model's own type is written unchanged (but for NaN payloads: every NaN becomes the quiet NaN of its
sign); the others are conversions, and the file names say which.
Bad input (a missing .param, a .bin that does not hold what the .param says, a tensor type other
than the three) ends with one line naming the file and the field, and exit status 2.
"""
import json
import os
import struct
import sys

import numpy as np

FP16_TAG = 0x01306B47  # ncnn: the weights that follow are float16
FP32_TAG = 0
# ncnn layers that load weights this reader does not read: a model with one is refused, naming it.
UNREAD_WEIGHTS = {"Embed", "MemoryData", "Convolution1D", "Convolution3D",
                  "ConvolutionDepthWise1D", "ConvolutionDepthWise3D", "Deconvolution1D", "Deconvolution3D",
                  "DeconvolutionDepthWise1D", "DeconvolutionDepthWise3D", "LSTM", "GRU", "RNN", "MultiHeadAttention",
                  "LayerNorm", "GroupNorm", "InstanceNorm", "Normalize"}
DTYPES = {"F32": np.float32, "F16": np.float16}
OUTPUTS = [("bf16", "BF16"), ("fp16", "F16"), ("fp32", "F32")]


class BadModel(Exception):
    pass


def to_bf16_bits(values):
    """float32 values -> bf16 bit patterns (uint16), rounded to nearest even."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    quiet_nan = ((bits >> 16) & 0x8000).astype(np.uint16) | 0x7FC0  # rounding must not turn a NaN into infinity
    return np.where(np.isnan(values), quiet_nan, rounded)


def from_bf16_bits(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def read_safetensors(path):
    """[(name, float32 array)] in data order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise BadModel(f"{path}: header length: the file has {len(data)} bytes")
    (length,) = struct.unpack_from("<Q", data)
    if length > len(data) - 8:
        raise BadModel(f"{path}: header length {length} runs past the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8 : 8 + length])
    except (ValueError, RecursionError) as e:
        raise BadModel(f"{path}: header: not JSON ({type(e).__name__})")
    if not isinstance(header, dict):
        raise BadModel(f"{path}: header: not a JSON object")
    base = 8 + length
    tensors = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info.get("dtype") if isinstance(info, dict) else None
        if dtype not in ("F32", "F16", "BF16"):
            raise BadModel(f"{path}: {name}: dtype {dtype} is not F32, F16 or BF16")
        offsets = info.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)):
            raise BadModel(f"{path}: {name}: data_offsets {offsets!r} is not two integers")
        begin, end = offsets
        width = 4 if dtype == "F32" else 2
        if not 0 <= begin <= end <= len(data) - base or (end - begin) % width:
            raise BadModel(f"{path}: {name}: data_offsets [{begin}, {end}] do not fit the file")
        raw = np.frombuffer(data, np.uint16 if dtype == "BF16" else DTYPES[dtype], (end - begin) // width, base + begin)
        values = from_bf16_bits(raw) if dtype == "BF16" else raw.astype(np.float32)
        tensors.append((begin, name, values))
    return [(name, values) for _, name, values in sorted(tensors, key=lambda t: t[0])]


def param_layers(path):
    """[(kind, name, {key: value})] of an ncnn .param file."""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8").split("\n")
    except OSError as e:
        raise BadModel(f"{path}: {e.strerror}")
    except UnicodeDecodeError:
        raise BadModel(f"{path}: text: not UTF-8")
    if not lines or lines[0].strip() != "7767517":
        raise BadModel(f"{path}: magic: not an ncnn param file")
    layers = []
    for number, line in enumerate(lines[2:], start=3):
        fields = line.split()
        if not fields:
            continue
        try:
            inputs, outputs = int(fields[2]), int(fields[3])
            params = dict(p.split("=", 1) for p in fields[4 + inputs + outputs :])
            layers.append((fields[0], fields[1], {int(k): v for k, v in params.items()}))
        except (IndexError, ValueError):
            raise BadModel(f"{path}: line {number}: not a layer line")
    return layers


def read_ncnn(bin_path):
    """[(name, float32 array)] of the weights an ncnn model's layers load, in file order."""
    param_path = bin_path[: -len(".bin")] + ".param"
    layers = param_layers(param_path)
    try:
        with open(bin_path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadModel(f"{bin_path}: {e.strerror}")
    pos = 0
    tensors, names = [], set()

    def take(name, count, tagged):
        nonlocal pos
        if name in names:
            raise BadModel(f"{param_path}: {name}: two tensors of that name")
        names.add(name)
        tag = FP32_TAG
        if tagged:
            if pos + 4 > len(data):
                raise BadModel(f"{bin_path}: {name}: tag past the end of the file")
            (tag,) = struct.unpack_from("<I", data, pos)
            pos += 4
        if tag not in (FP16_TAG, FP32_TAG):
            raise BadModel(f"{bin_path}: {name}: tag {tag:#x} is neither float16 nor float32 weights")
        width = 2 if tag == FP16_TAG else 4
        if count < 0 or pos + width * count > len(data):
            raise BadModel(f"{bin_path}: {name}: {count} weights run past the end of the file")
        values = np.frombuffer(data, np.float16 if width == 2 else np.float32, count, pos).astype(np.float32)
        pos += (width * count + 3) // 4 * 4
        tensors.append((name, values))

    for kind, name, p in layers:
        try:
            if kind in ("Convolution", "ConvolutionDepthWise", "Deconvolution", "DeconvolutionDepthWise"):
                take(f"{name}.weight", int(p[6]), True)
                if p.get(5, "0") == "1":
                    take(f"{name}.bias", int(p[0]), False)
            elif kind == "InnerProduct":
                take(f"{name}.weight", int(p[2]), True)
                if p.get(1, "0") == "1":
                    take(f"{name}.bias", int(p[0]), False)
            elif kind == "PReLU":
                take(f"{name}.slope", int(p.get(0, "0")), False)
            elif kind == "Scale" and int(p.get(0, "0")) != -233:  # -233: the scale is a second input
                take(f"{name}.scale", int(p.get(0, "0")), False)
                if p.get(1, "0") == "1":
                    take(f"{name}.bias", int(p[0]), False)
            elif kind == "BatchNorm":
                for part in ("slope", "mean", "var", "bias"):
                    take(f"{name}.{part}", int(p.get(0, "0")), False)
            elif kind == "Bias":
                take(f"{name}.bias", int(p.get(0, "0")), False)
            elif kind in UNREAD_WEIGHTS:
                raise BadModel(f"{param_path}: {name}: a {kind} layer, whose weights this reader does not read")
        except (KeyError, ValueError):
            raise BadModel(f"{param_path}: {name}: a {kind} layer without its weight sizes")
    if pos != len(data):
        raise BadModel(f"{bin_path}: size: the layers load {pos} bytes of its {len(data)}")
    return tensors


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {}, [], 0
    for name, values in tensors:
        if dtype == "BF16":
            raw = to_bf16_bits(values).tobytes()
        else:
            raw = values.astype(DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": [len(values)], "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for raw in blobs:
            f.write(raw)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if len(argv) < 2:
        print("usage: scripts/real-weights OUT_DIR MODEL... (--help says more)", file=sys.stderr)
        return 2
    out_dir, models = argv[0], argv[1:]
    try:
        bases = [os.path.basename(model).rsplit(".", 1)[0] for model in models]
        for k, base in enumerate(bases):
            if base in bases[:k]:
                raise BadModel(f"{models[k]}: name: writes {base}.*.safetensors, as {models[bases.index(base)]} does")
        os.makedirs(out_dir, exist_ok=True)
        for model, base in zip(models, bases):
            if model.endswith(".safetensors"):
                tensors = read_safetensors(model)
            elif model.endswith(".bin"):
                tensors = read_ncnn(model)
            else:
                raise BadModel(f"{model}: name: neither a .safetensors file nor an ncnn .bin")
            for suffix, dtype in OUTPUTS:
                path = os.path.join(out_dir, f"{base}.{suffix}.safetensors")
                write_safetensors(path, tensors, dtype)
                print(f"{path}: {len(tensors)} tensors, {sum(len(v) for _, v in tensors)} values")
    except BadModel as e:
        print(f"real-weights: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"real-weights: {where}{e.strerror}", file=sys.stderr)
        return 2
    return 0
