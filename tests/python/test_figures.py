"""Every plot scripts/report writes is rendered and its texts checked: no two text boxes (labels,
legend, title, axis labels, ticks) intersect, and no point label covers a point."""
import itertools
import os
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "plots"))

import figures  # noqa: E402
import matplotlib.figure  # noqa: E402
import matplotlib.pyplot  # noqa: E402
import matplotlib.text  # noqa: E402
import results  # noqa: E402
from test_report import DATA, bench, fixture, write  # noqa: E402

GB = 1e9
# (codec, compress GB/s, decompress GB/s, ratio): the clusters of a real bench_codec run (one VM,
# 8 MiB of synthetic weights): the Huffman/ANS family within 3% in ratio, lz4 and bytegroup at 1.
CLUSTERED = [("memcpy", 5.2, 5.1, 1.0), ("lz4", 1.55, 2.9, 1.0), ("bytegroup", 1.92, 2.0, 1.0),
             ("bytegroup+huff", 1.02, 1.05, 1.4928), ("bytegroup:split=exponent+huff", 1.05, 1.3, 1.5096),
             ("bytegroup+deflate", 1.35, 1.4, 1.4930), ("bytegroup+rans", 0.55, 0.9, 1.4990),
             ("bytegroup:split=exponent+ans", 0.61, 0.75, 1.5166),
             ("bytegroup:split=exponent+ans:context=exponent", 0.18, 0.22, 1.5272),
             ("bytegroup+zstd:level=1", 0.33, 0.9, 1.4619), ("bytegroup+zstd:level=-5:literals=1", 0.22, 0.8, 1.4512),
             ("blosc:bitshuffle+lz4", 0.77, 1.2, 1.3239), ("blosc:bitshuffle+zstd:level=1", 0.22, 0.5, 1.3210),
             ("blosc:shuffle+lz4", 0.28, 0.9, 1.1310), ("zstd:level=1", 0.29, 0.8, 1.2830),
             ("bytegroup+lz4", 0.24, 0.9, 1.1880), ("bytegroup+igzip:level=0", 0.13, 0.5, 1.4060)]


def clustered(directory):
    """codec.json with the clusters above, at one and two threads."""
    cases = []
    for spec, c, d, r in CLUSTERED:
        for direction, rate in [("compress", c), ("decompress", d)]:
            for threads in [1, 2]:
                cases.append(bench(f"codec/{spec}/{DATA}/chunk:1048576/{direction}/real_time/threads:{threads}",
                                   bytes_per_second=rate * GB * threads, ratio=r, entropy_bound_ratio=1.503))
    write(directory, "codec.json", cases)


def rendered_figures(directory):
    """The figures write_all draws for the results in `directory`, kept open (not closed) to inspect."""
    kept = []
    with mock.patch.object(figures.plt, "close", side_effect=kept.append):
        figures.write_all(results.load_dir(directory), os.path.join(directory, "plots"))
    return [fig for fig in kept if isinstance(fig, matplotlib.figure.Figure)]


def text_boxes(fig):
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return [(t.get_text(), text_extent(t, renderer)) for t in texts]


def text_extent(text, renderer):
    """The box of the text itself: an Annotation's own extent also spans its leader line."""
    return matplotlib.text.Text.get_window_extent(text, renderer)


def overlapping_texts(fig):
    """Pairs of texts whose boxes share more than a hairline (0.5 px)."""
    found = []
    for (a, box_a), (b, box_b) in itertools.combinations(text_boxes(fig), 2):
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > 0.5 and height > 0.5:
            found.append((a, b))
    return found


def labels_over_points(fig):
    """(label, point) pairs where a point label's box covers the centre of a scatter point."""
    found = []
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        points = [ax.transData.transform(p) for c in ax.collections for p in c.get_offsets()]
        for note in [t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]:
            box = text_extent(note, renderer)
            found += [(note.get_text(), tuple(p)) for p in points if box.contains(*p)]
    return found


class PlotTextTest(unittest.TestCase):
    def check(self, make):
        with tempfile.TemporaryDirectory() as tmp:
            make(tmp)
            kept = rendered_figures(tmp)
            self.assertGreater(len(kept), 0)
            for fig in kept:
                fig.canvas.draw()
                title = fig.axes[-1].get_title()
                with self.subTest(plot=title.splitlines()[0]):
                    self.assertEqual(overlapping_texts(fig), [])
                    self.assertEqual(labels_over_points(fig), [])
                matplotlib.pyplot.close(fig)

    def test_every_report_plot_of_the_sweep_fixture(self):
        self.check(fixture)

    def test_clustered_codecs_get_separate_labels(self):
        self.check(clustered)

    def test_the_checker_sees_an_overlap(self):
        # The check itself can fail: two labels at one point overlap.
        fig, ax = matplotlib.pyplot.subplots()
        ax.scatter([1], [1])
        ax.set_xticks([])
        ax.set_yticks([])
        ax.annotate("bytegroup+huff", (1, 1))
        ax.annotate("bytegroup+huff2", (1, 1))
        fig.canvas.draw()
        self.assertEqual(len(overlapping_texts(fig)), 1)
        self.assertEqual(len(labels_over_points(fig)), 2)
        matplotlib.pyplot.close(fig)


if __name__ == "__main__":
    unittest.main()
