"""bench_collective's JSON -> results/collective.md (table) and results/plots/collective_busbw.png.

    /usr/bin/python3 plots/collective.py results/collective.json [--out results]

One row per op and size: busbw of MPI's own collective, the raw ring, the compressed ring per
codec, each ring's ratio and the raw ring over MPI; one panel per op of busbw against size, the
model's prediction dashed; out-of-place cases only. Failed or unverified cases (in-place ones
too) are listed, never plotted."""
import argparse
import os
import sys

import results
from plotting import plt


class BadInput(Exception):
    pass


def load(path):
    """Cases by (op, size) -> {label: case}; label is 'mpi', 'ring' or 'ring+<codec>'; a case's
    counters are medians over its repetitions (results.cases). Failures separately."""
    try:
        report = results.load(path)
        found = [c for c in results.cases(report) if c["family"] == "collective"]
    except ValueError as e:
        raise BadInput(str(e))
    cases, failed = {}, []
    for case in found:
        if "error" in case or case.get("verified") != 1:
            failed.append((case["name"], case.get("error", "not verified")))
            continue
        if case.get("inplace"):
            continue  # nccl-tests' in-place form: bench_collective's own table shows it beside out-of-place
        label = case["impl"] if case["codec"] == "none" else f"ring+{case['codec']}"
        cases.setdefault((case["op"], case["size"]), {})[label] = case
    if not cases and not failed:
        raise BadInput(f"{path}: no collective/... cases")
    return report.get("context", {}), cases, failed


def gbps(value):
    return f"{value / 1e9:.2f}" if value else "-"


def labels_of(cases):
    found = {label for by_label in cases.values() for label in by_label}
    return ["mpi", "ring"] + sorted(label for label in found if label.startswith("ring+"))


def table(context, cases, failed):
    labels = labels_of(cases)
    ranks = context.get("mpi_ranks", "?")
    lines = [f"# Collectives: busbw (GB/s), {ranks} ranks on {context.get('mpi_hosts', '?')}",
             "",
             f"{context.get('mpi_library', '')}; ring chunks over {context.get('transport', 'mpi')}; chunk {context.get('chunk_bytes', '?')} B;"
             f" data {context.get('dataset', '?')}."
             " busbw = size / time x (n-1)/n (all-gather, reduce-scatter) or 2(n-1)/n (all-reduce), as nccl-tests."
             " Every ring result is bit for bit the raw ring's, itself checked against the reference (`verified`).",
             "",
             "| op | size | " + " | ".join(labels) + " | ring / mpi | " + " | ".join(f"ratio {l[5:]}" for l in labels[2:]) + " |",
             "|---|---:|" + "---:|" * (len(labels) + 1 + len(labels) - 2)]
    for (op, size), by_label in sorted(cases.items()):
        cells = [gbps(by_label[l]["busbw"]) if l in by_label else "-" for l in labels]
        raw, mpi = by_label.get("ring"), by_label.get("mpi")
        versus = f"{raw['busbw'] / mpi['busbw']:.2f}" if raw and mpi else "-"
        ratios = [f"{by_label[l]['ratio']:.3f}" if l in by_label else "-" for l in labels[2:]]
        lines.append(f"| {op} | {size} | " + " | ".join(cells) + f" | {versus} | " + " | ".join(ratios) + " |")
    if failed:
        lines += ["", "Failed or unverified:", ""] + [f"- `{name}`: {why}" for name, why in failed]
    return "\n".join(lines) + "\n"


def plot(cases, path):
    ops = sorted({op for op, _ in cases})
    labels = labels_of(cases)
    fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4), squeeze=False)
    for ax, op in zip(axes[0], ops):
        sizes = sorted(size for o, size in cases if o == op)
        for i, label in enumerate(labels):
            points = [(s, cases[(op, s)][label]) for s in sizes if label in cases[(op, s)]]
            if not points:
                continue
            color = f"C{i}"
            ax.plot([s for s, _ in points], [c["busbw"] / 1e9 for _, c in points], "o-", color=color, label=label)
            modeled = [(s, c["model_busbw"]) for s, c in points if "model_busbw" in c]
            if modeled:
                ax.plot([s for s, _ in modeled], [m / 1e9 for _, m in modeled], "--", color=color, alpha=0.5)
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, title="dashed: model")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description="bench_collective JSON -> table and busbw plot")
    parser.add_argument("json", help="bench_collective --benchmark_out file")
    parser.add_argument("--out", default="results", help="directory for collective.md and plots/collective_busbw.png")
    args = parser.parse_args(argv)
    try:
        context, cases, failed = load(args.json)
    except BadInput as e:
        print(f"collective: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "collective.md"), "w") as f:
        f.write(table(context, cases, failed))
    if cases:
        plot(cases, os.path.join(args.out, "plots", "collective_busbw.png"))
    print(f"collective: wrote {os.path.join(args.out, 'collective.md')} and plots/collective_busbw.png")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
