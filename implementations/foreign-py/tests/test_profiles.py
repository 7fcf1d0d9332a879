"""Tests of the SWP-* profiles (10-19): the schema-driven P1 codec, and end-to-end
exchanges with a server process (the Server/Peer helpers of test_server.py).

Run from implementations/foreign-py: python3 -m unittest discover -s tests
"""

import hashlib
import json
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from swpcodec import (  # noqa: E402
    P1_ANNEXES,
    ProtoError,
    p1_decode_wrapped,
    p1_encode_wrapped,
    p1_message_name,
    p1_new,
)
from test_server import Server  # noqa: E402


class P1CodecTest(unittest.TestCase):
    def test_every_annex_round_trips(self):
        for pid, annex in P1_ANNEXES.items():
            for mt in range(1, len(annex["Payload"]) + 1):
                name = p1_message_name(pid, mt)
                msg = p1_new(pid, name)
                with self.subTest(profile=pid, msg=name):
                    self.assertEqual(p1_decode_wrapped(pid, mt, p1_encode_wrapped(pid, mt, msg)), msg)

    def test_nested_and_repeated(self):
        tools = [p1_new(11, "ToolDescriptor", tool_id="a", name="n", version="1", schema_ref="urn:x", descriptor_payload=b"\xff")]
        msg = p1_new(11, "TooldiscListResp", tools=tools * 2, next_page_token="t")
        self.assertEqual(p1_decode_wrapped(11, 2, p1_encode_wrapped(11, 2, msg)), msg)
        put = p1_new(17, "StatePut", state_id=b"s", blob=b"", parent_ids=[b"p1", b"p2"], metadata=b"m")
        self.assertEqual(p1_decode_wrapped(17, 1, p1_encode_wrapped(17, 1, put))["parent_ids"], [b"p1", b"p2"])

    def test_known_bytes(self):
        # Payload{member 1: RpcReq{rpc_id "r", method "m.x", idempotency_key "k"}}
        msg = p1_new(12, "RpcReq", rpc_id=b"r", method="m.x", idempotency_key="k")
        self.assertEqual(p1_encode_wrapped(12, 1, msg).hex(), "0a0b0a017212036d2e7822016b")

    def test_unknown_fields_are_skipped(self):
        raw = p1_encode_wrapped(19, 2, p1_new(19, "RelayAck", delivery_id=b"d"))
        inner = raw[2:] + bytes.fromhex("7801") + bytes.fromhex("8201027a7a")  # field 15 varint, field 16 bytes
        wrapped = bytes([0x12, len(inner)]) + inner + bytes.fromhex("5005")  # Payload field 10, unknown
        self.assertEqual(p1_decode_wrapped(19, 2, wrapped)["delivery_id"], b"d")

    def test_rejects(self):
        cases = [
            (12, 1, b""),  # no member
            (12, 1, p1_encode_wrapped(12, 2, p1_new(12, "RpcResp"))),  # member 2, msg_type 1
            (12, 1, bytes.fromhex("0a02") + bytes.fromhex("1001")),  # method (string) as varint
            (18, 1, bytes.fromhex("0a03") + bytes.fromhex("0a01ff")),  # traceparent not UTF-8
            (13, 1, bytes.fromhex("0a05")),  # truncated
            (13, 9, bytes.fromhex("4a00")),  # msg_type outside the table
        ]
        for pid, mt, raw in cases:
            with self.subTest(raw=raw.hex()):
                with self.assertRaises(ProtoError):
                    p1_decode_wrapped(pid, mt, raw)


class ProfileServerTest(unittest.TestCase):
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

    def send(self, pid, mt, peer=None, **fields):
        peer = peer or self.peer
        name = p1_message_name(pid, mt)
        return peer.send(pid, mt, p1_encode_wrapped(pid, mt, p1_new(pid, name, **fields)))

    def recv(self, peer=None):
        f = (peer or self.peer).recv()
        self.assertIsNotNone(f, "the server closed the connection")
        return f.profile_id, f.msg_type, f.msg_id, p1_decode_wrapped(f.profile_id, f.msg_type, f.payload)

    def assert_quiet(self, peer=None):
        """Nothing is pending: the next frame is the answer to an MCP probe."""
        peer = peer or self.peer
        mid = peer.send_json(1, {"jsonrpc": "2.0", "id": "probe", "method": "tools/list"})
        f = peer.recv()
        self.assertEqual((f.profile_id, f.msg_type, f.msg_id), (1, 2, mid))

    def assert_closes(self, pid, mt, raw):
        peer = self.server.connect()
        try:
            peer.send(pid, mt, raw)
            peer.assert_closed_silently(self)
        finally:
            peer.close()

    # --- common

    def test_unassigned_and_optional_msg_types_close(self):
        for pid, mt in [(10, 5), (11, 6), (12, 6), (13, 6), (14, 6), (15, 5), (16, 5), (17, 5), (18, 5), (19, 6), (19, 0),
                        (10, 3), (12, 4), (12, 5), (13, 2), (13, 3), (13, 4), (14, 4), (15, 3), (17, 3), (19, 3), (19, 4)]:
            with self.subTest(profile=pid, msg_type=mt):
                name = p1_message_name(pid, mt)
                raw = p1_encode_wrapped(pid, mt, p1_new(pid, name)) if name else bytes([mt << 3 | 2, 0])
                self.assert_closes(pid, mt, raw)

    def test_undecodable_payload_closes(self):
        for pid in range(10, 20):
            with self.subTest(profile=pid):
                self.assert_closes(pid, 1, b"\xff\xff")

    # --- SWP-AGDISC

    def test_agdisc(self):
        mid = self.send(10, 1, agent_id="fp-agent-7", if_none_match='W/"fp-card-2"')
        pid, mt, rid, doc = self.recv()
        self.assertEqual((pid, mt, rid), (10, 2, mid))  # always the whole card
        self.assertEqual(doc["schema_revision"], "fp-card/2")
        self.assertEqual(json.loads(doc["card_payload"])["agent_id"], "fp-agent-7")
        self.send(10, 1, agent_id="nobody")
        self.assertEqual(self.recv()[3]["code"], "no_such_agent")
        self.send(10, 1, agent_id="fp-agent-broken")
        self.assertEqual(self.recv()[3]["code"], "card_invalid")
        self.send(10, 2, agent_id="x", card_payload=b"{}")  # a card without revision
        self.assertEqual(self.recv()[1:4:2], (4, {"code": "ERR_INVALID_PROFILE_PAYLOAD", "message": "AGDISC_DOC without schema_revision"}))
        self.assert_quiet()

    # --- SWP-TOOLDISC

    def test_tooldisc(self):
        self.send(11, 1, page_size=1)
        _, mt, _, page = self.recv()
        self.assertEqual((mt, [t["tool_id"] for t in page["tools"]], page["next_page_token"]), (2, ["fp.clock"], "fp-page-1"))
        self.send(11, 1, page_size=1, page_token="fp-page-1")
        page = self.recv()[3]
        self.assertEqual(([t["tool_id"] for t in page["tools"]], page["next_page_token"]), (["fp.dice"], ""))
        self.send(11, 1, filter="tool_id=fp.dice")
        self.assertEqual([t["tool_id"] for t in self.recv()[3]["tools"]], ["fp.dice"])
        self.send(11, 3, tool_id="fp.clock", version="2.1.0")
        self.assertEqual(self.recv()[3]["tool"]["schema_ref"], "urn:foreign-py:schema:clock:2")
        self.send(11, 3, tool_id="fp.clock", version="9")
        self.assertEqual(self.recv()[3]["code"], "unknown_tool")
        bad = p1_new(11, "ToolDescriptor", tool_id="a", name="a", version="1", schema_ref="sha256:abc")
        self.send(11, 4, tool=bad)
        self.assertEqual(self.recv()[1:4:2][0], 5)
        self.assert_quiet()

    # --- SWP-RPC

    def test_rpc(self):
        mid = self.send(12, 1, rpc_id=b"r1", method="org.foreignpy.mirror", params=b"\x00p")
        self.assertEqual(self.recv(), (12, 2, mid, {"rpc_id": b"r1", "result": b"\x00p"}))
        self.send(12, 1, rpc_id=b"r2", method="org.foreignpy.busy")
        err = self.recv()[3]
        self.assertEqual((err["error_code"], err["retryable"]), ("unavailable", True))
        self.send(12, 1, rpc_id=b"r3", method="org.foreignpy.nothing")
        self.assertEqual(self.recv()[3]["error_code"], "unknown_method")
        self.send(12, 1, rpc_id=b"r4", method="not a method")
        self.assertEqual(self.recv()[3]["error_code"], "invalid_request")
        # Idempotency: a replay gets the original outcome, a conflicting one an error.
        self.send(12, 1, rpc_id=b"r5", method="org.foreignpy.ticket", idempotency_key="k-test")
        first = self.recv()[3]["result"]
        self.send(12, 1, rpc_id=b"r6", method="org.foreignpy.ticket", idempotency_key="k-test")
        self.assertEqual(self.recv()[3], {"rpc_id": b"r6", "result": first})
        self.send(12, 1, rpc_id=b"r7", method="org.foreignpy.mirror", idempotency_key="k-test")
        self.assertEqual(self.recv()[3]["error_code"], "idempotency_conflict")
        self.assert_quiet()
        for mt, fields in [(2, dict(rpc_id=b"r1", result=b"x")), (3, dict(rpc_id=b"r1", error_code="internal")),
                           (2, dict(result=b"x"))]:
            with self.subTest(msg_type=mt, fields=fields):
                name = p1_message_name(12, mt)
                self.assert_closes(12, mt, p1_encode_wrapped(12, mt, p1_new(12, name, **fields)))
        # A second request on a completed rpc_id would be a second outcome: close.
        self.send(12, 1, rpc_id=b"r1", method="org.foreignpy.mirror")
        self.peer.assert_closed_silently(self)

    # --- SWP-EVENTS

    def event(self, **kw):
        ev = dict(event_id="e1", event_type="t", severity="notice", ts_unix_ms=1, task_id=b"t", body=b"b")
        ev.update(kw)
        return p1_new(13, "EventRecord", **ev)

    def test_events(self):
        self.send(13, 1, event=self.event())
        self.send(13, 1, event=self.event())  # an identical re-delivery
        self.assert_quiet()
        for bad in [self.event(severity="loud"), self.event(task_id=b""), self.event(body=b""), self.event(ts_unix_ms=0)]:
            with self.subTest(ev=bad):
                self.assert_closes(13, 1, p1_encode_wrapped(13, 1, p1_new(13, "EvtPublish", event=bad)))
        self.send(13, 1, event=self.event(body=b"other"))  # event_id reused for another event
        self.peer.assert_closed_silently(self)

    # --- SWP-ARTIFACT

    def test_artifact_download(self):
        self.send(14, 2, artifact_id="fp-artifact-a")
        _, mt, _, offer = self.recv()
        self.assertEqual((mt, offer["total_size"], offer["hash_alg"]), (1, 2600, "sha-256"))
        data = b""
        for i in range(3):
            _, mt, _, c = self.recv()
            self.assertEqual((mt, c["chunk_index"], c["offset"], c["is_terminal"]), (3, i, len(data), i == 2))
            data += c["data"]
        self.assertEqual(hashlib.sha256(data).digest(), offer["hash"])
        self.send(14, 2, artifact_id="fp-artifact-a", start=995, end=1005)
        self.recv()
        c = self.recv()[3]
        self.assertEqual((c["offset"], len(c["data"]), c["is_terminal"]), (995, 10, True))
        self.send(14, 2, artifact_id="nope")
        self.assertEqual(self.recv()[3]["code"], "ERR_NOT_FOUND")
        self.send(14, 2, artifact_id="fp-artifact-a", start=5, end=5)
        self.assertEqual(self.recv()[1], 5)
        self.assert_quiet()

    def test_artifact_upload(self):
        blob = b"abcdefghijkl"
        self.send(14, 1, artifact_id="up-1", total_size=12, hash_alg="sha-256", hash=hashlib.sha256(blob).digest())
        _, mt, _, get = self.recv()
        self.assertEqual((mt, get["artifact_id"], get["start"], get["end"]), (2, "up-1", 0, 0))
        self.send(14, 3, artifact_id="up-1", chunk_index=1, offset=4, data=b"efgh")  # out of order
        self.assertEqual(self.recv()[1], 5)
        self.send(14, 3, artifact_id="up-1", chunk_index=0, offset=0, data=b"abcd")
        self.send(14, 3, artifact_id="up-1", chunk_index=1, offset=4, data=b"efgh")
        self.send(14, 3, artifact_id="up-1", chunk_index=2, offset=8, data=b"ijkl", is_terminal=True)
        self.assert_quiet()
        # The verified artifact is served to anyone now.
        other = self.server.connect()
        try:
            self.send(14, 2, peer=other, artifact_id="up-1")
            self.recv(other)
            self.assertEqual(self.recv(other)[3]["data"], blob)
        finally:
            other.close()
        # An integrity mismatch is refused.
        self.send(14, 1, artifact_id="up-2", total_size=4, hash_alg="sha-256", hash=hashlib.sha256(b"zzzz").digest())
        self.recv()
        self.send(14, 3, artifact_id="up-2", chunk_index=0, offset=0, data=b"abcd", is_terminal=True)
        _, mt, _, err = self.recv()
        self.assertEqual((mt, err["code"]), (5, "ERR_INVALID_PROFILE_PAYLOAD"))

    # --- SWP-CRED

    def test_cred(self):
        self.send(15, 1, cred_type="fp-bearer", credential=b"fp-cred:alpha-7f3a", chain_id=b"c1")
        now = int(time.time() * 1000)
        for i in range(3):
            self.send(15, 2, chain_id=b"c1", delegation=b"d%d" % i, expires_at_unix_ms=now + 10000)
        self.assert_quiet()
        for fields in [
            dict(chain_id=b"c1", delegation=b"d4", expires_at_unix_ms=now + 10000),  # a fourth entry
            dict(chain_id=b"zz", delegation=b"d", expires_at_unix_ms=now + 10000),  # unknown chain
        ]:
            self.send(15, 2, **fields)
            self.assertEqual(self.recv()[1], 4)
        self.send(15, 1, cred_type="fp-bearer", credential=b"fp-cred:alpha-7f3a", chain_id=b"c2")
        for exp in [now - 1, now + 60000]:
            self.send(15, 2, chain_id=b"c2", delegation=b"d", expires_at_unix_ms=exp)
            self.assertEqual(self.recv()[3]["code"], "ERR_SECURITY_POLICY")
        for fields in [dict(cred_type="x509-pem", credential=b"fp-cred:alpha-7f3a"), dict(cred_type="fp-bearer", credential=b"forged"),
                       dict(cred_type="fp-bearer", credential=b"fp-cred:alpha-7f3a", chain_id=b"c1")]:
            self.send(15, 1, **fields)
            self.assertEqual(self.recv()[3]["code"], "ERR_SECURITY_POLICY")
        self.assert_quiet()

    # --- SWP-POLICYHINT

    def test_policyhint(self):
        C = lambda **kw: p1_new(16, "Constraint", **kw)  # noqa: E731
        mid = self.send(16, 1, constraints=[C(key="fp.region", value="moon", mode="MUST", scope_ref="s1"),
                                            C(key="fp.region", value="eu-north", mode="MUST", scope_ref="s1"),
                                            C(key="fp.region", value="moon", mode="SHOULD")])
        _, mt, rid, _ = self.recv()
        self.assertEqual((mt, rid), (2, mid))
        self.assertEqual(self.recv()[1:4:2], (3, {"key": "fp.region", "scope_ref": "s1", "reason_code": "unsatisfiable"}))
        self.assert_quiet()  # the SHOULD is advisory: no violation
        for bad in [C(key="other.key", value="v", mode="MAY"), C(key="fp.region", value="v", mode="MUSTNT")]:
            self.send(16, 1, constraints=[bad])
            self.assertEqual(self.recv()[3]["code"], "ERR_INVALID_PROFILE_PAYLOAD")

    # --- SWP-STATE

    def test_state(self):
        root, child = b"test root", b"test child"
        rid, cid = (b"sha256:" + hashlib.sha256(x).hexdigest().encode() for x in (root, child))
        self.send(17, 1, state_id=rid, blob=root)
        self.send(17, 1, state_id=cid, blob=child, parent_ids=[rid], metadata=b"m")
        self.assert_quiet()
        other = self.server.connect()  # one store for the whole server
        try:
            mid = self.send(17, 2, peer=other, state_id=cid)
            self.assertEqual(self.recv(other), (17, 1, mid, {"state_id": cid, "blob": child, "parent_ids": [rid], "metadata": b"m"}))
        finally:
            other.close()
        for fields in [dict(state_id=rid, blob=b"other"), dict(state_id=b"sha256:x", blob=b"x"),
                       dict(state_id=b"sha256:" + hashlib.sha256(b"o").hexdigest().encode(), blob=b"o", parent_ids=[b"sha256:missing"]),
                       dict(state_id=cid, blob=child, parent_ids=[rid], metadata=b"changed")]:
            self.send(17, 1, **fields)
            self.assertEqual(self.recv()[1:4:2][0], 4)
        self.send(17, 2, state_id=b"sha256:none")
        self.assertEqual(self.recv()[3]["code"], "ERR_NOT_FOUND")

    # --- SWP-OBS

    def test_obs(self):
        tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        self.send(18, 2, include_current=True)
        self.assertEqual(self.recv()[1:4:2], (3, p1_new(18, "ObsDoc")))  # nothing set yet
        self.send(18, 1, traceparent=tp, tracestate="b=2, a=1 ,vendor=x", rpc_id=b"r")
        mid = self.send(18, 2, include_current=True)
        self.assertEqual(self.recv(), (18, 3, mid, p1_new(18, "ObsDoc", traceparent=tp, tracestate="b=2, a=1 ,vendor=x", rpc_id=b"r")))
        self.send(18, 1, traceparent="01" + tp[2:] + "-later")  # a later version with a suffix
        self.assert_quiet()
        for bad in ["", tp.upper(), "ff" + tp[2:], tp[:3] + "0" * 32 + tp[35:], "00" + tp[2:] + "-x", "01" + tp[2:] + "x"]:
            self.send(18, 1, traceparent=bad)
            self.assertEqual(self.recv()[1:4:2][0], 4, bad)

    # --- SWP-RELAY

    def test_relay_loop_retries_and_dead_letter(self):
        mid = self.send(19, 1, delivery_id=b"d-1", topic="fp/loopback", payload=b"p")
        self.assertEqual(self.recv(), (19, 2, mid, {"delivery_id": b"d-1"}))
        times = []
        for _ in range(3):
            _, mt, _, m = self.recv()
            times.append(time.monotonic())
            self.assertEqual((mt, m["delivery_id"], m["payload"]), (1, b"d-1", b"p"))
        _, mt, _, dead = self.recv()
        self.assertEqual((mt, dead["code"]), (5, "retries_exhausted"))
        self.assertGreater(times[2] - times[0], 0.8)
        # A duplicate within the window is acknowledged and not delivered again.
        self.send(19, 1, delivery_id=b"d-1", topic="fp/loopback", payload=b"p")
        self.assertEqual(self.recv()[1], 2)
        self.assert_quiet()

    def test_relay_ack_settles(self):
        self.send(19, 1, delivery_id=b"d-2", topic="fp/loopback", payload=b"p")
        self.recv()
        self.assertEqual(self.recv()[1], 1)
        self.send(19, 2, delivery_id=b"d-2")
        time.sleep(1.3)
        self.assert_quiet()
        self.send(19, 1, delivery_id=b"", topic="fp/loopback")
        self.peer.assert_closed_silently(self)


if __name__ == "__main__":
    unittest.main()
