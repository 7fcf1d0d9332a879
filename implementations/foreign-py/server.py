#!/usr/bin/env python3
"""foreign-py: a small SWP endpoint (Core v1, E1, profiles 1, 2 and 10-19) written from the
spec kit's text alone, as a second opinion beside the Rust reference.

Behaviour that differs from the reference on purpose (see README.md for the full list):
every reject closes the connection with zero bytes written (no error frames; SWP-* refusals
on the merits are the profile's own *_ERR message), P1 payloads use the annex's `Payload`
wrapper, A2A answers no Handshake and has its own task kinds, the profiles' stores are one
for the whole server, no optional SWP-* message class is taken, the MCP side has no `ping`,
timestamps are not checked, and a per-connection sliding-window rate limit closes the
connection when exceeded.

Plain TCP on loopback only, or S1 over TLS 1.3 with mutual authentication (--tls-cert,
--tls-key, --tls-client-ca; README.md, "S1"). One thread per connection. Python 3.11 standard
library.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time

from swpcodec import (
    ERR_INVALID_MCP_PAYLOAD,
    ERR_INVALID_PROFILE_PAYLOAD,
    ERR_RATE_LIMIT_EXCEEDED,
    ERR_UNKNOWN_PROFILE,
    ERR_UNSUPPORTED_MSG_TYPE,
    EVENT,
    HANDSHAKE,
    RESULT,
    TASK,
    Envelope,
    Event,
    FrameReader,
    Handshake,
    Limits,
    ProtoError,
    Reject,
    Result,
    decode_body,
    decode_wrapped,
    encode_frame,
    encode_wrapped,
    p1_decode_wrapped,
    p1_encode_wrapped,
    p1_message_name,
    p1_new,
)

NAME = "foreign-py"
VERSION = "0.1.0"
MCP_PROFILE = 1
A2A_PROFILE = 2


def log(msg: str) -> None:
    print(f"{NAME}: {msg}", file=sys.stderr, flush=True)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def reply_envelope(profile_id: int, msg_type: int, msg_id: bytes, payload: bytes) -> Envelope:
    return Envelope(1, profile_id, msg_type, 0, now_ms(), msg_id, [], payload)


# ---------------------------------------------------------------------------------------
# Profile 1: MCP mapping (mcp-mapping-profile.md). Payload = one JSON-RPC message, UTF-8.

MCP_REQUEST, MCP_RESPONSE, MCP_NOTIFICATION = 1, 2, 3
MCP_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")  # newest first

TOOLS = [
    {
        "name": "reverse",
        "description": "Returns the text with its characters in reverse order.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "multiply",
        "description": "Multiplies two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "always_fails",
        "description": "A tool whose execution always fails (isError result).",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "whoami",
        "description": "Names the peer identity the channel surfaced (S1 section 2.2): over TLS, "
        "x509-cn: followed by the client certificate's subject commonName. Without an "
        "authenticated channel (plain TCP) there is none, and the result says so (isError).",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "crash",
        "description": "A tool whose implementation raises an unexpected exception: the request "
        "fails inside the endpoint and is answered with JSON-RPC error -32603 (mapping section 6).",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "wait",
        "description": "Waits the given milliseconds (at most 10000), then answers.",
        "inputSchema": {
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 10000}},
            "required": ["ms"],
        },
    },
]


class InvalidParams(Exception):
    pass


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_json_payload(payload: bytes):
    try:
        text = payload.decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise Reject(ERR_INVALID_MCP_PAYLOAD, f"payload is not UTF-8 JSON: {e}") from None


def _is_id(value) -> bool:
    # MCP: a request id is a string or an integer (never null, never a boolean).
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class McpProfile:
    """One connection's MCP side. Stateless between messages: no initialize is needed
    before tools/list or tools/call (the mapping does not make the MCP lifecycle a
    frame-level precondition, and the harness's probe arrives on fresh connections).

    `identity` is the peer identity the channel surfaced (S1 section 2.2), fixed before the
    first frame is read; None on plain TCP, which authenticates nobody."""

    def __init__(self, identity: str | None = None):
        self.identity = identity

    def handle(self, env: Envelope) -> list[Envelope]:
        if env.msg_type not in (MCP_REQUEST, MCP_RESPONSE, MCP_NOTIFICATION):
            raise Reject(ERR_UNSUPPORTED_MSG_TYPE, f"profile 1 msg_type {env.msg_type}")
        msg = parse_json_payload(env.payload)
        if not isinstance(msg, dict):
            # Batches (arrays) are out of scope for this profile version (mapping section 4).
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "payload is not a JSON-RPC object")
        if msg.get("jsonrpc") != "2.0":
            raise Reject(ERR_INVALID_MCP_PAYLOAD, 'jsonrpc is not "2.0"')
        if env.msg_type == MCP_REQUEST:
            return self._request(env, msg)
        if env.msg_type == MCP_RESPONSE:
            self._check_response(msg)
            # This endpoint never sends requests, so no response can match one: ignored.
            log(f"ignoring an unsolicited response (id {msg.get('id')!r})")
            return []
        self._check_notification(msg)
        return []  # notifications never get a response

    @staticmethod
    def _check_response(msg):
        if "id" not in msg or "method" in msg:
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "msg_type 2 without a response body")
        if ("result" in msg) == ("error" in msg):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "a response needs exactly one of result/error")
        if "error" in msg:
            err = msg["error"]
            if not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
                raise Reject(ERR_INVALID_MCP_PAYLOAD, "error is not {code, message}")

    @staticmethod
    def _check_notification(msg):
        if not isinstance(msg.get("method"), str):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "notification without a method")
        if "id" in msg:
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "msg_type 3 carries an id (a request body)")
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "params is neither object nor array")

    def _request(self, env: Envelope, msg) -> list[Envelope]:
        if not isinstance(msg.get("method"), str):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "request without a method")
        if "id" not in msg:
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "msg_type 1 without an id (a notification body)")
        if not _is_id(msg["id"]):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, f"request id {msg['id']!r} is not a string or integer")
        if "params" in msg and not isinstance(msg["params"], (dict, list)):
            raise Reject(ERR_INVALID_MCP_PAYLOAD, "params is neither object nor array")
        rid = msg["id"]
        method = msg["method"]
        params = msg.get("params", {})
        handler = {
            "initialize": self._initialize,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }.get(method)
        if handler is None:
            body = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
        else:
            try:
                if not isinstance(params, dict):
                    raise InvalidParams("params must be an object")
                body = {"jsonrpc": "2.0", "id": rid, "result": handler(params)}
            except InvalidParams as e:
                body = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": str(e)}}
            except Exception as e:  # noqa: BLE001 - any other failure is internal
                # A failure inside the endpoint while handling the request: mapping section 6
                # INTERNAL_ERROR -> -32603, a JSON-RPC error on the request's msg_id (tool and
                # MCP failures stay JSON-RPC errors); the connection lives on.
                log(f"internal error in {method}: {type(e).__name__}: {e}")
                body = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "Internal error"}}
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return [reply_envelope(MCP_PROFILE, MCP_RESPONSE, env.msg_id, payload)]

    @staticmethod
    def _initialize(params):
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise InvalidParams("initialize needs protocolVersion")
        version = asked if asked in MCP_VERSIONS else MCP_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": NAME, "version": VERSION},
        }

    @staticmethod
    def _tools_list(params):
        return {"tools": TOOLS}

    def _tools_call(self, params):
        name = params.get("name")
        args = params.get("arguments", {})
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs a tool name")
        if not isinstance(args, dict):
            raise InvalidParams("arguments must be an object")
        if name == "reverse":
            if not isinstance(args.get("text"), str):
                raise InvalidParams("reverse needs a string 'text'")
            return {"content": [{"type": "text", "text": args["text"][::-1]}], "isError": False}
        if name == "multiply":
            a, b = args.get("a"), args.get("b")
            if not (_number(a) and _number(b)):
                raise InvalidParams("multiply needs numbers 'a' and 'b'")
            return {"content": [{"type": "text", "text": json.dumps(a * b)}], "isError": False}
        if name == "always_fails":
            return {"content": [{"type": "text", "text": "always_fails failed, as it always does"}], "isError": True}
        if name == "whoami":
            if self.identity is None:
                return {"content": [{"type": "text", "text": "no authenticated peer identity: this channel is plain TCP"}],
                        "isError": True}
            return {"content": [{"type": "text", "text": self.identity}],
                    "structuredContent": {"identity": self.identity}, "isError": False}
        if name == "crash":
            raise RuntimeError("the crash tool failed inside the endpoint, as it always does")
        if name == "wait":
            ms = args.get("ms")
            if not (isinstance(ms, int) and not isinstance(ms, bool) and 0 <= ms <= 10000):
                raise InvalidParams("wait needs an integer 'ms' in 0..10000")
            time.sleep(ms / 1000)
            return {"content": [{"type": "text", "text": f"waited {ms} ms"}], "isError": False}
        raise InvalidParams(f"Unknown tool: {name}")


# ---------------------------------------------------------------------------------------
# Profile 2: A2A over P1, wrapper form (a2a-profile.md, profile-payload-encoding-p1.md).

# This agent's own task kinds (README, choice A2A-4); the harness names them through the
# manifest, so nothing here follows the reference's echo/fail/events/sum.
KIND_MIRROR, KIND_FAULT, KIND_PROGRESS, KIND_TOTAL = "fp.mirror", "fp.fault", "fp.progress", "fp.total"
CAPABILITIES = [KIND_MIRROR, KIND_FAULT, KIND_PROGRESS, KIND_TOTAL]
MAX_EVENTS = 16
MAX_LIFECYCLES = 4096


class A2aProfile:
    """One connection's agent. Tasks run to completion as they arrive, so every lifecycle
    this agent knows is closed by the time the next frame is read. The table of closed
    lifecycles is what lets it refuse an Event or Result after its own terminal Result."""

    def __init__(self, conn=None):
        self.conn = conn
        self.peer_agent = None

    @property
    def tasks(self) -> collections.OrderedDict:
        # task_id -> (kind, input, result ok, result output, result error_message); one
        # table for the whole server unless --lifecycle-scope connection.
        return self.conn.lifecycles("a2a")

    def handle(self, env: Envelope) -> list[Envelope]:
        with self.conn.shared.lock:  # the task table may be the server's
            return self._handle(env)

    def _handle(self, env: Envelope) -> list[Envelope]:
        if env.msg_type not in (HANDSHAKE, TASK, EVENT, RESULT):
            raise Reject(ERR_UNSUPPORTED_MSG_TYPE, f"profile 2 msg_type {env.msg_type}")
        try:
            msg = decode_wrapped(env.msg_type, env.payload)
        except ProtoError as e:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"payload is not a P1 Payload for msg_type {env.msg_type}: {e}") from None
        if env.msg_type == HANDSHAKE:
            if not msg.agent_id:
                raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Handshake without agent_id")
            # Noted, not answered: a2a-profile.md defines no Handshake exchange (README, A2A-2).
            self.peer_agent = (msg.agent_id, list(msg.capabilities))
            log(f"A2A Handshake from agent {msg.agent_id!r} noted (not answered)")
            return []
        if env.msg_type == TASK:
            return self._task(msg)
        if not msg.task_id:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Event/Result without task_id")
        known = self.tasks.get(msg.task_id)
        if known is None:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"unknown task_id {msg.task_id.hex()}")
        if env.msg_type == EVENT:
            if not (msg.message or msg.event_payload):
                raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Event without content")
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"Event after the terminal Result of {msg.task_id.hex()}")
        if not msg.ok and not msg.error_message:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "failed Result without error_message")
        if msg.ok != known[2]:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"Result for {msg.task_id.hex()} conflicts with its terminal state")
        log(f"ignoring a duplicate terminal Result for {msg.task_id.hex()}")
        return []

    def _task(self, task) -> list[Envelope]:
        if not task.task_id:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Task without task_id")
        if not task.kind:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Task without kind")
        known = self.tasks.get(task.task_id)
        if known is not None:
            if (known[0], known[1]) != (task.kind, task.input):
                raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"conflicting duplicate Task {task.task_id.hex()}")
            # Equivalent duplicate: handled idempotently. The lifecycle is already closed and
            # a2a section 6 forbids anything more for it, so nothing is sent.
            log(f"ignoring an equivalent duplicate Task {task.task_id.hex()}")
            return []
        events, result = run_task(task)
        if len(self.tasks) >= MAX_LIFECYCLES:
            self.tasks.popitem(last=False)
        self.tasks[task.task_id] = (task.kind, task.input, result.ok, result.output, result.error_message)
        out = [
            reply_envelope(A2A_PROFILE, EVENT, os.urandom(16), encode_wrapped(e)) for e in events
        ]
        out.append(reply_envelope(A2A_PROFILE, RESULT, os.urandom(16), encode_wrapped(result)))
        return out


def _failed(task, reason):
    return Result(task_id=task.task_id, ok=False, error_message=reason)


def run_task(task) -> tuple[list[Event], Result]:
    """This agent's kinds: mirror (output = input), fault (fails), progress (N Events, then
    output = input), total (the sum of comma-separated integers)."""
    if task.kind == KIND_MIRROR:
        return [], Result(task_id=task.task_id, ok=True, output=task.input)
    if task.kind == KIND_FAULT:
        return [], _failed(task, f"execution failed (the {KIND_FAULT} kind always fails)")
    if task.kind == KIND_PROGRESS:
        if not (re.fullmatch(rb"[0-9]{1,6}", task.input) and int(task.input) <= MAX_EVENTS):
            return [], _failed(task, f"malformed task input: want a count 0..{MAX_EVENTS}")
        n = int(task.input)
        events = [
            Event(task_id=task.task_id, message=f"progress {k}/{n}", event_payload=str(k).encode())
            for k in range(1, n + 1)
        ]
        return events, Result(task_id=task.task_id, ok=True, output=task.input)
    if task.kind == KIND_TOTAL:
        terms = task.input.split(b",")
        try:
            if not all(re.fullmatch(rb"[ \t]*[+-]?[0-9]+[ \t]*", t) for t in terms):
                raise ValueError
            total = sum(int(t) for t in terms)
        except ValueError:  # includes integers longer than Python's 4300-digit guard
            return [], _failed(task, "malformed task input: want comma-separated integers")
        return [], Result(task_id=task.task_id, ok=True, output=str(total).encode())
    return [], _failed(task, f"unsupported capability: {task.kind}")


# ---------------------------------------------------------------------------------------
# Profiles 10-19 (swp-*.md), P1 wrapper form. Common shape: an assigned msg_type outside
# the profile's table, an optional class this endpoint does not take, or a payload that
# does not decode is refused by closing (ERR_UNSUPPORTED_MSG_TYPE /
# ERR_INVALID_PROFILE_PAYLOAD). What the profile itself refuses on its merits (a missing
# parent, an integrity mismatch, an expired delegation, ...) is answered with the
# profile's own *_ERR message carrying the canonical ERR_* code, and the connection stays
# open. Answers (a document, a not-found) reuse the msg_id of the request they answer;
# messages this endpoint originates get fresh random msg_ids.

ERR_SECURITY_POLICY = "ERR_SECURITY_POLICY"
ERR_NOT_FOUND = "ERR_NOT_FOUND"


class P1Profile:
    profile_id = 0
    # msg_type -> handler method name; a msg_type of the table that is absent here is an
    # optional class this endpoint does not take.
    handlers: dict[int, str] = {}
    err_type = 0  # the profile's *_ERR msg_type

    def __init__(self, conn=None):
        self.conn = conn

    def handle(self, env: Envelope) -> list[Envelope]:
        name = p1_message_name(self.profile_id, env.msg_type)
        if name is None:
            raise Reject(ERR_UNSUPPORTED_MSG_TYPE, f"profile {self.profile_id} msg_type {env.msg_type}")
        try:
            msg = p1_decode_wrapped(self.profile_id, env.msg_type, env.payload)
        except ProtoError as e:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"payload is not a P1 Payload/{name}: {e}") from None
        handler = self.handlers.get(env.msg_type)
        if handler is None:
            raise Reject(ERR_UNSUPPORTED_MSG_TYPE, f"profile {self.profile_id}: {name} is an optional class this endpoint does not take")
        return getattr(self, handler)(env, msg) or []

    def reply(self, env: Envelope, msg_type: int, **fields) -> Envelope:
        name = p1_message_name(self.profile_id, msg_type)
        payload = p1_encode_wrapped(self.profile_id, msg_type, p1_new(self.profile_id, name, **fields))
        return reply_envelope(self.profile_id, msg_type, env.msg_id, payload)

    def originate(self, msg_type: int, **fields) -> Envelope:
        name = p1_message_name(self.profile_id, msg_type)
        payload = p1_encode_wrapped(self.profile_id, msg_type, p1_new(self.profile_id, name, **fields))
        return reply_envelope(self.profile_id, msg_type, os.urandom(16), payload)

    def refuse(self, env: Envelope, code: str, message: str, **extra) -> list[Envelope]:
        log(f"profile {self.profile_id}: refusing with {code}: {message}")
        return [self.reply(env, self.err_type, code=code, message=message, **extra)]

    def ignore(self, env, msg):
        log(f"profile {self.profile_id}: msg_type {env.msg_type} from the peer noted and ignored")
        return []


# --- SWP-AGDISC (10) -------------------------------------------------------------------

AGDISC_AGENT = "fp-agent-7"
AGDISC_BROKEN_AGENT = "fp-agent-broken"
AGDISC_REVISION = "fp-card/2"
AGDISC_CARD = json.dumps(
    {"card_revision": AGDISC_REVISION, "agent_id": AGDISC_AGENT,
     "endpoints": ["tcp://127.0.0.1"], "capabilities": ["fp.mirror", "fp.fault", "fp.progress", "fp.total"]},
    separators=(",", ":")).encode()
AGDISC_ETAG = 'W/"fp-card-2"'
AGDISC_MAX_AGE_MS = 4000
AGDISC_NOT_FOUND = "no_such_agent"
AGDISC_INVALID = "card_invalid"


class AgdiscProfile(P1Profile):
    profile_id, err_type = 10, 4
    handlers = {1: "on_get", 2: "on_doc", 4: "ignore"}  # 3 NOT_MODIFIED: optional, not taken

    def on_doc(self, env, msg):
        # Nothing here asks for cards, but a card received is still held to section 4/7.
        missing = [f for f in ("agent_id", "schema_revision", "card_payload") if not msg[f]]
        if missing:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"AGDISC_DOC without {', '.join(missing)}")
        log(f"agdisc: card of {msg['agent_id']!r} (revision {msg['schema_revision']!r}) noted")
        return []

    def on_get(self, env, msg):
        if not msg["agent_id"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "AGDISC_GET names no agent")
        if msg["agent_id"] == AGDISC_AGENT:
            # Always the whole document: AGDISC_NOT_MODIFIED is optional (section 2), so a
            # matching if_none_match still gets the (identical) card.
            return [self.reply(env, 2, agent_id=AGDISC_AGENT, schema_revision=AGDISC_REVISION,
                               card_payload=AGDISC_CARD, etag=AGDISC_ETAG, max_age_ms=AGDISC_MAX_AGE_MS)]
        if msg["agent_id"] == AGDISC_BROKEN_AGENT:
            return [self.reply(env, 4, code=AGDISC_INVALID, message="the stored card of this agent has no revision")]
        return [self.reply(env, 4, code=AGDISC_NOT_FOUND, message=f"no card for agent {msg['agent_id']!r}")]


# --- SWP-TOOLDISC (11) ------------------------------------------------------------------

TOOLDISC_TOOLS = [
    {"tool_id": "fp.clock", "name": "clock", "version": "2.1.0",
     "schema_ref": "urn:foreign-py:schema:clock:2",
     "descriptor_payload": b'{"summary":"tells the time","hints":{"binding":false,"rate_per_s":5}}'},
    {"tool_id": "fp.dice", "name": "dice", "version": "1.0.3",
     "schema_ref": "sha256:" + hashlib.sha256(b"fp.dice input schema").hexdigest(),
     "descriptor_payload": b'{"summary":"rolls dice","hints":{"binding":false,"cost":0}}'},
]
TOOLDISC_NOT_FOUND = "unknown_tool"
HASH_REF_RE = re.compile(r"(sha256|sha384|sha512):([0-9a-f]+)")
HASH_HEX_LEN = {"sha256": 64, "sha384": 96, "sha512": 128}
URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def schema_ref_ok(ref: str) -> bool:
    """swp-tooldisc section 4: a URI (RFC 3986 absolute form, no white space) or a content
    hash (ALG:lower-case hex of that digest's length)."""
    m = HASH_REF_RE.fullmatch(ref)
    if m:
        return len(m.group(2)) == HASH_HEX_LEN[m.group(1)]
    if re.match(r"(sha256|sha384|sha512):", ref):
        return False
    return bool(URI_RE.fullmatch(ref))
TOOLDISC_PAGE_PREFIX = "fp-page-"


class TooldiscProfile(P1Profile):
    profile_id, err_type = 11, 5
    handlers = {1: "on_list", 2: "on_list_resp", 3: "on_get", 4: "on_get_resp", 5: "ignore"}

    def _descriptor_problem(self, t):
        if t is None:
            return "no descriptor"
        missing = [f for f in ("tool_id", "name", "version", "schema_ref") if not t[f]]
        if missing:
            return f"descriptor without {', '.join(missing)}"
        if not schema_ref_ok(t["schema_ref"]):
            return f"schema_ref {t['schema_ref'][:80]!r} is neither an absolute URI nor ALG:hex of the digest's length"
        return None

    def on_list_resp(self, env, msg):
        for t in msg["tools"]:
            problem = self._descriptor_problem(t)
            if problem:
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, problem)
        return []

    def on_get_resp(self, env, msg):
        problem = self._descriptor_problem(msg["tool"])
        if problem:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, problem)
        return []

    def on_list(self, env, msg):
        tools = TOOLDISC_TOOLS
        if msg["filter"]:
            key, sep, value = msg["filter"].partition("=")
            if not sep or key not in ("tool_id", "name"):
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "filter syntax: tool_id=VALUE or name=VALUE")
            tools = [t for t in tools if t[key] == value]
        start = 0
        if msg["page_token"]:
            tok = msg["page_token"]
            if not (tok.startswith(TOOLDISC_PAGE_PREFIX) and tok[len(TOOLDISC_PAGE_PREFIX):].isdigit()):
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"page_token {tok!r} was not issued here")
            start = int(tok[len(TOOLDISC_PAGE_PREFIX):])
        size = msg["page_size"] or len(tools)
        page = tools[start:start + size]
        nxt = f"{TOOLDISC_PAGE_PREFIX}{start + size}" if start + size < len(tools) else ""
        descs = [p1_new(11, "ToolDescriptor", **t) for t in page]
        return [self.reply(env, 2, tools=descs, next_page_token=nxt)]

    def on_get(self, env, msg):
        if not msg["tool_id"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "TOOLDISC_GET_REQ names no tool_id")
        for t in TOOLDISC_TOOLS:
            if t["tool_id"] == msg["tool_id"] and msg["version"] in ("", t["version"]):
                return [self.reply(env, 4, tool=p1_new(11, "ToolDescriptor", **t))]
        return [self.reply(env, 5, code=TOOLDISC_NOT_FOUND, message=f"no tool {msg['tool_id']!r} version {msg['version'] or 'any'!r}")]


# --- SWP-RPC (12) -----------------------------------------------------------------------

RPC_MIRROR = "org.foreignpy.mirror"
RPC_BROKEN = "org.foreignpy.broken"
RPC_BUSY = "org.foreignpy.busy"
RPC_TICKET = "org.foreignpy.ticket"
RPC_REPLAY_WINDOW_MS = 3000
METHOD_RE = re.compile(r"([a-z][a-z0-9-]*\.)+[a-z][A-Za-z0-9_-]*(/[A-Za-z0-9_.-]+)*|[a-z][a-z0-9+.-]*:[^\s]+")


class SharedState:
    """What every connection of the server sees (the README's 'one store')."""

    def __init__(self):
        self.lock = threading.RLock()
        self.rpc_ticket = 0
        self.rpc_done: collections.OrderedDict[bytes, bool] = collections.OrderedDict()
        self.rpc_idem: dict[str, tuple] = {}  # key -> (time_ms, method, params, outcome)
        self.a2a_tasks: collections.OrderedDict[bytes, tuple] = collections.OrderedDict()
        self.artifacts: dict[str, bytes] = {}
        self.partial_uploads: dict[tuple, bytearray] = {}
        self.states: dict[bytes, tuple] = {}
        self.relay_seen: dict[bytes, int] = {}
        self.lifecycle_tables: dict[str, collections.OrderedDict] = {}


class RpcProfile(P1Profile):
    profile_id = 12
    handlers = {1: "on_req", 2: "on_outcome", 3: "on_outcome"}  # 4 STREAM_ITEM, 5 CANCEL: optional

    def on_outcome(self, env, msg):
        """An RPC_RESP or RPC_ERR from the peer. This endpoint never sends RPC_REQ, so none
        can end a call of its own; for an rpc_id it answered it would be a second terminal
        outcome (section 5). Either way it is refused, after the section 4 field checks."""
        if not msg["rpc_id"]:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "RPC_RESP/RPC_ERR without rpc_id")
        if env.msg_type == 3 and not (msg["error_code"] and msg["error_message"]):
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "RPC_ERR without error_code or error_message")
        raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"terminal outcome for rpc_id {msg['rpc_id'][:40]!r}, which is no call of this endpoint's")

    def on_req(self, env, msg):
        shared = self.conn.shared
        rid = msg["rpc_id"]
        if not rid:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "RPC_REQ without rpc_id")
        with shared.lock:
            key = msg["idempotency_key"]
            now = now_ms()
            if key:
                for k in [k for k, v in shared.rpc_idem.items() if now - v[0] > RPC_REPLAY_WINDOW_MS]:
                    del shared.rpc_idem[k]
                prior = shared.rpc_idem.get(key)
                if prior is not None:
                    _, method, params, outcome = prior
                    self._close_lifecycle(rid, allow_existing=True)
                    if (method, params) == (msg["method"], msg["params"]):
                        return [self._outcome(env, rid, outcome)]
                    return [self._outcome(env, rid, ("err", "idempotency_conflict", False,
                                                     f"idempotency_key {key!r} was used with other inputs"))]
            self._close_lifecycle(rid, allow_existing=False)
            outcome = self._run(msg)
            if key:
                shared.rpc_idem[key] = (now, msg["method"], msg["params"], outcome)
        return [self._outcome(env, rid, outcome)]

    def _close_lifecycle(self, rid, allow_existing):
        done = self.conn.lifecycles("rpc")
        if rid in done and not allow_existing:
            # Its terminal outcome exists; a second one would break section 5.
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"rpc_id {rid.hex()} already has its terminal outcome")
        done[rid] = True
        while len(done) > MAX_LIFECYCLES:
            done.popitem(last=False)

    def _run(self, msg):
        method = msg["method"]
        if not method or not METHOD_RE.fullmatch(method):
            return ("err", "invalid_request", False, f"method {method!r} is not reverse-DNS or a URI")
        if method == RPC_MIRROR:
            return ("resp", msg["params"])
        if method == RPC_BROKEN:
            return ("err", "internal", False, "org.foreignpy.broken always fails")
        if method == RPC_BUSY:
            return ("err", "unavailable", True, "org.foreignpy.busy is always busy; retry later")
        if method == RPC_TICKET:
            self.conn.shared.rpc_ticket += 1
            return ("resp", f"ticket {self.conn.shared.rpc_ticket}".encode())
        return ("err", "unknown_method", False, f"unknown method {method}")

    def _outcome(self, env, rid, outcome):
        if outcome[0] == "resp":
            return self.reply(env, 2, rpc_id=rid, result=outcome[1])
        _, code, retryable, text = outcome
        return self.reply(env, 3, rpc_id=rid, error_code=code, retryable=retryable, error_message=text)


# --- SWP-EVENTS (13) --------------------------------------------------------------------

EVENTS_SEVERITIES = ["debug", "info", "notice", "warning", "error", "critical"]
EVENTS_ID_RETENTION_MS = 30000


class EventsProfile(P1Profile):
    profile_id, err_type = 13, 5
    handlers = {1: "on_publish", 5: "ignore"}  # 2 SUBSCRIBE, 3 UNSUBSCRIBE, 4 BATCH: optional

    def __init__(self, conn=None):
        super().__init__(conn)
        self.seen: dict[str, tuple] = {}  # event_id -> (time_ms, record)

    def on_publish(self, env, msg):
        ev = msg["event"]
        if ev is None:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "EVT_PUBLISH carries no event")
        missing = [f for f in ("event_id", "event_type", "severity", "ts_unix_ms", "body") if not ev[f]]
        if missing:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"event lacks {', '.join(missing)}")
        if not (ev["msg_id"] or ev["task_id"] or ev["rpc_id"]):
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "event carries no correlation key")
        if ev["severity"] not in EVENTS_SEVERITIES:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"severity {ev['severity']!r} is not one of {EVENTS_SEVERITIES}")
        now = now_ms()
        for k in [k for k, v in self.seen.items() if now - v[0] > EVENTS_ID_RETENTION_MS]:
            del self.seen[k]
        prior = self.seen.get(ev["event_id"])
        if prior is not None and prior[1] != ev:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"event_id {ev['event_id']!r} reused for another event")
        self.seen[ev["event_id"]] = (now if prior is None else prior[0], ev)
        log(f"event {ev['event_id']} ({ev['event_type']}, {ev['severity']}) taken")
        return []


# --- SWP-ARTIFACT (14) ------------------------------------------------------------------

ARTIFACT_ID = "fp-artifact-a"
ARTIFACT_BLOB = bytes((i * 31 + 7) % 251 for i in range(2600))
ARTIFACT_CHUNK = 1000
ARTIFACT_UPLOAD_MAX = 65536
HASHES = {"sha-256": hashlib.sha256, "sha256": hashlib.sha256, "sha-384": hashlib.sha384,
          "sha384": hashlib.sha384, "sha-512": hashlib.sha512, "sha512": hashlib.sha512}


class ArtifactProfile(P1Profile):
    profile_id, err_type = 14, 5
    handlers = {1: "on_offer", 2: "on_get", 3: "on_chunk", 5: "on_err"}  # 4 ACK: optional

    def __init__(self, conn=None):
        super().__init__(conn)
        self.uploads: dict[str, dict] = {}  # artifact_id -> the offer and the transfer state

    def _lookup(self, artifact_id):
        if artifact_id == ARTIFACT_ID:
            return ARTIFACT_BLOB
        with self.conn.shared.lock:
            return self.conn.shared.artifacts.get(artifact_id)

    def on_get(self, env, msg):
        aid = msg["artifact_id"]
        if not aid:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "ART_GET names no artifact", retryable=False)
        if msg["resume_token"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "this endpoint issues no resume tokens; resume by range", retryable=False)
        blob = self._lookup(aid)
        if blob is None:
            return [self.reply(env, 5, code=ERR_NOT_FOUND, message=f"no artifact {aid!r}", retryable=False)]
        start, end = msg["start"], msg["end"] or len(blob)
        if not (start < end <= len(blob)):
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"range [{start}, {end}) is not inside [0, {len(blob)})", retryable=False)
        # The transfer's metadata first (section 4: total size and hash), then the chunks.
        out = [self.originate(1, artifact_id=aid, total_size=len(blob), hash_alg="sha-256",
                              hash=hashlib.sha256(blob).digest())]
        index = 0
        pos = start
        while pos < end:
            nxt = min(pos + ARTIFACT_CHUNK, end)
            out.append(self.originate(3, artifact_id=aid, chunk_index=index, offset=pos,
                                      data=blob[pos:nxt], is_terminal=nxt == end))
            index += 1
            pos = nxt
        return out

    def on_offer(self, env, msg):
        aid = msg["artifact_id"]
        alg = HASHES.get(msg["hash_alg"].lower())
        if not aid or not msg["total_size"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "ART_OFFER without artifact_id or total_size", retryable=False)
        if alg is None or len(msg["hash"]) != alg().digest_size:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"hash_alg {msg['hash_alg']!r} with a {len(msg['hash'])}-octet hash", retryable=False)
        if msg["total_size"] > ARTIFACT_UPLOAD_MAX:
            log(f"offer of {aid} ({msg['total_size']} octets) is above {ARTIFACT_UPLOAD_MAX}: not fetched")
            return []
        key = (aid, msg["hash_alg"].lower(), msg["hash"], msg["total_size"])
        with self.conn.shared.lock:
            have = bytes(self.conn.shared.partial_uploads.get(key, b""))
        # Resume by the range-restart rule: ask for what is still missing.
        self.uploads[aid] = {"offer": msg, "key": key, "data": bytearray(have), "next_index": 0, "start": len(have)}
        return [self.originate(2, artifact_id=aid, start=len(have))]

    def on_chunk(self, env, msg):
        aid = msg["artifact_id"]
        up = self.uploads.get(aid)
        if up is None:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"chunk of {aid!r}, which this endpoint did not ask for", retryable=False)
        total = up["offer"]["total_size"]
        want_off = len(up["data"])
        problem = None
        if not msg["data"]:
            problem = "chunk without data"
        elif msg["offset"] != want_off:
            problem = f"chunk at offset {msg['offset']}, expected {want_off}"
        elif msg["chunk_index"] != up["next_index"]:
            problem = f"chunk_index {msg['chunk_index']}, expected {up['next_index']}"
        elif want_off + len(msg["data"]) > total:
            problem = "chunk runs past the offered total_size"
        elif msg["is_terminal"] != (want_off + len(msg["data"]) == total):
            problem = "is_terminal does not mark the end of the requested range"
        if problem:  # refused; the transfer stays as it was
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, problem, retryable=True)
        up["data"] += msg["data"]
        up["next_index"] += 1
        with self.conn.shared.lock:
            self.conn.shared.partial_uploads[up["key"]] = bytearray(up["data"])
        if not msg["is_terminal"]:
            return []
        del self.uploads[aid]
        with self.conn.shared.lock:
            self.conn.shared.partial_uploads.pop(up["key"], None)
        digest = HASHES[up["offer"]["hash_alg"].lower()](bytes(up["data"])).digest()
        if digest != up["offer"]["hash"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "integrity mismatch: the octets do not hash to the offered hash", retryable=True)
        with self.conn.shared.lock:
            self.conn.shared.artifacts[aid] = bytes(up["data"])
        log(f"artifact {aid} ({total} octets) fetched and verified")
        return []

    def on_err(self, env, msg):
        log(f"ART_ERR from the peer: {msg['code']} {msg['message']}")
        return []


# --- SWP-CRED (15) ----------------------------------------------------------------------

CRED_TYPE = "fp-bearer"
CRED_GOOD = b"fp-cred:alpha-7f3a"
CRED_BAD = b"fp-cred:forged"
CRED_UNSUPPORTED_TYPE = "x509-pem"
CRED_MAX_CHAIN = 3
CRED_MAX_TTL_MS = 20000


class CredProfile(P1Profile):
    profile_id, err_type = 15, 4
    handlers = {1: "on_present", 2: "on_delegate", 4: "ignore"}  # 3 REVOKE: optional

    def __init__(self, conn=None):
        super().__init__(conn)
        self.chains: dict[bytes, list[int]] = {}  # chain_id -> expiries of its entries

    def on_present(self, env, msg):
        if not msg["cred_type"] or not msg["credential"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "CRED_PRESENT needs cred_type and credential")
        if msg["cred_type"] != CRED_TYPE:
            return self.refuse(env, ERR_SECURITY_POLICY, f"credential type {msg['cred_type']!r} is not accepted here")
        if msg["credential"] != CRED_GOOD:
            return self.refuse(env, ERR_SECURITY_POLICY, "credential not valid")
        if not msg["chain_id"]:
            return []  # a credential that opens no chain
        if msg["chain_id"] in self.chains:
            return self.refuse(env, ERR_SECURITY_POLICY, "chain root already presented (replay)")
        self.chains[msg["chain_id"]] = []
        return []

    def on_delegate(self, env, msg):
        cid = msg["chain_id"]
        if not cid or not msg["delegation"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "CRED_DELEGATE needs chain_id and delegation")
        chain = self.chains.get(cid)
        if chain is None:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "delegation names a chain not presented on this connection")
        now = now_ms()
        exp = msg["expires_at_unix_ms"]
        if not exp:
            return self.refuse(env, ERR_SECURITY_POLICY, "delegation entry without expiry")
        if exp <= now:
            return self.refuse(env, ERR_SECURITY_POLICY, "delegation entry already expired")
        if exp > now + CRED_MAX_TTL_MS:
            return self.refuse(env, ERR_SECURITY_POLICY, f"delegation entry expires more than {CRED_MAX_TTL_MS} ms ahead")
        if any(e <= now for e in chain):
            return self.refuse(env, ERR_SECURITY_POLICY, "the chain has an expired entry")
        if len(chain) >= CRED_MAX_CHAIN:
            return self.refuse(env, ERR_SECURITY_POLICY, f"chain already holds {CRED_MAX_CHAIN} entries")
        chain.append(exp)
        return []


# --- SWP-POLICYHINT (16) ----------------------------------------------------------------

POLICY_KEY = "fp.region"
POLICY_VALUES = {"eu-north", "eu-central"}  # where this endpoint can run
POLICY_DEFAULT_SCOPE = "foreign-py/connection"
POLICY_UNKNOWN_KEYS = 2  # refuse the set (POLICYHINT_UNKNOWN_KEY_POLICY)
POLICY_CONFLICT = 1  # the earlier of two disagreeing constraints wins (POLICYHINT_CONFLICT_POLICY)


class PolicyhintProfile(P1Profile):
    profile_id, err_type = 16, 4
    handlers = {1: "on_set", 2: "ignore", 3: "on_violation", 4: "ignore"}

    def on_violation(self, env, msg):
        missing = [f for f in ("key", "scope_ref", "reason_code") if not msg[f]]
        if missing:  # section 5: a violation report MUST include all three
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"POLICY_VIOLATION without {', '.join(missing)}")
        log(f"policyhint: the peer reports a violation of {msg['key']!r} in {msg['scope_ref']!r}: {msg['reason_code']}")
        return []

    def __init__(self, conn=None):
        super().__init__(conn)
        self.effective: dict[tuple, tuple] = {}  # (scope, key) -> (value, mode)
        self.acks = 0

    def on_set(self, env, msg):
        chosen: dict[tuple, dict] = {}
        for c in msg["constraints"]:
            if not c["key"] or not c["value"]:
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "constraint without key or value")
            if c["mode"] not in ("MUST", "SHOULD", "MAY"):
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"mode {c['mode']!r} is not MUST, SHOULD or MAY")
            if c["key"] != POLICY_KEY:
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"unknown key {c['key']!r} (policy: refuse the set)")
            slot = (c["scope_ref"] or POLICY_DEFAULT_SCOPE, c["key"])
            if slot not in chosen:  # the earlier constraint wins
                chosen[slot] = c
        self.acks += 1
        out = [self.reply(env, 2, ack_id=f"fp-ack-{self.acks}")]
        for slot, c in chosen.items():
            self.effective[slot] = (c["value"], c["mode"])
            if c["mode"] == "MUST" and c["value"] not in POLICY_VALUES:
                out.append(self.originate(3, key=c["key"], scope_ref=slot[0], reason_code="unsatisfiable"))
        return out


# --- SWP-STATE (17) ---------------------------------------------------------------------


def state_id_for(blob: bytes) -> bytes:
    return b"sha256:" + hashlib.sha256(blob).hexdigest().encode()


STATE_ID_RE = re.compile(rb"sha256:[0-9a-f]{64}")


class StateProfile(P1Profile):
    profile_id, err_type = 17, 4
    handlers = {1: "on_put", 2: "on_get", 4: "ignore"}  # 3 DELTA: optional

    def on_put(self, env, msg):
        sid = msg["state_id"]
        if not sid:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "STATE_PUT without state_id")
        if not STATE_ID_RE.fullmatch(sid):
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "state_id is not sha256:<64 lower-case hex>")
        if sid != state_id_for(msg["blob"]):
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "state_id is not the SHA-256 of the blob")
        shared = self.conn.shared
        with shared.lock:
            for p in msg["parent_ids"]:
                if p not in shared.states:
                    return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"parent {p[:80]!r} does not exist")
            record = (msg["blob"], list(msg["parent_ids"]), msg["metadata"])
            prior = shared.states.get(sid)
            if prior is not None and prior != record:
                return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "state already stored with other parents or metadata")
            shared.states[sid] = record
        return []

    def on_get(self, env, msg):
        sid = msg["state_id"]
        if not sid:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "STATE_GET without state_id")
        with self.conn.shared.lock:
            rec = self.conn.shared.states.get(sid)
        if rec is None:
            return [self.reply(env, 4, code=ERR_NOT_FOUND, message=f"no state {sid[:80]!r}")]
        return [self.reply(env, 1, state_id=sid, blob=rec[0], parent_ids=rec[1], metadata=rec[2])]


# --- SWP-OBS (18) -----------------------------------------------------------------------

TRACEPARENT_RE = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


def traceparent_ok(tp: str) -> bool:
    """W3C Trace Context: version 00 is exactly version-traceid-parentid-flags; a later
    version (not ff) is parsed by its first 55 characters, and anything after them must
    start with '-' (the W3C forward-compatibility rule). Lower-case hex, no all-zero ids."""
    m = TRACEPARENT_RE.fullmatch(tp[:55])
    if not m:
        return False
    version, trace_id, parent_id, _ = m.groups()
    if version == "ff" or trace_id == "0" * 32 or parent_id == "0" * 16:
        return False
    if version == "00":
        return len(tp) == 55
    return len(tp) == 55 or tp[55] == "-"


class ObsProfile(P1Profile):
    profile_id, err_type = 18, 4
    handlers = {1: "on_set", 2: "on_get", 3: "on_doc", 4: "ignore"}

    def on_doc(self, env, msg):
        # Unsolicited (this endpoint sends no OBS_GET), but still held to section 4.
        if (msg["tracestate"] and not msg["traceparent"]) or (msg["traceparent"] and not traceparent_ok(msg["traceparent"])):
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "OBS_DOC with an invalid or missing traceparent")
        return []

    def __init__(self, conn=None):
        super().__init__(conn)
        self.context = None

    def on_set(self, env, msg):
        if not msg["traceparent"]:
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, "OBS_SET without traceparent")
        if not traceparent_ok(msg["traceparent"]):
            return self.refuse(env, ERR_INVALID_PROFILE_PAYLOAD, f"traceparent {msg['traceparent'][:80]!r} is not W3C version 00")
        self.context = dict(msg)  # kept verbatim: tracestate is never rewritten
        return []

    def on_get(self, env, msg):
        ctx = self.context if (msg["include_current"] and self.context) else {}
        return [self.reply(env, 3, **ctx)]


# --- SWP-RELAY (19) ---------------------------------------------------------------------

RELAY_LOOP_TOPIC = "fp/loopback"
RELAY_MAX_ATTEMPTS = 3
RELAY_BACKOFF_MS = 500
RELAY_DEAD_LETTER_AFTER_MS = 600
RELAY_DEDUPE_WINDOW_MS = 60000
RELAY_REASONS = ["retries_exhausted", "no_route", "ttl_expired"]


class RelayProfile(P1Profile):
    profile_id, err_type = 19, 5
    handlers = {1: "on_publish", 2: "on_ack", 5: "ignore"}  # 3 NACK, 4 STATUS: optional

    def __init__(self, conn=None):
        super().__init__(conn)
        self.pending: dict[bytes, dict] = {}  # delivery_id -> delivery state (this connection's)

    def on_publish(self, env, msg):
        did = msg["delivery_id"]
        if not did:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "RELAY_PUBLISH without delivery_id")
        now = now_ms()
        shared = self.conn.shared
        with shared.lock:
            for k in [k for k, t in shared.relay_seen.items() if now - t > RELAY_DEDUPE_WINDOW_MS]:
                del shared.relay_seen[k]
            duplicate = did in shared.relay_seen
            if not duplicate:
                shared.relay_seen[did] = now
        out = [self.reply(env, 2, delivery_id=did)]  # taken (or already taken): acknowledged
        if duplicate:
            log(f"relay: {did!r} is a duplicate within the dedupe window; not delivered again")
            return out
        if msg["topic"] != RELAY_LOOP_TOPIC:
            out.append(self.originate(5, code="no_route", message=f"dead letter {did!r}: no consumer for topic {msg['topic']!r}"))
            return out
        d = {"msg": msg, "attempts": 0, "settled": False, "deadline": now + msg["ttl_ms"] if msg["ttl_ms"] else None}
        self.pending[did] = d
        self.conn.after(0, lambda: self._attempt(did))
        return out

    def _attempt(self, did):
        d = self.pending.get(did)
        if d is None or d["settled"]:
            return
        if d["deadline"] is not None and now_ms() > d["deadline"]:
            d["settled"] = True
            self.pending.pop(did, None)
            self.conn.send_async([self.originate(5, code="ttl_expired", message=f"dead letter {did!r}: its ttl_ms ran out")])
            return
        if d["attempts"] >= RELAY_MAX_ATTEMPTS:
            d["settled"] = True
            self.pending.pop(did, None)
            self.conn.send_async([self.originate(5, code="retries_exhausted",
                                                 message=f"dead letter {did!r}: {RELAY_MAX_ATTEMPTS} attempts unacknowledged")])
            return
        d["attempts"] += 1
        m = d["msg"]
        self.conn.send_async([self.originate(1, delivery_id=did, topic=m["topic"], payload=m["payload"], ttl_ms=m["ttl_ms"])])
        wait = RELAY_BACKOFF_MS if d["attempts"] < RELAY_MAX_ATTEMPTS else RELAY_DEAD_LETTER_AFTER_MS
        self.conn.after(wait, lambda: self._attempt(did))

    def on_ack(self, env, msg):
        did = msg["delivery_id"]
        d = self.pending.pop(did, None)
        if d is None:
            with self.conn.shared.lock:
                known = did in self.conn.shared.relay_seen
            if not known:
                raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"RELAY_ACK for {did!r}, which was never published or delivered")
            log(f"relay: late or repeated ACK for {did!r} ignored")
            return []
        d["settled"] = True
        log(f"relay: {did!r} acknowledged after {d['attempts']} attempt(s)")
        return []


# ---------------------------------------------------------------------------------------
# Connections.


class RateLimiter:
    """At most `frames` frames in any `window_ms` interval (a sliding window over arrival
    times), per connection."""

    def __init__(self, frames: int, window_ms: int):
        self.frames = frames
        self.window_ns = window_ms * 1_000_000
        self.arrivals: collections.deque[int] = collections.deque()

    def admit(self) -> None:
        t = time.monotonic_ns()
        while self.arrivals and t - self.arrivals[0] >= self.window_ns:
            self.arrivals.popleft()
        if len(self.arrivals) >= self.frames:
            raise Reject(ERR_RATE_LIMIT_EXCEEDED, f"more than {self.frames} frames in {self.window_ns // 1_000_000} ms")
        self.arrivals.append(t)


IDENTITY_TEMPLATE = "x509-cn:{}"
HANDSHAKE_TIMEOUT_S = 10
TLS_POLL_S = 0.02
TLS_WRITE_TIMEOUT_S = 30


class ChannelAuthFailure(Exception):
    """The channel cannot be authenticated: no frame is processed (S1 section 2.3)."""


def tls_context(cert: str, key: str, client_ca: str) -> ssl.SSLContext:
    """S1 over TLS (security-bindings.md section 2, annex s1-annex-tls-mtls.md): TLS 1.3 only,
    anything lower fails the handshake (section 2.5: fail closed, never a weaker channel);
    a client certificate is required and verified against the client CA (section 2.1 peer
    authentication, client and server); no session tickets, so every connection carries a
    full certificate authentication and its identity (section 2.2)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(cafile=client_ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.num_tickets = 0
    return ctx


def peer_identity(cert: dict) -> str:
    """The one canonical identity string of a verified client certificate (S1 section 2.2,
    "Identity format is binding-defined"; the annex's "expose one canonical peer identity
    string" and "avoid ambiguous identity precedence rules across multiple cert fields"):
    x509-cn: followed by the subject's commonName. Exactly one commonName is required; a
    subject with none or several names nobody unambiguously, and the channel is refused."""
    cns = [value for rdn in cert.get("subject", ()) for (attr, value) in rdn if attr == "commonName"]
    if len(cns) != 1 or not cns[0]:
        raise ChannelAuthFailure(f"client certificate subject has {len(cns)} commonName values, need exactly one")
    return IDENTITY_TEMPLATE.format(cns[0])


class Connection:
    def __init__(self, sock: socket.socket, peer, cfg, number: int):
        self.sock = sock
        self.peer = peer
        self.cfg = cfg
        self.tag = f"conn {number}"
        # S1: the peer identity, set once by the TLS handshake before any frame is read, and
        # never changed for the connection's lifetime (section 2.2). None on plain TCP.
        self.identity = None
        self.tls = cfg.tls is not None
        self.outq = collections.deque()  # TLS: frames from timers, written by the serve thread
        self.reader = FrameReader(cfg.limits.max_frame)
        self.rate = RateLimiter(*cfg.rate_limit) if cfg.rate_limit else None
        # One store for the whole server (--scope server, the default), else this
        # connection's own: A2A task_ids, RPC rpc_ids and idempotency keys, artifacts,
        # states, the relay's dedupe table.
        self.shared = cfg.shared if cfg.scope == "server" else SharedState()
        self.lock = threading.RLock()  # one frame or one timer callback at a time
        self.send_lock = threading.Lock()
        self.closed = False
        self.profiles = {}

    def _make_profiles(self) -> None:
        self.profiles = {MCP_PROFILE: McpProfile(self.identity), A2A_PROFILE: A2aProfile(self)}
        for cls in (AgdiscProfile, TooldiscProfile, RpcProfile, EventsProfile, ArtifactProfile,
                    CredProfile, PolicyhintProfile, StateProfile, ObsProfile, RelayProfile):
            self.profiles[cls.profile_id] = cls(self)

    def lifecycles(self, kind: str) -> collections.OrderedDict:
        """The table of closed lifecycles (A2A task_ids, RPC rpc_ids), in the store."""
        return self.shared.lifecycle_tables.setdefault(kind, collections.OrderedDict())

    def send_async(self, envs) -> None:
        if self.closed:
            return
        if self.tls:
            # One OpenSSL connection must not be read and written by two threads at once:
            # the serve thread writes these between its reads.
            self.outq.extend(envs)
            return
        try:
            with self.send_lock:
                for out in envs:
                    self.sock.sendall(encode_frame(out))
        except OSError as e:
            log(f"{self.tag}: send failed: {e}")

    def after(self, ms: int, fn) -> None:
        def run():
            with self.lock:
                if not self.closed:
                    fn()
        t = threading.Timer(ms / 1000, run)
        t.daemon = True
        t.start()

    def _handshake(self) -> bool:
        """S1 section 2.3: no frame is processed until the channel is authenticated; a failed
        handshake (no client certificate, an untrusted or expired one, TLS below 1.3, a
        plaintext client) terminates the connection, and is logged as a security event."""
        raw = self.sock
        try:
            tls = self.cfg.tls.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        except OSError as e:
            log(f"{self.tag}: security event: TLS setup failed: {e}; closing")
            return False
        self.sock = tls
        try:
            tls.settimeout(HANDSHAKE_TIMEOUT_S)
            tls.do_handshake()
            if tls.version() != "TLSv1.3":
                raise ChannelAuthFailure(f"negotiated {tls.version()}, policy is TLS 1.3 only")
            self.identity = peer_identity(tls.getpeercert())
        except (OSError, ValueError, ChannelAuthFailure) as e:
            log(f"{self.tag}: security event: channel authentication failed: {e}; closing")
            self._close_raw()
            return False
        log(f"{self.tag}: TLS 1.3 {tls.cipher()[0]}, peer identity {self.identity!r}")
        return True

    def _close_raw(self) -> None:
        """Close at the TCP level after a failed handshake: FIN, then discard what the peer
        still sends for a moment, so the alert OpenSSL sent is not destroyed by a reset."""
        try:
            socket.socket.shutdown(self.sock, socket.SHUT_WR)
            socket.socket.settimeout(self.sock, 0.5)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                if not socket.socket.recv(self.sock, 65536):
                    break
        except OSError:
            pass

    def run(self) -> None:
        try:
            if self.tls and not self._handshake():
                return
            self._make_profiles()
            self._serve()
        except Reject as r:
            # Reject = close: nothing is written, the connection just ends.
            self.closed = True
            log(f"{self.tag}: reject {r.code}: {r.reason}; closing")
            self._close_gracefully()
        except ssl.SSLError as e:
            # A record that does not authenticate (forged, replayed, corrupted): S1 section
            # 2.3, the channel is terminated, and that is a security event.
            self.closed = True
            log(f"{self.tag}: security event: TLS integrity failure: {e}; closing")
            self._close_raw()
        except OSError as e:
            log(f"{self.tag}: connection error: {e}")
        finally:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    def _close_gracefully(self) -> None:
        """FIN first, then discard what the peer still sends for a moment. Closing with
        unread input would make the kernel send a reset, and a reset can destroy replies
        the peer has received but not yet read."""
        if self.tls:
            # close_notify first (unwrap sends it; whether the peer's comes back in time does
            # not matter), then the TCP-level FIN and drain.
            try:
                self.sock.settimeout(0.5)
                self.sock.unwrap()
            except (OSError, ValueError):
                pass
            self._close_raw()
            return
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(0.5)
            deadline = time.monotonic() + 1.0
            drained = 0
            while time.monotonic() < deadline and drained < (1 << 20):
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def _write(self, envs) -> None:
        if not envs:
            return
        with self.send_lock:
            if self.tls:
                self.sock.settimeout(TLS_WRITE_TIMEOUT_S)
            try:
                for out in envs:
                    self.sock.sendall(encode_frame(out))
            finally:
                if self.tls:
                    self.sock.settimeout(TLS_POLL_S)

    def _flush(self) -> None:
        envs = []
        while self.outq:
            envs.append(self.outq.popleft())
        self._write(envs)

    def _recv(self) -> bytes:
        if not self.tls:
            return self.sock.recv(65536)
        # TLS: this thread is the only one touching the SSL object; between short reads it
        # writes what timers queued.
        self.sock.settimeout(TLS_POLL_S)
        while True:
            with self.lock:
                self._flush()
            try:
                return self.sock.recv(65536)
            except (socket.timeout, ssl.SSLWantReadError):
                continue

    def _serve(self) -> None:
        while True:
            data = self._recv()
            if not data:
                self.reader.finish()
                log(f"{self.tag}: peer closed")
                return
            self.reader.feed(data)
            while (body := self.reader.next_body()) is not None:
                with self.lock:
                    if self.rate:
                        self.rate.admit()
                    replies = self._frame(body)
                    if self.tls:
                        self._flush()  # what timers queued before this frame's replies
                    self._write(replies)

    def _frame(self, body: bytes) -> list[Envelope]:
        env = decode_body(body, self.cfg.limits)
        # Freshness is disabled: ts_unix_ms is not checked (S1 section 2.4 asks that this be
        # documented; README.md and the manifest do).
        if env.flags:
            log(f"{self.tag}: unknown flag bits {env.flags:#x} ignored")
        if env.extensions:
            log(f"{self.tag}: extension types {[t for t, _ in env.extensions]} ignored")
        profile = self.profiles.get(env.profile_id)
        if profile is None:
            raise Reject(ERR_UNKNOWN_PROFILE, f"profile_id {env.profile_id}")
        replies = profile.handle(env)
        for r in replies:
            if len(r.payload) > self.cfg.limits.max_payload:
                # Never send what this endpoint would refuse itself.
                log(f"{self.tag}: reply of {len(r.payload)} octets exceeds MAX_PAYLOAD_BYTES; closing")
                raise Reject("ERR_PAYLOAD_TOO_LARGE", "own reply too large")
        return replies


class Config:
    def __init__(self, limits: Limits, rate_limit, scope="server", tls=None):
        self.tls = tls
        self.limits = limits
        self.rate_limit = rate_limit
        self.scope = scope
        self.shared = SharedState()


class Stop(Exception):
    pass


def parse_listen(text: str, tls: bool = False) -> tuple[str, int]:
    for scheme in ("tcp://", "tls://"):
        if text.startswith(scheme):
            text = text[len(scheme) :]
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not tls and not ipaddress.ip_address(host).is_loopback:
        # Plain TCP carries no authenticated confidential channel, so S1 section 2.1 allows
        # loopback only.
        raise SystemExit(f"{NAME}: refusing to listen on non-loopback {host} without S1")
    return host, int(port)


def parse_rate(text: str):
    if text == "none":
        return None
    frames, _, window = text.partition("/")
    frames, window = int(frames), int(window)
    if frames < 1 or window < 1:
        raise SystemExit(f"{NAME}: --rate-limit needs FRAMES/WINDOW_MS, both positive")
    return frames, window


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT on loopback (tcp:// prefix optional)")
    p.add_argument("--port-file", help="write the bound port here once listening")
    p.add_argument("--max-frame-bytes", type=int, default=8 * 1024 * 1024)
    p.add_argument("--min-msg-id-bytes", type=int, default=8)
    p.add_argument("--max-msg-id-bytes", type=int, default=32)
    p.add_argument("--max-ext-bytes", type=int, default=4096)
    p.add_argument("--max-payload-bytes", type=int, default=-1, help="default: MAX_FRAME_BYTES minus the widest header")
    p.add_argument("--rate-limit", default="64/1000", help="FRAMES/WINDOW_MS per connection, or 'none'")
    p.add_argument("--scope", choices=["server", "connection"], default="server",
                   help="scope of the profiles' stores (task_ids, rpc_ids, idempotency keys, artifacts, states, relay dedupe); default: one for the server")
    p.add_argument("--tls-cert", help="S1 over TLS 1.3: the server certificate chain (PEM)")
    p.add_argument("--tls-key", help="S1 over TLS 1.3: the server private key (PEM)")
    p.add_argument("--tls-client-ca", help="S1 over TLS 1.3: CA certificates that client certificates must chain to (PEM); required with TLS")
    p.add_argument("--print-limits", action="store_true", help="print the effective limits and exit")
    a = p.parse_args(argv)

    limits = Limits(a.max_frame_bytes, a.min_msg_id_bytes, a.max_msg_id_bytes, a.max_ext_bytes, a.max_payload_bytes).resolved()
    try:
        limits.check()
    except ValueError as e:
        raise SystemExit(f"{NAME}: {e}")
    if a.print_limits:
        print(json.dumps(limits.__dict__))
        return 0
    tls_args = (a.tls_cert, a.tls_key, a.tls_client_ca)
    tls = None
    if any(tls_args):
        if not all(tls_args):
            raise SystemExit(f"{NAME}: TLS needs all of --tls-cert, --tls-key and --tls-client-ca (mTLS only)")
        try:
            tls = tls_context(*tls_args)
        except (OSError, ValueError) as e:
            raise SystemExit(f"{NAME}: cannot set up TLS: {e}")
    cfg = Config(limits, parse_rate(a.rate_limit), a.scope, tls)
    host, port = parse_listen(a.listen, tls is not None)

    def on_signal(signum, frame):
        raise Stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    count = 0
    try:
        # Everything from here on is inside the try, so a signal at any point (even before
        # the port file exists) ends in a clean exit 0.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(64)
        bound = listener.getsockname()[1]
        if a.port_file:
            # Written whole, then renamed, so a reader never sees a partial number.
            tmp = a.port_file + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"{bound}\n")
            os.replace(tmp, a.port_file)
        log(f"listening on {'tls' if tls else 'tcp'}://{host}:{bound}; limits {limits.__dict__}; rate limit {cfg.rate_limit}; freshness off")
        # accept() wakes every 0.2 s. A SIGTERM is delivered to whichever thread the kernel
        # picks; Python runs its handler on the main thread, but only an EINTR in the main
        # thread ends a blocked accept(), so with connection threads alive the server could
        # sleep through SIGTERM until the next connection (it did, in the self-tests).
        listener.settimeout(0.2)
        while True:
            try:
                sock, peer = listener.accept()
            except socket.timeout:
                continue
            sock.settimeout(None)
            count += 1
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(sock, peer, cfg, count)
            threading.Thread(target=conn.run, name=conn.tag, daemon=True).start()
    except Stop:
        log("stopping")
    finally:
        listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
