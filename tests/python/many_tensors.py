"""A safetensors file of N one-element BF16 tensors, for memory checks of readers that must not grow
with the tensor count:  python3 many_tensors.py N PATH"""
import json
import sys


def write_many_tensors(path, count):
    # Written in pieces: the header of a million tensors is ~70 MB of JSON.
    parts = [json.dumps(f"layers.{i}.weight") + f':{{"dtype":"BF16","shape":[1],"data_offsets":[{2 * i},{2 * i + 2}]}}'
             for i in range(count)]
    header = ("{" + ",".join(parts) + "}").encode()
    with open(path, "wb") as f:
        f.write(len(header).to_bytes(8, "little"))
        f.write(header)
        f.write(bytes(range(1, 255)) * (2 * count // 254) + bytes(range(1, 255))[: 2 * count % 254])


if __name__ == "__main__":
    write_many_tensors(sys.argv[2], int(sys.argv[1]))
