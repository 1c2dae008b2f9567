"""`scripts/history html OUT_DIR`: a static dashboard of the history (docs/HISTORY.md).

Why static: CI runners keep artifacts, not servers; the site opens from file:// or any artifact
store with no network. index.html lists every series (case and runner class) grouped by binary,
with an inline SVG sparkline and the check's latest verdict; one page per series draws each metric
over the runs with Chart.js (Debian's libjs-chart.js, copied into the site): the median per run,
the spread of its repetitions, the change points marked, and the commit, date and context of a run
on hover. Verdicts and change points are the ones `scripts/history check` computes.
"""
import hashlib
import html
import json
import os
import re
import shutil

import history_changes
import history_check
import numpy as np
from compare_input import BadInput

CHART_JS_CANDIDATES = ("/usr/share/javascript/chart.js/chart.min.js", "/usr/share/javascript/chart.js/Chart.min.js")
# Context keys shown on hover: what tells two runs' machines and builds apart.
HOVER_KEYS = ("host_name", "hostname", "cpu_model", "kernel", "simd_path", "thp_enabled", "rdma_device",
              "rdma_fw_ver", "wirezip_version", "library_build_type")
VERDICT_ORDER = ("broken", "regression", "improvement", "new", "same")
PAGE_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse; }}
td, th {{ padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; font-size: 90%; }}
.regression, .broken {{ color: #b00; font-weight: bold; }} .improvement {{ color: #070; }}
h1 {{ font-size: 130%; overflow-wrap: anywhere; }} code {{ font-size: 90%; }}
.chart {{ max-width: 1000px; height: 360px; }}
</style>
{script}</head><body>
"""


def find_chart_js(given=None):
    """Path of Chart.js (>= 3); BadInput naming what to install when it is absent."""
    for path in ([given] if given else CHART_JS_CANDIDATES):
        if os.path.isfile(path):
            return path
    raise BadInput(f"{given or CHART_JS_CANDIDATES[0]}: Chart.js not found (install Debian's libjs-chart.js, "
                   "or give --chart-js=PATH)")


def page_name(klass, case):
    """A file name per series: readable, and unique through a hash of the full name."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", case).strip("_")[:80]
    return f"{slug}-{hashlib.sha256(f'{klass}/{case}'.encode()).hexdigest()[:8]}.html"


def binary_of(case):
    """The binary a case comes from: the first part of its name (codec/, rdma/, pipeline/, collective/)."""
    return case.split("/", 1)[0]


def sparkline(values, marks, width=160, height=28):
    """An inline SVG polyline of values with a dot on each marked index; no script needed."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return "<svg width='%d' height='%d'></svg>" % (width, height)
    lo, hi = min(v for _, v in points), max(v for _, v in points)
    span, n = (hi - lo) or 1.0, len(values) - 1

    def xy(i, v):
        return 2 + (width - 4) * i / n, height - 2 - (height - 4) * (v - lo) / span

    line = " ".join("%.1f,%.1f" % xy(i, v) for i, v in points)
    dots = "".join("<circle cx='%.1f' cy='%.1f' r='2.5' fill='#d00'/>" % xy(i, values[i])
                   for i in marks if values[i] is not None)
    return (f"<svg class='spark' width='{width}' height='{height}'><polyline points='{line}' fill='none' "
            f"stroke='#36c' stroke-width='1.2'/>{dots}</svg>")


def run_points(runs, contexts):
    """Per run: what the chart plots and shows on hover."""
    out = []
    for r in runs:
        context = contexts.get(r["run_id"], {})
        reps = r["reps"] or ([r["value"]] if r["value"] is not None else [])
        out.append({"sha": (r["git_sha"] or "?")[:12], "date": r["date"], "status": r["status"],
                    "reason": r["reason"], "median": r["value"], "min": min(reps) if reps else None,
                    "max": max(reps) if reps else None,
                    "context": [f"{k}: {context[k]}" for k in HOVER_KEYS if k in context]})
    return out


def all_change_points(runs, opts, rng):
    """Indexes (into runs) of every change point of the usable part of the series, old ones too."""
    usable = [i for i, r in enumerate(runs) if r["status"] == "ok" and r["value"] is not None and r["value"] > 0]
    if len(usable) < 4:
        return []
    points = history_changes.change_points([runs[i]["value"] for i in usable], opts["alpha"], opts["permutations"],
                                           rng)
    return [usable[i] for i, _ in points]


def verdict_text(finding):
    """The index's short verdict: what moved, by how much, since which commit."""
    if finding is None:
        return "same", ""
    v = finding["verdict"]
    if v in ("broken", "new"):
        return v, finding.get("reason", "")
    if v == "same":
        return v, ""
    change, step = finding["change"], finding["step"]
    if change and change["verdict"] == v:
        return v, f"{change['delta_pct']:+.1f}% since {change['points'][0]['git_sha']} (e-divisive)"
    return v, f"{step['delta_pct']:+.1f}% in {finding['git_sha']} (mann-whitney step)"


def series_page(title, klass, metrics):
    """The HTML of one series' page; metrics: [(metric, direction, points, change indexes, verdict)]."""
    body = [PAGE_HEAD.format(title=html.escape(title), script="<script src='chart.min.js'></script>"),
            f"<p><a href='index.html'>all cases</a></p><h1>{html.escape(title)}</h1>",
            f"<p>runner class <code>{html.escape(klass)}</code></p>"]
    data = []
    for n, (metric, direction, points, marks, (verdict, why)) in enumerate(metrics):
        body.append(f"<h2>{html.escape(metric)} ({direction} is better): "
                    f"<span class='{verdict}'>{verdict}</span> {html.escape(why)}</h2>"
                    f"<div class='chart'><canvas id='chart{n}' data-metric='{html.escape(metric)}'></canvas></div>")
        moved = ", ".join(f"<code>{html.escape(points[i]['sha'])}</code> ({html.escape(points[i]['date'][:10])})"
                          for i in marks)
        body.append(f"<p class='changes'>change points (e-divisive): {moved or 'none'}</p>")
        data.append({"canvas": f"chart{n}", "metric": metric, "points": points, "changes": marks})
    # No "<" at all inside the script element: "</script" would end it and "<!--<script" would make
    # its own end tag text; \u003c reads back the same from JSON.
    payload = json.dumps(data).replace("<", "\\u003c")
    body.append(f"<script id='series' type='application/json'>{payload}</script>")
    body.append("<script src='series.js'></script></body></html>\n")
    return "".join(body)


def index_page(rows):
    """rows: [(binary, case, klass, page, verdict, why, spark)] in display order."""
    body = [PAGE_HEAD.format(title="wirezip history", script=""), "<h1>wirezip history</h1>",
            f"<p>{len(rows)} series. Red dots: change points (e-divisive). Verdicts as "
            "<code>scripts/history check</code> gives them.</p>"]
    current = None
    for binary, case, klass, page, verdict, why, spark in rows:
        if binary != current:
            if current is not None:
                body.append("</table>")
            body.append(f"<h2>{html.escape(binary)}</h2><table><tr><th>case</th><th>runner class</th>"
                        "<th>trend</th><th>latest verdict</th></tr>")
            current = binary
        body.append(f"<tr class='series'><td><a href='{page}'>{html.escape(case)}</a></td><td><code>"
                    f"{html.escape(klass)}</code></td><td>{spark}</td><td><span class='{verdict}'>{verdict}</span> "
                    f"{html.escape(why)}</td></tr>")
    if current is not None:
        body.append("</table>")
    body.append("</body></html>\n")
    return "".join(body)


def build(db, out_dir, metrics, opts, chart_js):
    """Writes the site into out_dir; returns the number of series pages."""
    contexts = {run: json.loads(text) for run, text in db.execute("SELECT id, context FROM runs")}
    findings = {(f["runner_class"], f["case"], f["metric"]): f for f in history_check.check(db, metrics, opts)}
    pages = {}
    for metric, direction in metrics:
        for (klass, case), runs in history_check.load_series(db, metric).items():
            if all(r["value"] is None for r in runs):
                continue
            runs = runs[-opts["last"]:]
            marks = all_change_points(runs, opts, np.random.default_rng([opts["seed"], len(pages)]))
            verdict = verdict_text(findings.get((klass, case, metric)))
            pages.setdefault((klass, case), []).append((metric, direction, run_points(runs, contexts), marks,
                                                        verdict))
    if not pages:
        raise BadInput(f"no case in the history has any of {', '.join(m for m, _ in metrics)}")
    try:
        return write_site(out_dir, pages, chart_js)
    except OSError as e:
        raise BadInput(f"{out_dir}: cannot write the site: {e.strerror}") from None


def write_site(out_dir, pages, chart_js):
    """The files of the site; returns the number of series pages."""
    os.makedirs(out_dir, exist_ok=True)
    shutil.copyfile(chart_js, os.path.join(out_dir, "chart.min.js"))
    shutil.copyfile(os.path.join(os.path.dirname(os.path.realpath(__file__)), "history_html.js"),
                    os.path.join(out_dir, "series.js"))
    rows = []
    for (klass, case), charts in sorted(pages.items(), key=lambda kv: (binary_of(kv[0][1]), kv[0][1], kv[0][0])):
        page = page_name(klass, case)
        with open(os.path.join(out_dir, page), "w") as f:
            f.write(series_page(case, klass, charts))
        _, _, points, marks, _ = charts[0]
        worst = min((c[4] for c in charts), key=lambda v: VERDICT_ORDER.index(v[0]))
        rows.append((binary_of(case), case, klass, page, *worst, sparkline([p["median"] for p in points], marks)))
    with open(os.path.join(out_dir, "index.html"), "w") as f:
        f.write(index_page(rows))
    return len(rows)
