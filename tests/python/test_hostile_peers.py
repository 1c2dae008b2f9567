"""Hostile peers against real --serve processes: a scripted client sends each class of
bad input to bench_rdma --serve and bench_pipeline --serve (tcp), and a scripted receiver
misbehaves towards bench_pipeline --peer. Each attack must be refused in one log line naming the
field, the server must stay up and then serve an honest --peer run to completion. Loopback only;
every socket, process and wait is bounded."""
import os
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a file or by discovery
import fake_peer as fp  # noqa: E402
from bench_process import ServeProcess, binary, run_json  # noqa: E402

RDMA, PIPELINE = binary("bench_rdma"), binary("bench_pipeline")
SERVER_FLAGS = ["--transport=tcp", "--bind=127.0.0.1", "--port=0", "--timeout-ms=1000"]
HONEST = {
    RDMA: ["--transport=tcp", "--pages=4k", "--sizes=64KiB", "--buffer=1MiB", "--benchmark_min_time=0.01",
           "--timeout-ms=3000"],
    PIPELINE: ["--transport=tcp", "--datasets=synthetic:weights:size=1MiB", "--chunks=256KiB",
               "--benchmark_min_time=0.01", "--timeout-ms=3000"],
}
LOG_WAIT = 5.0  # seconds for a server to log what it did with a peer (its own timeout is 1 s)
os.environ.pop("WIREZIP_SECRET_FILE", None)  # servers and peers here hold a secret only when a test gives one


class ServerTest(unittest.TestCase):
    """One fresh server per test; asserts, after the attacks, that it serves an honest peer."""

    def serve(self, bench, *args, idle_s=5):
        server = ServeProcess(bench, *SERVER_FLAGS, f"--idle-s={idle_s}", *args)
        self.addCleanup(server.stop)
        return server

    def survived(self, server, text):
        """The server logged one line, containing `text`, since the last one a test matched, and is
        still running; returns the line."""
        start = server.seen
        line = server.log_line(text, LOG_WAIT)
        self.assertEqual(server.err[start:server.seen], [line], "more than one line for one peer")
        self.assertTrue(server.running(), f"{server.name} stopped after: {line}")
        return line

    def honest_run(self, server, bench, *extra):
        """An honest --peer run completes without failed cases, and its quit ends the server (exit 0)."""
        result, report = run_json(bench, f"--peer=127.0.0.1:{server.port}", *HONEST[bench], *extra, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(report["benchmarks"])
        for case in report["benchmarks"]:
            self.assertFalse(case.get("error_occurred"), case.get("error_message"))
        self.assertEqual(server.wait(timeout=10), 0, server.err)
        return report


def hello_fields():
    """(hello bytes, text of the refusal and the log line) for each bad field; server --max-buffer=64MiB."""
    return [(fp.hello(buffer_bytes=2**64 - 1), "hello.buffer_bytes = 18446744073709551615"),
            (fp.hello(buffer_bytes=0), "hello.buffer_bytes = 0 "),
            (fp.hello(buffer_bytes=(64 << 20) + 1), f"hello.buffer_bytes = {(64 << 20) + 1} "),
            (fp.hello(depth=0), "hello.depth = 0 "),
            (fp.hello(depth=300), "hello.depth = 300 "),
            (fp.hello(pages=7), "hello.pages = 7 "),
            (fp.hello(pages=fp.PAGES["hugetlb"]), "hello.pages = hugetlb is not allowed"),
            (fp.hello(quit=2), "hello.quit = 2 "),
            (fp.hello(quit=1, depth=0), "hello.depth = 0 ")]


class LinkSetUp(ServerTest):
    """Attacks before any link exists: the hello and what is not a hello (classes 1 to 4)."""

    def check_hello_fields(self, bench):
        server = self.serve(bench, "--max-buffer=64MiB", "--allow-pages=4k,thp")
        for hello, field in hello_fields():
            with self.subTest(field=field):
                setup = fp.set_up(server.port, hello)
                with setup.sock:
                    self.assertIsNotNone(setup.refusal, "no refusal in the reply")
                    self.assertIn(field.strip(), setup.refusal)
                    self.assertTrue(fp.closed_by_peer(setup.sock))
                self.assertIn(field.strip(), self.survived(server, field))
        self.honest_run(server, bench)

    def test_rdma_hello_fields_are_refused_in_the_reply(self):
        self.check_hello_fields(RDMA)

    def test_pipeline_hello_fields_are_refused_in_the_reply(self):
        self.check_hello_fields(PIPELINE)

    def check_not_a_hello(self, bench):
        server = self.serve(bench)
        with fp.connect(server.port) as sock:  # 18 bytes of HTTP, then waiting for an answer
            sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
            self.assertTrue(fp.closed_by_peer(sock, timeout=5))
        self.survived(server, "no hello within 1000 ms (the set-up deadline)")
        with fp.connect(server.port) as sock:  # 24 bytes of garbage: a full hello's worth
            sock.sendall(bytes(range(0xA0, 0xB8)))
            self.assertIn("magic 0xa3a2a1a0 is not wirezip's", fp.decode_refusal(fp.recv_exact(sock, fp.REFUSAL_SIZE)))
        self.survived(server, "hello: magic 0xa3a2a1a0 is not wirezip's")
        with fp.connect(server.port) as sock:  # a protocol-1 peer
            sock.sendall(fp.hello(magic=0x315A5748))
            self.assertIn("protocol 1", fp.decode_refusal(fp.recv_exact(sock, fp.REFUSAL_SIZE)))
        self.survived(server, "hello: the peer speaks wirezip protocol 1")
        started = time.monotonic()
        with fp.connect(server.port) as sock:  # connect, send nothing
            self.assertTrue(fp.closed_by_peer(sock, timeout=5))
        self.assertLess(time.monotonic() - started, 4)  # ended after --timeout-ms, not --idle-s
        self.survived(server, "no hello")
        self.honest_run(server, bench)

    def test_rdma_survives_http_garbage_and_silence(self):
        self.check_not_a_hello(RDMA)

    def test_pipeline_survives_http_garbage_and_silence(self):
        self.check_not_a_hello(PIPELINE)

    def check_unfinished_quit(self, bench):
        server = self.serve(bench)
        with fp.connect(server.port) as sock:  # hello says quit, the challenge never answered: a close ...
            sock.sendall(fp.hello(buffer_bytes=4096, depth=1, quit=1))
            fp.recv_exact(sock, fp.CHALLENGE_SIZE)
        self.survived(server, "handshake: the peer closed the connection before its response")
        with fp.connect(server.port) as sock:  # ... or nothing for longer than the set-up deadline
            sock.sendall(fp.hello(buffer_bytes=4096, depth=1, quit=1))
            fp.recv_exact(sock, fp.CHALLENGE_SIZE)
            self.assertTrue(fp.closed_by_peer(sock))
        self.survived(server, "handshake: no response to the challenge within 1000 ms (the set-up deadline)")
        self.assertTrue(server.running())
        self.honest_run(server, bench)

    def test_rdma_quit_without_handshake_does_not_stop_the_server(self):
        self.check_unfinished_quit(RDMA)

    def test_pipeline_quit_without_handshake_does_not_stop_the_server(self):
        self.check_unfinished_quit(PIPELINE)

    def check_bad_session_response(self, bench):
        server = self.serve(bench)
        setup = fp.set_up(server.port, fp.hello(), response=b"XXXX" + bytes(68))
        with setup.sock:  # a response with the wrong magic: refused
            self.assertIn("response.magic = 0x58585858 is wrong", setup.refusal)
        self.survived(server, "handshake: response.magic = 0x58585858 is wrong")
        with fp.connect(server.port) as sock:  # the challenge read, never answered
            sock.sendall(fp.hello())
            fp.recv_exact(sock, fp.CHALLENGE_SIZE)
            self.assertTrue(fp.closed_by_peer(sock))
        self.survived(server, "handshake: no response to the challenge within 1000 ms")
        self.honest_run(server, bench)

    def test_rdma_bad_or_missing_session_response(self):
        self.check_bad_session_response(RDMA)

    def test_pipeline_bad_or_missing_session_response(self):
        self.check_bad_session_response(PIPELINE)


BUFFER = 1 << 20  # the fake client's link buffer (and so the server's)


def frame_attacks(flood_imm=0x12345):
    """(name, bytes sent after the handshake, what the log line says) for each bad frame."""
    return [
        ("unknown type", fp.frame(9), "frame.type = 9 is no tcp link frame"),
        ("padding", struct.pack("<BBBBIQQ", fp.WRITE, 0, 7, 0, 0, 0, 0), "frame.pad is not zero"),
        ("write at 2^63", fp.frame(fp.WRITE, 0, 2**63, 16) + bytes(16),
         f"incoming write range [{2**63}, +16) is outside the {BUFFER}-byte buffer"),
        ("notify past the end", fp.frame(fp.NOTIFY, 0x12345, BUFFER - 8, 16) + bytes(16),
         f"incoming write range [{BUFFER - 8}, +16) is outside"),
        ("read past the end", fp.frame(fp.READ_REQUEST, 0, BUFFER - 8, 64),
         f"read request range [{BUFFER - 8}, +64) is outside"),
        ("unsolicited read response", fp.frame(fp.READ_RESPONSE, 0, 0, 16) + bytes(16),
         "a read response nobody asked for (16 bytes)"),
        ("ack with nothing in flight", fp.frame(fp.ACK), "an ack with no write in flight"),
        ("flood", fp.frame(fp.NOTIFY, flood_imm) * 5000, f"unexpected message {flood_imm:#x}"),
    ]


class LinkFrames(ServerTest):
    """Attacks on an established link (classes 6 and 7)."""

    def check_frames(self, bench):
        server = self.serve(bench)
        for name, attack, logged in frame_attacks():
            with self.subTest(attack=name):
                link, *_ = fp.session(server.port, BUFFER)
                with link.sock:
                    link.sock.sendall(attack)
                    self.assertTrue(fp.closed_by_peer(link.sock))
                line = self.survived(server, logged)
                self.assertRegex(line, r"link \d+ ended: ")
                self.assertNotIn("tcp link: tcp link", line)  # the link is named once
        self.honest_run(server, bench)

    def test_rdma_bad_frames_end_only_their_link(self):
        self.check_frames(RDMA)

    def test_pipeline_bad_frames_end_only_their_link(self):
        self.check_frames(PIPELINE)

    def test_rdma_keepalive_flood_is_accepted_in_bounded_memory(self):
        server = self.serve(RDMA)
        link, *_ = fp.session(server.port, BUFFER, depth=16)
        before = server.rss_kb()
        with link.sock:
            for _ in range(20000 // 16):  # as fast as the acks come back, never past the depth
                link.sock.sendall(fp.frame(fp.NOTIFY, fp.KEEPALIVE) * 16)
                link.in_flight += 16
                link.wait_acks()
            link.notifies.clear()
            self.assertLess(server.rss_kb() - before, 50 * 1024)
            self.assertTrue(server.running())
            self.assertEqual(server.err, [], "the link should still be up")
            link.notify(fp.KEEPALIVE)
            link.wait_acks()  # still up
        self.survived(server, "link 1 ended: tcp link: the peer closed the connection")
        # A burst past the depth, 5000 keepalives before reading any ack: memory stays bounded,
        # and the link either keeps up or ends as a peer that does not read its acks.
        link, *_ = fp.session(server.port, BUFFER, depth=16)
        with link.sock:
            try:  # the server may end the link while we still send: a reset then, or a broken pipe
                link.sock.sendall(fp.frame(fp.NOTIFY, fp.KEEPALIVE) * 5000)
                link.in_flight = 5000
                link.wait_acks()
                ended = False
            except fp.CLOSED:
                ended = True
            self.assertLess(server.rss_kb() - before, 50 * 1024)
        if ended:
            self.survived(server, "the peer does not read what it asks for (576 frames queued for it)")
        else:
            self.survived(server, "link 2 ended: tcp link: the peer closed the connection")
        self.honest_run(server, RDMA)

    def check_idle_link(self, bench, logged):
        server = self.serve(bench, idle_s=2)
        link, *_ = fp.session(server.port, BUFFER)
        started = time.monotonic()
        with link.sock:
            self.assertTrue(fp.closed_by_peer(link.sock, timeout=6))
        self.assertLess(time.monotonic() - started, 5)
        self.survived(server, logged)
        self.honest_run(server, bench)

    def test_rdma_idle_link_is_ended(self):
        self.check_idle_link(RDMA, "link 1 ended: the peer was silent for 2 s (--idle-s)")

    def test_pipeline_idle_link_is_ended(self):
        self.check_idle_link(PIPELINE, "link 1 ended: pipeline: the sender was silent for 2 s (--idle-s)")


def case_attacks():
    """(case record, the log line's field) for each bad case record; link buffer 8 MiB, 2 CPUs or more."""
    huff = b"bytegroup+huff"
    return [(fp.case_record(chunk_bytes=0), "case.chunk_bytes = 0 "),
            (fp.case_record(depth=300), "case.depth = 300 "),
            (fp.case_record(workers=2**31), "case.workers = 2147483648 "),
            (fp.case_record(timeout_ms=2**63), f"case.timeout_ms = {2**63} "),
            (fp.case_record(data_bytes=2**64 - 1), f"case.data_bytes = {2**64 - 1} "),
            (fp.case_record(fp.OVERLAP, chunk_bytes=1 << 30, depth=256, spec=huff),
             "case: the tensor and 256 slots need"),  # tensor + depth x slot, overflow-checked, vs the buffer
            (fp.case_record(fp.OVERLAP, spec=b"nosuchcodec"), "case.codec_spec: bad codec spec 'nosuchcodec'"),
            (fp.case_record(fp.OVERLAP, spec=b"lz4\x01\x7f"), "case.codec_spec has bytes that are not printable"),
            (fp.case_record(fp.OVERLAP, spec=b"lz4", spec_length=300), "case.codec_spec_length = 300 "),
            (fp.case_record(7), "case.mode = 7 "),
            (fp.case_record(fp.SERIAL), "case.codec_spec is empty in serial mode")]


class PipelineCases(ServerTest):
    """bench_pipeline --serve after the handshake: case records and chunk notifications (class 8)."""

    def test_bad_case_records_are_refused_and_the_link_stays_usable(self):
        server = self.serve(PIPELINE)
        link, *_ = fp.session(server.port, 8 << 20, depth=4)
        with link.sock:
            for record, field in case_attacks():
                with self.subTest(field=field):
                    link.notify(fp.imm(fp.START), record)
                    self.assertEqual(link.next_notify().imm, fp.imm(fp.FAILED))
                    line = self.survived(server, field)
                    self.assertTrue(line.startswith("pipeline receiver: refusing the case: "), line)
            link.notify(fp.imm(fp.START), fp.case_record(fp.OVERLAP, depth=1, spec=b"lz4"))  # valid: the link still works
            self.assertEqual(link.next_notify().imm, fp.imm(fp.READY))
            link.notify(fp.imm(fp.CHUNK, slot=31))  # a depth-1 case has slot 0 only
            self.assertEqual(link.next_notify().imm, fp.imm(fp.FAILED, value=(1 << 21) - 1))
            self.assertTrue(fp.closed_by_peer(link.sock))
        self.survived(server, "link 1 ended: pipeline: a chunk notification failed: "
                              "chunk notification names slot 31, the case has 1")
        link, *_ = fp.session(server.port, 8 << 20, depth=4)
        with link.sock:  # a chunk before any case
            link.notify(fp.imm(fp.CHUNK))
            self.assertTrue(fp.closed_by_peer(link.sock))
        self.survived(server, "link 2 ended: pipeline: a chunk arrived before any case")
        link, *_ = fp.session(server.port, 8 << 20, depth=4)
        with link.sock:  # a chunk notification whose write went elsewhere: slot 1 holds a stale chunk, or none
            link.notify(fp.imm(fp.START), fp.case_record(fp.OVERLAP, depth=2, spec=b"lz4"))
            self.assertEqual(link.next_notify().imm, fp.imm(fp.READY))
            link.notify(fp.imm(fp.CHUNK, slot=1, value=0))
            self.assertEqual(kind := fp.kind_of(link.next_notify().imm), fp.FAILED, kind)
            self.assertTrue(fp.closed_by_peer(link.sock))
        self.survived(server, "link 3 ended: pipeline: a chunk notification failed: chunk notification for slot 1 "
                              "came with a write at offset 0, the slot is at ")
        link, *_ = fp.session(server.port, 8 << 20, depth=4)
        with link.sock:  # a write into the slot that holds no chunk header: the chunk fails
            link.notify(fp.imm(fp.START), fp.case_record(fp.OVERLAP, depth=2, spec=b"lz4"))
            self.assertEqual(link.next_notify().imm, fp.imm(fp.READY))
            slot_0 = 1 << 20  # the 1 MiB tensor, rounded up to a page: where the slots begin
            link.notify(fp.imm(fp.CHUNK, slot=0, value=0), bytes(32), offset=slot_0)
            self.assertEqual(kind := fp.kind_of(link.next_notify().imm), fp.FAILED, kind)
            self.assertTrue(fp.closed_by_peer(link.sock))
        self.survived(server, "link 4 ended: pipeline: a chunk notification failed: chunk header.magic = 0x00000000")
        self.honest_run(server, PIPELINE)


class HostileReceiver(unittest.TestCase):
    """A scripted receiver misbehaves towards bench_pipeline --peer (class 9): the sender ends the
    case with a clear error, never a crash or a hang."""

    def check_sender(self, misbehave, expect, *args):
        receiver = fp.FakeReceiver(misbehave)
        self.addCleanup(receiver.stop)
        started = time.monotonic()
        result, report = run_json(PIPELINE, "--transport=tcp", f"--peer=127.0.0.1:{receiver.port}", "--modes=raw",
                                  "--depth=1", "--datasets=synthetic:weights:size=1MiB", "--benchmark_min_time=0.01",
                                  "--timeout-ms=2000", *args, timeout=60)
        self.assertLess(time.monotonic() - started, 30)
        self.assertEqual(result.returncode, 1, result.stderr)  # a failed case: an exit, not a signal
        self.assertIsNone(receiver.error)
        errors = [case["error_message"] for case in report["benchmarks"] if case.get("error_occurred")]
        self.assertEqual(len(errors), 1, report["benchmarks"])
        self.assertEqual(errors[0], expect)
        self.assertEqual(receiver.quits, 1)  # the sender still said goodbye
        return errors[0]

    def test_a_credit_in_a_raw_run(self):
        self.check_sender(lambda link, chunk: link.notify(fp.imm(fp.CREDIT, slot=255)),
                          "pipeline: the receiver sent a credit in a raw run, which has none", "--chunks=256KiB")

    def test_a_short_run_report(self):
        self.check_sender(lambda link, chunk: link.notify(fp.imm(fp.FINISHED), bytes(32)),
                          "pipeline: a run report of 32 bytes", "--chunks=256KiB")

    def test_a_run_report_that_claims_decoded_bytes_in_a_raw_run(self):
        report = struct.pack("<IIQQQQQQIIQ", 0x54504552, 0, 0, 1 << 20, 0, 0, 0, 0, 0, 1, 0)
        self.check_sender(lambda link, chunk: link.notify(fp.imm(fp.FINISHED), report, offset=1 << 20),  # slot 0
                          "run report.decoded_bytes = 1048576, the run moved 0", "--chunks=256KiB")


def secret_file(directory, name, content, mode=0o600):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(content)
    os.chmod(path, mode)
    return path


def run_peer(bench, port, *args):
    """A --peer run expected to fail: (exit code, stderr lines)."""
    result = subprocess.run([bench, f"--peer=127.0.0.1:{port}", *HONEST[bench], *args], capture_output=True,
                            text=True, timeout=60)
    return result.returncode, result.stderr.strip().splitlines()


class Authentication(ServerTest):
    """--secret-file: mutual HMAC-SHA256 over both nonces and the set-up bytes (class 10)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.secret = secret_file(self.tmp.name, "secret", b"correct horse battery staple\n")
        self.wrong = secret_file(self.tmp.name, "wrong", b"wrong horse\n")

    def test_a_secret_file_others_can_read_is_refused(self):
        loose = secret_file(self.tmp.name, "loose", b"correct horse battery staple\n", mode=0o644)
        self.assertEqual(stat.S_IMODE(os.stat(loose).st_mode), 0o644)
        for bench in (RDMA, PIPELINE):
            result = subprocess.run([bench, "--serve", *SERVER_FLAGS, f"--secret-file={loose}"], capture_output=True,
                                    text=True, timeout=30)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(result.stderr.strip().splitlines(), [
                f"{os.path.basename(bench)}: secret file {loose}: readable or writable by group or others "
                "(mode 0644); chmod 600 it"])

    def check_peers_without_the_secret(self, bench):
        server = self.serve(bench, f"--secret-file={self.secret}")
        secret = fp.read_secret(self.secret)
        # A scripted client without a MAC: refused before the welcome.
        setup = fp.set_up(server.port, fp.hello())
        with setup.sock:
            self.assertIn("authentication required", setup.refusal)
            self.assertIsNone(setup.welcome)
        self.survived(server, ": authentication required: the client has no --secret-file")
        # The binaries without the secret, or with another one.
        code, lines = run_peer(bench, server.port)
        self.assertEqual((code, len(lines)), (2, 1), lines)
        self.assertIn("the server requires authentication: give the same --secret-file", lines[0])
        self.survived(server, "handshake: the peer closed the connection before its response")
        code, lines = run_peer(bench, server.port, f"--secret-file={self.wrong}")
        self.assertEqual((code, len(lines)), (2, 1), lines)
        self.assertIn("the server refused the link: authentication failed", lines[0])
        self.survived(server, ": authentication failed: wrong secret or a replayed answer")
        # An honest scripted client: accepted, and the server proves it holds the secret too.
        link, setup = fp.session(server.port, secret=secret)
        with link.sock:
            self.assertTrue(fp.accept_mac_ok(setup, secret))
        self.survived(server, "link 1 ended: tcp link: the peer closed the connection")
        # Its response replayed against a fresh challenge: refused.
        replay = fp.set_up(server.port, setup.hello, response=setup.response)
        with replay.sock:
            self.assertIn("authentication failed", replay.refusal)
        self.survived(server, ": authentication failed: wrong secret or a replayed answer")
        # Quits without the secret, or with a wrong MAC, do not stop it.
        for client_secret, logged in [(None, "authentication required"), (b"wrong horse", "authentication failed")]:
            quit = fp.set_up(server.port, fp.hello(4096, 1, quit=1), secret=client_secret)
            with quit.sock:
                self.assertIn(logged, quit.refusal)
            self.survived(server, logged)
        self.honest_run(server, bench, f"--secret-file={self.secret}")  # its quit is authenticated

    def test_rdma_refuses_peers_without_the_secret(self):
        self.check_peers_without_the_secret(RDMA)

    def test_pipeline_refuses_peers_without_the_secret(self):
        self.check_peers_without_the_secret(PIPELINE)

    def test_an_authenticated_quit_stops_the_server(self):
        for bench in (RDMA, PIPELINE):
            with self.subTest(bench=os.path.basename(bench)):
                server = self.serve(bench, f"--secret-file={self.secret}")
                secret = fp.read_secret(self.secret)
                link, setup = fp.session(server.port, 4096, 1, secret=secret, quit=1)
                with link.sock:
                    self.assertTrue(fp.accept_mac_ok(setup, secret))
                self.assertEqual(server.wait(timeout=10), 0)
                self.assertEqual(server.err, [])

    def test_a_client_with_a_secret_refuses_a_server_without_one(self):
        for bench in (RDMA, PIPELINE):
            with self.subTest(bench=os.path.basename(bench)):
                server = self.serve(bench)
                code, lines = run_peer(bench, server.port, f"--secret-file={self.secret}")
                self.assertEqual((code, len(lines)), (2, 1), lines)
                self.assertIn("the server does not authenticate (started without --secret-file): refusing to run "
                              "against it", lines[0])
                self.survived(server, "handshake: the peer closed the connection before its response")
                self.honest_run(server, bench)
