"""Our verbs bandwidth as a ratio of perftest's ib_write_bw, per message size, on the same device.

    scripts/perftest-compare --bench=rdma-verbs.json [--pages=4k] [--json-out=FILE] [--min-ratio=R]
                             IB_WRITE_BW_OUTPUT...

Each IB_WRITE_BW_OUTPUT is the client side's stdout of one `ib_write_bw` run (one size, or -a for
many). perftest's figure is its "BW average": bytes of the measured iterations over the time from
the first post to the last completion. Its unit is in the table header: "MB/sec" (perftest 4.5, and
"MiB/sec" in later releases) means 2^20 bytes per second (perftest_parameters.c divides by
0x100000; `ib_write_bw --help` says "MiB=2^20 byte"), "Gb/sec" (--report_gbits) means 10^9 bits per
second. bench_rdma's `bytes_per_second` of the rdma/verbs cases with the same size and page policy
is the other side (median over repetitions where there are some). Both are printed in MB/s = 10^6
bytes per second; the ratio is ours / perftest's.

On soft-RoCE both sides are emulation-bound (~100 MB/s): the absolute numbers mean nothing there, the
ratio says whether our harness adds overhead. On real hardware --min-ratio makes it an acceptance
check (exit 1 below it). Exit 2 on bad input, with one line saying what was wrong.
"""
import argparse
import json
import re
import sys

import results

UNITS = {"MB/sec": 2**20, "MiB/sec": 2**20, "Gb/sec": 125_000_000}
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+|inf|nan|-nan)\s+([\d.]+)\s+([\d.]+)\s*$")
HEADER = re.compile(r"BW average\[([^\]]+)\]")


def parse_ib_write_bw(text, source="ib_write_bw output"):
    """{'settings': {key: value} from the banner, 'bw': {size: BW average in bytes/s}}; ValueError if none."""
    settings, bw, unit = {}, {}, None
    for line in text.splitlines():
        header = HEADER.search(line)
        if header:
            if header.group(1) not in UNITS:
                raise ValueError(f"{source}: unknown bandwidth unit [{header.group(1)}]")
            unit = UNITS[header.group(1)]
            continue
        row = ROW.match(line)
        if row and unit:
            bw[int(row.group(1))] = float(row.group(4)) * unit
            continue
        for part in re.split(r"\t{2,}", line):  # the banner has two "key : value" columns
            key, sep, value = part.partition(":")
            if sep and key.strip():
                settings.setdefault(" ".join(key.split()), value.strip())
    if unit is None:
        raise ValueError(f"{source}: no ib_write_bw result header (BW average[...]); is this the client's output?")
    if not bw:
        raise ValueError(f"{source}: ib_write_bw printed its header but no result row (did the run fail?)")
    return {"settings": settings, "bw": bw}


def bench_bandwidth(report, pages="4k", transport="verbs"):
    """{size: bytes_per_second} of the rdma/<transport> cases on `pages`, and {size: error} of failed ones."""
    bw, errors = {}, {}
    for case in results.cases(report):
        if case.get("family") != "rdma" or case.get("transport") != transport or case.get("pages") != pages:
            continue
        if "error" in case:
            errors[case["size"]] = case["error"]
        elif case["size"] not in bw:  # several depths or QPs: the first registered, as the binary ran them
            bw[case["size"]] = case["bytes_per_second"]
    return bw, errors


def compare(perftest_bw, bench_bw, bench_errors=None):
    """One row per size seen on either side: both rates (bytes/s or None) and the ratio ours / perftest's."""
    rows = []
    for size in sorted(set(perftest_bw) | set(bench_bw) | set(bench_errors or {})):
        theirs, ours = perftest_bw.get(size), bench_bw.get(size)
        rows.append({"size": size, "ib_write_bw_bytes_per_second": theirs, "bench_rdma_bytes_per_second": ours,
                     "ratio": ours / theirs if ours and theirs else None,
                     **({"bench_rdma_error": bench_errors[size]} if size in (bench_errors or {}) else {})})
    return rows


def _size(n):
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _rate(value):
    return "missing" if value is None else f"{value / 1e6:.1f}"


def markdown(rows, caption):
    lines = [caption, "", "| size | ib_write_bw MB/s | bench_rdma MB/s | ratio |", "|---|---|---|---|"]
    for r in rows:
        ours = f"error: {r['bench_rdma_error']}" if "bench_rdma_error" in r else _rate(r["bench_rdma_bytes_per_second"])
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {_size(r['size'])} | {_rate(r['ib_write_bw_bytes_per_second'])} | {ours} | {ratio} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("perftest", nargs="+", help="ib_write_bw client outputs")
    parser.add_argument("--bench", required=True, help="bench_rdma --transport=verbs JSON")
    parser.add_argument("--pages", default="4k", help="page policy of the bench_rdma cases (perftest's are 4k)")
    parser.add_argument("--json-out", help="also write the rows and both sides' context here")
    parser.add_argument("--min-ratio", type=float, help="exit 1 when a size's ratio is below this")
    args = parser.parse_args(argv)
    try:
        perftest_bw, settings = {}, {}
        for path in args.perftest:
            try:
                with open(path) as f:
                    parsed = parse_ib_write_bw(f.read(), path)
            except OSError as e:
                raise ValueError(f"{path}: {e.strerror}") from e
            perftest_bw.update(parsed["bw"])
            settings = settings or parsed["settings"]
        report = results.load(args.bench)
        bench_bw, errors = bench_bandwidth(report, args.pages)
        rows = compare(perftest_bw, bench_bw, errors)
        if not any(r["ratio"] for r in rows):
            raise ValueError(f"no message size has both an ib_write_bw result and a bench_rdma verbs case on "
                             f"pages {args.pages} (perftest sizes {sorted(perftest_bw)}, ours {sorted(bench_bw)})")
    except ValueError as e:
        print(f"perftest-compare: {e}", file=sys.stderr)
        return 2
    context = report.get("context", {})
    caption = (f"bench_rdma --transport=verbs (pages {args.pages}) / ib_write_bw (BW average), device "
               f"{context.get('rdma_device', '?')} fw {context.get('rdma_fw_ver', '?')} mtu "
               f"{context.get('rdma_active_mtu', '?')}; perftest: {settings.get('Device', '?')}, tx depth "
               f"{settings.get('TX depth', '?')}, {settings.get('Number of qps', '?')} QP(s); MB = 10^6 bytes")
    print(markdown(rows, caption))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"rows": rows, "pages": args.pages, "bench": args.bench, "perftest": args.perftest,
                       "bench_context": context, "perftest_settings": settings}, f, indent=2)
    low = [r for r in rows if args.min_ratio is not None and (r["ratio"] is None or r["ratio"] < args.min_ratio)]
    if low:
        print(f"perftest-compare: below --min-ratio {args.min_ratio}: "
              + ", ".join(_size(r["size"]) for r in low), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
