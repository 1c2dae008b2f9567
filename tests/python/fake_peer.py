"""A scripted wirezip peer for the hostile-peer tests: the one place on the Python side that knows
the wire layouts of docs/PROTOCOL.md (link set-up, tcp frames, session handshake, pipeline
records). Honest by default, so a test can send one wrong field at a time. Loopback only; every
socket operation is bounded by a timeout."""
import collections
import hashlib
import hmac
import json
import os
import socket
import struct
import threading

HOST = "127.0.0.1"

# 1. Link set-up
HELLO_MAGIC, WELCOME_MAGIC, REFUSAL_MAGIC = 0x335A5748, 0x335A5757, 0x335A5752  # "HWZ3" "WWZ3" "RWZ3"
HELLO = struct.Struct("<IQIBB6x")  # magic, buffer_bytes, depth, pages, quit, padding: 24 bytes
WELCOME = struct.Struct("<IQQII4x")  # magic, buffer_bytes, address, rkey, huge_ppm: 32 bytes
REFUSAL_SIZE = 128
PAGES = {"4k": 0, "thp": 1, "hugetlb": 2}

# 2. Frames on a tcp link
FRAME = struct.Struct("<B3xIQQ")  # type, padding, imm, offset, length: 24 bytes
WRITE, ACK, READ_REQUEST, READ_RESPONSE, NOTIFY = 1, 2, 3, 4, 5
MAX_PAYLOAD = 64 << 20  # what this fake accepts from a real endpoint in one frame

# 3. Session handshake
KEEPALIVE = 0x0057A005  # the other session immediates run over verbs only
CHAL_MAGIC, RESP_MAGIC, ACPT_MAGIC = 0x4C414843, 0x50534552, 0x54504341  # "CHAL" "RESP" "ACPT"
HAS_MAC = 1
CHALLENGE_SIZE, RESPONSE_SIZE, ACCEPT_HEADER_SIZE = 40, 72, 44

# 4. Pipeline
CHUNK, START, CREDIT, FINISHED, FAILED, READY, STOP = range(1, 8)
CASE_MAGIC = 0x33534143  # "CAS3"
CASE = struct.Struct("<IIQQIQQI")  # magic, mode, chunk_bytes, depth, workers, timeout_ms, data_bytes, spec length
RAW, SERIAL, OVERLAP = 0, 1, 2


def hello(buffer_bytes=1 << 20, depth=16, pages=0, quit=0, magic=HELLO_MAGIC):
    return HELLO.pack(magic, buffer_bytes, depth, pages, quit)


def welcome(buffer_bytes):
    return WELCOME.pack(WELCOME_MAGIC, buffer_bytes, 0, 0, 0)


def decode_refusal(data):
    """The reason text of a refusal (128 bytes over tcp) of any protocol version, or None when
    `data` is no refusal."""
    if len(data) < 8 or struct.unpack_from("<I", data)[0] & 0xFFFFFF != REFUSAL_MAGIC & 0xFFFFFF:
        return None
    length = struct.unpack_from("<I", data, 4)[0]
    return data[8:8 + min(length, len(data) - 8)].decode("ascii", "replace")


def frame(kind, imm=0, offset=0, length=0):
    return FRAME.pack(kind, imm, offset, length)


def imm(kind, slot=0, value=0):
    return (kind << 29) | (slot << 21) | value


def kind_of(value):
    return value >> 29


def slot_of(value):
    return (value >> 21) & 0xFF


def case_record(mode=RAW, chunk_bytes=256 << 10, depth=1, workers=1, timeout_ms=1000, data_bytes=1 << 20,
                spec=b"", spec_length=None):
    return CASE.pack(CASE_MAGIC, mode, chunk_bytes, depth, workers, timeout_ms, data_bytes,
                     len(spec) if spec_length is None else spec_length) + spec


def proof(secret, role, nonce_p, nonce_a, hello_bytes, welcome_bytes=b""):
    """mac_a (role "client") or mac_p (role "server") of docs/PROTOCOL.md section 3 (over tcp mac_a
    covers the hello only: the welcome comes after it)."""
    message = f"wirezip-v3 {role}".encode() + nonce_p + nonce_a + hello_bytes + welcome_bytes
    return hmac.new(secret, message, hashlib.sha256).digest()


def read_secret(path):
    """The secret as the binaries read it: the file's bytes, one trailing newline dropped."""
    with open(path, "rb") as f:
        data = f.read()
    return data[:-1] if data.endswith(b"\n") else data


# The server closed the link: a close with data it had not read is an RST (ConnectionResetError on
# the next read or write, BrokenPipeError on a write), one without is an end of stream (EOFError
# from recv_exact). Which one a test meets depends on timing, so every test accepts all of them.
CLOSED = (EOFError, ConnectionResetError, BrokenPipeError)


def recv_exact(sock, n):
    """Exactly n bytes; EOFError when the peer closes first, with a reset as much as with an end
    of stream (socket timeouts propagate)."""
    data = bytearray()
    while len(data) < n:
        try:
            chunk = sock.recv(n - len(data))
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise EOFError(f"the peer closed the connection after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def connect(port, timeout=5.0):
    sock = socket.create_connection((HOST, port), timeout=timeout)
    sock.settimeout(timeout)
    return sock


def closed_by_peer(sock, timeout=5.0):
    """True when the peer ends the connection within `timeout` (whatever it sends first is dropped)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def reply_or_refusal(sock, size):
    """(the next `size` bytes, None), or (None, the reason) when the server sent a refusal instead."""
    reply = recv_exact(sock, size)
    if decode_refusal(reply) is None:
        return reply, None
    return None, decode_refusal(reply + recv_exact(sock, REFUSAL_SIZE - size))


def response_to(nonce_p, hello_bytes, secret=None):
    """An honest response: a MAC over the challenge's nonce, ours and the hello when we hold a secret."""
    nonce_a = os.urandom(32)
    mac = proof(secret, "client", nonce_p, nonce_a, hello_bytes) if secret else bytes(32)
    return struct.pack("<II", RESP_MAGIC, HAS_MAC if secret else 0) + nonce_a + mac


SetUp = collections.namedtuple("SetUp", "sock hello nonce_p response welcome accept refusal")


def set_up(port, hello_bytes, timeout=5.0, secret=None, response=None):
    """The active side of a tcp link set-up: hello, challenge, response (`response` replaces the
    honest one), then the welcome and the accept. Returns a SetUp; `refusal` is the server's
    reason where it refused (then the fields after the step it refused are None)."""
    sock = connect(port, timeout)
    sock.sendall(hello_bytes)
    challenge, refusal = reply_or_refusal(sock, CHALLENGE_SIZE)
    if refusal is not None:
        return SetUp(sock, hello_bytes, None, None, None, None, refusal)
    magic, _ = struct.unpack_from("<II", challenge)
    if magic != CHAL_MAGIC:
        raise ValueError(f"challenge magic {magic:#x}")
    nonce_p = challenge[8:40]
    response = response_to(nonce_p, hello_bytes, secret) if response is None else response
    sock.sendall(response)
    welcome_bytes, refusal = reply_or_refusal(sock, WELCOME.size)
    if refusal is not None:
        return SetUp(sock, hello_bytes, nonce_p, response, None, None, refusal)
    header = recv_exact(sock, ACCEPT_HEADER_SIZE)
    accept = header + recv_exact(sock, struct.unpack_from("<I", header, 40)[0])
    return SetUp(sock, hello_bytes, nonce_p, response, welcome_bytes, accept, None)


Notify = collections.namedtuple("Notify", "imm offset payload")


class Link:
    """One side of a tcp link: frames out, frames in. Writes and notifies from the peer are placed
    nowhere but acknowledged at once (the real endpoints wait for acks); notifies are queued."""

    def __init__(self, sock):
        self.sock = sock
        self.in_flight = 0
        self.notifies = collections.deque()

    def send_frame(self, kind, imm=0, offset=0, length=0, payload=b""):
        self.sock.sendall(frame(kind, imm, offset, length) + payload)

    def notify(self, imm, payload=b"", offset=0):
        """A write with an immediate, counted until its ack comes."""
        self.in_flight += 1
        self.send_frame(NOTIFY, imm, offset, len(payload), payload)

    def read_frame(self):
        """The next frame; returns its type. Acks count down, notifies queue up."""
        kind, imm, offset, length = FRAME.unpack(recv_exact(self.sock, FRAME.size))
        if kind in (WRITE, NOTIFY, READ_RESPONSE):
            if length > MAX_PAYLOAD:
                raise ValueError(f"frame of {length} bytes from the peer")
            payload = recv_exact(self.sock, length)
        if kind == ACK:
            self.in_flight -= 1
        elif kind in (WRITE, NOTIFY):
            self.send_frame(ACK, imm)
            if kind == NOTIFY:
                self.notifies.append(Notify(imm, offset, payload))
        elif kind == READ_REQUEST:
            self.send_frame(READ_RESPONSE, 0, 0, length, bytes(length))
        return kind

    def next_notify(self):
        while not self.notifies:
            self.read_frame()
        return self.notifies.popleft()

    def wait_acks(self):
        while self.in_flight > 0:
            self.read_frame()


def accept_mac_ok(setup, secret):
    """Whether the accept of a SetUp proves the server holds `secret`."""
    magic, flags = struct.unpack_from("<II", setup.accept)
    expected = proof(secret, "server", setup.nonce_p, setup.response[8:40], setup.hello, setup.welcome)
    return magic == ACPT_MAGIC and flags & HAS_MAC and hmac.compare_digest(setup.accept[8:40], expected)


def session(port, buffer_bytes=1 << 20, depth=16, secret=None, quit=0, timeout=5.0):
    """An honest set-up. Returns (Link, SetUp); raises ValueError when the server refused."""
    setup = set_up(port, hello(buffer_bytes, depth, quit=quit), timeout, secret)
    if setup.refusal is not None:
        setup.sock.close()
        raise ValueError(f"refused: {setup.refusal}")
    return Link(setup.sock), setup


def serve_set_up(sock):
    """The passive side of a tcp link set-up, without a secret. Returns the hello's fields."""
    hello_bytes = recv_exact(sock, HELLO.size)
    sock.sendall(struct.pack("<II", CHAL_MAGIC, 0) + os.urandom(32))
    recv_exact(sock, RESPONSE_SIZE)
    fields = HELLO.unpack(hello_bytes)
    context = json.dumps({"hostname": "fake-receiver"}).encode()
    sock.sendall(welcome(fields[1]) + struct.pack("<II", ACPT_MAGIC, 0) + bytes(32) + struct.pack("<I", len(context))
                 + context)
    return fields


class LocalListener:
    """A listener on HOST (any free port) whose thread hands each accepted connection to
    on_connection(sock), one at a time, until stop(). Subclasses set their own state before calling
    this __init__: the thread starts at once."""

    def __init__(self):
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(0.1)  # how soon the thread sees stop()
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=10)
        self.listener.close()

    def _accept(self):
        while not self.stopping.is_set():
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            self.on_connection(sock)


class FakeReceiver(LocalListener):
    """A passive side for bench_pipeline --peer: set-up and handshake done honestly, cases and runs
    accepted, and the first chunk of a link answered by `misbehave(link, chunk_notify)`. Serves
    one connection at a time on a thread until stop(); `error` holds what went wrong in it."""

    def __init__(self, misbehave, timeout=5.0):
        self.misbehave, self.timeout = misbehave, timeout
        self.quits = 0  # quit hellos seen: a sender that fails a case still says goodbye
        self.error = None
        super().__init__()

    def on_connection(self, sock):
        with sock:
            sock.settimeout(self.timeout)
            try:
                self._link(sock)
            except CLOSED:
                pass  # the sender hung up: its business
            except Exception as e:  # noqa: BLE001 - reported to the test
                self.error = self.error or repr(e)

    def _link(self, sock):
        _, _, _, _, quit = serve_set_up(sock)
        self.quits += quit
        link = Link(sock)
        misbehaved = False
        while not self.stopping.is_set():
            message = link.next_notify()
            kind = kind_of(message.imm)
            if kind == START:
                link.notify(imm(READY))
            elif kind == CHUNK and not misbehaved:
                misbehaved = True
                self.misbehave(link, message)
