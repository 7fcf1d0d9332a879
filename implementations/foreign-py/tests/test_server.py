"""End-to-end tests of server.py: each test class starts its own server process on a
loopback port and talks SWP to it over TCP.

Run from implementations/foreign-py: python3 -m unittest discover -s tests
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from swpcodec import (  # noqa: E402
    Envelope,
    Event,
    FrameReader,
    Handshake,
    Limits,
    Result,
    Task,
    decode_body,
    decode_wrapped,
    encode_frame,
    encode_message,
    encode_wrapped,
)

DEADLINE_S = 10  # upper bound on any single wait; never a pass condition
# Starting Python under a loaded machine (a 2-core CI runner building and testing at once)
# took more than 10 s once; a generous bound costs nothing when the server starts quickly.
START_DEADLINE_S = 60


class Server:
    def __init__(self, *args):
        self.dir = tempfile.TemporaryDirectory()
        self.port_file = os.path.join(self.dir.name, "port")
        # The log goes to a file: an unread pipe could fill and stall the server.
        self.log = open(os.path.join(self.dir.name, "stderr.log"), "wb")
        # stdout too: a server left running must not hold the test runner's stdout open
        # (whoever reads it to EOF, as `cargo test`'s foreign.rs does, would wait forever).
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "server.py"), "--port-file", self.port_file, *args],
            stdout=self.log,
            stderr=self.log,
        )
        end = time.monotonic() + START_DEADLINE_S
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.monotonic() > end:
                # Not left behind: setUpClass failing means tearDownClass never runs.
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("server did not write its port file")
            time.sleep(0.02)
        with open(self.port_file) as f:
            self.port = int(f.read())

    def connect(self):
        return Peer(socket.create_connection(("127.0.0.1", self.port), timeout=DEADLINE_S))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            # Killed rather than left running; the caller sees a non-zero status.
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        self.dir.cleanup()
        return rc


class Peer:
    def __init__(self, sock):
        self.sock = sock
        self.reader = FrameReader(1 << 23)
        self.n = 0

    def send(self, profile_id, msg_type, payload, msg_id=None):
        self.n += 1
        msg_id = msg_id or b"test-msg-%08d" % self.n
        self.sock.sendall(encode_frame(Envelope(1, profile_id, msg_type, 0, 0, msg_id, [], payload)))
        return msg_id

    def send_json(self, msg_type, obj, msg_id=None):
        return self.send(1, msg_type, json.dumps(obj).encode(), msg_id)

    def recv(self):
        """The next frame, or None when the server closed the connection."""
        while True:
            body = self.reader.next_body()
            if body is not None:
                return decode_body(body, Limits().resolved())
            data = self.sock.recv(65536)
            if not data:
                self.reader.finish()
                return None
            self.reader.feed(data)

    def assert_closed_silently(self, test):
        test.assertIsNone(self.recv())
        test.assertEqual(self.reader.buf, b"")

    def close(self):
        self.sock.close()


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--rate-limit", "none")

    @classmethod
    def tearDownClass(cls):
        rc = cls.server.stop()
        if rc != 0:
            raise AssertionError(f"server exited with {rc} on SIGTERM")

    def setUp(self):
        self.peer = self.server.connect()

    def tearDown(self):
        self.peer.close()

    def call(self, method, params=None):
        req = {"jsonrpc": "2.0", "id": 7, "method": method}
        if params is not None:
            req["params"] = params
        mid = self.peer.send_json(1, req)
        reply = self.peer.recv()
        self.assertEqual((reply.profile_id, reply.msg_type, reply.msg_id), (1, 2, mid))
        return json.loads(reply.payload)

    def test_tools_list_and_call(self):
        tools = self.call("tools/list")["result"]["tools"]
        self.assertIn("reverse", [t["name"] for t in tools])
        res = self.call("tools/call", {"name": "reverse", "arguments": {"text": "abc"}})["result"]
        self.assertEqual(res["content"][0]["text"], "cba")
        self.assertTrue(self.call("tools/call", {"name": "always_fails"})["result"]["isError"])
        self.assertEqual(self.call("tools/call", {"name": "nope"})["error"]["code"], -32602)

    def test_internal_failure_is_a_jsonrpc_error(self):
        # The crash tool raises inside the endpoint: JSON-RPC -32603 (mapping section 6), and
        # the connection lives on.
        self.assertEqual(self.call("tools/call", {"name": "crash", "arguments": {}})["error"]["code"], -32603)
        self.assertIn("result", self.call("tools/list"))

    def test_whoami_without_tls_names_nobody(self):
        res = self.call("tools/call", {"name": "whoami", "arguments": {}})["result"]
        self.assertTrue(res["isError"])
        self.assertNotIn("structuredContent", res)

    def test_initialize(self):
        res = self.call("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})
        self.assertEqual(res["result"]["protocolVersion"], "2025-03-26")
        self.assertEqual(res["result"]["serverInfo"]["name"], "foreign-py")

    def test_no_ping(self):
        self.assertEqual(self.call("ping")["error"]["code"], -32601)

    def test_notifications_and_responses_get_no_answer(self):
        self.peer.send_json(3, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.peer.send_json(2, {"jsonrpc": "2.0", "id": "x", "result": {}})
        # The next answer is the one to this request: nothing came before it.
        self.assertIn("result", self.call("tools/list"))

    def test_rejects_close_with_zero_bytes(self):
        cases = [
            lambda p: p.sock.sendall(b"\x00\x00\x00\x00"),  # zero length
            lambda p: p.sock.sendall(encode_frame(Envelope(2, 1, 1, 0, 0, b"12345678", [], b"{}"))),  # version
            lambda p: p.send(999, 1, b"{}"),  # unknown profile
            lambda p: p.send(1, 1, b"{}", msg_id=b"short"),  # msg_id too short
            lambda p: p.send(1, 1, b"not json"),  # invalid MCP payload
            lambda p: p.send(1, 4, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),  # msg_type
            lambda p: p.send_json(2, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),  # request as response
            lambda p: p.send(2, 2, encode_message(Task(b"t", "echo", b"x"))),  # bare P1 message
        ]
        for i, case in enumerate(cases):
            with self.subTest(case=i):
                peer = self.server.connect()
                case(peer)
                peer.assert_closed_silently(self)
                peer.close()

    def test_truncated_frame_at_half_close(self):
        self.peer.sock.sendall(encode_frame(Envelope(1, 1, 1, 0, 0, b"12345678", [], b"{}"))[:-1])
        self.peer.sock.shutdown(socket.SHUT_WR)
        self.peer.assert_closed_silently(self)

    def test_reply_before_a_reject_in_the_same_write(self):
        good = encode_frame(Envelope(1, 1, 1, 0, 0, b"12345678", [], b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
        self.peer.sock.sendall(good + b"\x00\x00\x00\x00")
        self.assertEqual(self.peer.recv().msg_type, 2)
        self.peer.assert_closed_silently(self)

    def a2a(self, msg_type, msg):
        return self.peer.send(2, msg_type, encode_wrapped(msg))

    def test_a2a_handshake_is_not_answered(self):
        self.a2a(1, Handshake("tester", ["x"]))
        # Nothing comes for the Handshake: the next frame is the Result of this Task.
        self.assertEqual(self.run_task(Task(b"after-hs", "fp.mirror", b"q")), [(4, Result(b"after-hs", True, b"q", ""))])

    def run_task(self, task):
        self.a2a(2, task)
        frames = []
        while True:
            f = self.peer.recv()
            frames.append((f.msg_type, decode_wrapped(f.msg_type, f.payload)))
            if f.msg_type == 4:
                return frames

    def test_a2a_task_kinds(self):
        self.assertEqual(self.run_task(Task(b"e", "fp.mirror", b"\x00\xff")), [(4, Result(b"e", True, b"\x00\xff", ""))])
        frames = self.run_task(Task(b"v", "fp.progress", b"3"))
        self.assertEqual([t for t, _ in frames], [3, 3, 3, 4])
        self.assertTrue(all(m.task_id == b"v" for _, m in frames))
        self.assertEqual(self.run_task(Task(b"s", "fp.total", b"1, 2,-4"))[-1][1].output, b"-1")
        for task, reason in [
            (Task(b"f", "fp.fault"), "execution failed"),
            (Task(b"m", "fp.total", b"1,,2"), "malformed task input"),
            (Task(b"m2", "fp.total", b"one,two"), "malformed task input"),
            (Task(b"n", "fp.progress", b"17"), "malformed task input"),
            (Task(b"u", "echo"), "unsupported capability"),
        ]:
            result = self.run_task(task)[-1][1]
            self.assertFalse(result.ok)
            self.assertIn(reason, result.error_message)

    def test_a2a_duplicates_and_lifecycle(self):
        self.run_task(Task(b"d", "fp.mirror", b"x"))
        self.a2a(2, Task(b"d", "fp.mirror", b"x"))  # equivalent: ignored
        self.a2a(4, Result(b"d", True, b"x"))  # equivalent terminal Result: ignored
        self.assertEqual(self.run_task(Task(b"d2", "fp.mirror", b"y"))[0][1].task_id, b"d2")
        self.a2a(3, Event(b"d", "late"))  # after the terminal Result
        self.peer.assert_closed_silently(self)

    def test_a2a_rejects(self):
        cases = [
            (2, Task(b"", "fp.mirror")),
            (2, Task(b"t", "")),
            (3, Event(b"never-seen", "m")),
            (4, Result(b"never-seen", True)),
            (1, Handshake("")),
        ]
        for msg_type, msg in cases:
            with self.subTest(msg=msg):
                peer = self.server.connect()
                peer.send(2, msg_type, encode_wrapped(msg))
                peer.assert_closed_silently(self)
                peer.close()

    def test_a2a_conflicting_duplicate_task(self):
        self.run_task(Task(b"c", "fp.mirror", b"x"))
        self.a2a(2, Task(b"c", "fp.mirror", b"other"))
        self.peer.assert_closed_silently(self)

    def test_a2a_task_ids_are_server_wide(self):
        self.run_task(Task(b"shared-1", "fp.mirror", b"x"))
        other = self.server.connect()
        try:
            # The same task_id on another connection is the same lifecycle: a conflicting
            # Task is refused there too, and an equivalent one gets nothing.
            other.send(2, 2, encode_wrapped(Task(b"shared-1", "fp.mirror", b"y")))
            other.assert_closed_silently(self)
        finally:
            other.close()

    def test_concurrent_connections(self):
        slow = self.server.connect()
        slow.send_json(1, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait", "arguments": {"ms": 10000}}})
        # Answered while the other connection's request is still running.
        self.assertIn("result", self.call("tools/list"))
        slow.close()


class RateLimitTest(unittest.TestCase):
    def test_frame_over_the_limit_closes(self):
        server = Server("--rate-limit", "3/600000")
        try:
            peer = server.connect()
            for i in range(3):
                peer.send_json(1, {"jsonrpc": "2.0", "id": i, "method": "tools/list"})
                self.assertEqual(peer.recv().msg_type, 2)
            peer.send_json(1, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
            peer.assert_closed_silently(self)
            peer.close()
            # The limit is per connection.
            other = server.connect()
            other.send_json(1, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            self.assertEqual(other.recv().msg_type, 2)
            other.close()
        finally:
            self.assertEqual(server.stop(), 0)


class StartupTest(unittest.TestCase):
    def test_refuses_non_loopback(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "server.py"), "--listen", "0.0.0.0:0"], capture_output=True, timeout=DEADLINE_S)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"non-loopback", p.stderr)


if __name__ == "__main__":
    unittest.main()
