"""Codec scaling over threads (bench_codec --threads=...): the rate per thread count, the ideal
line (1-thread rate x threads), parallel efficiency, and the projection to more cores."""
import model
import results


def series(report, direction="compress"):
    """{(codec, dataset, chunk): {threads: rate}} for every codec measured at 1 thread."""
    out = {}
    for c in results.cases(report):
        if "error" in c or c["direction"] != direction:
            continue
        out.setdefault((c["codec"], c["dataset"], c["chunk"]), {})[c.get("threads", 1)] = c["bytes_per_second"]
    return {key: rates for key, rates in out.items() if 1 in rates}


def efficiencies(rates):
    """{threads: parallel efficiency} of one series {threads: rate}."""
    return {n: model.parallel_efficiency(rate, n, rates[1]) for n, rate in sorted(rates.items())}


def projection(rates, cores):
    """The rate on `cores` cores from the largest thread count measured: (rate, threads, efficiency)."""
    largest = max(rates)
    efficiency = model.parallel_efficiency(rates[largest], largest, rates[1])
    return model.projected_rate(rates[1], efficiency, cores), largest, efficiency


def table(report):
    """Markdown: rate and parallel efficiency per codec, direction and thread count."""
    lines = [f"# Codec scaling ({results.host_label(report)})", "",
             "Parallel efficiency E(N) = rate_N / (N x rate_1); 1.00 is the ideal line (docs/METRICS.md).", "",
             "| codec | direction | dataset | chunk | threads | GB/s | ideal GB/s | efficiency |",
             "|---|---|---|---|---|---|---|---|"]
    for direction in ("compress", "decompress"):
        for (codec, dataset, chunk), rates in series(report, direction).items():
            for n, efficiency in efficiencies(rates).items():
                lines.append(f"| {codec} | {direction} | {dataset} | {chunk} | {n} | {rates[n] / 1e9:.2f} | "
                             f"{n * rates[1] / 1e9:.2f} | {efficiency:.2f} |")
    return "\n".join(lines) + "\n"


def measured(report):
    """Does the report hold any codec at more than one thread count?"""
    return any(len(rates) > 1 for rates in series(report).values())
