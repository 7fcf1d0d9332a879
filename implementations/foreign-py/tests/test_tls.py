"""End-to-end tests of the S1 (TLS 1.3 + mTLS) listener: a throwaway PKI made with the
openssl command line (skipped when it is missing), a server started with --tls-cert,
--tls-key and --tls-client-ca, and clients made with Python's ssl module.

Run from implementations/foreign-py: python3 -m unittest discover -s tests
"""

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from swpcodec import p1_decode_wrapped, p1_encode_wrapped, p1_message_name, p1_new  # noqa: E402
from test_server import DEADLINE_S, Peer, Server  # noqa: E402

OPENSSL = shutil.which("openssl")


def openssl(*args, cwd):
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(d):
    """ca (trusted), rogue (untrusted) CAs; server (localhost), client (CN fp-client, SAN URI),
    twocn (two commonNames), rogue-client (from the untrusted CA)."""
    ext = os.path.join(d, "ext.cnf")
    with open(ext, "w") as f:
        f.write("[srv]\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
                "[cli]\nsubjectAltName=URI:spiffe://foreign-py.test/client\nextendedKeyUsage=clientAuth\n"
                "[bare]\nextendedKeyUsage=clientAuth\n")
    for ca in ("ca", "rogue"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2", "-subj", f"/CN={ca} test CA", cwd=d)
    for name, subj, ca, section in (("server", "/CN=localhost", "ca", "srv"),
                                    ("client", "/O=foreign-py tests/CN=fp-client", "ca", "cli"),
                                    ("twocn", "/CN=first/CN=second", "ca", "bare"),
                                    ("rogue-client", "/CN=fp-client", "rogue", "cli")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subj, cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "1", "-extfile", ext, "-extensions", section, cwd=d)


@unittest.skipUnless(OPENSSL, "the openssl command line is needed to make test certificates")
class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pki = tempfile.TemporaryDirectory()
        cls.d = cls.pki.name
        make_pki(cls.d)
        cls.server = Server("--listen", "tls://127.0.0.1:0", "--rate-limit", "none",
                            "--tls-cert", cls.path("server.pem"), "--tls-key", cls.path("server.key"),
                            "--tls-client-ca", cls.path("ca.pem"))

    @classmethod
    def tearDownClass(cls):
        rc = cls.server.stop()
        cls.pki.cleanup()
        if rc != 0:
            raise AssertionError(f"server exited with {rc} on SIGTERM")

    @classmethod
    def path(cls, name):
        return os.path.join(cls.d, name)

    def context(self, client="client", version=ssl.TLSVersion.TLSv1_3):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.path("ca.pem"))
        ctx.minimum_version = ctx.maximum_version = version
        if client:
            ctx.load_cert_chain(self.path(f"{client}.pem"), self.path(f"{client}.key"))
        return ctx

    def connect(self, client="client", version=ssl.TLSVersion.TLSv1_3):
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=DEADLINE_S)
        return Peer(self.context(client, version).wrap_socket(raw, server_hostname="localhost"))

    def call(self, peer, method, params=None):
        req = {"jsonrpc": "2.0", "id": 5, "method": method}
        if params is not None:
            req["params"] = params
        mid = peer.send_json(1, req)
        reply = peer.recv()
        self.assertIsNotNone(reply, "the server closed the connection")
        self.assertEqual((reply.profile_id, reply.msg_type, reply.msg_id), (1, 2, mid))
        return json.loads(reply.payload)

    def assert_refused(self, client="client", version=ssl.TLSVersion.TLSv1_3):
        """The handshake fails, or (TLS 1.3: the client's certificate is judged after the
        client's Finished) the first read ends in an alert or EOF: never a frame."""
        try:
            peer = self.connect(client, version)
        except (ssl.SSLError, OSError):
            return
        try:
            peer.send_json(1, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            self.assertIsNone(peer.recv())
        except (ssl.SSLError, OSError):
            pass
        finally:
            peer.close()

    def test_identity_is_the_cn_with_its_prefix(self):
        peer = self.connect()
        try:
            self.assertEqual(peer.sock.version(), "TLSv1.3")
            for _ in range(2):  # stable for the connection's lifetime
                res = self.call(peer, "tools/call", {"name": "whoami", "arguments": {}})["result"]
                self.assertEqual(res["structuredContent"], {"identity": "x509-cn:fp-client"})
                self.assertFalse(res["isError"])
        finally:
            peer.close()

    def test_internal_failure_then_the_connection_lives_on(self):
        peer = self.connect()
        try:
            err = self.call(peer, "tools/call", {"name": "crash", "arguments": {}})
            self.assertEqual((err["id"], err["error"]["code"]), (5, -32603))
            self.assertIn("result", self.call(peer, "tools/list"))
        finally:
            peer.close()

    def test_no_client_certificate(self):
        self.assert_refused(client=None)

    def test_untrusted_client_certificate(self):
        self.assert_refused(client="rogue-client")

    def test_ambiguous_identity_is_refused(self):
        self.assert_refused(client="twocn")

    def test_tls12_is_refused(self):
        self.assert_refused(version=ssl.TLSVersion.TLSv1_2)

    def test_plaintext_gets_no_frame(self):
        peer = Server.connect(self.server)
        try:
            peer.send_json(1, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            try:
                data = peer.sock.recv(65536)
            except OSError:
                data = b""
            # At most a TLS alert record (content type 21), never an SWP frame.
            self.assertTrue(data == b"" or data[0] == 21, data[:16])
        finally:
            peer.close()

    def test_timer_frames_are_written_between_reads(self):
        # The relay's deliveries come from timers: over TLS the serve thread writes them.
        peer = self.connect()
        try:
            pid, mt = 19, 1
            body = p1_encode_wrapped(pid, mt, p1_new(pid, p1_message_name(pid, mt), delivery_id=b"tls-1", topic="fp/loopback", payload=b"p"))
            peer.send(pid, mt, body)
            kinds = []
            end = time.monotonic() + DEADLINE_S
            while len(kinds) < 5 and time.monotonic() < end:
                f = peer.recv()
                self.assertIsNotNone(f)
                kinds.append(f.msg_type)
                p1_decode_wrapped(f.profile_id, f.msg_type, f.payload)
            self.assertEqual(kinds, [2, 1, 1, 1, 5])
            self.assertIn("result", self.call(peer, "tools/list"))
        finally:
            peer.close()


class TlsFlagsTest(unittest.TestCase):
    def test_partial_tls_flags_refused(self):
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "server.py"),
                            "--tls-cert", "x.pem"], capture_output=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"--tls-client-ca", r.stderr)


if __name__ == "__main__":
    unittest.main()
