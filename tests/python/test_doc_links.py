"""Every relative link in the README and docs/ leads somewhere: the file exists and, when the link
names a heading (`FILE.md#anchor`), that heading is in the file, by GitHub's anchor rules. The
docs are split across files that move and get renamed; a dead link is the first thing a newcomer
meets."""
import os
import re
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`[^`]*`")


def documents(root):
    """The Markdown files a reader opens first: the README, docs/*.md, and each library's README."""
    paths = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    paths += sorted(os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    paths += [os.path.join(root, d, "README.md") for d in ("datasets", "results")
              if os.path.exists(os.path.join(root, d, "README.md"))]
    return paths


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, spaces and
    hyphens kept), spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    """Every heading's anchor in a file, duplicates numbered as GitHub numbers them (-1, -2, ...)."""
    seen, out = {}, set()
    for _, line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(path):
    """'FILE:LINE: target (why)' for each relative link in `path` that leads nowhere."""
    problems = []
    for number, line in prose_lines(path):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not ours to check
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f"{os.path.relpath(path, ROOT)}:{number}: {target}"
            if not os.path.exists(dest):
                problems.append(f"{where} (no such file)")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{where} (no heading with that anchor in {os.path.relpath(dest, ROOT)})")
    return problems


class DocLinksTest(unittest.TestCase):
    def test_every_relative_link_in_the_readme_and_docs_resolves(self):
        paths = documents(ROOT)
        self.assertIn(os.path.join(ROOT, "docs", "CODECS.md"), paths)
        problems = [p for path in paths for p in broken_links(path)]
        self.assertEqual(problems, [], "\n".join(problems))

    def test_the_checker_finds_a_missing_file_and_a_missing_anchor(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "A.md"), "w") as f:
                f.write("# A\n\n## The frame (`frame.hpp`)\n\n```sh\n# not a heading\n```\n\n"
                        "[ok](#the-frame-framehpp) [gone](B.md) [no anchor](#not-a-heading) "
                        "`[in code](C.md)` [web](https://example.org/x)\n")
            problems = broken_links(os.path.join(d, "A.md"))
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("B.md (no such file)", problems[0])
        self.assertIn("#not-a-heading (no heading", problems[1])

    def test_anchors_follow_githubs_rules(self):
        self.assertEqual(slug("3. Session handshake (`rdma/src/session.cpp`)"), "3-session-handshake-rdmasrcsessioncpp")
        self.assertEqual(slug("aarch64 cross-test and the g++ 11 compile"), "aarch64-cross-test-and-the-g-11-compile")
        self.assertEqual(slug("bench_collective (MPI ranks)"), "bench_collective-mpi-ranks")


if __name__ == "__main__":
    unittest.main()
