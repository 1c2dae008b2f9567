"""scripts/linkbed's results: merged per link rate, the crossover table, and the plot.

results/linkbed.json = {"context": {...}, "delay": "0ms", "runs": [{"rate": "1gbit",
  "measured_link": bytes/s (raw TCP through the shaper, bench_rdma), "cases": [pipeline cases]}]}
"""
import argparse
import json
import statistics
import sys

import model
import results


def merge(specs, delay):
    """specs: 'rate=rdma.json=pipeline.json' per link rate."""
    runs, context = [], {}
    for spec in specs:
        rate, rdma_path, pipeline_path = spec.split("=")
        links = [c["bytes_per_second"] for c in results.cases(results.load(rdma_path))
                 if c.get("transport") == "tcp" and "error" not in c]
        if not links:
            raise ValueError(f"{rdma_path}: the link was not measured")
        pipeline = results.load(pipeline_path)
        context = context or pipeline.get("context", {})
        runs.append({"rate": rate, "measured_link": max(links), "cases": results.cases(pipeline)})
    return {"context": context, "delay": delay, "runs": runs}


def rows(merged):
    """One row per (dataset, codec, link): measured raw and compressed rates and the model's."""
    out = []
    for run in merged["runs"]:
        link = run["measured_link"]
        raw = {c["dataset"]: c for c in run["cases"] if c.get("mode") == "raw" and "error" not in c}
        for c in run["cases"]:
            if c.get("mode") == "raw" or "error" in c or c["dataset"] not in raw:
                continue
            predicted = model.overlap_rate(c["stage_compress"], c["ratio"], link, c["stage_decompress"])
            out.append({"rate": run["rate"], "link": link, "dataset": c["dataset"], "codec": c["codec"],
                        "raw": raw[c["dataset"]]["bytes_per_second"], "compressed": c["bytes_per_second"],
                        "predicted": predicted, "error": c["bytes_per_second"] / predicted - 1,
                        "verified": c.get("verified", 0) == 1 and raw[c["dataset"]].get("verified", 0) == 1})
    return out


def crossover(series):
    """The link rate where compressed and raw meet, interpolated between the measured links."""
    series = sorted(series, key=lambda r: r["link"])
    for a, b in zip(series, series[1:]):
        da, db = a["compressed"] - a["raw"], b["compressed"] - b["raw"]
        if da > 0 >= db:
            return a["link"] + (b["link"] - a["link"]) * da / (da - db)
    return None


def table(merged):
    lines = ["| dataset | codec | link (configured) | link measured GB/s | raw GB/s | compressed GB/s | model GB/s "
             "| model error | pays |", "|---|---|---|---|---|---|---|---|---|"]
    all_rows = rows(merged)
    for r in all_rows:
        lines.append(f"| {r['dataset'].split(':')[1]} | {r['codec']} | {r['rate']} | {r['link'] / 1e9:.3f} | "
                     f"{r['raw'] / 1e9:.3f} | {r['compressed'] / 1e9:.3f} | {r['predicted'] / 1e9:.3f} | "
                     f"{100 * r['error']:+.1f}% | {'yes' if r['compressed'] > r['raw'] else 'no'} |")
    lines.append("")
    for key in dict.fromkeys((r["dataset"], r["codec"]) for r in all_rows):
        series = [r for r in all_rows if (r["dataset"], r["codec"]) == key]
        point = crossover(series)
        errors = [abs(r["error"]) for r in series]
        lines.append(f"- {key[0].split(':')[1]}, {key[1]}: crossover "
                     f"{f'at {point / 1e9:.2f} GB/s measured link' if point else 'not within the rates run'}; "
                     f"model error median {100 * statistics.median(errors):.1f}%, max {100 * max(errors):.1f}%")
    return "\n".join(lines)


def plot(merged, path):
    """Measured end-to-end rate vs measured link rate per codec, the model on top, crossovers marked."""
    import figures  # matplotlib only when plotting
    plt = figures.plt
    fig, ax = plt.subplots(figsize=(8, 5))
    all_rows = rows(merged)
    dataset = all_rows[0]["dataset"] if all_rows else ""
    mine = [r for r in all_rows if r["dataset"] == dataset]
    raw = sorted({(r["link"], r["raw"]) for r in mine})
    ax.plot([l / 1e9 for l, _ in raw], [v / 1e9 for _, v in raw], marker="o", color="black", label="raw (measured)")
    ax.plot([l / 1e9 for l, _ in raw], [l / 1e9 for l, _ in raw], linestyle=":", color="black", label="raw model: L")
    for codec in dict.fromkeys(r["codec"] for r in mine):
        series = sorted((r for r in mine if r["codec"] == codec), key=lambda r: r["link"])
        line, = ax.plot([r["link"] / 1e9 for r in series], [r["compressed"] / 1e9 for r in series], marker="o",
                        label=f"{codec} (measured)")
        ax.plot([r["link"] / 1e9 for r in series], [r["predicted"] / 1e9 for r in series], linestyle="--",
                color=line.get_color(), label=f"{codec} model min(C, R L, D)")
        point = crossover(series)
        if point:
            ax.axvline(point / 1e9, color=line.get_color(), alpha=0.4)
            ax.annotate(f"pays below {point / 1e9:.2f} GB/s", (point / 1e9, ax.get_ylim()[1] * 0.9), fontsize=7,
                        color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("link rate, measured raw TCP through the shaper (GB/s)")
    ax.set_ylabel("end-to-end rate, original bytes (GB/s)")
    report = {"context": merged.get("context", {})}
    return figures._save(fig, ax, f"Shaped links: where compression starts to pay ({dataset})", report, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description="linkbed results: merge, table")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--out", required=True)
    m.add_argument("--delay", default="0ms")
    m.add_argument("runs", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("path")
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            with open(args.out, "w") as f:
                json.dump(merge(args.runs, args.delay), f, indent=1)
        else:
            with open(args.path) as f:
                print(table(json.load(f)))
    except (OSError, ValueError, KeyError) as e:
        print(f"linkbed: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
