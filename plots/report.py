"""scripts/report: results/*.json -> results/table.md, results/scaling.md (when the codecs ran at
several thread counts) and results/plots/*.png."""
import argparse
import os
import sys

import figures
import per_tensor
import results
import scaling
import table


def main(argv=None):
    parser = argparse.ArgumentParser(description="Turn the benchmarks' JSON into the table and the plots.")
    parser.add_argument("results", nargs="?", default="results", help="directory with codec.json, rdma-*.json, pipeline.json")
    declared = parser.add_argument_group("the table's declared configuration (default: scripts/reproduce's)")
    declared.add_argument("--dataset", help="data set spec (default: the binaries' default, the weights)")
    declared.add_argument("--codec", help="codec spec (default: the best codec, kBestCodecSpec)")
    declared.add_argument("--chunk", default="1MiB", help="chunk size, also the transfers' message size (default 1MiB)")
    declared.add_argument("--pages", default="4k", help="page policy of the pipeline's buffers (default 4k)")
    args = parser.parse_args(argv)
    try:
        config = table.declared(args.codec, args.dataset, args.chunk, args.pages)
        found = results.load_dir(args.results)
        tensors = per_tensor.write(args.results)  # bench_codec --per-tensor, when its JSON is there
    except (OSError, ValueError) as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    if not (found["codec"] or found["rdma"] or found["pipeline"] or found["headline_pipeline"]):
        if tensors:
            print(f"report: wrote {', '.join(tensors)}")
            return 0
        print(f"report: no benchmark JSON in {args.results}", file=sys.stderr)
        return 2
    path = os.path.join(args.results, "table.md")
    with open(path, "w") as f:
        f.write(table.build(found, config))
    if found["codec"] and scaling.measured(found["codec"]):
        scaling_path = os.path.join(args.results, "scaling.md")
        with open(scaling_path, "w") as f:
            f.write(scaling.table(found["codec"]))
        print(f"report: wrote {scaling_path}")
    written = figures.write_all(found, os.path.join(args.results, "plots"))
    print(f"report: wrote {path} and {len(written)} plots in {os.path.join(args.results, 'plots')}")
    if tensors:
        print(f"report: wrote {', '.join(tensors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
