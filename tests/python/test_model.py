"""The model (plots/model.py) on hand-computed cases: the stage-alone formulas, break-even links,
and the shared-core term with each of its fallbacks."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "plots"))

import model  # noqa: E402

GB = 1e9
LOOPBACK = {"link": "loopback, both ends in this process", "host_cpus": "2"}


def case(**extra):
    """A compressed bench_pipeline case like the tcp row of the pipeline run in docs/RESULTS.md:
    C 3.9, D 4.9 GB/s, R 1.49."""
    return {"mode": "overlap", "workers": 1, "stage_compress": 3.9 * GB, "stage_decompress": 4.9 * GB,
            "ratio": 1.49, **extra}


class Model(unittest.TestCase):
    def test_hand_computed_rates(self):
        self.assertAlmostEqual(model.overlap_rate(4, 1.5, 2, 5), 3.0)            # R L is the slowest
        self.assertAlmostEqual(model.serial_rate(4, 2, 2, 4), 1 / (0.25 + 0.25 + 0.25))
        self.assertAlmostEqual(model.step_speedup(0.5, 2), 1 / (0.5 + 0.25))
        self.assertAlmostEqual(model.step_speedup(0.0, 10), 1.0)

    def test_the_papers_numbers_never_pay(self):
        # BlueField-3: C = 9 GB/s against a 10.9 GB/s link: no ratio makes it pay.
        for r in [1.1, 1.5, 2, 4, 100]:
            self.assertFalse(model.pays(9, r, 10.9, 9))
            self.assertFalse(model.pays(9, r, 10.9, 9, serial=True))
            self.assertFalse(model.pays(9, r, 24.6, 30))

    def test_break_even(self):
        self.assertEqual(model.break_even_link(9, 1.5, 12), 9)
        self.assertEqual(model.break_even_link(9, 1.0, 12), 0)  # no saving, never pays
        link = model.break_even_link(4, 2, 4, serial=True)     # (1 - 1/2) / (1/4 + 1/4) = 1
        self.assertAlmostEqual(link, 1.0)
        self.assertFalse(model.pays(4, 2, link * 1.01, 4, serial=True))
        self.assertTrue(model.pays(4, 2, link * 0.99, 4, serial=True))
        self.assertAlmostEqual(model.serial_min_ratio(4, 4, 1), 2.0)
        self.assertEqual(model.serial_min_ratio(4, 4, 3), float("inf"))


class FiniteRuns(unittest.TestCase):
    """A run of n chunks: the first is compressed before anything else runs, the last is sent and
    decoded after the last compression (docs/METRICS.md)."""

    def test_flow_time_by_hand(self):
        # t_C = 1, t_L = 1 / (2 x 1) = 0.5, t_D = 0.25 per chunk; 4 chunks: 1.75 + 3 x 1
        self.assertAlmostEqual(model.run_flow_time(4, 1, 1, 2, 1, 4), 4.75)
        # one chunk: the stages in a row, as serial_rate has them
        self.assertAlmostEqual(1 / model.run_flow_time(1, 1, 1, 2, 1, 4), model.serial_rate(1, 2, 1, 4))

    def test_shared_time_by_hand(self):
        # work 4 x (1/1 + 1/4 + 0.5) = 7 over 2 cores, plus half of the first compression and the last
        # decoding (1 + 0.25), when one thread runs alone
        self.assertAlmostEqual(model.run_shared_time(4, 1, 1, 4, 2, 0.5), 7 / 2 + 1.25 / 2)
        self.assertAlmostEqual(model.run_shared_time(4, 1, 1, 4, 1, 0.5), 7)  # one core: the work alone

    def test_the_size_of_a_run_comes_from_its_counters(self):
        self.assertEqual(model.run_size(case(chunk=2, wire_bytes=10)), (14.9, 2))
        self.assertEqual(model.run_size(case(chunk=2, wire_bytes=10, windows=2)), (7.45, 2))  # each window a run
        self.assertIsNone(model.run_size(case(chunk=2, wire_bytes=10, workers=2)))
        self.assertIsNone(model.run_size(case()))  # older JSON: an endless run is all that can be said

    def test_a_run_is_predicted_below_an_endless_one_and_reaches_it_when_long(self):
        mib = 1 << 20
        steady = model.predict_case(case(link_cpu_per_byte=0.4 / GB), LOOPBACK, 3.93 * GB)
        self.assertIsNone(steady["run_chunks"])
        self.assertEqual(steady["rate"], steady["steady"])
        for chunks, below in ((32, 0.03), (32768, 0.0001)):
            run = model.predict_case(case(link_cpu_per_byte=0.4 / GB, chunk=mib, wire_bytes=chunks * mib / 1.49),
                                     LOOPBACK, 3.93 * GB)
            self.assertAlmostEqual(run["run_chunks"], chunks)
            self.assertAlmostEqual(run["steady"], steady["rate"])
            self.assertLess(run["rate"], run["steady"])
            self.assertGreater(run["rate"], run["steady"] * (1 - below))
        # 32 chunks on 2 shared cores: (1/3.9 + 1/4.9 + 0.4) x 32 / 2 + (1/3.9 + 1/4.9) / 2 ms
        t = 32 * (1 / 3.9 + 1 / 4.9 + 0.4) / 2 + (1 / 3.9 + 1 / 4.9) / 2
        run = model.predict_case(case(link_cpu_per_byte=0.4 / GB, chunk=mib, wire_bytes=32 * mib / 1.49), LOOPBACK,
                                 3.93 * GB)
        self.assertAlmostEqual(run["rate"] / GB, 32 / t)


class InRunRates(unittest.TestCase):
    def test_rates_measured_inside_the_runs_replace_the_stages_alone(self):
        # in the runs: C 2.0, D 2.5 GB/s; min(2.0, 1.49 x 3.93, 2.5) = 2.0; 2 / (1/2 + 1/2.5 + 0.4) = 1.538
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB, stage_compress_in_run=2.0 * GB,
                                    stage_decompress_in_run=2.5 * GB), LOOPBACK, 3.93 * GB)
        self.assertAlmostEqual(p["free"] / GB, 2.0)
        self.assertAlmostEqual(p["shared"] / GB, 2 / (1 / 2.0 + 1 / 2.5 + 0.4))
        self.assertEqual(model.codec_rates(case()), (3.9 * GB, 4.9 * GB, 1.49))  # older binaries: alone


class SharedCores(unittest.TestCase):
    def test_shared_core_rate_by_hand(self):
        # 2 cores / (1/4 + 1/5 + 0.4) s per GB = 2 / 0.85 = 2.353 GB/s
        self.assertAlmostEqual(model.shared_core_rate(4 * GB, 5 * GB, 2, 0.4 / GB) / GB, 2 / 0.85)
        # two workers per side count twice the CPU: 2 / (2/8 + 2/10) = 2 / 0.45
        self.assertAlmostEqual(model.shared_core_rate(8 * GB, 10 * GB, 2, 0.0, workers=2) / GB, 2 / 0.45)

    def test_loopback_case_is_capped_by_the_shared_cores(self):
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), LOOPBACK, 3.93 * GB)
        # min(C, R L, D) = min(3.9, 1.49 x 3.93 = 5.86, 4.9) = 3.9; 2 / (1/3.9 + 1/4.9 + 0.4) = 2.324
        self.assertAlmostEqual(p["free"] / GB, 3.9)
        self.assertAlmostEqual(p["shared"] / GB, 2 / (1 / 3.9 + 1 / 4.9 + 0.4))
        self.assertAlmostEqual(p["rate"], p["shared"])
        self.assertEqual((p["shared_cores"], p["notes"]), (2, []))

    def test_two_hosts_have_no_shared_term(self):
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), {"link": "two hosts, peer a:1", "host_cpus": "2"},
                               3.93 * GB)
        self.assertEqual((p["rate"], p["shared"]), (p["free"], None))
        self.assertAlmostEqual(p["rate"] / GB, 3.9)

    def test_forcing_the_shared_term_overrides_the_context(self):
        # linkbed: two processes on one host, although their context says "two hosts"
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), {"link": "two hosts, peer 10.77.0.2:1",
                                                                  "host_cpus": "2"}, 3.93 * GB, shared=True)
        self.assertAlmostEqual(p["rate"] / GB, 2 / (1 / 3.9 + 1 / 4.9 + 0.4))

    def test_without_link_cpu_the_link_costs_nothing_and_it_says_so(self):
        p = model.predict_case(case(), LOOPBACK, 3.93 * GB)
        self.assertAlmostEqual(p["shared"] / GB, 2 / (1 / 3.9 + 1 / 4.9))  # 4.34: above C, so C decides
        self.assertAlmostEqual(p["rate"] / GB, 3.9)
        self.assertEqual(p["link_cpu_per_byte"], 0.0)
        self.assertIn("no link_cpu_per_byte", p["notes"][0])

    def test_without_host_cpus_num_cpus_stands_in_and_it_says_so(self):
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), {"link": LOOPBACK["link"], "num_cpus": 4}, 3.93 * GB)
        self.assertEqual(p["shared_cores"], 4)
        self.assertAlmostEqual(p["shared"] / GB, 4 / (1 / 3.9 + 1 / 4.9 + 0.4))
        self.assertIn("num_cpus", p["notes"][0])

    def test_without_any_cpu_count_the_term_is_left_out(self):
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), {"link": LOOPBACK["link"]}, 3.93 * GB)
        self.assertEqual((p["rate"], p["shared"]), (p["free"], None))
        self.assertIn("left out", p["notes"][0])

    def test_without_a_link_context_both_ends_are_assumed_local(self):
        p = model.predict_case(case(link_cpu_per_byte=0.4 / GB), {"host_cpus": "2"}, 3.93 * GB)
        self.assertIsNotNone(p["shared"])
        self.assertIn("no 'link'", p["notes"][0])

    def test_serial_mode_is_the_sum_of_the_stages(self):
        p = model.predict_case(case(mode="serial", link_cpu_per_byte=0.4 / GB), LOOPBACK, 2 * GB)
        self.assertAlmostEqual(p["rate"] / GB, 1 / (1 / 3.9 + 1 / (1.49 * 2) + 1 / 4.9))
        self.assertIsNone(p["shared"])


if __name__ == "__main__":
    unittest.main()
