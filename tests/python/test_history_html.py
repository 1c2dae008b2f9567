"""scripts/history html: the static dashboard, opened in headless Chromium (Debian's `chromium`, which
scripts/setup installs). The history holds a known step (-12% six runs before the newest), a flat
case of another binary and a case whose newest run failed; the pages must show every case, the
commit of the step, every run's point, and load without a console error."""
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

from test_history import HistoryRun, entries, levels

import history_html  # noqa: E402  (test_history put plots/ on the path)

CHROMIUM = shutil.which("chromium")
CHART_JS = "/usr/share/javascript/chart.js/chart.min.js"
RUNS = 30
STEP_CASE = "codec/lz4/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"
FLAT_CASE = "pipeline/codec:lz4/transport:tcp/size:1048576/real_time"
FAILING_CASE = "codec/zstd/synthetic:weights:size=2MiB:seed=1/chunk:65536/compress/real_time/threads:1"
STEP_SHA = f"sha{RUNS - 6:03d}"  # the first run after the step


def chromium(*args, timeout=120):
    """Runs headless Chromium; returns (stdout, its console messages). --no-sandbox: the test may
    run as root (a CI container), where Chromium's sandbox refuses to start."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                 f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args],
                                capture_output=True, text=True, timeout=timeout)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result.stdout, console


@unittest.skipUnless(os.path.isfile(CHART_JS), "Debian's libjs-chart.js is not installed (scripts/setup installs it)")
class Dashboard(HistoryRun):
    def setUp(self):
        super().setUp()
        rng = random.Random(3)
        step, flat, other = levels("step", RUNS, rng), levels("flat", RUNS, rng), levels("flat", RUNS, rng)
        paths = [self.write(i, entries(STEP_CASE, step[i], rng) + entries(FLAT_CASE, flat[i], rng)
                            + entries(FAILING_CASE, other[i], rng, "verify: XXH3 mismatch" if i == RUNS - 1 else None))
                 for i in range(RUNS)]
        self.assertEqual(self.history("record", *paths)[0], 0)
        self.site = os.path.join(self.dir.name, "site")
        code, out, err = self.history("html", self.site)
        self.assertEqual(code, 0, err)
        self.assertIn("3 series", out)

    def page_of(self, case):
        with open(os.path.join(self.site, "index.html")) as f:
            index = f.read()
        match = re.search(r"<a href='([^']+)'>" + re.escape(case) + "</a>", index)
        self.assertIsNotNone(match, f"{case} not in index.html")
        return os.path.join(self.site, match.group(1))

    def test_the_site_is_self_contained(self):
        for name in os.listdir(self.site):
            if name.endswith(".html"):
                with open(os.path.join(self.site, name)) as f:
                    self.assertNotRegex(f.read(), r"(src|href)=['\"]?(https?:)?//", f"{name} loads from the network")
        self.assertTrue(os.path.isfile(os.path.join(self.site, "chart.min.js")))

    def test_no_database_or_no_case_is_one_line_and_exit_2(self):
        code, _, err = self.history("html", self.site, "--metrics=no_such_counter:higher")
        self.assertEqual(code, 2)
        self.assertIn("no case in the history", err)
        code, _, err = self.history("html", os.path.join(self.db, "site"))  # a directory under a file
        self.assertEqual(code, 2)
        self.assertIn("cannot write the site", err)
        os.remove(self.db)
        code, _, err = self.history("html", self.site)
        self.assertEqual((code, len(err.strip().splitlines())), (2, 1))

    @unittest.skipUnless(CHROMIUM, "Debian's chromium is not installed (scripts/setup installs it)")
    def test_the_index_lists_every_case_with_its_verdict_in_a_browser(self):
        dom, console = chromium("--dump-dom", "file://" + os.path.join(self.site, "index.html"))
        self.assertEqual(console, [])
        rows = re.findall(r"<tr class=\"series\">(.*?)</tr>", dom, re.S)
        self.assertEqual(len(rows), 3)
        by_case = {case: next(r for r in rows if case in r) for case in (STEP_CASE, FLAT_CASE, FAILING_CASE)}
        self.assertIn("regression", by_case[STEP_CASE])
        self.assertIn(f"since {STEP_SHA}", by_case[STEP_CASE])
        self.assertIn("broken", by_case[FAILING_CASE])
        self.assertIn("XXH3 mismatch", by_case[FAILING_CASE])
        self.assertIn(">same<", by_case[FLAT_CASE])
        self.assertEqual(re.findall(r"<h2>(\w+)</h2>", dom), ["codec", "pipeline"])
        self.assertEqual(dom.count("<svg class=\"spark\""), 3)

    @unittest.skipUnless(CHROMIUM, "Debian's chromium is not installed (scripts/setup installs it)")
    def test_a_case_page_draws_every_run_and_marks_the_step(self):
        page = self.page_of(STEP_CASE)
        dom, console = chromium("--dump-dom", "file://" + page)
        self.assertEqual(console, [])
        self.assertNotIn("data-error", dom)
        self.assertRegex(dom, r"<body[^>]*data-drawn=\"1\"")
        canvas = re.search(r"<canvas [^>]*>", dom).group(0)
        self.assertIn(f'data-points="{RUNS}"', canvas)
        self.assertRegex(canvas, r'data-changes="[1-9]')
        self.assertIn(f"<code>{STEP_SHA}</code>", dom)

    @unittest.skipUnless(CHROMIUM, "Debian's chromium is not installed (scripts/setup installs it)")
    def test_a_screenshot_of_a_case_page_shows_the_chart_and_its_marks(self):
        import matplotlib.image
        shots = os.environ.get("WIREZIP_SCREENSHOT_DIR") or self.dir.name
        shot = os.path.join(shots, "history-case.png")
        chromium(f"--screenshot={shot}", "--window-size=1100,700", "file://" + self.page_of(STEP_CASE))
        image = matplotlib.image.imread(shot)[:, :, :3]
        red, green, blue = image[:, :, 0], image[:, :, 1], image[:, :, 2]
        line = (blue > 0.7) & (red < 0.35) & (green < 0.5)  # the median line, #36c
        marks = (red > 0.75) & (green < 0.15) & (blue < 0.15)  # change points, #d00
        self.assertGreater(line.sum(), 500, "no median line in the screenshot")
        self.assertGreater(marks.sum(), 20, "no change point marked in the screenshot")


# Text from result files (case names, context values) that reads as markup: "<!--<script>" inside a
# script element would turn the element's own </script> into text (the HTML tokenizer's "double
# escaped" state), so the page's data would swallow the drawing script.
HOSTILE_CASE = "codec/x<!--<script>/</script><b>/real_time"
HOSTILE_HOST = "host <!--<script>"


def hostile_pages():
    points = [{"sha": f"sha{i}", "date": "2026-01-0%d" % (i + 1), "status": "ok", "reason": None,
               "median": 100.0 + i, "min": 99.0 + i, "max": 101.0 + i, "context": [f"hostname: {HOSTILE_HOST}"]}
              for i in range(3)]
    return {("class<!--", HOSTILE_CASE): [("bytes_per_second", "higher", points, [1], ("same", ""))]}


class MarkupInNames(unittest.TestCase):
    def test_the_page_data_carries_no_markup_and_reads_back(self):
        ((klass, case), charts), = hostile_pages().items()
        page = history_html.series_page(case, klass, charts)
        payload = re.search(r"<script id='series' type='application/json'>(.*?)</script>", page, re.S).group(1)
        self.assertNotIn("<", payload)
        data = json.loads(payload)
        self.assertEqual(data[0]["points"][0]["context"], [f"hostname: {HOSTILE_HOST}"])

    @unittest.skipUnless(CHROMIUM and os.path.isfile(CHART_JS), "needs Debian's chromium and libjs-chart.js")
    def test_a_page_of_a_case_named_like_markup_draws(self):
        with tempfile.TemporaryDirectory() as site:
            self.assertEqual(history_html.write_site(site, hostile_pages(), CHART_JS), 1)
            page = next(name for name in os.listdir(site) if name.endswith(".html") and name != "index.html")
            dom, console = chromium("--dump-dom", "file://" + os.path.join(site, page))
        self.assertEqual(console, [])
        self.assertRegex(dom, r"<body[^>]*data-drawn=\"1\"")


if __name__ == "__main__":
    unittest.main()
