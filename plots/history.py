"""scripts/history: a results history of wirezip's benchmark runs in one SQLite file (docs/HISTORY.md).

  history record RESULT.json...  records every case of each file (a file already recorded is skipped)
  history merge FROM.sqlite...   copies the runs of other histories that the database lacks
  history check                  judges the newest run of each case against its runner class's earlier
                                 runs (E-divisive change points and a Mann-Whitney step test);
                                 --expect=FILE adds absolute bounds (plots/expect.py)
  history html OUT_DIR           writes a static dashboard (index.html, a page per case) that opens
                                 from file:// with no network
  history export --format=F      the newest run of each series as Bencher's BMF (bmf) or
                                 github-action-benchmark's custom JSON (github-action-benchmark)

The database is --db=PATH, else $WIREZIP_HISTORY, else results/history.sqlite.
Exit status: 0 fine, 1 a significant regression, a broken case or a missed bound (check), 2 bad input (one line on
stderr): an unreadable, truncated or non-JSON result file (nothing recorded), a database that is
corrupt or another program's (left untouched), a bad option.
"""
import argparse
import json
import math
import os
import sys

import expect
import history_check
import history_export
import history_html
import history_store
from compare_input import BadInput
from compare_sides import parse_metrics


def add_check_options(p):
    """The options of check's rules; html shows the same verdicts, so it takes them too."""
    p.add_argument("--metrics", default="bytes_per_second",
                   help="comma-separated; a metric of unknown direction as NAME:higher or NAME:lower")
    p.add_argument("--threshold", default="5%", help="relative move counted as a regression (default 5%%)")
    p.add_argument("--alpha", default="0.05", help="significance of both rules, in (0, 1) (default 0.05)")
    p.add_argument("--permutations", type=int, default=199, help="permutations per change-point test (default 199)")
    p.add_argument("--seed", type=int, default=1, help="seed of the permutations (default 1)")
    p.add_argument("--recent", type=int, default=10,
                   help="a change point among this many newest runs counts (default 10)")
    p.add_argument("--last", type=int, default=100,
                   help="newest runs of each series the rules read (default 100; the test's cost grows as N^2)")
    p.add_argument("--window", type=int, default=5, help="earlier runs the step test pools (default 5)")


def parse_args(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="PATH", help="history database (default $WIREZIP_HISTORY or "
                                                     "results/history.sqlite)")
    p = argparse.ArgumentParser(prog="history", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    sub = p.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", parents=[common], help="record result files")
    rec.add_argument("files", nargs="+", metavar="RESULT.json")
    mrg = sub.add_parser("merge", parents=[common], help="copy the runs of other histories into the database")
    mrg.add_argument("sources", nargs="+", metavar="FROM.sqlite")
    chk = sub.add_parser("check", parents=[common], help="judge the newest run of each case")
    add_check_options(chk)
    chk.add_argument("--expect", metavar="FILE",
                   help="absolute bounds, one 'CASE_GLOB METRIC >= VALUE' (or <=) a line; exit 1 when one is missed")
    chk.add_argument("--json-out", metavar="FILE", help="also write the findings as JSON")
    web = sub.add_parser("html", parents=[common], help="write a static dashboard into OUT_DIR")
    web.add_argument("out_dir", metavar="OUT_DIR")
    web.add_argument("--chart-js", metavar="PATH", help="Chart.js (>= 3) to copy into the site (default: Debian's "
                                                        "libjs-chart.js)")
    add_check_options(web)
    exp = sub.add_parser("export", parents=[common], help="the newest run of each series in a hosted tracker's format")
    exp.add_argument("--format", required=True, choices=history_export.FORMATS)
    exp.add_argument("--metrics", default="bytes_per_second",
                     help="comma-separated, as for check (github-action-benchmark: one direction per file)")
    exp.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    return p.parse_args(argv)


def check_options(args):
    """The check's options as numbers; BadInput naming the option when one is out of range."""
    try:
        threshold = float(args.threshold.rstrip("%")) / 100
        alpha = float(args.alpha)
    except ValueError:
        raise BadInput(f"--threshold {args.threshold!r} / --alpha {args.alpha!r}: not a number") from None
    if not math.isfinite(threshold) or threshold < 0:
        raise BadInput(f"--threshold {args.threshold!r}: must be a finite percentage >= 0")
    if not 0 < alpha < 1:
        raise BadInput(f"--alpha {args.alpha!r}: must be in (0, 1)")
    for name in ("permutations", "recent", "window", "last"):
        if getattr(args, name) < 1:
            raise BadInput(f"--{name} {getattr(args, name)}: must be >= 1")
    return {"threshold": threshold, "alpha": alpha, "permutations": args.permutations, "seed": args.seed,
            "recent": args.recent, "window": args.window, "last": args.last}


def run_record(args, path):
    db = history_store.open_db(path, create=True)
    try:
        for file, run in history_store.record(db, args.files):
            print(f"{file}: recorded as run {run}" if run else f"{file}: already recorded, nothing to do")
    finally:
        db.close()
    return 0


def run_merge(args, path):
    sources = [history_store.open_db(source, create=False) for source in args.sources]
    db = history_store.open_db(path, create=True)
    try:
        for name, source in zip(args.sources, sources):
            print(f"{name}: {history_store.merge(db, source)} run(s) copied")
    finally:
        db.close()
        for source in sources:
            source.close()
    return 0


def run_check(args, path):
    metrics, opts = parse_metrics(args.metrics), check_options(args)
    rules = expect.parse(args.expect) if args.expect else []
    db = history_store.open_db(path, create=False)
    try:
        findings = history_check.check(db, metrics, opts)
        bounds = expect.judge(rules, *history_check.newest_values(db, {r["metric"] for r in rules}))
    finally:
        db.close()
    for f in findings:
        if f["verdict"] != "same":
            print(history_check.describe(f))
    for line in bounds:
        print(line)
    failing = [f for f in findings if f["verdict"] in ("regression", "broken")]
    print(f"{len(findings)} case/metric series checked, {len(failing)} failing "
          f"(threshold {100 * opts['threshold']:g}%, alpha {opts['alpha']:g})"
          + (f"; {len(rules)} expect rule(s), {len(bounds)} missed" if rules else ""))
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"options": opts, "findings": findings, "expect_failures": bounds}, out, indent=1)
    return 1 if failing or bounds else 0


def run_html(args, path):
    metrics, opts = parse_metrics(args.metrics), check_options(args)
    chart_js = history_html.find_chart_js(args.chart_js)
    db = history_store.open_db(path, create=False)
    try:
        pages = history_html.build(db, args.out_dir, metrics, opts, chart_js)
    finally:
        db.close()
    print(f"{os.path.join(args.out_dir, 'index.html')}: {pages} series")
    return 0


def run_export(args, path):
    metrics = parse_metrics(args.metrics)
    db = history_store.open_db(path, create=False)
    try:
        out = history_export.export(db, args.format, metrics)
    finally:
        db.close()
    history_export.write(out, args.output)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    path = args.db or history_store.default_path()
    try:
        return {"record": run_record, "merge": run_merge, "check": run_check, "html": run_html,
                "export": run_export}[args.command](args, path)
    except BadInput as e:
        print(f"history: {e}", file=sys.stderr)
        return 2
