"""Hostile peers before authentication, against real --serve processes (tcp, loopback): the secret
file a server starts with, and strangers that connect and then stay silent, trickle bytes, ask for
the largest buffer, or send frames instead of answering the challenge. A server with a secret must
spend nothing on them (no buffer, no host fact in what it says) and must serve an honest peer that
comes after them. Outcomes and orderings are asserted, never how long something took."""
import os
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a file or by discovery
import fake_peer as fp  # noqa: E402
from bench_process import ServeProcess  # noqa: E402
from test_hostile_peers import PIPELINE, RDMA, SERVER_FLAGS, ServerTest, secret_file  # noqa: E402

SECRET = b"correct horse battery staple\n"


def serve_once(bench, *args, env=None):
    """`bench --serve` expected to refuse to start: (exit code, stderr lines)."""
    result = subprocess.run([bench, "--serve", *SERVER_FLAGS, *args], capture_output=True, text=True, timeout=30,
                            env=env)
    return result.returncode, result.stderr.strip().splitlines()


class SecretFile(unittest.TestCase):
    """The secret a server starts with: never silently none, never cut, never a blocking open."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def refused(self, expect, *args, env=None):
        for bench in (RDMA, PIPELINE):
            with self.subTest(bench=os.path.basename(bench)):
                code, lines = serve_once(bench, *args, env=env)
                self.assertEqual((code, len(lines)), (2, 1), lines)
                self.assertIn(expect, lines[0])

    def test_an_empty_WIREZIP_SECRET_FILE_is_an_error_not_an_open_server(self):
        self.refused("WIREZIP_SECRET_FILE is set but empty", env={**os.environ, "WIREZIP_SECRET_FILE": ""})

    def test_a_secret_file_over_the_limit_is_refused_whole(self):
        path = secret_file(self.tmp.name, "long", b"s" * 4096 + b"x\n")
        self.refused(f"secret file {path}: 4098 bytes, over the 4096-byte limit", f"--secret-file={path}")

    def test_a_fifo_as_secret_file_is_refused_without_blocking(self):
        path = os.path.join(self.tmp.name, "fifo")
        os.mkfifo(path, 0o600)  # nobody ever writes it: an open() that waits for a writer would hang
        self.refused(f"secret file {path}: not a regular file", f"--secret-file={path}")


def trickle(port, count, interval, report):
    """A slowloris: `count` bytes of a hello, one per `interval`; report["sent"] is how many went out
    before the server closed the connection, report["closed"] whether it did."""
    with fp.connect(port) as sock:
        hello = fp.hello()
        report["sent"], report["closed"] = 0, False
        for i in range(count):
            try:
                sock.sendall(hello[i:i + 1])
                report["sent"] = i + 1
            except fp.CLOSED:
                report["closed"] = True
                return
            time.sleep(interval)
        report["closed"] = fp.closed_by_peer(sock, timeout=5)


def read_until_closed(sock, timeout=5.0):
    """Everything the server sends until it closes the connection (an end of stream or a reset)."""
    sock.settimeout(timeout)
    data = bytearray()
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return bytes(data)


class BeforeAuthentication(ServerTest):
    """A server with --secret-file against strangers that never authenticate."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.secret = secret_file(self.tmp.name, "secret", SECRET)

    def serve_secret(self, bench, *args, timeout_ms=1000):
        """A server with the secret whose set-up deadline is `timeout_ms`."""
        flags = [flag for flag in SERVER_FLAGS if not flag.startswith("--timeout-ms=")]
        server = ServeProcess(bench, *flags, f"--timeout-ms={timeout_ms}", "--idle-s=5", f"--secret-file={self.secret}",
                              *args)
        self.addCleanup(server.stop)
        return server

    def honest(self, server, bench):
        return self.honest_run(server, bench, f"--secret-file={self.secret}")

    def test_a_slow_stranger_is_dropped_at_the_set_up_deadline(self):
        server = self.serve_secret(RDMA)
        report = {}
        # 23 bytes, one per 0.4 s: 9 s of a hello that never completes. A deadline renewed per byte
        # would hold the set-up that long; the set-up deadline (1 s) ends it long before.
        trickle(server.port, 23, 0.4, report)
        self.assertTrue(report["closed"], report)
        self.assertLess(report["sent"], 23, "the server waited for a hello trickling in byte by byte")
        self.survived(server, "no hello within 1000 ms (the set-up deadline)")
        self.honest(server, RDMA)

    def test_slow_and_silent_strangers_do_not_delay_an_honest_peer(self):
        for bench in (RDMA, PIPELINE):
            with self.subTest(bench=os.path.basename(bench)):
                # Set-ups may take 20 s here; the honest peer gives up on its own after 3 s
                # (--timeout-ms=3000 in HONEST), so it passes only if it is not queued behind them.
                server = self.serve_secret(bench, timeout_ms=20000)
                report = {}
                slow = threading.Thread(target=trickle, args=(server.port, 23, 0.4, report))
                slow.start()
                with fp.connect(server.port) as silent:
                    silent.sendall(fp.hello()[:10])
                    while report.get("sent", 0) < 1:
                        time.sleep(0.01)
                    self.honest(server, bench)
                slow.join(timeout=30)

    def test_many_idle_connections_do_not_stop_an_honest_peer(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
        self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        server = self.serve_secret(RDMA, timeout_ms=20000)  # idle strangers outlast the whole test
        idle = []
        self.addCleanup(lambda: [sock.close() for sock in idle])
        for _ in range(1000):
            idle.append(socket.create_connection((fp.HOST, server.port), timeout=5))
        # The honest peer needs its set-up within its own 3 s (HONEST); 1000 strangers before it,
        # each allowed 20 s, must not make it wait for them.
        self.honest(server, RDMA)
        self.assertTrue(any("dropped before it authenticated: 16 newer connections" in line for line in server.err))

    def test_hellos_asking_for_the_largest_buffer_cost_no_memory_before_authentication(self):
        for bench in (RDMA, PIPELINE):
            with self.subTest(bench=os.path.basename(bench)):
                server = self.serve_secret(bench, "--max-buffer=1GiB", "--allow-pages=4k")
                before = server.rss_kb()
                for i in range(100):
                    # Half answer the challenge without a MAC, half with a wrong one; every hello asks for
                    # --max-buffer (1 GiB): a server that mapped or touched it first would grow by GiBs.
                    setup = fp.set_up(server.port, fp.hello(buffer_bytes=1 << 30), secret=b"guess" if i % 2 else None)
                    with setup.sock:
                        self.assertIsNotNone(setup.refusal)
                        self.assertIsNone(setup.welcome)
                    self.survived(server, "authentication")
                self.assertLess(server.rss_kb() - before, 64 * 1024, "the server allocated for unauthenticated peers")
                self.honest(server, bench)

    def test_refusals_before_authentication_name_no_host_fact(self):
        server = self.serve_secret(RDMA, "--max-buffer=64MiB", "--allow-pages=4k")
        # Each of these would be refused naming a limit (--max-buffer, --allow-pages) after
        # authentication; before it the only answer is the challenge, then "authentication ...".
        for hello in (fp.hello(buffer_bytes=2**40), fp.hello(pages=fp.PAGES["hugetlb"]), fp.hello(depth=0),
                      fp.hello(pages=fp.PAGES["thp"]), fp.hello(quit=2)):
            with self.subTest(hello=hello.hex()):
                with fp.connect(server.port) as sock:
                    sock.sendall(hello)
                    challenge = fp.recv_exact(sock, fp.CHALLENGE_SIZE)
                    magic, flags = struct.unpack_from("<II", challenge)
                    self.assertEqual((magic, flags), (fp.CHAL_MAGIC, fp.HAS_MAC))  # magic, flags, a nonce: nothing else
                    sock.sendall(fp.response_to(challenge[8:40], hello))  # no MAC
                    reply = read_until_closed(sock)
                self.assertEqual(len(reply), fp.REFUSAL_SIZE, reply)
                reason = fp.decode_refusal(reply)
                self.assertEqual(reason, "authentication required: the client has no --secret-file")
                self.survived(server, "authentication required")
        self.honest(server, RDMA)

    def test_frames_before_the_response_are_no_link(self):
        server = self.serve_secret(RDMA)
        with fp.connect(server.port) as sock:
            sock.sendall(fp.hello())
            fp.recv_exact(sock, fp.CHALLENGE_SIZE)
            # In place of the 72-byte response: a read of our buffer and a write to be acknowledged
            # (72 bytes in all, so the server reads all of it and closes without a reset).
            attack = fp.frame(fp.READ_REQUEST, 0, 0, 4096) + fp.frame(fp.WRITE, 0, 0, 24) + bytes(24)
            self.assertEqual(len(attack), fp.RESPONSE_SIZE)
            sock.sendall(attack)
            reply = read_until_closed(sock)
        # One refusal, then the end: no read response, no ack, not a byte of the buffer.
        self.assertEqual(len(reply), fp.REFUSAL_SIZE, reply)
        self.assertIn("handshake: response.magic = 0x00000003 is wrong", fp.decode_refusal(reply))
        self.survived(server, "handshake: response.magic = 0x00000003 is wrong")
        self.honest(server, RDMA)


if __name__ == "__main__":
    unittest.main()
