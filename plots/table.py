"""results/table.md: the paper's table rebuilt from this host's runs, one column per transport,
with the paper's BlueField-3 figures beside them and the verdict."""
import model
import results

# Kobayashi, Ueno, Kobayashi (ICPP workshops 2026), BlueField-3, bf16 Llama-3.2-1B tensors.
PAPER = {"compressed": 9.0e9, "4k": 10.9e9, "thp": 24.6e9}
ORDER = ["verbs", "tcp", "mem"]  # the paper's transport first; mem is this host's ceiling


def gbs(rate):
    return f"{rate / 1e9:.2f} GB/s" if rate else "-"


def best(items, key="bytes_per_second"):
    items = [i for i in items if "error" not in i and key in i]
    return max(items, key=lambda i: i[key]) if items else None


def collect(found):
    """Per transport: the best compressed and raw pipeline cases and the best 4k / THP transfers."""
    pipeline = results.cases(found["pipeline"]) if found["pipeline"] else []
    rdma = [c for report in found["rdma"] for c in results.cases(report) if c.get("transport") != "memcpy"]
    measured = [t for t in ORDER if any(c.get("transport") == t and "error" not in c for c in pipeline + rdma)]
    skipped = {c["transport"]: c["error"] for c in pipeline + rdma if "error" in c and c.get("transport") not in measured}
    table, transports = {}, measured
    for t in transports:
        comp = best([c for c in pipeline if c["transport"] == t and c["mode"] == "overlap"])
        raw = comp and best([c for c in pipeline if c["transport"] == t and c["mode"] == "raw"
                             and c.get("chunk") == comp.get("chunk") and c.get("pages") == comp.get("pages")])
        table[t] = {"compressed": comp, "raw": raw,
                    "4k": best([c for c in rdma if c["transport"] == t and c.get("pages") == "4k"]),
                    "thp": best([c for c in rdma if c["transport"] == t and c.get("pages") == "thp"])}
    return table, skipped


def verdict(transport, row):
    comp, raw = row["compressed"], row["raw"]
    if not comp or not raw:
        return f"- {transport}: no verdict (pipeline results missing)."
    factor = comp["bytes_per_second"] / raw["bytes_per_second"]
    text = (f"- **{transport}**: compression {'pays' if factor > 1 else 'does not pay'}: "
            f"{gbs(comp['bytes_per_second'])} of original bytes compressed ({comp['codec']}) against "
            f"{gbs(raw['bytes_per_second'])} uncompressed, {factor:.2f}x.")
    c, d, r = comp.get("stage_compress"), comp.get("stage_decompress"), comp.get("ratio", 1.0)
    if c and d:
        link = raw["bytes_per_second"]
        predicted = model.overlap_rate(c, r, link, d)
        text += (f" Model: C = {gbs(c)}, D = {gbs(d)}, R = {r:.3f}, L = {gbs(link)}: min(C, R L, D) = "
                 f"{gbs(predicted)}, so it predicts compression {'pays' if predicted > link else 'does not pay'} "
                 f"(break-even link {gbs(model.break_even_link(c, r, d))}). The model counts each stage alone; "
                 f"where both ends share a host's cores, the stages also compete for them.")
    return text


def cell(case, detail):
    return f"{gbs(case['bytes_per_second'])} ({detail(case)})" if case else "-"


def build(found):
    """The markdown of results/table.md from results.load_dir()."""
    table, skipped = collect(found)
    any_report = found["pipeline"] or found["codec"] or (found["rdma"] or [None])[0] or {}
    context = any_report.get("context", {})
    heads = list(table)
    lines = [f"# Throughput: this host against the paper ({results.host_label(any_report)})", "",
             f"Host: {context.get('cpu_model', '?')}, {context.get('kernel', '?')}, THP {context.get('thp_enabled', '?')}."]
    for report in found["rdma"]:
        device = report.get("context", {}).get("rdma_device")
        if device:
            lines.append(f"RDMA device: {device} (fw {report['context'].get('rdma_fw_ver', '?')}).")
    lines += ["", "| path | " + " | ".join(heads) + " | paper (BlueField-3) |", "|---" * (len(heads) + 2) + "|"]
    chunk = lambda c: f"{c['codec']}, {c['chunk'] // 1024} KiB chunks, overlap"  # noqa: E731
    size = lambda c: f"{c['size'] // 1024} KiB messages, huge {c.get('huge_fraction', 0):.2f}"  # noqa: E731
    rows = [("lossless compressed, best configuration, sender side, original bytes", "compressed", chunk, "~9 GB/s"),
            ("uncompressed, 4 KiB pages", "4k", size, "~10.9 GB/s"),
            ("uncompressed, Transparent Huge Pages", "thp", size, "~24.6 GB/s")]
    for label, key, detail, paper in rows:
        lines.append(f"| {label} | " + " | ".join(cell(table[t][key], detail) for t in heads) + f" | {paper} |")
    lines += ["", "Verdict (end to end, compressed against the uncompressed pipeline of the same run):"]
    lines += [verdict(t, table[t]) for t in heads]
    for t, why in skipped.items():
        lines.append(f"- {t} was not measured: {why}")
    lines += ["", f"Paper: compressed / 4 KiB = {PAPER['compressed'] / PAPER['4k']:.2f}x, compressed / THP = "
              f"{PAPER['compressed'] / PAPER['thp']:.2f}x, THP / 4 KiB = {PAPER['thp'] / PAPER['4k']:.2f}x."]
    for t in heads:
        if table[t]["4k"] and table[t]["thp"]:
            lines.append(f"This host, {t}: THP / 4 KiB = "
                         f"{table[t]['thp']['bytes_per_second'] / table[t]['4k']['bytes_per_second']:.2f}x.")
    return "\n".join(lines) + "\n"
