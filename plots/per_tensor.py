"""Per-tensor results (bench_codec --per-tensor, results/per_tensor.json): results/per_tensor.md
with the largest tensors and the least compressible ones, and plots/per_tensor_ratios.png, the
histogram of per-tensor ratios. Where a checkpoint's ratio comes from, tensor by tensor."""
import os

import results
from plotting import plt, save

FILENAME = "per_tensor.json"
ROWS = 10


def load(path):
    """The parsed records; ValueError with the path when the file is not bench_codec --per-tensor JSON."""
    report = results.read_json(path)
    if not isinstance(report, dict) or not isinstance(report.get("tensors"), list):
        raise ValueError(f"{path}: not bench_codec --per-tensor JSON (no 'tensors' list)")
    return report


def records(report):
    """The records of one chunk size (1 MiB when present, else the largest), tensors in file order."""
    chunks = {r["chunk"] for r in report["tensors"]}
    if not chunks:
        return []
    chunk = 1 << 20 if 1 << 20 in chunks else max(chunks)
    return [r for r in report["tensors"] if r["chunk"] == chunk]


def codecs(report):
    """The codecs in the order bench_codec was given them (JSON objects do not keep an order)."""
    seen = set(c for r in report["tensors"] for c in r.get("codecs", {}))
    given = [c for c in report.get("context", {}).get("codecs", []) if c in seen]
    return given + sorted(seen - set(given))


def ratio(record, codec):
    value = record.get("codecs", {}).get(codec, {}).get("ratio")
    return value if isinstance(value, (int, float)) else None


def _number(value, digits=3):
    if value is None:
        return "inf"  # a bound is null only where it is infinite (a constant tensor)
    return f"{value:.{digits}f}" if value < 1e4 else f"{value:.3g}"


def _table(rows, names):
    head = ["tensor", "dtype", "shape", "elements", "order-0 bound (planes)"] + [f"ratio {c}" for c in names]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in rows:
        cells = [r["name"], r["dtype"], "x".join(str(d) for d in r["shape"]) or "scalar", str(r["elements"]),
                 _number(r.get("entropy_bound_ratio"))]
        cells += ["-" if ratio(r, c) is None else _number(ratio(r, c)) for c in names]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def build(report):
    """The markdown of results/per_tensor.md."""
    rows = records(report)
    names = codecs(report)
    context = report.get("context", {})
    first = names[0] if names else None
    lines = [f"# Per-tensor ratios ({context.get('hostname', 'unknown host')})", ""]
    datasets = sorted({r["dataset"] for r in rows})
    chunk = rows[0]["chunk"] if rows else 0
    lines.append(f"{len(rows)} tensors of {', '.join(datasets) or 'no data set'}, each cut into "
                 f"{chunk // 1024} KiB chunks compressed on their own.")
    for codec in names:
        original = sum(r["bf16_bytes"] for r in rows)
        stored = sum(r["codecs"][codec]["compressed_bytes"] for r in rows if codec in r.get("codecs", {}))
        if stored:
            lines.append(f"- {codec}: {original / stored:.3f} over all tensors ({original} bytes in {stored}).")
    largest = sorted(rows, key=lambda r: -r["elements"])[:ROWS]
    lines += ["", f"## The {len(largest)} largest tensors", ""] + _table(largest, names)
    if first:
        coded = [r for r in rows if ratio(r, first) is not None]
        least = sorted(coded, key=lambda r: ratio(r, first))[:ROWS]
        lines += ["", f"## The {len(least)} least compressible tensors (by {first})", ""] + _table(least, names)
    return "\n".join(lines) + "\n"


def histogram(report, path):
    """Per-tensor ratios per codec, on log-spaced bins (constant tensors reach ratios in the thousands)."""
    rows = records(report)
    fig, ax = plt.subplots(figsize=(8, 5))
    values = {c: [ratio(r, c) for r in rows if ratio(r, c)] for c in codecs(report)}
    everything = [v for vs in values.values() for v in vs]
    if everything:
        low, high = min(everything), max(everything)
        high = max(high, low * 1.01)
        bins = [low * (high / low) ** (i / 30) for i in range(31)]
        for codec, vs in values.items():
            ax.hist(vs, bins=bins, alpha=0.5, label=f"{codec} ({len(vs)} tensors)")
        ax.set_xscale("log")
    ax.set_xlabel("ratio of a tensor (original / compressed)")
    ax.set_ylabel("tensors")
    return save(fig, ax, "Per-tensor ratios", report, path)


def write(results_dir):
    """results_dir/per_tensor.md and results_dir/plots/per_tensor_ratios.png from per_tensor.json;
    returns the paths written, none when there is no per_tensor.json."""
    source = os.path.join(results_dir, FILENAME)
    if not os.path.exists(source):
        return []
    report = load(source)
    table = os.path.join(results_dir, "per_tensor.md")
    with open(table, "w") as f:
        f.write(build(report))
    os.makedirs(os.path.join(results_dir, "plots"), exist_ok=True)
    return [table, histogram(report, os.path.join(results_dir, "plots", "per_tensor_ratios.png"))]
