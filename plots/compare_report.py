"""The markdown scripts/compare prints: the context differences, the case/metric table (two files,
or one column per --group-by value), the cases set apart, and the gate's one-line verdict."""
import math

SIDE_NAMES = ("base", "new")


def fmt_value(metric, v):
    """Human units: GB/s (10^9) for throughput, times in ns..s, SI prefixes for other rates,
    3 significant digits."""
    if v is None:
        return "—"
    if metric == "bytes_per_second":
        return f"{sig3(v / 1e9)} GB/s"
    if metric == "ratio":
        return sig3(v)
    if metric in ("real_time", "cpu_time"):  # benchjson keeps these in ns
        for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
            if abs(v) >= scale:
                return f"{sig3(v / scale)} {unit}"
        return f"{sig3(v)} ns"
    if metric.endswith("_us"):
        return f"{sig3(v)} us"
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{sig3(v / scale)}{prefix}"
    return sig3(v)


def sig3(x):
    """x with 3 significant digits, keeping trailing zeros (0.900, not 0.9)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    x = float(f"{x:.2e}")  # round first: 0.9996 becomes 1.00, not 1.000
    decimals = 2 - math.floor(math.log10(abs(x)))
    return f"{x:.{max(decimals, 0)}f}"


def fmt_p(row):
    """The p-value cell: the p, marked when the U test was underpowered, or 'no U test'."""
    if row["verdict"] in ("broken", "bad base"):
        return "—"
    if row["p_value"] is None:
        return "no U test"
    return f"{row['p_value']:.3g}" + ("" if row["u_test"] else " (underpowered)")


def fmt_delta(d):
    return "—" if d is None else f"{d:+.1f}%"


def listing(title, items):
    """A titled bullet list, or nothing when empty."""
    return [title] + [f"- {i}" for i in items] + [""] if items else []


def context_header(diffs, names, required):
    """Lines naming each watched context key that differs from the first file. diffs: per file
    after the first, [(key, first value, its value)]; names: the files' labels."""
    lines = []
    for name, file_diffs in zip(names[1:], diffs):
        for key, first, value in file_diffs:
            why = " (--require-same)" if key in required else ""
            lines.append(f"- {key}: {first!r} in {names[0]}, {value!r} in {name}{why}")
    return (["Context differs (the runs may not be comparable):"] + lines + [""]) if lines else []


def pair_report(labels, result):
    """The two-file markdown: labels, the case/metric table, notes, and the cases set apart."""
    out = [f"**{side}**: " + (", ".join(f"{k}={v}" for k, v in lab.items()) or "(no context)")
           for side, lab in zip(SIDE_NAMES, labels)]
    out += ["", "| case | metric | base | new | delta | p-value | verdict |", "|---|---|---|---|---|---|---|"]
    notes = []
    for row in result["rows"]:
        c = row["cells"][1]
        if c is None:
            continue
        out.append(f"| {row['case']} | {row['metric']} | {fmt_value(row['metric'], c['base'])} | "
                   f"{fmt_value(row['metric'], c['new'])} | {fmt_delta(c['delta_pct'])} | {fmt_p(c)} | {c['verdict']} |")
        if c["note"] and c["note"] not in notes:
            notes.append(c["note"])
    out += [""] + [f"Note: {n}" for n in notes]
    missing, errors = result["missing"], result["errors"]
    out += listing("Only in base:", [m["case"] for m in missing if m["in"] == [0]])
    out += listing("Only in new:", [m["case"] for m in missing if m["in"] == [1]])
    out += listing("Broken in new (fails the gate):", [f"{b['case']}: {b['reason']}" for b in result["broken"]])
    out += bad_base_listing(result)
    out += listing("Skipped in new:", [f"{n['case']}: {n['why']}" for n in result["not_measured"] if n["why"] != "absent"])
    out += listing("Broken or skipped in base (not compared):",
                   [f"{e['case']}: {e['message']}" for e in errors if e["side"] == 0])
    return "\n".join(out)


def group_report(key, groups, result):
    """The --group-by markdown: one column per group value, median and delta vs the first group."""
    out = [f"**{key}={g['value']}**: " + ", ".join(f"{k}={v}" for k, v in g["label"].items())
           + f" ({len(g['files'])} file{'s' if len(g['files']) > 1 else ''})" for g in groups]
    out += ["", "| case | metric | " + " | ".join(f"{key}={g['value']}" for g in groups) + " |",
            "|---|---|" + "---|" * len(groups)]
    for row in result["rows"]:
        cells = []
        for i, c in enumerate(row["cells"]):
            if c is None:
                cells.append("—")
            elif i == 0:
                bad = " (bad base)" if c["verdict"] == "bad base" else ""
                cells.append(fmt_value(row["metric"], c["base"]) + bad)
            elif c["verdict"] in ("broken", "bad base"):
                cells.append(c["verdict"])
            else:
                mark = "" if c["verdict"] == "same" else f", {c['verdict']}"
                mark += "" if c["u_test"] else ", no U test" if c["p_value"] is None else ", underpowered"
                cells.append(f"{fmt_value(row['metric'], c['new'])} ({fmt_delta(c['delta_pct'])}{mark})")
        out.append(f"| {row['case']} | {row['metric']} | " + " | ".join(cells) + " |")
    group = lambda i: f"{key}={groups[i]['value']}"  # noqa: E731
    out += [""] + listing("Missing:", [f"{m['case']}: only in " + ", ".join(group(i) for i in m["in"])
                                       for m in result["missing"]])
    out += listing("Errors:", [f"{e['case']} ({group(e['side'])}): {e['message']}" for e in result["errors"]])
    out += bad_base_listing(result)
    return "\n".join(out)


def bad_base_listing(result):
    return listing("Base value unusable (fails the gate):",
                   [f"{b['case']} {b['metric']}: {b['reason']}" for b in result["bad_base"]])


def gate_line(gate, threshold):
    """The last line: what failed the gate, or that it passed (and what it let through)."""
    failures = []
    if gate["regressions"]:
        failures.append(f"{gate['regressions']} regression(s) past {100 * threshold:g}%")
    if gate["broken"]:
        failures.append(f"{gate['broken']} broken case(s)")
    if gate["not_measured"] and not gate["allow_missing"]:
        failures.append(f"{gate['not_measured']} case(s) of base not measured (--allow-missing accepts them)")
    if gate["bad_base"]:
        failures.append(f"{gate['bad_base']} row(s) without a usable base value")
    if gate["nothing_compared"]:
        failures.append("nothing compared for " + ", ".join(gate["nothing_compared"]))
    if gate.get("expect_failures"):
        failures.append(f"{len(gate['expect_failures'])} expect bound(s) missed")
    if failures:
        return "gate: FAIL: " + ", ".join(failures)
    if gate["not_measured"]:
        return f"gate: pass ({gate['not_measured']} case(s) of base not measured, accepted by --allow-missing)"
    return "gate: pass"
