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
HELLO_MAGIC, WELCOME_MAGIC, REFUSAL_MAGIC = 0x325A5748, 0x325A5757, 0x325A5752  # "HWZ2" "WWZ2" "RWZ2"
HELLO = struct.Struct("<IQIBB6x")  # magic, buffer_bytes, depth, pages, quit, padding: 24 bytes
WELCOME = struct.Struct("<IQQII4x")  # magic, buffer_bytes, address, rkey, huge_ppm: 32 bytes
REFUSAL_SIZE = 128
PAGES = {"4k": 0, "thp": 1, "hugetlb": 2}

# 2. Frames on a tcp link
FRAME = struct.Struct("<B3xIQQ")  # type, padding, imm, offset, length: 24 bytes
WRITE, ACK, READ_REQUEST, READ_RESPONSE, NOTIFY = 1, 2, 3, 4, 5
MAX_PAYLOAD = 64 << 20  # what this fake accepts from a real endpoint in one frame

# 3. Session handshake
CHALLENGE, RESPONSE, ACCEPT, REFUSE, KEEPALIVE = 0x0057A001, 0x0057A002, 0x0057A003, 0x0057A004, 0x0057A005
CHAL_MAGIC, RESP_MAGIC, ACPT_MAGIC = 0x4C414843, 0x50534552, 0x54504341  # "CHAL" "RESP" "ACPT"
HAS_MAC = 1

# 4. Pipeline
CHUNK, START, CREDIT, FINISHED, FAILED, READY, STOP = range(1, 8)
CASE_MAGIC = 0x32534143  # "CAS2"
CASE = struct.Struct("<IIQQIQQI")  # magic, mode, chunk_bytes, depth, workers, timeout_ms, data_bytes, spec length
RAW, SERIAL, OVERLAP = 0, 1, 2


def hello(buffer_bytes=1 << 20, depth=16, pages=0, quit=0, magic=HELLO_MAGIC):
    return HELLO.pack(magic, buffer_bytes, depth, pages, quit)


def welcome(buffer_bytes):
    return WELCOME.pack(WELCOME_MAGIC, buffer_bytes, 0, 0, 0)


def decode_refusal(data):
    """The reason text of a refusal (128 bytes over tcp), or None when `data` is no refusal."""
    if len(data) < 8 or struct.unpack_from("<I", data)[0] != REFUSAL_MAGIC:
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


def proof(secret, role, nonce_p, nonce_a, hello_bytes, welcome_bytes):
    """mac_a (role "client") or mac_p (role "server") of docs/PROTOCOL.md section 3."""
    message = f"wirezip-v2 {role}".encode() + nonce_p + nonce_a + hello_bytes + welcome_bytes
    return hmac.new(secret, message, hashlib.sha256).digest()


def read_secret(path):
    """The secret as the binaries read it: the file's bytes, one trailing newline dropped."""
    with open(path, "rb") as f:
        data = f.read()
    return data[:-1] if data.endswith(b"\n") else data


def recv_exact(sock, n):
    """Exactly n bytes; EOFError when the peer closes first (socket timeouts propagate)."""
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
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


def set_up(port, hello_bytes, timeout=5.0):
    """Sends a hello; returns (socket, welcome bytes, refusal text or None)."""
    sock = connect(port, timeout)
    sock.sendall(hello_bytes)
    reply = recv_exact(sock, WELCOME.size)
    refusal = decode_refusal(reply)
    if refusal is not None:
        refusal = decode_refusal(reply + recv_exact(sock, REFUSAL_SIZE - WELCOME.size))
    return sock, reply, refusal


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


def client_handshake(link, hello_bytes, welcome_bytes, secret=None, response=None):
    """The active side of the session handshake. `response` replaces the honest response bytes.
    Returns (challenge nonce, response sent, the accept or refuse Notify)."""
    challenge = link.next_notify()
    if challenge.imm != CHALLENGE or challenge.offset != 0:
        raise ValueError(f"expected a challenge, got imm {challenge.imm:#x}")
    magic, flags = struct.unpack_from("<II", challenge.payload)
    if magic != CHAL_MAGIC:
        raise ValueError(f"challenge magic {magic:#x}")
    nonce_p = challenge.payload[8:40]
    if response is None:
        nonce_a = os.urandom(32)
        mac = proof(secret, "client", nonce_p, nonce_a, hello_bytes, welcome_bytes) if secret else bytes(32)
        response = struct.pack("<II", RESP_MAGIC, HAS_MAC if secret else 0) + nonce_a + mac
    link.notify(RESPONSE, response)
    answer = link.next_notify()
    return nonce_p, response, answer


def accept_mac_ok(accept, secret, nonce_p, response, hello_bytes, welcome_bytes):
    """Whether an accept proves the server holds `secret`."""
    magic, flags = struct.unpack_from("<II", accept.payload)
    mac_p = accept.payload[8:40]
    expected = proof(secret, "server", nonce_p, response[8:40], hello_bytes, welcome_bytes)
    return magic == ACPT_MAGIC and flags & HAS_MAC and hmac.compare_digest(mac_p, expected)


def session(port, buffer_bytes=1 << 20, depth=16, secret=None, quit=0, timeout=5.0):
    """An honest set-up and handshake. Returns (Link, hello, welcome, nonce_p, response, answer)."""
    hello_bytes = hello(buffer_bytes, depth, quit=quit)
    sock, welcome_bytes, refusal = set_up(port, hello_bytes, timeout)
    if refusal is not None:
        sock.close()
        raise ValueError(f"refused: {refusal}")
    link = Link(sock)
    nonce_p, response, answer = client_handshake(link, hello_bytes, welcome_bytes, secret)
    return link, hello_bytes, welcome_bytes, nonce_p, response, answer


def serve_handshake(link, hello_bytes, welcome_bytes):
    """The passive side of the session handshake, without a secret."""
    link.notify(CHALLENGE, struct.pack("<II", CHAL_MAGIC, 0) + os.urandom(32))
    link.wait_acks()
    response = link.next_notify()
    if response.imm != RESPONSE:
        raise ValueError(f"expected a response, got imm {response.imm:#x}")
    context = json.dumps({"hostname": "fake-receiver"}).encode()
    link.notify(ACCEPT, struct.pack("<II", ACPT_MAGIC, 0) + bytes(32) + struct.pack("<I", len(context)) + context)
    link.wait_acks()


class FakeReceiver:
    """A passive side for bench_pipeline --peer: set-up and handshake done honestly, cases and runs
    accepted, and the first chunk of a link answered by `misbehave(link, chunk_notify)`. Serves
    one connection at a time on a thread until stop(); `error` holds what went wrong in it."""

    def __init__(self, misbehave, timeout=5.0):
        self.misbehave, self.timeout = misbehave, timeout
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.quits = 0  # quit hellos seen: a sender that fails a case still says goodbye
        self.error = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=10)
        self.listener.close()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            with sock:
                sock.settimeout(self.timeout)
                try:
                    self._link(sock)
                except (EOFError, ConnectionError):
                    pass  # the sender hung up: its business
                except Exception as e:  # noqa: BLE001 - reported to the test
                    self.error = self.error or repr(e)

    def _link(self, sock):
        hello_bytes = recv_exact(sock, HELLO.size)
        _, buffer_bytes, _, _, quit = HELLO.unpack(hello_bytes)
        self.quits += quit
        welcome_bytes = welcome(buffer_bytes)
        sock.sendall(welcome_bytes)
        link = Link(sock)
        serve_handshake(link, hello_bytes, welcome_bytes)
        misbehaved = False
        while not self.stopping.is_set():
            message = link.next_notify()
            kind = kind_of(message.imm)
            if kind == START:
                link.notify(imm(READY))
            elif kind == CHUNK and not misbehaved:
                misbehaved = True
                self.misbehave(link, message)
