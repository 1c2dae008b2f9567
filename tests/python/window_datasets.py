"""File data sets for the --window tests: a safetensors file of F32, F16 and BF16 tensors (1059330
bf16 bytes), the same file split into shards (safetensors:DIR/*.safetensors) and a raw bf16 file
whose last 8 KiB chunk is partial."""
import os

from test_per_tensor import tensors, write_safetensors

SHARD_COUNT = 3


def write_window_datasets(tmp):
    """Writes the three data sets under `tmp`; returns their specs: [file, its shards, raw]."""
    items = tensors()
    model = os.path.join(tmp, "model.safetensors")
    write_safetensors(model, items)
    # The shards: consecutive runs of tensors, each its own file, named in stream order.
    names = list(items)
    os.mkdir(os.path.join(tmp, "shards"))
    for s in range(SHARD_COUNT):
        part = names[s * len(names) // SHARD_COUNT:(s + 1) * len(names) // SHARD_COUNT]
        write_safetensors(os.path.join(tmp, "shards", f"model-{s + 1:05}-of-{SHARD_COUNT:05}.safetensors"),
                          {n: items[n] for n in part})
    raw = os.path.join(tmp, "raw.bf16")
    with open(raw, "wb") as f:
        f.write(b"\x12\x3c" * 12345 + bytes(range(256)) * 3010)  # 98 chunks of 8 KiB, the last one partial
    return [f"safetensors:{model}", f"safetensors:{tmp}/shards/*.safetensors", f"file:{raw}"]
