#!/usr/bin/env python3
"""foreign-py: a small SWP endpoint (Core v1, E1, profiles 1 and 2) written from the spec
kit's text alone, as a second opinion beside the Rust reference.

Behaviour that differs from the reference on purpose (see README.md for the full list):
every reject closes the connection with zero bytes written (no error frames), A2A payloads
use the P1 `Payload` wrapper, the MCP side has no `ping`, timestamps are not checked, and a
per-connection sliding-window rate limit closes the connection when exceeded.

Plain TCP on loopback only, one thread per connection. Python 3.11 standard library.
"""

from __future__ import annotations

import argparse
import collections
import ipaddress
import json
import os
import re
import signal
import socket
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
    frame-level precondition, and the harness's probe arrives on fresh connections)."""

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

    @staticmethod
    def _tools_call(params):
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
        if name == "wait":
            ms = args.get("ms")
            if not (isinstance(ms, int) and not isinstance(ms, bool) and 0 <= ms <= 10000):
                raise InvalidParams("wait needs an integer 'ms' in 0..10000")
            time.sleep(ms / 1000)
            return {"content": [{"type": "text", "text": f"waited {ms} ms"}], "isError": False}
        raise InvalidParams(f"Unknown tool: {name}")


# ---------------------------------------------------------------------------------------
# Profile 2: A2A over P1, wrapper form (a2a-profile.md, profile-payload-encoding-p1.md).

CAPABILITIES = ["echo", "fail", "events", "sum"]
MAX_EVENTS = 16
MAX_LIFECYCLES = 4096


class A2aProfile:
    """One connection's agent. Tasks run to completion as they arrive, so every lifecycle
    this agent knows is closed by the time the next frame is read. The table of closed
    lifecycles is what lets it refuse an Event or Result after its own terminal Result."""

    def __init__(self):
        # task_id -> (kind, input, result ok, result output, result error_message)
        self.tasks: collections.OrderedDict[bytes, tuple] = collections.OrderedDict()

    def handle(self, env: Envelope) -> list[Envelope]:
        if env.msg_type not in (HANDSHAKE, TASK, EVENT, RESULT):
            raise Reject(ERR_UNSUPPORTED_MSG_TYPE, f"profile 2 msg_type {env.msg_type}")
        try:
            msg = decode_wrapped(env.msg_type, env.payload)
        except ProtoError as e:
            raise Reject(ERR_INVALID_PROFILE_PAYLOAD, f"payload is not a P1 Payload for msg_type {env.msg_type}: {e}") from None
        if env.msg_type == HANDSHAKE:
            if not msg.agent_id:
                raise Reject(ERR_INVALID_PROFILE_PAYLOAD, "Handshake without agent_id")
            answer = Handshake(agent_id=NAME, capabilities=list(CAPABILITIES))
            # The answer belongs to the peer's Handshake exchange, so it reuses its msg_id.
            return [reply_envelope(A2A_PROFILE, HANDSHAKE, env.msg_id, encode_wrapped(answer))]
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
    """The test-agent convention of the harness (docs/a2a.md): echo, fail, events, sum."""
    if task.kind == "echo":
        return [], Result(task_id=task.task_id, ok=True, output=task.input)
    if task.kind == "fail":
        return [], _failed(task, "execution failed (the fail kind always fails)")
    if task.kind == "events":
        if not (re.fullmatch(rb"[0-9]{1,6}", task.input) and int(task.input) <= MAX_EVENTS):
            return [], _failed(task, f"malformed task input: want a count 0..{MAX_EVENTS}")
        n = int(task.input)
        events = [
            Event(task_id=task.task_id, message=f"progress {k}/{n}", event_payload=str(k).encode())
            for k in range(1, n + 1)
        ]
        return events, Result(task_id=task.task_id, ok=True, output=task.input)
    if task.kind == "sum":
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


class Connection:
    def __init__(self, sock: socket.socket, peer, cfg, number: int):
        self.sock = sock
        self.peer = peer
        self.cfg = cfg
        self.tag = f"conn {number}"
        self.reader = FrameReader(cfg.limits.max_frame)
        self.rate = RateLimiter(*cfg.rate_limit) if cfg.rate_limit else None
        self.profiles = {MCP_PROFILE: McpProfile(), A2A_PROFILE: A2aProfile()}

    def run(self) -> None:
        try:
            self._serve()
        except Reject as r:
            # Reject = close: nothing is written, the connection just ends.
            log(f"{self.tag}: reject {r.code}: {r.reason}; closing")
            self._close_gracefully()
        except OSError as e:
            log(f"{self.tag}: connection error: {e}")
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    def _close_gracefully(self) -> None:
        """FIN first, then discard what the peer still sends for a moment. Closing with
        unread input would make the kernel send a reset, and a reset can destroy replies
        the peer has received but not yet read."""
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

    def _serve(self) -> None:
        while True:
            data = self.sock.recv(65536)
            if not data:
                self.reader.finish()
                log(f"{self.tag}: peer closed")
                return
            self.reader.feed(data)
            while (body := self.reader.next_body()) is not None:
                if self.rate:
                    self.rate.admit()
                for out in self._frame(body):
                    self.sock.sendall(encode_frame(out))

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
    def __init__(self, limits: Limits, rate_limit):
        self.limits = limits
        self.rate_limit = rate_limit


class Stop(Exception):
    pass


def parse_listen(text: str) -> tuple[str, int]:
    if text.startswith("tcp://"):
        text = text[len("tcp://") :]
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not ipaddress.ip_address(host).is_loopback:
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
    cfg = Config(limits, parse_rate(a.rate_limit))
    host, port = parse_listen(a.listen)

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
        log(f"listening on {host}:{bound}; limits {limits.__dict__}; rate limit {cfg.rate_limit}; freshness off")
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
