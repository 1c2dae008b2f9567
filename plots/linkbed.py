"""scripts/linkbed's results: merged per link rate, the crossover table, and the plot.

results/linkbed.json = {"context": {...}, "delay": "0ms", "runs": [{"rate": "1gbit",
  "measured_link": bytes/s (raw TCP through the shaper, bench_rdma: the mean of "measured_links",
  measured before and after the pipeline's run), "measured_links": [...], "cases": [pipeline cases]}]}
Each measured case carries the model's prediction beside its measurement:
`model_bytes_per_second` (with the shared-core term: both processes run on this host's cores),
`model_without_shared_cores_bytes_per_second` (min(C, R L, D)), both for the run's own chunks
(filling and draining the pipeline included), `model_endless_bytes_per_second` (the first for an
endless run) and `model_notes`.
"""
import argparse
import json
import statistics
import sys

import model
import results
import table as headline


TARGET_ERROR = 0.15  # what the model must meet to be trusted: within 15% on every row


def link_rate(rdma_path):
    """What bench_rdma's tcp case carried through the shaper, in bytes/s."""
    links = [c["bytes_per_second"] for c in results.cases(results.load(rdma_path))
             if c.get("transport") == "tcp" and "error" not in c]
    if not links:
        raise ValueError(f"{rdma_path}: the link was not measured")
    return max(links)


def merge(specs, delay):
    """specs: 'rate=rdma.json[+rdma.json...]=pipeline.json' per link rate, the link measured before
    and after the pipeline ran. The host's speed drifts between runs, so the link rate the model
    and the raw comparison use is their mean; every measured case gets the model's predictions
    (predict()) on it."""
    runs, context = [], {}
    for spec in specs:
        rate, rdma_paths, pipeline_path = spec.split("=")
        measured = [link_rate(path) for path in rdma_paths.split("+")]
        link = statistics.fmean(measured)
        pipeline = results.load(pipeline_path)
        context = context or pipeline.get("context", {})
        cases = results.cases(pipeline)
        for case in cases:
            if "error" not in case:
                p = predict(case, context, link)
                case.update(model_bytes_per_second=p["rate"], model_without_shared_cores_bytes_per_second=p["free"],
                            model_endless_bytes_per_second=p["steady"], model_notes=p["notes"])
        runs.append({"rate": rate, "measured_link": link, "measured_links": measured, "cases": cases})
    return {"context": context, "delay": delay, "runs": runs}


def raw_cases(run):
    """The raw pipeline cases of one shaping that measured something."""
    return [c for c in run["cases"] if c.get("mode") == "raw" and "error" not in c]


def link_lines(merged):
    """Per shaping: the link measured before and after the pipeline (how far the host drifted
    meanwhile), and the raw pipeline over their mean, per data set: the pipeline's own cost on
    raw bytes, which should be none; and, where the raw case timed it, the raw pipeline over
    plain writes alternating with it on the same link."""
    lines = []
    for run in merged["runs"]:
        link, measured = run["measured_link"], run.get("measured_links", [run["measured_link"]])
        where = (f"{measured[0] / 1e9:.3f} GB/s before the pipeline, {measured[-1] / 1e9:.3f} after, mean "
                 f"{link / 1e9:.3f}" if len(measured) > 1 else f"{link / 1e9:.3f} GB/s")
        raw = [f"{c['dataset'].split(':')[1]} {c['bytes_per_second'] / link:.2f}" for c in raw_cases(run)]
        line = f"- link {run['rate']}: {where}; raw pipeline / link: {', '.join(raw) or 'no raw case'}"
        # The same question without two processes' drift: bench_rdma's loop timed on the raw case's
        # own link after each of its iterations (raw_vs_writes, docs/METRICS.md).
        paired = [f"{c['dataset'].split(':')[1]} {c['raw_vs_writes']:.2f}"
                  for c in raw_cases(run) if "raw_vs_writes" in c]
        if paired:
            line += f"; raw pipeline / plain writes on its own link, alternating: {', '.join(paired)}"
        lines.append(line)
    return "\n".join(lines)


def predict(case, context, link):
    """The model for one case on a link measured at `link`: raw moves L; a compressed case
    min(C, R L, D), capped by the shared-core term since both processes run on this host (their
    context says "two hosts": the peer is only in another network namespace)."""
    if case.get("mode") == "raw":
        return {"rate": link, "free": link, "steady": link, "run_chunks": None, "notes": []}
    return model.predict_case(case, context, link, shared=True)


def rows(merged):
    """One row per (dataset, codec, link): measured raw and compressed rates and the model's, with
    and without the shared-core term."""
    out = []
    context = merged.get("context", {})
    for run in merged["runs"]:
        link = run["measured_link"]
        raw = {c["dataset"]: c for c in raw_cases(run)}
        for c in run["cases"]:
            if c.get("mode") == "raw" or "error" in c or c["dataset"] not in raw:
                continue
            p = predict(c, context, link)
            out.append({"case": c, "bound": binding_bound(c, link, p), "rate": run["rate"], "link": link, "dataset": c["dataset"], "codec": c["codec"],
                        "raw": raw[c["dataset"]]["bytes_per_second"], "compressed": c["bytes_per_second"],
                        "predicted": p["rate"], "error": c["bytes_per_second"] / p["rate"] - 1,
                        "predicted_free": p["free"], "error_free": c["bytes_per_second"] / p["free"] - 1,
                        "steady": p["steady"], "run_chunks": p["run_chunks"], "notes": p["notes"],
                        "verified": c.get("verified", 0) == 1 and raw[c["dataset"]].get("verified", 0) == 1})
    return out


def binding_bound(case, link, prediction):
    """Which term of min(C, R L, D, shared cores) the prediction is."""
    c, d, r = model.codec_rates(case)
    terms = [("shared cores", prediction.get("shared")), ("C", c), ("D", d), ("R L", r * link)]
    return min((value, name) for name, value in terms if value is not None)[1]


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
             "| model error | model without shared cores GB/s | its error | pays | bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    all_rows = rows(merged)
    declared = headline.source_default("codec")  # what scripts/reproduce and results/table.md declare
    for r in all_rows:
        codec = r["codec"] + (" (declared)" if r["codec"] == declared else "")
        lines.append(f"| {r['dataset'].split(':')[1]} | {codec} | {r['rate']} | {r['link'] / 1e9:.3f} | "
                     f"{r['raw'] / 1e9:.3f} | {r['compressed'] / 1e9:.3f} | {r['predicted'] / 1e9:.3f} | "
                     f"{100 * r['error']:+.1f}% | {r['predicted_free'] / 1e9:.3f} | {100 * r['error_free']:+.1f}% | "
                     f"{'yes' if r['compressed'] > r['raw'] else 'no'} | {r['bound']} |")
    lines.append("")
    for key in dict.fromkeys((r["dataset"], r["codec"]) for r in all_rows):
        series = [r for r in all_rows if (r["dataset"], r["codec"]) == key]
        point = crossover(series)
        lines.append(f"- {key[0].split(':')[1]}, {key[1]}: crossover "
                     f"{f'at {point / 1e9:.2f} GB/s measured link' if point else 'not within the rates run'}; "
                     f"model error {spread([r['error'] for r in series])}, "
                     f"without the shared-core term {spread([r['error_free'] for r in series])}")
    if all_rows:
        worst = max(all_rows, key=lambda r: abs(r["error"]))
        within = abs(worst["error"]) <= TARGET_ERROR
        lines.append(f"- model within {100 * TARGET_ERROR:g}% on every row: {'yes' if within else 'no'} (worst "
                     f"{100 * worst['error']:+.1f}%: {worst['dataset'].split(':')[1]}, {worst['codec']}, {worst['rate']})")
    finite = [r for r in all_rows if r["run_chunks"]]
    if finite:
        chunks = sorted({round(r["run_chunks"]) for r in finite})
        gain = [r["steady"] / r["predicted"] - 1 for r in finite]
        lines.append(f"- the model is for each run's own chunks ({', '.join(map(str, chunks))}), filling and draining "
                     f"the pipeline included; for an endless run it reads {100 * min(gain):.1f}-{100 * max(gain):.1f}% "
                     "higher")
    for note in dict.fromkeys(n for r in all_rows for n in r["notes"]):
        lines.append(f"- model: {note}")
    if merged["runs"]:
        lines.append(link_lines(merged))
    return "\n".join(lines)


def cores_table(merged):
    """Where the CPU went on each compressed row, in ns per original byte: the model's parts (w/C,
    w/D, c_L) beside what both processes spent in the timed runs (`cpu_per_byte`) and what the
    whole host did (`host_cpu_per_byte`, with its busy share). Where the host was busy throughout,
    a row under its model spent CPU the model does not count; where it was not, cores sat idle."""
    lines = ["| dataset | codec | link | bound | w/C | w/D | c_L | model CPU | processes' CPU | host CPU | host busy |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows(merged):
        c = r["case"]
        if "cpu_per_byte" not in c:
            continue
        compress, decompress, _ = model.codec_rates(c)
        workers = c.get("workers", 1)
        parts = [workers / compress, workers / decompress, c.get("link_cpu_per_byte", 0.0)]
        host, busy = c.get("host_cpu_per_byte"), c.get("host_busy")
        lines.append(f"| {r['dataset'].split(':')[1]} | {r['codec']} | {r['rate']} | {r['bound']} | "
                     + " | ".join(f"{1e9 * v:.3f}" for v in parts + [sum(parts), c["cpu_per_byte"]])
                     + f" | {'-' if host is None else f'{1e9 * host:.3f}'} | "
                     f"{'-' if busy is None else f'{100 * busy:.0f}%'} |")
    return "\n".join(lines)


def wake_line(merged):
    """The sending host's wake-up latency (bench_pipeline's probe: a thread woken on an idle CPU,
    and on one kept awake where the run measured that too), which the model does not count, though
    each chunk is handed between threads several times. "" without it."""
    context = merged.get("context", {})
    wake = context.get("wake_latency")
    if not wake:
        return ""
    awake = context.get("wake_latency_awake")
    kept_awake = f" With that CPU kept awake (a SCHED_IDLE spinner there): {awake}." if awake else ""
    return (f"Wake-up of a thread on an idle CPU of this host: {wake}.{kept_awake} The model counts no wake-ups; "
            "switches_per_chunk says how many each chunk had.")


def spread(errors):
    """'median x%, max y%' of the absolute errors."""
    errors = [abs(e) for e in errors]
    return f"median {100 * statistics.median(errors):.1f}%, max {100 * max(errors):.1f}%"


def plot(merged, path):
    """Measured end-to-end rate vs measured link rate per codec, the model on top, crossovers marked."""
    from plotting import plt, save  # matplotlib only when plotting
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
                color=line.get_color(), label=f"{codec} model min(C, R L, D, N / (1/C + 1/D + c_L))")
        point = crossover(series)
        if point:
            ax.axvline(point / 1e9, color=line.get_color(), alpha=0.4)
            ax.annotate(f"pays below {point / 1e9:.2f} GB/s", (point / 1e9, ax.get_ylim()[1] * 0.9), fontsize=7,
                        color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("link rate, measured raw TCP through the shaper (GB/s)")
    ax.set_ylabel("end-to-end rate, original bytes (GB/s)")
    report = {"context": merged.get("context", {})}
    return save(fig, ax, f"Shaped links: where compression starts to pay ({dataset})", report, path)


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
                merged = json.load(f)
            print(table(merged))
            print("\nCPU per original byte (ns), model and measured:\n")
            print(cores_table(merged))
            wake = wake_line(merged)
            if wake:
                print("\n" + wake)
    except (OSError, ValueError, KeyError) as e:
        print(f"linkbed: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
