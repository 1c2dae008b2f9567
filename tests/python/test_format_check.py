"""scripts/format-check in a scratch repository with this tree's .clang-format: it fails on a badly
formatted changed line, passes a well formatted one, ignores old unformatted lines a change did not
touch, and picks its base the way CI's checkout of main needs (HEAD~ when HEAD is main)."""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# An old line clang-format would change (two statements, odd spacing): never touched below.
OLD = "int old( int a ) { int b = a;   return b; }\n"
GOOD = "int added(int a) { return a + 1; }\n"
BAD = "int added( int a ){return a+1;}\n"


class FormatCheck(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp(prefix="wirezip-format-")
        os.makedirs(os.path.join(self.repo, "scripts"))
        shutil.copy(os.path.join(ROOT, "scripts", "format-check"), os.path.join(self.repo, "scripts"))
        shutil.copy(os.path.join(ROOT, ".clang-format"), self.repo)
        self.git("init", "-q", "-b", "main")
        self.commit({"a.cpp": OLD}, "old code, not formatted")

    def tearDown(self):
        shutil.rmtree(self.repo)

    def git(self, *args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=self.repo,
                              check=True, capture_output=True, text=True).stdout

    def commit(self, files, message):
        for name, text in files.items():
            with open(os.path.join(self.repo, name), "a") as f:
                f.write(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def check(self, *args, env=None):
        return subprocess.run([os.path.join(self.repo, "scripts", "format-check"), *args], capture_output=True,
                              text=True, timeout=60, env=env)

    def newer_git_clang_format(self):
        """An environment whose git-clang-format exits 1 when its --diff is not empty, as LLVM 15 and
        later do (llvm/llvm-project#54758); Debian 12's (14) exits 0 either way."""
        bin_dir = tempfile.mkdtemp(prefix="wirezip-format-bin-")
        self.addCleanup(shutil.rmtree, bin_dir)
        real = shutil.which("git-clang-format")
        wrapper = os.path.join(bin_dir, "git-clang-format")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nout=$("{real}" "$@") || exit $?\nprintf "%s\\n" "$out"\n'
                    'case $out in *"diff --git"*) exit 1 ;; esac\n')
        os.chmod(wrapper, 0o755)
        return dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])

    def test_a_branch_is_checked_against_its_merge_base_with_main(self):
        self.git("checkout", "-q", "-b", "topic")
        self.commit({"a.cpp": GOOD}, "formatted")
        result = self.check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)  # OLD stays as it was
        self.commit({"b.hpp": BAD}, "not formatted")
        result = self.check()
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("b.hpp", result.stdout)
        self.assertNotIn("a.cpp", result.stdout)
        self.assertIn("git clang-format", result.stderr)

    def test_on_main_the_last_commit_is_checked(self):
        self.commit({"a.cpp": BAD}, "not formatted, on main")
        self.assertEqual(self.check().returncode, 1)
        self.commit({"c.txt": "not C++\n"}, "a later commit that touches no C++")
        self.assertEqual(self.check().returncode, 0)
        self.assertEqual(self.check("HEAD~2").returncode, 1)  # an explicit base reaches further back

    def test_a_git_clang_format_that_exits_1_on_a_diff_is_a_finding_not_a_failure(self):
        env = self.newer_git_clang_format()
        self.git("checkout", "-q", "-b", "topic")
        self.commit({"a.cpp": GOOD}, "formatted")
        self.assertEqual(self.check(env=env).returncode, 0)
        self.commit({"b.hpp": BAD}, "not formatted")
        result = self.check(env=env)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("b.hpp", result.stdout)
        self.assertNotIn("failed", result.stderr)

    def test_uncommitted_lines_count_and_a_bad_base_is_usage(self):
        with open(os.path.join(self.repo, "a.cpp"), "a") as f:
            f.write(BAD)
        self.assertEqual(self.check("HEAD").returncode, 1)
        result = self.check("no-such-rev")
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a commit", result.stderr)


if __name__ == "__main__":
    unittest.main()
