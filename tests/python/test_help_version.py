"""--help and --version of every benchmark binary: the binary's own options first, an example, a
pointer to Google Benchmark's flags; --version prints the same build facts the JSON context holds."""
import os
import subprocess
import unittest

from bench_process import binary, run_json

MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# Each binary with one of its own flags that must appear in its --help.
BINARIES = {"bench_codec": "--codecs", "bench_rdma": "--transport", "bench_pipeline": "--transport",
            "bench_collective": "--ops"}


def run(name, *args):
    return subprocess.run([binary(name), *args], capture_output=True, text=True, timeout=60, env=MPI_ENV)


def version_facts(text):
    lines = text.strip().splitlines()
    return lines[0], dict(line.split(": ", 1) for line in lines[1:])


class HelpTest(unittest.TestCase):
    def test_help_shows_the_binarys_own_options_an_example_and_the_library_pointer(self):
        for name, own_flag in BINARIES.items():
            for flag in ["--help", "-h"]:
                with self.subTest(binary=name, flag=flag):
                    result = run(name, flag)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertIn(own_flag, result.stdout)
                    self.assertIn("Example:", result.stdout)
                    self.assertIn("--help-benchmark", result.stdout)
                    self.assertNotIn("--benchmark_list_tests", result.stdout)

    def test_help_benchmark_shows_the_librarys_flags(self):
        result = run("bench_codec", "--help-benchmark")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("--benchmark_filter", result.stdout)


class ScriptHelpTest(unittest.TestCase):
    def test_every_script_answers_help_without_running(self):
        scripts = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")
        for name in sorted(os.listdir(scripts)):
            path = os.path.join(scripts, name)
            if not os.path.isfile(path):
                continue
            with self.subTest(script=name):
                result = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertGreater(len((result.stdout + result.stderr).strip().splitlines()), 0)


class VersionTest(unittest.TestCase):
    def test_every_binary_answers_version(self):
        for name in BINARIES:
            with self.subTest(binary=name):
                result = run(name, "--version")
                self.assertEqual(result.returncode, 0, result.stderr)
                first, facts = version_facts(result.stdout)
                self.assertTrue(first.startswith(f"{name} (wirezip "), first)
                for key in ["wirezip_version", "wirezip_git_sha", "build_type", "compiler", "simd_paths_built",
                            "version_lz4", "version_zstd"]:
                    self.assertTrue(facts.get(key), (key, facts))

    def test_the_file_cli_answers_version_and_help(self):
        version = run("wirezip", "--version")
        self.assertEqual(version.returncode, 0, version.stderr)
        first, facts = version_facts(version.stdout)
        self.assertEqual(first, f"wirezip (wirezip {facts['wirezip_version']})")
        _, bench_facts = version_facts(run("bench_codec", "--version").stdout)
        self.assertEqual(facts, bench_facts)  # one build, one set of facts
        help_text = run("wirezip", "--help")
        self.assertEqual(help_text.returncode, 0, help_text.stderr)
        for expected in ["compress", "decompress", "inspect", "Example:", "Exit status"]:
            self.assertIn(expected, help_text.stdout)

    def test_the_sha_is_the_checkout_the_binary_was_built_from(self):
        # read at build time, so a rebuild after a commit records the new commit
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True)
        if head.returncode != 0:
            self.skipTest("not a git checkout")
        _, facts = version_facts(run("bench_codec", "--version").stdout)
        self.assertEqual(facts["wirezip_git_sha"].removesuffix("-dirty"), head.stdout.strip())

    def test_version_is_what_the_json_context_records(self):
        _, facts = version_facts(run("bench_codec", "--version").stdout)
        result, report = run_json(binary("bench_codec"), "--codecs=memcpy", "--datasets=synthetic:weights:size=64KiB",
                                  "--chunks=64KiB", "--benchmark_min_time=0.001")
        self.assertEqual(result.returncode, 0, result.stderr)
        for key, value in facts.items():
            self.assertEqual(report["context"].get(key), value, key)


if __name__ == "__main__":
    unittest.main()
