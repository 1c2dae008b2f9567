"""The report's plots (PNG), each titled with what it shows and the host and date it came from."""
import os

import labels
import linkbed
import model
import results
import scaling
from plotting import plt, save

LINKS = [10.9e9, 24.6e9, 50e9, 100e9]  # the paper's two links and two faster ones, bytes/s


def _codec_cases(report, direction="compress", threads=1):
    cases = [c for c in results.cases(report) if "error" not in c and c["direction"] == direction]
    chunk = 1 << 20 if any(c["chunk"] == 1 << 20 for c in cases) else max(c["chunk"] for c in cases)
    dataset = cases[0]["dataset"]
    return [c for c in cases if c["chunk"] == chunk and c.get("threads", 1) == threads and c["dataset"] == dataset]


def codec_ratio_vs_throughput(report, path):
    cases = _codec_cases(report)
    fig, ax = plt.subplots(figsize=(8, 5))
    for c in cases:
        ax.scatter(c["bytes_per_second"] / 1e9, c["ratio"], s=25)
        labels.add(ax, c["bytes_per_second"] / 1e9, c["ratio"], c["codec"])
    bound = cases[0].get("entropy_bound_ratio")
    if bound:
        ax.axhline(bound, color="gray", linestyle="--", label=f"order-0 entropy bound ({bound:.3f})")
    ceiling = next((c for c in cases if c["codec"] == "memcpy"), None)
    if ceiling:
        ax.axvline(ceiling["bytes_per_second"] / 1e9, color="black", linestyle=":", label="memcpy (ceiling)")
    ax.set_xscale("log")
    ax.set_xlabel("compress throughput, original bytes (GB/s)")
    ax.set_ylabel("ratio (original / compressed)")
    return save(fig, ax, f"Codecs: ratio vs compress throughput (1 thread, {cases[0]['dataset']})", report, path)


def codec_threads(report, path):
    """Measured compress rate per thread count (solid) and the ideal line, 1-thread rate x threads
    (dashed, same colour): the gap between them is the parallel efficiency (results/scaling.md)."""
    all_series = scaling.series(report)
    chunk = 1 << 20 if any(k[2] == 1 << 20 for k in all_series) else max(k[2] for k in all_series)
    dataset = next(k[1] for k in all_series if k[2] == chunk)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (codec, data, size), rates in all_series.items():
        if size != chunk or data != dataset or len(rates) < 2:
            continue
        threads = sorted(rates)
        line, = ax.plot(threads, [rates[n] / 1e9 for n in threads], marker="o", label=codec)
        ax.plot(threads, [n * rates[1] / 1e9 for n in threads], linestyle="--", color=line.get_color(), alpha=0.5)
    ax.set_xlabel("threads")
    ax.set_ylabel("compress throughput, original bytes (GB/s)")
    ax.set_yscale("log")
    return save(fig, ax, f"Codecs: throughput vs threads, ideal dashed ({chunk // 1024} KiB chunks)", report, path)


def rdma_bandwidth(reports, path):
    fig, ax = plt.subplots(figsize=(8, 5))
    for index, report in enumerate(reports):
        for transport in dict.fromkeys(c["transport"] for c in results.cases(report)):
            if transport == "memcpy" and index > 0:
                continue  # every bench_rdma run carries the ceiling: draw it once
            for pages in ["4k", "thp", "hugetlb"]:
                points = sorted((c["size"], c["bytes_per_second"] / 1e9, c.get("huge_fraction", 0))
                                for c in results.cases(report) if "error" not in c
                                and c["transport"] == transport and c.get("pages") == pages)
                if points:
                    huge = sum(p[2] for p in points) / len(points)
                    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                            linestyle=":" if transport == "memcpy" else "-",
                            label=f"{transport}, {pages} (huge fraction {huge:.2f})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bandwidth (GB/s)")
    return save(fig, ax, "Transports: bandwidth vs message size per page policy", reports[0], path)


def pipeline_chunks(report, path):
    """One panel per transport: raw, serial and overlap per codec, the model dashed beside each
    (with the shared-core term where both ends ran on this host)."""
    cases = [c for c in results.cases(report) if "error" not in c]
    context = report.get("context", {})
    transports = list(dict.fromkeys(c["transport"] for c in cases))
    fig, axes = plt.subplots(1, len(transports), figsize=(6 * len(transports), 5), squeeze=False)
    for ax, transport in zip(axes[0], transports):
        mine = [c for c in cases if c["transport"] == transport]
        raw = {c["chunk"]: c["bytes_per_second"] for c in mine if c["mode"] == "raw"}
        for mode in ["raw", "serial", "overlap"]:
            for codec in dict.fromkeys(c["codec"] for c in mine if c["mode"] == mode):
                series = sorted(((c["chunk"], c) for c in mine if c["mode"] == mode and c["codec"] == codec),
                                key=lambda item: item[0])
                line, = ax.plot([k for k, _ in series], [c["bytes_per_second"] / 1e9 for _, c in series], marker="o",
                                label=f"{mode} {codec}" if mode != "raw" else "raw")
                predicted = [(k, model.predict_case(c, context, raw.get(k, c["stage_link"] / c["ratio"]))["rate"] / 1e9)
                             for k, c in series if mode != "raw" and "stage_compress" in c]
                if predicted:
                    ax.plot(*zip(*predicted), linestyle="--", marker="x", color=line.get_color(), alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("chunk size (bytes)")
        ax.set_ylabel("end-to-end rate, original bytes (GB/s)")
        title = f"Pipeline over {transport}: measured (solid), model (dashed)"
        if ax is not axes[0][-1]:
            ax.set_title(title, fontsize=10)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    return save(fig, axes[0][-1], title, report, path)


def feasibility(report, path):
    """Every codec as (throughput, ratio) against where compression starts to pay on each link."""
    comp = {c["codec"]: c for c in _codec_cases(report, "compress")}
    decomp = {c["codec"]: c for c in _codec_cases(report, "decompress")}
    fig, ax = plt.subplots(figsize=(11, 5.5))
    ratios = []
    for codec, c in comp.items():
        if codec in decomp and codec != "memcpy":
            rate = min(c["bytes_per_second"], decomp[codec]["bytes_per_second"]) / 1e9
            ax.scatter(rate, c["ratio"], s=25)
            labels.add(ax, rate, c["ratio"], codec)
            ratios.append(c["ratio"])
    xs = [x / 10 for x in range(5, 3000)]
    for link, colour in zip(LINKS, ["C0", "C1", "C2", "C3"]):
        ax.axvline(link / 1e9, linestyle="--", color=colour, alpha=0.7,
                   label=f"L = {link / 1e9:g} GB/s: overlap pays right of the dashed line")
        curve = [(x, model.serial_min_ratio(x * 1e9, x * 1e9, link)) for x in xs]
        curve = [(x, r) for x, r in curve if r < 4]
        if curve:
            ax.plot(*zip(*curve), color=colour, label=f"L = {link / 1e9:g} GB/s: serial pays above the curve (C = D)")
    ax.set_xscale("log")
    # Room above the codecs for their labels; the curves beyond are where no codec measured here is.
    ax.set_ylim(0.9, max(1.8, max(ratios, default=1.0) * 1.2))
    ax.set_xlabel("codec rate min(C, D), original bytes (GB/s)")
    ax.set_ylabel("ratio (original / compressed)")
    return save(fig, ax, "Feasibility: where compression pays, per link rate", report, path, legend_outside=True)


def measured(report):
    """Does the report hold a case that did not fail? (scripts/reproduce --keep-going can leave a
    file of failures only: it has nothing to draw.)"""
    return bool(report) and any("error" not in c for c in results.cases(report))


def write_all(found, directory):
    """Every plot the results allow; returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    written = []
    if measured(found["codec"]):
        written.append(codec_ratio_vs_throughput(found["codec"], os.path.join(directory, "codec_ratio.png")))
        if scaling.measured(found["codec"]):
            written.append(codec_threads(found["codec"], os.path.join(directory, "codec_threads.png")))
        written.append(feasibility(found["codec"], os.path.join(directory, "feasibility.png")))
    if any(measured(report) for report in found["rdma"]):
        written.append(rdma_bandwidth(found["rdma"], os.path.join(directory, "rdma_bandwidth.png")))
    if measured(found["pipeline"]):
        written.append(pipeline_chunks(found["pipeline"], os.path.join(directory, "pipeline_chunks.png")))
    if found.get("linkbed"):
        written.append(linkbed.plot(found["linkbed"], os.path.join(directory, "linkbed.png")))
    return written
