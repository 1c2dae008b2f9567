"""results/table.md: the paper's table rebuilt from this host's runs. One declared configuration
(data set, codec, chunk, pages; scripts/reproduce's defaults unless overridden) fills every
column, one column per transport; every other configuration stays in the plots. The verdict
compares the compressed pipeline with the uncompressed one of the same run and says "pays" only
when the difference is more than the noise.
"""
import os
import re

import compare_sides
import model
import results

# Kobayashi, Ueno, Kobayashi (ICPP workshops 2026), BlueField-3, bf16 Llama-3.2-1B tensors.
PAPER = {"compressed": 9.0e9, "4k": 10.9e9, "thp": 24.6e9}
ORDER = ["verbs", "tcp", "mem"]  # the paper's transport first; mem is this host's ceiling
MARGIN = 0.05     # without enough repetitions for the U test, a difference must pass this to count
MIN_U_REPS = 4    # per side; the exact U test cannot reach p < 0.05 with 3 vs 3
ALPHA = 0.05
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# The C++ constants the binaries default to: the table declares what they run.
SOURCE_DEFAULTS = {"codec": ("codecs/include/wirezip/codecs/registry.hpp", "kBestCodecSpec"),
                   "dataset": ("datasets/include/wirezip/datasets/dataset.hpp", "kDefaultDatasetSpec")}
SIZE_UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def source_default(which):
    """The default codec or data set spec, read from the C++ header that defines it."""
    path, name = SOURCE_DEFAULTS[which]
    with open(os.path.join(ROOT, path)) as f:
        match = re.search(name + r'\s*=\s*"([^"]+)"', f.read())
    if not match:
        raise ValueError(f"{path}: no {name}")
    return match[1]


def parse_size(text):
    """'1MiB' or '1048576' -> bytes."""
    match = re.fullmatch(r"(\d+)\s*(KiB|MiB|GiB)?", str(text).strip())
    if not match:
        raise ValueError(f"not a size: {text!r} (expected e.g. 1MiB, 256KiB, 65536)")
    return int(match[1]) * SIZE_UNITS[match[2] or ""]


def declared(codec=None, dataset=None, chunk="1MiB", pages="4k"):
    """The headline configuration; codec and data set default to the binaries' own defaults."""
    return {"codec": codec or source_default("codec"), "dataset": dataset or source_default("dataset"),
            "chunk": parse_size(chunk), "pages": pages}


def gbs(rate):
    return f"{rate / 1e9:.2f} GB/s"


def kib(n):
    return f"{n // 1024} KiB"


def short_dataset(spec):
    return spec.split(":", 1)[1] if spec.startswith("synthetic:") else spec


def reps(case):
    return case.get("samples", {}).get("bytes_per_second") or [case["bytes_per_second"]]


def first(cases, **axes):
    """The first case whose axes all equal the given ones, or None."""
    return next((c for c in cases if all(c.get(k) == v for k, v in axes.items())), None)


def select(found, config):
    """Per transport: the declared compressed and raw pipeline cases and the 4k / THP transfers of
    chunk-sized messages (measured or failed), from the headline runs where reproduce made them,
    else from the sweep. A transport gets a column when one of them is there. Returns (table,
    context of the pipeline run, {transport without a column: why})."""
    pipeline_reports = [r for r in (found["headline_pipeline"], found["pipeline"]) if r]
    pipeline = [c for report in pipeline_reports for c in results.cases(report)]
    rdma = [c for report in found["headline_rdma"] + found["rdma"] for c in results.cases(report)
            if c.get("transport") != "memcpy"]
    same = dict(chunk=config["chunk"], pages=config["pages"], dataset=config["dataset"].replace("/", "_"))
    table = {t: {"compressed": first(pipeline, transport=t, mode="overlap", codec=config["codec"], **same),
                 "raw": first(pipeline, transport=t, mode="raw", **same),
                 "4k": first(rdma, transport=t, pages="4k", size=config["chunk"]),
                 "thp": first(rdma, transport=t, pages="thp", size=config["chunk"])} for t in ORDER}
    skipped = {}
    for t in [t for t in ORDER if not any(table[t].values())]:
        mine = [c for c in pipeline + rdma if c.get("transport") == t]
        if mine:
            failed = all("error" in c for c in mine)
            skipped[t] = mine[0]["error"] if failed else "the declared configuration was not run (the plots have the rest)"
        del table[t]
    return table, (pipeline_reports or [{}])[0].get("context", {}), skipped


def pipeline_detail(case):
    """What a pipeline cell measured: codec (compressed only), data set, chunk, pages, mode."""
    codec = f"{case['codec']}, " if case["mode"] != "raw" else ""
    mode = ", overlap" if case["mode"] == "overlap" else ""
    return f"{codec}{short_dataset(case['dataset'])}, {kib(case['chunk'])} chunks, {case['pages']} pages{mode}"


def transfer_detail(case):
    return f"{kib(case['size'])} messages, huge {case.get('huge_fraction', 0):.2f}"


def cell(case, detail):
    if case is None:
        return "not measured"
    if "error" in case:
        return f"failed: {case['error']}"
    n = len(reps(case))
    return f"{gbs(case['bytes_per_second'])} ({detail(case)}, median of {n})"


def significance(comp, raw):
    """(verdict, how it was decided): compression pays, does not pay, or no difference within noise;
    the Mann-Whitney U test where both sides have MIN_U_REPS repetitions, else the MARGIN."""
    c, r = reps(comp), reps(raw)
    enough = len(c) >= MIN_U_REPS and len(r) >= MIN_U_REPS
    row = compare_sides.compare_metric((r, enough), (c, enough), 0.0 if enough else MARGIN, ALPHA)
    word = {"improvement": "compression pays", "regression": "compression does not pay"}.get(
        row["verdict"], "no difference within noise")
    if enough:
        return word, f"Mann-Whitney U p = {row['p_value']:.3g}, {len(c)} vs {len(r)} repetitions"
    return word, f"{100 * MARGIN:g}% margin, {len(c)} vs {len(r)} repetitions (too few for the U test)"


def verdict(transport, row, context):
    comp, raw = row["compressed"], row["raw"]
    if not comp or not raw or "error" in comp or "error" in raw:
        return f"- {transport}: no verdict (the declared pipeline cases were not both measured)."
    word, how = significance(comp, raw)
    factor = comp["bytes_per_second"] / raw["bytes_per_second"]
    text = (f"- **{transport}**: {word} ({how}): {gbs(comp['bytes_per_second'])} of original bytes "
            f"compressed against {gbs(raw['bytes_per_second'])} uncompressed, {factor:.2f}x.")
    if "stage_compress" in comp and "stage_decompress" in comp:
        text += " " + model_text(comp, context, raw["bytes_per_second"])
    return text


def model_text(comp, context, link):
    """The model's prediction for the compressed case, its terms, and what it had to assume."""
    p = model.predict_case(comp, context, link)
    c, d, r = model.codec_rates(comp)
    text = (f"Model: C = {gbs(c)}, D = {gbs(d)}, R = {r:.3f}, L = {gbs(link)} (the uncompressed pipeline): "
            f"min(C, R L, D) = {gbs(model.overlap_rate(c, r, link, d))}")
    if p["shared"]:
        text += (f"; both ends share {p['shared_cores']} CPUs, c_L = {p['link_cpu_per_byte'] * 1e9:.2f} CPU s/GB: "
                 f"N / (w/C + w/D + c_L) = {gbs(p['shared'])}")
    error = comp["bytes_per_second"] / p["rate"] - 1
    if p["run_chunks"]:
        text += f"; for a run of {p['run_chunks']:.0f} chunks, filling and draining the pipeline included"
    text += (f"; predicted {gbs(p['rate'])}, measured {100 * abs(error):.1f}% {'below' if error < 0 else 'above'} it; "
             f"the model says compression {'pays' if p['rate'] > link else 'does not pay'}.")
    return text + "".join(f" ({n})" for n in p["notes"])


def build(found, config):
    """The markdown of results/table.md from results.load_dir() and declared()."""
    table, context, skipped = select(found, config)
    any_report = found["headline_pipeline"] or found["pipeline"] or found["codec"] or (found["rdma"] or [None])[0] or {}
    host = any_report.get("context", {})
    heads = list(table)
    size = kib(config["chunk"])
    lines = [f"# Throughput: this host against the paper ({results.host_label(any_report)})", "",
             f"Host: {host.get('cpu_model', '?')}, {host.get('kernel', '?')}, THP {host.get('thp_enabled', '?')}."]
    for report in found["rdma"]:
        device = report.get("context", {}).get("rdma_device")
        if device:
            lines.append(f"RDMA device: {device} (fw {report['context'].get('rdma_fw_ver', '?')}).")
    lines += ["", f"Declared configuration, every column: data set {config['dataset']}, codec {config['codec']}, "
              f"{size} chunks, {config['pages']} pages, overlap; transfers of {size} messages. "
              "Every other configuration is in the plots.", "",
              "| path | " + " | ".join(heads) + " | paper (BlueField-3) |", "|---" * (len(heads) + 2) + "|"]
    rows = [("lossless compressed, original bytes", "compressed", pipeline_detail, "~9 GB/s"),
            ("uncompressed pipeline, same chunks", "raw", pipeline_detail, "-"),
            ("uncompressed transfer, 4 KiB pages", "4k", transfer_detail, "~10.9 GB/s"),
            ("uncompressed transfer, Transparent Huge Pages", "thp", transfer_detail, "~24.6 GB/s")]
    for label, key, detail, paper in rows:
        lines.append(f"| {label} | " + " | ".join(cell(table[t][key], detail) for t in heads) + f" | {paper} |")
    lines += ["", f"Verdict (end to end, compressed against the uncompressed pipeline of the same run; \"pays\" only "
              f"beyond the noise: Mann-Whitney U test, two-sided p < {ALPHA:g}, where both sides have at least "
              f"{MIN_U_REPS} repetitions, else a {100 * MARGIN:g}% margin):"]
    lines += [verdict(t, table[t], context) for t in heads]
    for t, why in skipped.items():
        lines.append(f"- {t} was not measured: {why}")
    lines += ["", f"Paper: compressed / 4 KiB = {PAPER['compressed'] / PAPER['4k']:.2f}x, compressed / THP = "
              f"{PAPER['compressed'] / PAPER['thp']:.2f}x, THP / 4 KiB = {PAPER['thp'] / PAPER['4k']:.2f}x."]
    for t in heads:
        k4, thp = table[t]["4k"], table[t]["thp"]
        if k4 and thp and "error" not in k4 and "error" not in thp:
            lines.append(f"This host, {t}: THP / 4 KiB = {thp['bytes_per_second'] / k4['bytes_per_second']:.2f}x.")
    return "\n".join(lines) + "\n"
