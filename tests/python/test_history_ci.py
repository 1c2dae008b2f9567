"""The CI recipe of scripts/history: the README's record -> check -> html lines and the sample GitHub
Actions workflow (docs/ci/history.yml) name subcommands and options that exist, and the workflow
caches the file the history is written to, saving it before the check can fail the job."""
import os
import re
import shlex
import sys
import unittest

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import history  # noqa: E402


def history_lines(text):
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.strip().startswith("scripts/history ")]


def parses(line):
    """history's own parser on one command line (argparse exits on a bad one)."""
    try:
        history.parse_args(shlex.split(line)[1:])
    except SystemExit:
        return False
    return True


class Recipe(unittest.TestCase):
    def test_the_readme_shows_record_check_html_as_three_lines_that_parse(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            lines = history_lines(f.read())
        self.assertEqual([shlex.split(line)[1] for line in lines], ["record", "check", "html"])
        for line in lines:
            self.assertTrue(parses(line), line)
        self.assertFalse(parses("scripts/history check --no-such-option"))  # the parser does refuse

    def test_the_sample_workflow_caches_the_history_and_runs_commands_that_exist(self):
        with open(os.path.join(ROOT, "docs", "ci", "history.yml")) as f:
            workflow = yaml.safe_load(f)
        steps = next(iter(workflow["jobs"].values()))["steps"]
        uses = [step.get("uses", "").split("@")[0] for step in steps]
        restore, save = uses.index("actions/cache/restore"), uses.index("actions/cache/save")
        default = os.path.relpath(history.history_store.default_path(), ROOT)
        for step in (steps[restore], steps[save]):
            self.assertEqual(step["with"]["path"], default)
        self.assertEqual(steps[restore]["with"]["key"], steps[save]["with"]["key"])
        self.assertTrue(steps[save]["with"]["key"].startswith(steps[restore]["with"]["restore-keys"]))
        runs = [(i, line) for i, step in enumerate(steps) for line in history_lines(step.get("run", ""))]
        order = [shlex.split(line)[1] for _, line in runs]
        self.assertEqual(order, ["record", "check", "html"])
        for i, line in runs:
            self.assertTrue(parses(line), line)
        self.assertLess(runs[0][0], save)  # the run is recorded before the cache is saved ...
        self.assertLess(save, runs[1][0])  # ... and saved before the check may fail the job
        for name in re.findall(r"build/bin/(\w+)", yaml.safe_dump(steps)):
            with open(os.path.join(ROOT, "benchmarks", "CMakeLists.txt")) as f:
                self.assertIn(f"add_executable({name} ", f.read())


if __name__ == "__main__":
    unittest.main()
