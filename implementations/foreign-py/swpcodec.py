"""Sans-IO codecs of foreign-py: E1 uvarints, frames and envelopes, and the P1 (protobuf)
messages of the A2A annex in its `Payload` wrapper form.

Written from the spec kit's text only (encoding-binding-e1.md, core-spec.md,
profile-payload-encoding-p1.md, proto/a2a_p1.proto). Nothing here does I/O; the server in
`server.py` feeds octets in and writes what comes out.

Every failure raises `Reject` carrying the canonical ERR_* code the spec recommends. The
endpoint never puts that code on the wire (it closes instead), but it logs it, and the
codes keep the unit tests precise.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

U64_MAX = (1 << 64) - 1

# Canonical codes (error-codes.md section 2) used below.
ERR_INVALID_FRAME = "ERR_INVALID_FRAME"
ERR_FRAME_TOO_LARGE = "ERR_FRAME_TOO_LARGE"
ERR_INVALID_UVARINT = "ERR_INVALID_UVARINT"
ERR_UNSUPPORTED_VERSION = "ERR_UNSUPPORTED_VERSION"
ERR_INVALID_ENVELOPE = "ERR_INVALID_ENVELOPE"
ERR_MSG_ID_INVALID = "ERR_MSG_ID_INVALID"
ERR_PAYLOAD_TOO_LARGE = "ERR_PAYLOAD_TOO_LARGE"
ERR_EXT_TOO_LARGE = "ERR_EXT_TOO_LARGE"
ERR_UNKNOWN_PROFILE = "ERR_UNKNOWN_PROFILE"
ERR_RATE_LIMIT_EXCEEDED = "ERR_RATE_LIMIT_EXCEEDED"
ERR_UNSUPPORTED_MSG_TYPE = "ERR_UNSUPPORTED_MSG_TYPE"
ERR_INVALID_MCP_PAYLOAD = "ERR_INVALID_MCP_PAYLOAD"
ERR_INVALID_PROFILE_PAYLOAD = "ERR_INVALID_PROFILE_PAYLOAD"


class Reject(Exception):
    """A reject with its canonical code and a human-readable reason (for the log only)."""

    def __init__(self, code: str, reason: str):
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


# ---------------------------------------------------------------------------------------
# uvarint (E1 section 2.1): unsigned LEB128, least-significant group first.


class VarintError(Exception):
    """A malformed varint; the caller decides which layer's code it becomes."""


def encode_uvarint(value: int) -> bytes:
    if value < 0 or value > U64_MAX:
        raise ValueError(f"uvarint out of range: {value}")
    out = bytearray()
    while True:
        group = value & 0x7F
        value >>= 7
        if value:
            out.append(group | 0x80)
        else:
            out.append(group)
            return bytes(out)


def decode_uvarint(buf, pos: int, end: int, *, minimal: bool) -> tuple[int, int]:
    """Reads one uvarint from buf[pos:end]; returns (value, next position).

    Rejects what E1 section 2.1 lists: more than 10 octets, a value beyond 64 bits, and a
    varint still continuing at `end`. With `minimal`, it also rejects a padded encoding
    (a final group of zero after the first octet, e.g. 0x81 0x00 for 1): foreign-py's
    deliberate strict reading for envelope fields, see README.
    """
    value = 0
    shift = 0
    count = 0
    while True:
        if pos >= end:
            raise VarintError("truncated before its last octet")
        octet = buf[pos]
        pos += 1
        count += 1
        if count > 10:
            raise VarintError("longer than 10 octets")
        group = octet & 0x7F
        if count == 10 and group > 1:
            # The tenth group carries bit 63 only; anything above overflows 64 bits.
            raise VarintError("overflows 64 bits")
        value |= group << shift
        shift += 7
        if not octet & 0x80:
            if minimal and count > 1 and group == 0:
                raise VarintError("not minimally encoded")
            return value, pos


# ---------------------------------------------------------------------------------------
# Limits (core-spec 3.2, E1 section 4). Defaults are the spec's recommended values;
# MAX_MSG_ID_BYTES follows E1's recommendation (32), the stricter of the two documents.

E1_FIXED_HEADER_MAX = 1 + 10 + 10 + 10 + 10  # version (must be 1) + four uvarints at widest


def default_max_payload(max_frame: int, max_msg_id: int, max_ext: int) -> int:
    """`MAX_FRAME_BYTES` minus the widest legal E1 header (core-spec 3.2's "overhead").

    With this bound any envelope whose fields are all within their limits fits in a frame,
    so a sender can always use the whole declared payload budget.
    """
    overhead = (
        E1_FIXED_HEADER_MAX
        + len(encode_uvarint(max_msg_id))
        + max_msg_id
        + len(encode_uvarint(max_ext))
        + max_ext
    )
    payload_max = max_frame - overhead
    # The payload's own length prefix also lives in the frame.
    while payload_max > 0 and payload_max + len(encode_uvarint(payload_max)) + overhead > max_frame:
        payload_max -= 1
    return max(payload_max, 0)


@dataclass(frozen=True)
class Limits:
    max_frame: int = 8 * 1024 * 1024
    min_msg_id: int = 8
    max_msg_id: int = 32
    max_ext: int = 4096
    max_payload: int = -1  # -1: derive with default_max_payload

    def resolved(self) -> "Limits":
        if self.max_payload >= 0:
            return self
        return Limits(
            self.max_frame,
            self.min_msg_id,
            self.max_msg_id,
            self.max_ext,
            default_max_payload(self.max_frame, self.max_msg_id, self.max_ext),
        )

    def check(self) -> None:
        if not 1 <= self.max_frame <= 0xFFFFFFFF:
            raise ValueError("MAX_FRAME_BYTES must be in 1..2^32-1")
        if not 1 <= self.min_msg_id <= self.max_msg_id:
            raise ValueError("need 1 <= MIN_MSG_ID_BYTES <= MAX_MSG_ID_BYTES")
        if self.max_payload > self.max_frame:
            raise ValueError("MAX_PAYLOAD_BYTES must not exceed MAX_FRAME_BYTES")


# ---------------------------------------------------------------------------------------
# Envelope (core-spec section 4, E1 section 3).


@dataclass
class Envelope:
    version: int
    profile_id: int
    msg_type: int
    flags: int
    ts_unix_ms: int
    msg_id: bytes
    extensions: list[tuple[int, bytes]] = field(default_factory=list)
    payload: bytes = b""


def encode_body(env: Envelope) -> bytes:
    """E1 body in the fixed field order, minimal uvarints."""
    ext = b"".join(encode_uvarint(t) + encode_uvarint(len(v)) + v for t, v in env.extensions)
    return b"".join(
        [
            encode_uvarint(env.version),
            encode_uvarint(env.profile_id),
            encode_uvarint(env.msg_type),
            encode_uvarint(env.flags),
            encode_uvarint(env.ts_unix_ms),
            encode_uvarint(len(env.msg_id)),
            env.msg_id,
            encode_uvarint(len(ext)),
            ext,
            encode_uvarint(len(env.payload)),
            env.payload,
        ]
    )


def encode_frame(env: Envelope) -> bytes:
    body = encode_body(env)
    return struct.pack(">I", len(body)) + body


def _uvarint_field(body, pos, end, name):
    try:
        return decode_uvarint(body, pos, end, minimal=True)
    except VarintError as e:
        if pos >= end:
            # Nothing left at all: the field is missing rather than a broken varint.
            raise Reject(ERR_INVALID_ENVELOPE, f"body ends before {name}") from None
        raise Reject(ERR_INVALID_UVARINT, f"{name}: {e}") from None


def _bytes_field(body, pos, end, name, limit, limit_code):
    length, pos = _uvarint_field(body, pos, end, f"{name} length")
    # The declared length is judged against its limit before any octet is looked for, so
    # a length of 2^60 is a limit violation, never an allocation or a long read.
    if limit is not None and length > limit:
        raise Reject(limit_code, f"{name} declares {length} octets, limit {limit}")
    if length > end - pos:
        raise Reject(ERR_INVALID_FRAME, f"{name} runs {length - (end - pos)} octets past the body")
    return bytes(body[pos : pos + length]), pos + length


def decode_body(body, limits: Limits) -> Envelope:
    """Decodes and validates one E1 body (the N octets after the prefix).

    Checks everything E1 section 4 and core-spec 4.4 items 1, 3 and 5 require. Profile
    knowledge (item 2) and freshness (item 4, disabled in foreign-py) are the caller's.
    """
    end = len(body)
    pos = 0
    version, pos = _uvarint_field(body, pos, end, "version")
    if version != 1:
        # Nothing after an unknown version is read with v1 rules (no implicit downgrade).
        raise Reject(ERR_UNSUPPORTED_VERSION, f"version {version}")
    profile_id, pos = _uvarint_field(body, pos, end, "profile_id")
    msg_type, pos = _uvarint_field(body, pos, end, "msg_type")
    flags, pos = _uvarint_field(body, pos, end, "flags")
    ts, pos = _uvarint_field(body, pos, end, "ts_unix_ms")
    msg_id, pos = _bytes_field(body, pos, end, "msg_id", limits.max_msg_id, ERR_MSG_ID_INVALID)
    if len(msg_id) < limits.min_msg_id:
        raise Reject(ERR_MSG_ID_INVALID, f"msg_id has {len(msg_id)} octets, minimum {limits.min_msg_id}")
    ext_block, pos = _bytes_field(body, pos, end, "extensions", limits.max_ext, ERR_EXT_TOO_LARGE)
    extensions = decode_extensions(ext_block)
    payload, pos = _bytes_field(body, pos, end, "payload", limits.max_payload, ERR_PAYLOAD_TOO_LARGE)
    if pos != end:
        raise Reject(ERR_INVALID_FRAME, f"{end - pos} octets after the payload")
    return Envelope(version, profile_id, msg_type, flags, ts, msg_id, extensions, payload)


def decode_extensions(block: bytes) -> list[tuple[int, bytes]]:
    """Splits the TLV block. Every type is unknown in v1 and ignored by the caller, but the
    block must still be well formed: it is part of the frame that has to parse."""
    out = []
    pos = 0
    end = len(block)
    while pos < end:
        try:
            ext_type, pos = decode_uvarint(block, pos, end, minimal=True)
            length, pos = decode_uvarint(block, pos, end, minimal=True)
        except VarintError as e:
            raise Reject(ERR_INVALID_UVARINT, f"extension TLV: {e}") from None
        if length > end - pos:
            raise Reject(ERR_INVALID_FRAME, "extension value runs past the extensions block")
        out.append((ext_type, bytes(block[pos : pos + length])))
        pos += length
    return out


# ---------------------------------------------------------------------------------------
# Framing (core-spec section 3): an incremental splitter that never holds more than what
# arrived and never more than one MAX_FRAME_BYTES body.


class FrameReader:
    """Feed octets, then take complete bodies one at a time with `next_body()`, so each
    frame is handled before the octets after it are judged. `finish()` at end of stream
    reports truncation."""

    def __init__(self, max_frame: int):
        self.max_frame = max_frame
        self.buf = bytearray()
        self.need: int | None = None  # body length once the prefix is read

    def feed(self, data: bytes) -> None:
        self.buf += data

    def next_body(self) -> bytes | None:
        if self.need is None:
            if len(self.buf) < 4:
                return None
            n = struct.unpack(">I", self.buf[:4])[0]
            if n == 0:
                raise Reject(ERR_INVALID_FRAME, "length prefix is zero")
            if n > self.max_frame:
                raise Reject(ERR_FRAME_TOO_LARGE, f"length prefix {n} > MAX_FRAME_BYTES {self.max_frame}")
            del self.buf[:4]
            self.need = n
        if len(self.buf) < self.need:
            return None
        body = bytes(self.buf[: self.need])
        del self.buf[: self.need]
        self.need = None
        return body

    def finish(self) -> None:
        if self.need is not None:
            raise Reject(ERR_INVALID_FRAME, f"stream ended {self.need - len(self.buf)} octets short of the body")
        if self.buf:
            raise Reject(ERR_INVALID_FRAME, "stream ended inside a length prefix")


# ---------------------------------------------------------------------------------------
# Protobuf wire format (proto3), just what the A2A annex needs.

WT_VARINT, WT_I64, WT_LEN, WT_SGROUP, WT_EGROUP, WT_I32 = 0, 1, 2, 3, 4, 5


class ProtoError(Exception):
    pass


def _pb_varint(buf, pos):
    try:
        # Protobuf parsers accept padded varints; only E1 envelope fields are strict here.
        return decode_uvarint(buf, pos, len(buf), minimal=False)
    except VarintError as e:
        raise ProtoError(f"varint: {e}") from None


def iter_fields(buf: bytes):
    """Yields (field_number, wire_type, value); value is an int or bytes. Groups are
    skipped whole (they can only be unknown fields here) and yield nothing."""
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = _pb_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if num == 0 or num > 0x1FFFFFFF:
            raise ProtoError(f"field number {num}")
        if wt == WT_VARINT:
            v, pos = _pb_varint(buf, pos)
            yield num, wt, v
        elif wt == WT_I64:
            if end - pos < 8:
                raise ProtoError("truncated fixed64")
            yield num, wt, bytes(buf[pos : pos + 8])
            pos += 8
        elif wt == WT_I32:
            if end - pos < 4:
                raise ProtoError("truncated fixed32")
            yield num, wt, bytes(buf[pos : pos + 4])
            pos += 4
        elif wt == WT_LEN:
            n, pos = _pb_varint(buf, pos)
            if n > end - pos:
                raise ProtoError("length-delimited field runs past the message")
            yield num, wt, bytes(buf[pos : pos + n])
            pos += n
        elif wt == WT_SGROUP:
            pos = _skip_group(buf, pos, num, depth=1)
        else:
            # An end-group without its start, or wire types 6 and 7.
            raise ProtoError(f"wire type {wt} for field {num}")


def _skip_group(buf, pos, group_num, depth):
    if depth > 32:
        raise ProtoError("groups nested too deep")
    end = len(buf)
    while True:
        if pos >= end:
            raise ProtoError("group not closed")
        key, pos = _pb_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == WT_EGROUP:
            if num != group_num:
                raise ProtoError("mismatched end-group")
            return pos
        if wt == WT_VARINT:
            _, pos = _pb_varint(buf, pos)
        elif wt == WT_I64:
            pos += 8
        elif wt == WT_I32:
            pos += 4
        elif wt == WT_LEN:
            n, pos = _pb_varint(buf, pos)
            pos += n
        elif wt == WT_SGROUP:
            pos = _skip_group(buf, pos, num, depth + 1)
        else:
            raise ProtoError(f"wire type {wt} inside a group")
        if pos > end:
            raise ProtoError("group field runs past the message")


def pb_key(num: int, wt: int) -> bytes:
    return encode_uvarint((num << 3) | wt)


def pb_bytes(num: int, value: bytes) -> bytes:
    """A length-delimited field, omitted when empty (proto3 implicit presence)."""
    if not value:
        return b""
    return pb_key(num, WT_LEN) + encode_uvarint(len(value)) + value


def pb_string(num: int, value: str) -> bytes:
    return pb_bytes(num, value.encode("utf-8"))


def pb_bool(num: int, value: bool) -> bytes:
    return pb_key(num, WT_VARINT) + b"\x01" if value else b""


# ---------------------------------------------------------------------------------------
# The A2A annex messages (proto/a2a_p1.proto, package swp.p1.a2a.v1).

HANDSHAKE, TASK, EVENT, RESULT = 1, 2, 3, 4  # msg_type == Payload oneof field number


@dataclass
class Handshake:
    agent_id: str = ""
    capabilities: list[str] = field(default_factory=list)


@dataclass
class Task:
    task_id: bytes = b""
    kind: str = ""
    input: bytes = b""


@dataclass
class Event:
    task_id: bytes = b""
    message: str = ""
    event_payload: bytes = b""


@dataclass
class Result:
    task_id: bytes = b""
    ok: bool = False
    output: bytes = b""
    error_message: str = ""


# Per message: field number -> (attribute, kind). kind: "bytes", "string", "bool",
# "repeated string".
SCHEMAS = {
    HANDSHAKE: (Handshake, {1: ("agent_id", "string"), 2: ("capabilities", "repeated string")}),
    TASK: (Task, {1: ("task_id", "bytes"), 2: ("kind", "string"), 3: ("input", "bytes")}),
    EVENT: (Event, {1: ("task_id", "bytes"), 2: ("message", "string"), 3: ("event_payload", "bytes")}),
    RESULT: (
        Result,
        {1: ("task_id", "bytes"), 2: ("ok", "bool"), 3: ("output", "bytes"), 4: ("error_message", "string")},
    ),
}


def decode_message(msg_class: int, buf: bytes, obj=None):
    """Decodes one message; with `obj`, merges into it (scalars: last wins, repeated:
    appended), which is how protobuf treats a message field that occurs twice."""
    cls, fields = SCHEMAS[msg_class]
    if obj is None:
        obj = cls()
    for num, wt, value in iter_fields(buf):
        spec = fields.get(num)
        if spec is None:
            continue  # unknown field: ignored (P1 section 4)
        attr, kind = spec
        if kind == "bool":
            if wt != WT_VARINT:
                raise ProtoError(f"{attr}: wire type {wt}, expected varint")
            setattr(obj, attr, value != 0)
            continue
        if wt != WT_LEN:
            raise ProtoError(f"{attr}: wire type {wt}, expected length-delimited")
        if kind == "bytes":
            setattr(obj, attr, value)  # last one wins, as for any proto3 scalar
            continue
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtoError(f"{attr}: string is not UTF-8") from None
        if kind == "string":
            setattr(obj, attr, text)
        else:
            getattr(obj, attr).append(text)
    return obj


def encode_message(msg) -> bytes:
    """Deterministic: fields in number order, defaults omitted."""
    if isinstance(msg, Handshake):
        return pb_string(1, msg.agent_id) + b"".join(
            pb_key(2, WT_LEN) + encode_uvarint(len(c.encode())) + c.encode() for c in msg.capabilities
        )
    if isinstance(msg, Task):
        return pb_bytes(1, msg.task_id) + pb_string(2, msg.kind) + pb_bytes(3, msg.input)
    if isinstance(msg, Event):
        return pb_bytes(1, msg.task_id) + pb_string(2, msg.message) + pb_bytes(3, msg.event_payload)
    if isinstance(msg, Result):
        return pb_bytes(1, msg.task_id) + pb_bool(2, msg.ok) + pb_bytes(3, msg.output) + pb_string(4, msg.error_message)
    raise TypeError(type(msg))


def message_class(msg) -> int:
    for num, (cls, _) in SCHEMAS.items():
        if isinstance(msg, cls):
            return num
    raise TypeError(type(msg))


def encode_wrapped(msg) -> bytes:
    """The annex's `Payload` message with the oneof member set to `msg`. The member is
    written even when the inner message is empty: presence is what names the class."""
    inner = encode_message(msg)
    return pb_key(message_class(msg), WT_LEN) + encode_uvarint(len(inner)) + inner


def decode_wrapped(msg_type: int, buf: bytes):
    """Decodes a `Payload` whose oneof member must be the one numbered `msg_type`.

    Oneof semantics of proto3 parsing: the last member on the wire wins, and a repeated
    occurrence of the same member merges into it. Each occurrence must decode on its own.
    Raises ProtoError when the bytes do not decode or the
    member present is not `msg_type`.
    """
    if msg_type not in SCHEMAS:
        raise ProtoError(f"msg_type {msg_type} names no A2A message")
    member = None
    parts: list[bytes] = []
    for num, wt, value in iter_fields(buf):
        if num not in SCHEMAS:
            continue  # unknown Payload field: ignored
        if wt != WT_LEN:
            raise ProtoError(f"Payload field {num}: wire type {wt}, expected a message")
        if num != member:
            member, parts = num, []
        parts.append(value)
    if member is None:
        raise ProtoError("Payload sets no message")
    if member != msg_type:
        raise ProtoError(f"Payload carries message {member}, envelope msg_type is {msg_type}")
    obj = None
    for part in parts:
        obj = decode_message(member, part, obj)
    return obj


# ---------------------------------------------------------------------------------------
# The SWP-* profile annexes (proto/swp_*.proto), schema-driven. A message is a plain dict
# holding every field of its schema (defaults included); `Payload` is the annex's wrapper,
# whose oneof member number equals the envelope's msg_type (the same form as A2A above).
#
# Field kinds: "bytes", "string", "bool", "u64", "u32", "rep_bytes", "rep_string",
# "msg:Name" (a nested message of the same annex) and "rep_msg:Name".

P1_ANNEXES = {
    10: {  # swp_agdisc.proto
        "AgdiscGet": {1: ("agent_id", "string"), 2: ("if_none_match", "string")},
        "AgdiscDoc": {1: ("agent_id", "string"), 2: ("schema_revision", "string"), 3: ("card_payload", "bytes"),
                      4: ("etag", "string"), 5: ("max_age_ms", "u64")},
        "AgdiscNotModified": {1: ("agent_id", "string"), 2: ("etag", "string")},
        "AgdiscErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["AgdiscGet", "AgdiscDoc", "AgdiscNotModified", "AgdiscErr"],
    },
    11: {  # swp_tooldisc.proto
        "ToolDescriptor": {1: ("tool_id", "string"), 2: ("name", "string"), 3: ("version", "string"),
                           4: ("schema_ref", "string"), 5: ("descriptor_payload", "bytes")},
        "TooldiscListReq": {1: ("page_size", "u32"), 2: ("page_token", "string"), 3: ("filter", "string")},
        "TooldiscListResp": {1: ("tools", "rep_msg:ToolDescriptor"), 2: ("next_page_token", "string")},
        "TooldiscGetReq": {1: ("tool_id", "string"), 2: ("version", "string")},
        "TooldiscGetResp": {1: ("tool", "msg:ToolDescriptor")},
        "TooldiscErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["TooldiscListReq", "TooldiscListResp", "TooldiscGetReq", "TooldiscGetResp", "TooldiscErr"],
    },
    12: {  # swp_rpc.proto
        "RpcReq": {1: ("rpc_id", "bytes"), 2: ("method", "string"), 3: ("params", "bytes"), 4: ("idempotency_key", "string")},
        "RpcResp": {1: ("rpc_id", "bytes"), 2: ("result", "bytes")},
        "RpcErr": {1: ("rpc_id", "bytes"), 2: ("error_code", "string"), 3: ("retryable", "bool"), 4: ("error_message", "string")},
        "RpcStreamItem": {1: ("rpc_id", "bytes"), 2: ("seq_no", "u64"), 3: ("item", "bytes"), 4: ("is_terminal", "bool")},
        "RpcCancel": {1: ("rpc_id", "bytes"), 2: ("reason", "string")},
        "Payload": ["RpcReq", "RpcResp", "RpcErr", "RpcStreamItem", "RpcCancel"],
    },
    13: {  # swp_events.proto
        "EventRecord": {1: ("event_id", "string"), 2: ("event_type", "string"), 3: ("severity", "string"),
                        4: ("ts_unix_ms", "u64"), 5: ("msg_id", "bytes"), 6: ("task_id", "bytes"),
                        7: ("rpc_id", "bytes"), 8: ("body", "bytes")},
        "EvtPublish": {1: ("event", "msg:EventRecord")},
        "EvtSubscribe": {1: ("filter", "string")},
        "EvtUnsubscribe": {1: ("subscription_id", "string")},
        "EvtBatch": {1: ("events", "rep_msg:EventRecord")},
        "EvtErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["EvtPublish", "EvtSubscribe", "EvtUnsubscribe", "EvtBatch", "EvtErr"],
    },
    14: {  # swp_artifact.proto
        "ArtOffer": {1: ("artifact_id", "string"), 2: ("total_size", "u64"), 3: ("hash_alg", "string"),
                     4: ("hash", "bytes"), 5: ("metadata", "bytes")},
        "ArtGet": {1: ("artifact_id", "string"), 2: ("start", "u64"), 3: ("end", "u64"), 4: ("resume_token", "string")},
        "ArtChunk": {1: ("artifact_id", "string"), 2: ("chunk_index", "u64"), 3: ("offset", "u64"), 4: ("data", "bytes"),
                     5: ("is_terminal", "bool"), 6: ("resume_token", "string")},
        "ArtAck": {1: ("artifact_id", "string"), 2: ("chunk_index", "u64")},
        "ArtErr": {1: ("code", "string"), 2: ("message", "string"), 3: ("retryable", "bool")},
        "Payload": ["ArtOffer", "ArtGet", "ArtChunk", "ArtAck", "ArtErr"],
    },
    15: {  # swp_cred.proto
        "CredPresent": {1: ("cred_type", "string"), 2: ("credential", "bytes"), 3: ("chain_id", "bytes")},
        "CredDelegate": {1: ("chain_id", "bytes"), 2: ("delegation", "bytes"), 3: ("expires_at_unix_ms", "u64")},
        "CredRevoke": {1: ("chain_id", "bytes"), 2: ("reason", "string")},
        "CredErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["CredPresent", "CredDelegate", "CredRevoke", "CredErr"],
    },
    16: {  # swp_policyhint.proto
        "Constraint": {1: ("key", "string"), 2: ("value", "string"), 3: ("mode", "string"), 4: ("scope_ref", "string")},
        "PolicyHintSet": {1: ("constraints", "rep_msg:Constraint")},
        "PolicyHintAck": {1: ("ack_id", "string")},
        "PolicyViolation": {1: ("key", "string"), 2: ("scope_ref", "string"), 3: ("reason_code", "string")},
        "PolicyErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["PolicyHintSet", "PolicyHintAck", "PolicyViolation", "PolicyErr"],
    },
    17: {  # swp_state.proto
        "StatePut": {1: ("state_id", "bytes"), 2: ("blob", "bytes"), 3: ("parent_ids", "rep_bytes"), 4: ("metadata", "bytes")},
        "StateGet": {1: ("state_id", "bytes")},
        "StateDelta": {1: ("state_id", "bytes"), 2: ("delta", "bytes"), 3: ("parent_ids", "rep_bytes")},
        "StateErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["StatePut", "StateGet", "StateDelta", "StateErr"],
    },
    18: {  # swp_obs.proto
        "ObsSet": {1: ("traceparent", "string"), 2: ("tracestate", "string"), 3: ("msg_id", "bytes"),
                   4: ("task_id", "bytes"), 5: ("rpc_id", "bytes")},
        "ObsGet": {1: ("include_current", "bool")},
        "ObsDoc": {1: ("traceparent", "string"), 2: ("tracestate", "string"), 3: ("msg_id", "bytes"),
                   4: ("task_id", "bytes"), 5: ("rpc_id", "bytes")},
        "ObsErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["ObsSet", "ObsGet", "ObsDoc", "ObsErr"],
    },
    19: {  # swp_relay.proto
        "RelayPublish": {1: ("delivery_id", "bytes"), 2: ("topic", "string"), 3: ("payload", "bytes"), 4: ("ttl_ms", "u64")},
        "RelayAck": {1: ("delivery_id", "bytes")},
        "RelayNack": {1: ("delivery_id", "bytes"), 2: ("retryable", "bool"), 3: ("reason_code", "string")},
        "RelayStatus": {1: ("delivery_id", "bytes"), 2: ("state", "string"), 3: ("attempt_count", "u32")},
        "RelayErr": {1: ("code", "string"), 2: ("message", "string")},
        "Payload": ["RelayPublish", "RelayAck", "RelayNack", "RelayStatus", "RelayErr"],
    },
}


def p1_message_name(profile_id: int, msg_type: int) -> str | None:
    """The annex message that msg_type (= the Payload member number) names, or None."""
    members = P1_ANNEXES[profile_id]["Payload"]
    return members[msg_type - 1] if 1 <= msg_type <= len(members) else None


def _p1_default(kind: str):
    if kind in ("bytes",):
        return b""
    if kind == "string":
        return ""
    if kind == "bool":
        return False
    if kind in ("u64", "u32"):
        return 0
    if kind.startswith("rep_"):
        return []
    return None  # an absent nested message


def p1_new(profile_id: int, name: str, /, **values) -> dict:
    schema = P1_ANNEXES[profile_id][name]
    msg = {attr: _p1_default(kind) for attr, kind in schema.values()}
    for k, v in values.items():
        if k not in msg:
            raise KeyError(f"{name} has no field {k}")
        msg[k] = v
    return msg


def _p1_text(attr, value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtoError(f"{attr}: string is not UTF-8") from None


def p1_decode(profile_id: int, name: str, buf: bytes, msg: dict | None = None, depth: int = 0) -> dict:
    """Decodes (or, with `msg`, merges into) one annex message. Unknown fields are skipped
    (P1 section 4); a known field with the wrong wire type does not decode."""
    if depth > 16:
        raise ProtoError("messages nested too deep")
    schema = P1_ANNEXES[profile_id][name]
    if msg is None:
        msg = p1_new(profile_id, name)
    for num, wt, value in iter_fields(buf):
        spec = schema.get(num)
        if spec is None:
            continue
        attr, kind = spec
        if kind in ("bool", "u64", "u32"):
            if wt != WT_VARINT:
                raise ProtoError(f"{attr}: wire type {wt}, expected varint")
            msg[attr] = (value != 0) if kind == "bool" else (value & 0xFFFFFFFF if kind == "u32" else value)
            continue
        if wt != WT_LEN:
            raise ProtoError(f"{attr}: wire type {wt}, expected length-delimited")
        if kind == "bytes":
            msg[attr] = value
        elif kind == "string":
            msg[attr] = _p1_text(attr, value)
        elif kind == "rep_bytes":
            msg[attr].append(value)
        elif kind == "rep_string":
            msg[attr].append(_p1_text(attr, value))
        elif kind.startswith("msg:"):
            msg[attr] = p1_decode(profile_id, kind[4:], value, msg[attr], depth + 1)
        elif kind.startswith("rep_msg:"):
            msg[attr].append(p1_decode(profile_id, kind[8:], value, None, depth + 1))
        else:  # pragma: no cover - schema typo
            raise AssertionError(kind)
    return msg


def p1_encode(profile_id: int, name: str, msg: dict) -> bytes:
    """Deterministic: fields in number order, proto3 defaults omitted."""
    schema = P1_ANNEXES[profile_id][name]
    out = bytearray()
    for num in sorted(schema):
        attr, kind = schema[num]
        v = msg.get(attr, _p1_default(kind))
        if kind == "bytes":
            out += pb_bytes(num, v)
        elif kind == "string":
            out += pb_string(num, v)
        elif kind == "bool":
            out += pb_bool(num, v)
        elif kind in ("u64", "u32"):
            if v:
                out += pb_key(num, WT_VARINT) + encode_uvarint(v)
        elif kind in ("rep_bytes", "rep_string"):
            for item in v:
                raw = item.encode("utf-8") if isinstance(item, str) else item
                out += pb_key(num, WT_LEN) + encode_uvarint(len(raw)) + raw
        elif kind.startswith("msg:"):
            if v is not None:
                inner = p1_encode(profile_id, kind[4:], v)
                out += pb_key(num, WT_LEN) + encode_uvarint(len(inner)) + inner
        elif kind.startswith("rep_msg:"):
            for item in v:
                inner = p1_encode(profile_id, kind[8:], item)
                out += pb_key(num, WT_LEN) + encode_uvarint(len(inner)) + inner
    return bytes(out)


def p1_encode_wrapped(profile_id: int, msg_type: int, msg: dict) -> bytes:
    """The annex's Payload with member `msg_type` set (written even when empty)."""
    name = p1_message_name(profile_id, msg_type)
    inner = p1_encode(profile_id, name, msg)
    return pb_key(msg_type, WT_LEN) + encode_uvarint(len(inner)) + inner


def p1_decode_wrapped(profile_id: int, msg_type: int, buf: bytes) -> dict:
    """Decodes a Payload whose oneof member must be `msg_type` (proto3 oneof parsing: the
    last member on the wire wins, a repeated occurrence of the same member merges)."""
    name = p1_message_name(profile_id, msg_type)
    if name is None:
        raise ProtoError(f"msg_type {msg_type} names no message of profile {profile_id}")
    n_members = len(P1_ANNEXES[profile_id]["Payload"])
    member = None
    parts: list[bytes] = []
    for num, wt, value in iter_fields(buf):
        if not 1 <= num <= n_members:
            continue  # unknown Payload field: ignored
        if wt != WT_LEN:
            raise ProtoError(f"Payload field {num}: wire type {wt}, expected a message")
        if num != member:
            member, parts = num, []
        parts.append(value)
    if member is None:
        raise ProtoError("Payload sets no message")
    if member != msg_type:
        raise ProtoError(f"Payload carries member {member}, envelope msg_type is {msg_type}")
    msg = None
    for part in parts:
        msg = p1_decode(profile_id, name, part, msg)
    return msg
