"""scripts/envelope: from measured codec rates, where compression pays.

For each codec (bench_codec JSON, 1 thread, one chunk size): C, D, R; whether it pays on the given
link (overlapped and serial pipeline); the break-even link rate; and the bound S on a training
step's speedup when communication is a share p of the step. With --shared-cores N both ends are
taken to run on one host's N cores (loopback, scripts/linkbed): the overlapped rate is also capped
at N / (1/C + 1/D + c_L), c_L from --link-cpu. With --cores N each codec is projected to N cores
from the parallel efficiency of its largest measured thread count, and checked against the paper's
two RDMA baselines.
"""
import argparse
import sys

import model
import results
import scaling

BASELINES = [(10.9e9, "4 KiB pages"), (24.6e9, "THP")]  # the paper's plain RDMA on BlueField-3, bytes/s


def link_from(path):
    """The best measured transfer rate in a bench_rdma JSON (not the memcpy ceiling)."""
    rates = [c["bytes_per_second"] for c in results.cases(results.load(path))
             if "error" not in c and c.get("transport") != "memcpy" and "bytes_per_second" in c]
    if not rates:
        raise ValueError(f"{path}: no measured transfer")
    return max(rates)


def rows(report, link, p, chunk=None, threads=1, cores=None, link_cpu_per_byte=0.0):
    """One dict per codec with its rates and verdicts; cores: both ends share that many CPUs."""
    cases = [c for c in results.cases(report) if "error" not in c and c.get("threads", 1) == threads]
    chunks = sorted({c["chunk"] for c in cases})
    chunk = chunk or (1 << 20 if 1 << 20 in chunks else chunks[-1])
    comp = {c["codec"]: c for c in cases if c["chunk"] == chunk and c["direction"] == "compress"}
    decomp = {c["codec"]: c for c in cases if c["chunk"] == chunk and c["direction"] == "decompress"}
    out = []
    for codec, c in comp.items():
        if codec not in decomp:
            continue
        rate_c, rate_d, ratio = c["bytes_per_second"], decomp[codec]["bytes_per_second"], c["ratio"]
        cap = model.shared_core_rate(rate_c, rate_d, cores, link_cpu_per_byte) if cores else float("inf")
        overlap = min(model.overlap_rate(rate_c, ratio, link, rate_d), cap)
        out.append({"codec": codec, "C": rate_c, "D": rate_d, "R": ratio, "overlap": overlap,
                    "serial": model.serial_rate(rate_c, ratio, link, rate_d),
                    "pays": overlap > link, "break_even": min(model.break_even_link(rate_c, ratio, rate_d), cap),
                    "break_even_serial": model.break_even_link(rate_c, ratio, rate_d, serial=True),
                    "step_speedup": model.step_speedup(p, overlap / link)})
    return chunk, out


def projections(report, cores, chunk=None):
    """Per codec at one chunk size: C and D projected to `cores` cores, each from its own largest
    thread count. Returns (chunk, [{"codec", "C", "D", "C_from": (threads, efficiency), "D_from": ...}])."""
    comp, decomp = scaling.series(report, "compress"), scaling.series(report, "decompress")
    chunks = sorted({key[2] for key in comp})
    if not chunks:
        raise ValueError("no codec measured at 1 thread: nothing to project from")
    chunk = chunk or (1 << 20 if 1 << 20 in chunks else chunks[-1])
    out = []
    for key, rates in comp.items():
        if key[2] != chunk or key not in decomp or key[0] == "memcpy":
            continue
        c, c_threads, c_eff = scaling.projection(rates, cores)
        d, d_threads, d_eff = scaling.projection(decomp[key], cores)
        out.append({"codec": key[0], "C": c, "D": d, "C_from": (c_threads, c_eff), "D_from": (d_threads, d_eff)})
    return chunk, out


def print_projections(report, cores, chunk):
    chunk, table = projections(report, cores, chunk)
    print(f"\nprojection to {cores} cores (not a measurement: each rate is the 1-thread rate x {cores} x the "
          f"parallel efficiency at the largest thread count measured, on this host's cores), chunk {chunk} bytes")
    print("| codec | projected C GB/s | projected D GB/s | "
          + " | ".join(f"min(C, D) reaches {rate / 1e9:g} GB/s ({name})" for rate, name in BASELINES) + " |")
    print("|---|---|---|" + "---|" * len(BASELINES))
    for r in sorted(table, key=lambda r: -min(r["C"], r["D"])):
        reach = " | ".join("yes" if min(r["C"], r["D"]) >= rate else "no" for rate, _ in BASELINES)
        print(f"| {r['codec']} | {r['C'] / 1e9:.2f} | {r['D'] / 1e9:.2f} | {reach} |")
    for r in table:
        for stage in ("C", "D"):
            threads, efficiency = r[f"{stage}_from"]
            print(f"{r['codec']} {stage}: projection: {cores} cores from {threads} thread(s) measured at "
                  f"efficiency {efficiency:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Where does compression pay? From measured codec rates.")
    parser.add_argument("codec_json", nargs="?", default="results/codec.json")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--link", type=float, help="link rate in GB/s (10^9 bytes/s), e.g. 10.9")
    group.add_argument("--link-from", help="a bench_rdma JSON: use its best measured transfer rate")
    parser.add_argument("--p", type=float, default=0.3, help="communication share of a training step (0..1)")
    parser.add_argument("--chunk", type=int, help="chunk size in bytes (default 1 MiB, else the largest)")
    parser.add_argument("--shared-cores", type=int, metavar="N",
                        help="both ends run on one host's N CPUs: cap the overlapped rate at N / (1/C + 1/D + c_L)")
    parser.add_argument("--link-cpu", type=float, default=0.0, metavar="S",
                        help="c_L: CPU seconds both ends spend per GB of original bytes the link carries (default 0)")
    parser.add_argument("--cores", type=int, metavar="N",
                        help="also project each codec to N cores (BlueField-3 has 16) from its measured scaling")
    args = parser.parse_args(argv)
    try:
        if not 0 <= args.p <= 1:
            raise ValueError("--p must be in [0, 1]")
        link = args.link * 1e9 if args.link else link_from(args.link_from) if args.link_from else 10.9e9
        if link <= 0:
            raise ValueError("--link must be positive")
        if args.shared_cores is not None and args.shared_cores <= 0 or args.link_cpu < 0:
            raise ValueError("--shared-cores must be positive and --link-cpu not negative")
        if args.cores is not None and args.cores <= 0:
            raise ValueError("--cores must be positive")
        report = results.load(args.codec_json)
        chunk, table = rows(report, link, args.p, args.chunk, cores=args.shared_cores,
                            link_cpu_per_byte=args.link_cpu / 1e9)
        if args.cores:
            projections(report, args.cores, args.chunk)  # refuse a file with nothing to project before printing
    except (OSError, ValueError, KeyError) as e:
        print(f"envelope: {e}", file=sys.stderr)
        return 2
    print(f"link L = {link / 1e9:.2f} GB/s, chunk {chunk} bytes, communication share p = {args.p}")
    if args.shared_cores:
        print(f"both ends share {args.shared_cores} CPUs: overlap capped at N / (1/C + 1/D + c_L), "
              f"c_L = {args.link_cpu:g} CPU s/GB" + ("" if args.link_cpu else " (the link's CPU not counted)"))
    print("| codec | C GB/s | D GB/s | R | overlap GB/s | serial GB/s | pays (overlap) | break-even L (overlap) "
          "| break-even L (serial) | step speedup S |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(table, key=lambda r: -r["overlap"]):
        print(f"| {r['codec']} | {r['C'] / 1e9:.2f} | {r['D'] / 1e9:.2f} | {r['R']:.3f} | {r['overlap'] / 1e9:.2f} | "
              f"{r['serial'] / 1e9:.2f} | {'yes' if r['pays'] else 'no'} | {r['break_even'] / 1e9:.2f} | "
              f"{r['break_even_serial'] / 1e9:.2f} | {r['step_speedup']:.3f} |")
    if args.cores:
        print_projections(report, args.cores, args.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
