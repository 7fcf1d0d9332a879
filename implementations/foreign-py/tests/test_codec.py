"""Unit tests of swpcodec: uvarints, framing, E1 envelopes, P1 wrapper payloads.

Run from implementations/foreign-py: python3 -m unittest discover -s tests
"""

import json
import os
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from swpcodec import (  # noqa: E402
    ERR_EXT_TOO_LARGE,
    ERR_FRAME_TOO_LARGE,
    ERR_INVALID_ENVELOPE,
    ERR_INVALID_FRAME,
    ERR_INVALID_UVARINT,
    ERR_MSG_ID_INVALID,
    ERR_PAYLOAD_TOO_LARGE,
    ERR_UNSUPPORTED_VERSION,
    U64_MAX,
    Envelope,
    Event,
    FrameReader,
    Handshake,
    Limits,
    ProtoError,
    Reject,
    Result,
    Task,
    VarintError,
    decode_body,
    decode_uvarint,
    decode_wrapped,
    default_max_payload,
    encode_body,
    encode_frame,
    encode_message,
    encode_uvarint,
    encode_wrapped,
)

LIMITS = Limits().resolved()
MSG_ID = bytes(range(16))


def env(**kw):
    base = dict(version=1, profile_id=1, msg_type=1, flags=0, ts_unix_ms=0, msg_id=MSG_ID, extensions=[], payload=b"{}")
    base.update(kw)
    return Envelope(**base)


def uvarint(octets: bytes, minimal=True):
    return decode_uvarint(octets, 0, len(octets), minimal=minimal)


class UvarintTest(unittest.TestCase):
    def test_round_trip_at_group_edges(self):
        for v in [0, 1, 127, 128, 300, 16383, 16384, 2**32, 2**63, U64_MAX]:
            octets = encode_uvarint(v)
            self.assertEqual(uvarint(octets), (v, len(octets)))

    def test_least_significant_group_first(self):
        self.assertEqual(encode_uvarint(300), b"\xac\x02")
        self.assertEqual(uvarint(b"\xac\x02")[0], 300)

    def test_u64_max_is_ten_octets(self):
        self.assertEqual(encode_uvarint(U64_MAX), b"\xff" * 9 + b"\x01")

    def test_overflow_in_tenth_octet_is_rejected(self):
        with self.assertRaisesRegex(VarintError, "overflow"):
            uvarint(b"\xff" * 9 + b"\x02")

    def test_eleven_octets_are_rejected_even_when_value_is_small(self):
        with self.assertRaises(VarintError):
            uvarint(b"\x80" * 10 + b"\x00", minimal=False)

    def test_truncation_is_rejected(self):
        with self.assertRaisesRegex(VarintError, "truncated"):
            uvarint(b"\x80\x80")

    def test_padded_encoding_rejected_only_when_strict(self):
        self.assertEqual(uvarint(b"\x81\x00", minimal=False), (1, 2))
        with self.assertRaisesRegex(VarintError, "minimal"):
            uvarint(b"\x81\x00")
        with self.assertRaisesRegex(VarintError, "minimal"):
            uvarint(b"\x80\x00")

    def test_single_zero_octet_is_minimal(self):
        self.assertEqual(uvarint(b"\x00"), (0, 1))


class FrameReaderTest(unittest.TestCase):
    def test_frames_split_across_feeds(self):
        data = encode_frame(env()) + encode_frame(env(msg_type=3))
        r = FrameReader(LIMITS.max_frame)
        bodies = []
        for i in range(len(data)):
            r.feed(data[i : i + 1])
            while (b := r.next_body()) is not None:
                bodies.append(b)
        self.assertEqual([decode_body(b, LIMITS).msg_type for b in bodies], [1, 3])
        r.finish()

    def test_zero_length_prefix(self):
        r = FrameReader(100)
        r.feed(b"\x00\x00\x00\x00")
        with self.assertRaises(Reject) as cm:
            r.next_body()
        self.assertEqual(cm.exception.code, ERR_INVALID_FRAME)

    def test_too_large_is_decided_from_the_prefix(self):
        r = FrameReader(100)
        r.feed(struct.pack(">I", 101))
        with self.assertRaises(Reject) as cm:
            r.next_body()
        self.assertEqual(cm.exception.code, ERR_FRAME_TOO_LARGE)

    def test_exactly_max_is_accepted(self):
        r = FrameReader(5)
        r.feed(struct.pack(">I", 5) + b"abcde")
        self.assertEqual(r.next_body(), b"abcde")

    def test_truncated_prefix_and_body_at_end_of_stream(self):
        for tail in [b"\x00\x00", struct.pack(">I", 10) + b"abc"]:
            r = FrameReader(100)
            r.feed(tail)
            self.assertIsNone(r.next_body())
            with self.assertRaises(Reject) as cm:
                r.finish()
            self.assertEqual(cm.exception.code, ERR_INVALID_FRAME)

    def test_frame_before_a_bad_prefix_is_delivered_first(self):
        r = FrameReader(100)
        r.feed(encode_frame(env()) + b"\x00\x00\x00\x00")
        self.assertIsNotNone(r.next_body())
        with self.assertRaises(Reject):
            r.next_body()


class EnvelopeTest(unittest.TestCase):
    def code(self, body, limits=LIMITS):
        with self.assertRaises(Reject) as cm:
            decode_body(body, limits)
        return cm.exception.code

    def test_round_trip(self):
        e = env(profile_id=2, msg_type=4, flags=0x8001, ts_unix_ms=1767225600000, extensions=[(16, b"x"), (3, b"")], payload=b"\x00\xff")
        self.assertEqual(decode_body(encode_body(e), LIMITS), e)

    def test_field_order_is_fixed(self):
        body = encode_body(env(profile_id=2, msg_type=3, flags=4, ts_unix_ms=5, payload=b"P"))
        self.assertEqual(body[:5], bytes([1, 2, 3, 4, 5]))
        self.assertEqual(body[5], 16)
        self.assertEqual(body[-3:], b"\x00\x01P")

    def test_version_other_than_one(self):
        self.assertEqual(self.code(encode_body(env(version=2))), ERR_UNSUPPORTED_VERSION)
        # Not parsed further: garbage after an unknown version is still a version reject.
        self.assertEqual(self.code(b"\x02\xff"), ERR_UNSUPPORTED_VERSION)

    def test_body_ending_before_a_field(self):
        full = encode_body(env())
        for cut in range(1, 5):
            self.assertEqual(self.code(full[:cut]), ERR_INVALID_ENVELOPE)

    def test_malformed_uvarint_in_header(self):
        self.assertEqual(self.code(b"\x01\x81"), ERR_INVALID_UVARINT)
        self.assertEqual(self.code(b"\x01" + b"\xff" * 9 + b"\x02" + b"\x00" * 20), ERR_INVALID_UVARINT)
        self.assertEqual(self.code(b"\x01\x81\x00" + encode_body(env())[2:]), ERR_INVALID_UVARINT)

    def test_msg_id_bounds(self):
        for n, ok in [(0, False), (7, False), (8, True), (32, True), (33, False)]:
            body = encode_body(env(msg_id=b"m" * n))
            if ok:
                self.assertEqual(len(decode_body(body, LIMITS).msg_id), n)
            else:
                self.assertEqual(self.code(body), ERR_MSG_ID_INVALID)

    def test_huge_declared_msg_id_is_a_limit_error_not_a_read(self):
        body = b"\x01\x01\x01\x00\x00" + encode_uvarint(2**60)
        self.assertEqual(self.code(body), ERR_MSG_ID_INVALID)

    def test_extensions_limit_and_structure(self):
        big = [(16, b"x" * 4093)]  # type, 2-octet length, value: 4096 octets
        self.assertEqual(len(decode_body(encode_body(env(extensions=big)), LIMITS).extensions), 1)
        too_big = [(16, b"x" * 4094)]
        self.assertEqual(self.code(encode_body(env(extensions=too_big))), ERR_EXT_TOO_LARGE)
        head = encode_body(env(payload=b""))[: 5 + 1 + len(MSG_ID)]
        self.assertEqual(self.code(head + b"\x02\x10\x05" + b"\x00"), ERR_INVALID_FRAME)
        self.assertEqual(self.code(head + b"\x01\x90" + b"\x00"), ERR_INVALID_UVARINT)

    def test_payload_limit(self):
        small = Limits(max_payload=10)
        decode_body(encode_body(env(payload=b"p" * 10)), small)
        self.assertEqual(self.code(encode_body(env(payload=b"p" * 11)), small), ERR_PAYLOAD_TOO_LARGE)

    def test_bytes_field_running_past_the_body(self):
        body = encode_body(env(payload=b"abc"))
        self.assertEqual(self.code(body[:-1]), ERR_INVALID_FRAME)

    def test_octets_after_the_payload(self):
        self.assertEqual(self.code(encode_body(env()) + b"\x00"), ERR_INVALID_FRAME)

    def test_default_payload_bound_fits_every_legal_header(self):
        mp = LIMITS.max_payload
        widest = env(profile_id=U64_MAX, msg_type=U64_MAX, flags=U64_MAX, ts_unix_ms=U64_MAX, msg_id=b"i" * 32, extensions=[(16, b"x" * 4093)], payload=b"p" * mp)
        body = encode_body(widest)
        self.assertLessEqual(len(body), LIMITS.max_frame)
        self.assertEqual(len(body), LIMITS.max_frame)  # and not one octet is wasted
        self.assertEqual(default_max_payload(8388608, 32, 4096), mp)


class P1WrapperTest(unittest.TestCase):
    def test_round_trip_each_class(self):
        for mt, msg in [
            (1, Handshake("agent", ["echo", "sum"])),
            (2, Task(b"\x00\xff", "echo", b"")),
            (3, Event(b"t", "step", b"\x01")),
            (4, Result(b"t", True, b"out", "")),
            (4, Result(b"t", False, b"", "why")),
        ]:
            self.assertEqual(decode_wrapped(mt, encode_wrapped(msg)), msg)

    def test_wrapper_layout(self):
        inner = encode_message(Task(b"\x01", "echo", b"hi"))
        self.assertEqual(encode_wrapped(Task(b"\x01", "echo", b"hi")), b"\x12" + bytes([len(inner)]) + inner)
        # An empty inner message still names its class.
        self.assertEqual(encode_wrapped(Handshake()), b"\x0a\x00")
        self.assertEqual(decode_wrapped(1, b"\x0a\x00"), Handshake())

    def test_member_must_match_msg_type(self):
        with self.assertRaisesRegex(ProtoError, "msg_type"):
            decode_wrapped(3, encode_wrapped(Task(b"t", "echo")))

    def test_no_member(self):
        with self.assertRaises(ProtoError):
            decode_wrapped(2, b"")
        with self.assertRaises(ProtoError):
            decode_wrapped(2, b"\x28\x01")  # only an unknown field 5

    def test_last_member_wins(self):
        both = encode_wrapped(Task(b"t", "echo")) + encode_wrapped(Event(b"t", "m"))
        self.assertEqual(decode_wrapped(3, both), Event(b"t", "m"))
        with self.assertRaises(ProtoError):
            decode_wrapped(2, both)

    def test_repeated_member_merges(self):
        a = b"\x12\x03" + b"\x0a\x01t"
        b = b"\x12\x06" + b"\x12\x04echo"
        self.assertEqual(decode_wrapped(2, a + b), Task(b"t", "echo", b""))

    def test_unknown_fields_ignored_at_both_levels(self):
        inner = encode_message(Task(b"t", "echo", b"x")) + b"\x78\x01" + b"\x9a\x01\x02ab" + b"\x4d\x00\x00\x00\x00" + b"\xa3\x01\x08\x01\xa4\x01"
        wrapped = b"\x28\x07" + b"\x12" + bytes([len(inner)]) + inner + b"\x31" + b"\x00" * 8
        self.assertEqual(decode_wrapped(2, wrapped), Task(b"t", "echo", b"x"))

    def test_malformed_protobuf(self):
        for bad in [b"\x12", b"\x12\x05\x0a", b"\x12\x02\x0a\x05", b"\x17", b"\x12\x02\x10\x01", b"\x10\x01"]:
            with self.assertRaises(ProtoError, msg=bad.hex()):
                decode_wrapped(2, bad)

    def test_string_must_be_utf8_bytes_need_not(self):
        with self.assertRaisesRegex(ProtoError, "UTF-8"):
            decode_wrapped(2, b"\x12\x04\x12\x02\xff\xfe")
        self.assertEqual(decode_wrapped(2, b"\x12\x04\x0a\x02\xff\xfe").task_id, b"\xff\xfe")

    def test_bool_wire_type(self):
        self.assertTrue(decode_wrapped(4, b"\x22\x05\x0a\x01t\x10\x02").ok)
        with self.assertRaises(ProtoError):
            decode_wrapped(4, b"\x22\x05\x0a\x01t\x12\x00")

    def test_deterministic_field_order(self):
        self.assertEqual(encode_message(Result(b"t", True, b"o", "")), b"\x0a\x01t\x10\x01\x1a\x01o")


KIT = os.path.normpath(os.path.join(HERE, "../../../../shared/swp-spec-kit/conformance/vectors"))
# Fixtures whose outcome depends on a policy or on dispatch, not on the codec alone.
# core_0023 (msg_type 0) is a profile-1 reject; core_0025 needs a timestamp policy.
POLICY_FIXTURES = {"core_0009", "core_0014", "core_0015", "core_0016", "core_0017", "core_0018", "core_0022", "core_0023", "core_0025", "core_0027"}


@unittest.skipUnless(os.path.isdir(KIT), "spec kit fixtures not present")
class SpecKitFixturesTest(unittest.TestCase):
    """Decodes the kit's own core/e1 .bin fixtures and compares accept/reject."""

    def test_fixtures(self):
        checked = 0
        for name in sorted(os.listdir(KIT)):
            if not (name.startswith(("core_", "e1_")) and name.endswith(".bin")) or name[:9] in POLICY_FIXTURES:
                continue
            with open(os.path.join(KIT, name), "rb") as f:
                data = f.read()
            with open(os.path.join(KIT, name[:-4] + ".json")) as f:
                expected = json.load(f)["expected"]
            lim = expected.get("assertions", {}).get("limits", {})
            max_frame = lim.get("max_frame_bytes", 8 * 1024 * 1024)
            # A fixture that sets only the frame bound leaves the payload bounded by it alone.
            max_payload = lim.get("max_payload_bytes", max_frame if "max_frame_bytes" in lim else -1)
            limits = Limits(max_frame=max_frame, max_payload=max_payload).resolved()
            outcome = "accept"
            try:
                r = FrameReader(limits.max_frame)
                r.feed(data)
                while (b := r.next_body()) is not None:
                    decode_body(b, limits)
                r.finish()
            except Reject:
                outcome = "reject"
            with self.subTest(fixture=name):
                self.assertEqual(outcome, expected["outcome"])
            checked += 1
        self.assertGreater(checked, 20)


if __name__ == "__main__":
    unittest.main()
