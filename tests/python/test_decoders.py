"""The decoder seam from the binaries: bench_codec times the same frames with every decoder (each
verified), lists the backends, and bench_pipeline's --decoder picks the receiving side's backend, in
loopback and on a --serve process. Checks outcomes, never timings."""
import subprocess
import unittest

from bench_process import binary, failure_summary, one_line_error, run_json, start_server, stop

CODEC = binary("bench_codec")
PIPELINE = binary("bench_pipeline")
DATA = "synthetic:weights:size=4MiB:seed=2"
QUICK = [f"--datasets={DATA}", "--chunks=256KiB", "--benchmark_min_time=0.01", "--timeout-ms=3000"]


def listed_decoders():
    text = subprocess.run([CODEC, "--list-codecs"], capture_output=True, text=True, check=True).stdout
    return text.split("\ndecoder=")[1]  # the table after the codecs


class BenchCodec(unittest.TestCase):
    def test_every_decoder_verified_on_the_same_frames(self):
        specs = ["bytegroup+deflate", "bytegroup+deflate:decoder=libdeflate", "bytegroup+deflate:decoder=zlib",
                 "bytegroup+lz4:decoder=lz4", "bytegroup+igzip:level=1:decoder=zlib"]
        result, report = run_json(CODEC, f"--codecs={','.join(specs)}", f"--datasets={DATA}",
                                  "--benchmark_min_time=0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        ratios = {}
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            codec = case["name"].split("/")[1]
            ratios.setdefault(codec, set()).add(round(case["ratio"], 9))
        for spec in specs:
            self.assertIn(spec, ratios)
        # The decoder never changes the frames: one ratio for every deflate decoder.
        self.assertEqual(len(ratios["bytegroup+deflate"] | ratios["bytegroup+deflate:decoder=zlib"]
                             | ratios["bytegroup+deflate:decoder=libdeflate"]), 1)
        self.assertIn("version_zlib", report["context"])
        self.assertIn("version_libdeflate", report["context"])

    def test_backends_are_listed_and_doca_says_why_it_is_missing(self):
        text = listed_decoders()
        for line in ["isal         deflate  isa-l", "libdeflate   deflate  libdeflate", "zlib         deflate  zlib",
                     "lz4          lz4      lz4"]:
            self.assertIn(line, text)
        if "doca         " not in text:
            self.assertIn("\ndoca: not built (DOCA SDK not found)\n", text)

    def test_bad_decoders_are_one_line_errors(self):
        one_line_error(self, CODEC, ["--codecs=bytegroup+deflate:decoder=nope"], "valid: isal, libdeflate, zlib")
        one_line_error(self, CODEC, ["--codecs=bytegroup+huff:decoder=zlib"], "unknown option 'decoder'")


class Pipeline(unittest.TestCase):
    def test_loopback_decoder_goes_into_each_spec(self):
        result, report = run_json(PIPELINE, "--transport=mem", "--modes=overlap", "--codecs=bytegroup+deflate",
                                  "--decoder=zlib", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        names = [case["name"] for case in report["benchmarks"]]
        self.assertTrue(any("/overlap/bytegroup+deflate:decoder=zlib/" in n for n in names), names)
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
            self.assertEqual(case["verified"], 1)

    def test_a_codec_without_a_decoder_choice_is_bad_usage(self):
        one_line_error(self, PIPELINE, ["--transport=mem", "--codecs=bytegroup+huff", "--decoder=zlib"],
                       "takes no decoder")

    def test_the_serving_side_overrides_the_spec_it_is_sent(self):
        for flag in ["--serve-decoder", "--decoder"]:  # --decoder with --serve: the same choice
            with self.subTest(flag=flag):
                self.serve_with_lz4_and_send_two_codecs(flag)

    def serve_with_lz4_and_send_two_codecs(self, flag):
        # A server decoding with lz4 must refuse deflate frames (proof that its choice applies) and
        # serve lz4 frames; the wire format and the sender's case names are unchanged.
        server, port = start_server(PIPELINE, "--transport=tcp", f"{flag}=lz4")
        try:
            result, report = run_json(PIPELINE, "--transport=tcp", f"--peer=127.0.0.1:{port}", "--modes=overlap",
                                      "--codecs=bytegroup+lz4,bytegroup+deflate", *QUICK)
            failed = failure_summary(self, result, "bench_pipeline")
            self.assertEqual(list(failed), [n["name"] for n in report["benchmarks"] if "deflate" in n["name"]])
            self.assertIn("refused the case", list(failed.values())[0])
            for case in report["benchmarks"]:
                if "bytegroup+lz4" in case["name"]:
                    self.assertFalse(case.get("error_occurred"), case.get("error_message"))
                    self.assertEqual(case["verified"], 1)
            self.assertEqual(server.wait(timeout=30), 0)
            self.assertIn("decoding every case with decoder=lz4", server.stdout.read())
            self.assertIn("refusing the case: bad codec spec 'bytegroup+deflate:decoder=lz4'", server.stderr.read())
        finally:
            stop(server)

    def test_the_serving_flag_needs_serve_and_agrees_with_the_alias(self):
        one_line_error(self, PIPELINE, ["--transport=mem", "--serve-decoder=zlib"], "--serve-decoder=zlib: needs --serve")
        one_line_error(self, PIPELINE, ["--serve", "--transport=tcp", "--port=0", "--decoder=zlib",
                                        "--serve-decoder=lz4"], "with --serve they name the same choice")
        one_line_error(self, PIPELINE, ["--serve", "--transport=tcp", "--port=0", "--serve-decoder=bogus"],
                       "--serve-decoder=bogus: no such decoder")

    def test_help_says_which_side_each_decoder_flag_is(self):
        text = subprocess.run([PIPELINE, "--help"], capture_output=True, text=True, timeout=60).stdout
        self.assertIn("--serve-decoder", text)
        self.assertIn("sending side", text)
        self.assertIn("serving side", text)

    def test_a_server_decoder_that_is_not_built_is_refused_at_start(self):
        if "doca         " in listed_decoders():
            self.skipTest("this build has the DOCA backend")
        result = subprocess.run([PIPELINE, "--serve", "--transport=tcp", "--port=0", "--decoder=doca"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--decoder=doca: not built (DOCA SDK not found)", result.stderr)


if __name__ == "__main__":
    unittest.main()
