//! Checks of one vector beyond its YAML shape: every expression evaluates, every code and
//! requirement exists, hex is hex, each method gets the steps it can run. Problems are
//! collected with their positions.

use super::requirements::Registry;
use super::vector::{
    Body, Data, FrameExpect, FrameSpec, FramesBody, JsonRpcBody, JsonRpcExpect, Method, Num, Part,
    ProxyExpect, RejectSpec, Send, Shape, Step, Topology, Vector,
};
use crate::plan::expr::{self, ExprError, Params};
use crate::support::diag::Sink;
use std::path::Path;

/// Every name set to a harmless value, so expressions can be syntax-checked at load time.
fn probe_params() -> Params {
    expr::param_names().map(|n| (n, 1u64 << 20)).collect()
}

fn check_num(sink: &mut Sink, path: &Path, text: &str, n: &Num, params: &Params) {
    if let Num::Expr(s) = n {
        match expr::eval(s, params) {
            Ok(_) | Err(ExprError::Range(_) | ExprError::DivZero(_)) => {}
            Err(e) => sink.at(path, text, s, e.to_string()),
        }
    }
}

fn check_nums<'a>(
    sink: &mut Sink,
    path: &Path,
    text: &str,
    nums: impl IntoIterator<Item = &'a Option<Num>>,
    params: &Params,
) {
    for n in nums.into_iter().flatten() {
        check_num(sink, path, text, n, params);
    }
}

fn check_data(sink: &mut Sink, path: &Path, text: &str, d: &Data, p: &Params) {
    match d {
        Data::Hex(h) => check_hex(sink, path, text, h),
        Data::Fill(f) => {
            match (&f.len, &f.body_len) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => sink.at(
                    path,
                    text,
                    "fill",
                    "fill needs exactly one of `len` or `body_len`".into(),
                ),
            }
            for n in f.len.iter().chain(&f.body_len) {
                check_num(sink, path, text, n, p);
            }
        }
        Data::Text(_) | Data::Json(_) => {}
        Data::Valid(sz) => {
            if sz.len.is_some() && sz.body_len.is_some() {
                sink.at(
                    path,
                    text,
                    "valid",
                    "valid takes at most one of `len` or `body_len`".into(),
                );
            }
            for n in sz.len.iter().chain(&sz.body_len) {
                check_num(sink, path, text, n, p);
            }
        }
        Data::P1(spec) => {
            if let Err(e) = crate::p1::encode(spec) {
                sink.at(path, text, "p1", e.to_string());
            }
        }
    }
}

fn check_hex(sink: &mut Sink, path: &Path, text: &str, h: &str) {
    let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
    if !clean.len().is_multiple_of(2) || !clean.chars().all(|c| c.is_ascii_hexdigit()) {
        sink.at(
            path,
            text,
            h,
            format!("hex {h:?}: expected an even number of hex digits"),
        );
    }
}

fn check_frame(sink: &mut Sink, path: &Path, text: &str, f: &FrameSpec, p: &Params) {
    check_nums(
        sink,
        path,
        text,
        [
            &f.version,
            &f.profile_id,
            &f.msg_type,
            &f.flags,
            &f.ts_unix_ms,
        ],
        p,
    );
    for d in [&f.msg_id, &f.payload].into_iter().flatten() {
        check_data(sink, path, text, d, p);
    }
    for x in &f.extensions {
        check_num(sink, path, text, &x.ext_type, p);
        check_data(sink, path, text, &x.value, p);
    }
    let padded = [&f.msg_id, &f.payload]
        .into_iter()
        .flatten()
        .chain(f.extensions.iter().map(|x| &x.value))
        .filter(|d| match d {
            Data::Fill(fl) => fl.body_len.is_some(),
            Data::Valid(sz) => sz.body_len.is_some(),
            _ => false,
        })
        .count();
    if padded > 1 {
        sink.at(
            path,
            text,
            "body_len",
            "only one field of a frame may use `body_len`".into(),
        );
    }
}

fn check_parts(sink: &mut Sink, path: &Path, text: &str, parts: &[Part], p: &Params) {
    for part in parts {
        match part {
            Part::Hex(h) => check_hex(sink, path, text, h),
            Part::U32be(n) | Part::Uvarint(n) => check_num(sink, path, text, n, p),
            Part::Fill(f) => {
                if f.len.is_none() {
                    sink.at(path, text, "fill", "a raw fill needs `len`".into());
                }
                check_data(sink, path, text, &Data::Fill(f.clone()), p)
            }
            Part::Text(_) => {}
            Part::Frame(f) | Part::Body(f) => check_frame(sink, path, text, f, p),
            Part::Prefixed(inner) => check_parts(sink, path, text, inner, p),
        }
    }
}

fn check_send(sink: &mut Sink, path: &Path, text: &str, s: &Send, p: &Params) {
    if s.translate.is_some() {
        if s.frame.is_some()
            || s.raw.is_some()
            || s.identity_probe
            || s.slow_request.is_some()
            || s.jsonrpc_line.is_some()
        {
            sink.at(
                path,
                text,
                "translate:",
                "`translate` is a whole send; give nothing else with it".into(),
            );
        }
        return;
    }
    if s.jsonrpc_line.is_some() {
        if s.frame.is_some() || s.raw.is_some() || s.identity_probe || s.slow_request.is_some() {
            sink.at(
                path,
                text,
                "jsonrpc_line",
                "`jsonrpc_line` is a whole send; give no `frame`, `raw`, `identity_probe` or `slow_request` with it".into(),
            );
        }
        return;
    }
    if s.identity_probe || s.slow_request.is_some() {
        if s.frame.is_some() || s.raw.is_some() || (s.identity_probe && s.slow_request.is_some()) {
            sink.at(
                path,
                text,
                "send:",
                "identity_probe and slow_request replace `frame`/`raw`; give only one".into(),
            );
        }
        if let Some(d) = &s.slow_request {
            check_data(sink, path, text, d, p);
        }
        return;
    }
    match (&s.frame, &s.raw) {
        (Some(f), None) => check_frame(sink, path, text, f, p),
        (None, Some(parts)) => check_parts(sink, path, text, parts, p),
        _ => sink.at(
            path,
            text,
            "send:",
            "send needs exactly one of `frame` or `raw`".into(),
        ),
    }
}

fn check_code(sink: &mut Sink, path: &Path, text: &str, code: &str) {
    if code.parse::<crate::frames::ErrorCode>().is_err() {
        sink.at(
            path,
            text,
            code,
            format!("{code:?} is not a canonical ERR_* code (see error-codes.md §2)"),
        );
    }
}

/// A session vector carries the `shape` mark exactly when its steps have that shape, so the
/// trivial-SUT test's list of what a trivial SUT may pass grows with the catalog.
fn check_shape(sink: &mut Sink, path: &Path, text: &str, v: &Vector, b: &FramesBody) {
    if !v.header.methods.contains(&Method::Session) {
        if b.shape.is_some() {
            sink.at(
                path,
                text,
                "shape:",
                "`shape` marks session vectors only".into(),
            );
        }
        return;
    }
    let has = Shape::of(&b.steps);
    if has != b.shape {
        let say = |s: Option<Shape>| s.map_or("none", Shape::as_str);
        sink.at(
            path,
            text,
            if b.shape.is_some() {
                "shape:"
            } else {
                "steps:"
            },
            format!(
                "the steps have shape {}, the vector says {}: write `shape: {}`{}",
                say(has),
                say(b.shape),
                say(has),
                if has.is_none() {
                    " (i.e. remove it)"
                } else {
                    ""
                }
            ),
        );
    }
}

/// Where problems go and what they are checked against.
struct At<'a> {
    sink: &'a mut Sink,
    reg: &'a Registry,
    path: &'a Path,
    text: &'a str,
    p: Params,
}

impl At<'_> {
    fn at(&mut self, needle: &str, message: String) {
        self.sink.at(self.path, self.text, needle, message);
    }

    fn num(&mut self, n: &Num) {
        check_num(self.sink, self.path, self.text, n, &self.p);
    }

    fn code(&mut self, c: &str) {
        check_code(self.sink, self.path, self.text, c);
    }
}

/// Records every problem of vector `v` (from `path`, whose text is `text`).
pub fn check_vector(sink: &mut Sink, reg: &Registry, path: &Path, text: &str, v: &Vector) {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if v.header.id != stem {
        sink.at(
            path,
            text,
            "id:",
            format!("id {:?} must equal the file name {stem:?}", v.header.id),
        );
    }
    let dir = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if v.header.namespace != dir {
        sink.at(
            path,
            text,
            "namespace:",
            format!(
                "namespace {:?} must equal the directory {dir:?}",
                v.header.namespace
            ),
        );
    }
    if !v.header.id.starts_with(&format!("{}_", v.header.namespace)) {
        sink.at(
            path,
            text,
            "id:",
            format!(
                "id {:?} must start with the namespace and an underscore",
                v.header.id
            ),
        );
    }
    if v.header.requirements.is_empty() {
        sink.at(path, text, "requirements:", "at least one requirement ID is needed: a vector that tests nothing named is not traceable".into());
    }
    for r in &v.header.requirements {
        if reg.resolve(r).is_none() {
            sink.at(
                path,
                text,
                r,
                format!(
                    "unknown requirement {r:?}: expected an ID or alias from vectors/requirements/"
                ),
            );
        }
    }
    // An empty `methods` is refused when the file is read: no family owns its steps.
    if v.step_count() == 0 {
        sink.at(path, text, "steps:", "at least one step is needed".into());
    }
    // Only a gateway declares an envelope contract; on any other vector the condition would
    // never hold or never be read.
    if v.header.applies_when.gateway_envelope.is_some()
        && v.header.methods != [super::vector::Method::McpGateway]
    {
        sink.at(
            path,
            text,
            "gateway_envelope",
            "`applies_when.gateway_envelope` needs `methods: [mcp_gateway]`".into(),
        );
    }
    let p = probe_params();
    for c in &v.header.applies_when.holds {
        match expr::holds(c, &p) {
            Ok(_) | Err(ExprError::Range(_) | ExprError::DivZero(_)) => {}
            Err(e) => sink.at(path, text, c, e.to_string()),
        }
    }
    let mut at = At {
        sink,
        reg,
        path,
        text,
        p,
    };
    match &v.body {
        Body::Frames(b) => {
            check_shape(at.sink, path, text, v, b);
            let last = b.steps.len();
            for (i, s) in b.steps.iter().enumerate() {
                check_step(&mut at, v, s, b.topology);
                for e in &s.expect {
                    check_frame_expect(&mut at, v, e, i + 1 == last);
                }
            }
            misplaced_lines(&mut at, &b.steps);
        }
        Body::JsonRpc(b) => {
            for s in &b.steps {
                check_step(&mut at, v, s, None);
                for e in &s.expect {
                    check_jsonrpc_expect(&mut at, e);
                }
            }
            check_mcp_native(&mut at, v, b);
        }
        Body::Translate(b) => {
            for s in &b.steps {
                check_step(&mut at, v, s, None);
            }
            misplaced_lines(&mut at, &b.steps);
        }
        Body::McpProxy(b) => {
            for s in &b.steps {
                check_step(&mut at, v, s, b.topology);
                for e in &s.expect {
                    if let ProxyExpect::Silence(sp) = e {
                        at.num(&sp.ms);
                    }
                }
            }
        }
    }
    for (needle, message) in super::mcpxcheck::problems(v) {
        at.at(needle, message);
    }
}

/// What every family's steps are checked for: their requirements, one action each, and
/// the numbers they give.
fn check_step<E>(at: &mut At<'_>, v: &Vector, s: &Step<E>, topology: Option<Topology>) {
    for r in &s.requirements {
        if at.reg.resolve(r).is_none() {
            at.at(
                r,
                format!("unknown requirement {r:?} in a step's requirements: expected an ID or alias from vectors/requirements/"),
            );
        } else if !v.header.requirements.contains(r) {
            at.at(
                r,
                format!("the step names {r}, which the vector's `requirements` do not: a step tests a part of what its vector names"),
            );
        }
    }
    let actions = usize::from(s.send.is_some())
        + usize::from(s.mcp.is_some())
        + usize::from(s.end)
        + usize::from(s.corrupt_record)
        + usize::from(s.replay_record);
    match (&s.send, actions) {
        (Some(send), 1) => check_send(at.sink, at.path, at.text, send, &at.p),
        (None, 1) => {}
        _ => at.at(
            "steps:",
            "each step needs exactly one of `send`, `mcp`, `end: true` or `corrupt_record: true`"
                .into(),
        ),
    }
    if s.second_connection
        && (v.header.methods != [Method::Session] || s.side.is_some() || topology.is_some())
    {
        at.at(
            "second_connection",
            "`second_connection` is a second client of an endpoint: it needs `methods: [session]`, no `side` and no `topology`".into(),
        );
    }
    if s.mcp.is_none() && s.expect.is_empty() {
        at.at(
            "steps:",
            "a step needs `expect` (only an `mcp` step may leave it out)".into(),
        );
    }
    for n in s.repeat.iter().chain(&s.at_ms) {
        at.num(n);
    }
}

/// A codec or session expectation: its codes, requirements and numbers.
fn check_frame_expect(at: &mut At<'_>, v: &Vector, e: &FrameExpect, last: bool) {
    let session_only = v.header.methods.iter().any(|m| *m != Method::Session);
    match e {
        FrameExpect::Denied(_) if session_only => {
            at.at(
                "denied",
                "`denied` reads what an endpoint answers: it needs `methods: [session]`".into(),
            );
        }
        FrameExpect::Answer(a) => {
            for c in &a.err.also {
                at.code(c);
            }
        }
        FrameExpect::Reject(RejectSpec::Code(c)) | FrameExpect::Denied(RejectSpec::Code(c)) => {
            at.code(c)
        }
        FrameExpect::Reject(RejectSpec::Full(f)) | FrameExpect::Denied(RejectSpec::Full(f)) => {
            for r in &f.code_requirements {
                if at.reg.resolve(r).is_none() {
                    at.at(r, format!("unknown requirement {r:?} in code_requirements"));
                }
            }
            at.code(&f.code);
            for c in &f.also {
                at.code(c);
            }
        }
        FrameExpect::Accept(a) => {
            if a.reject_allowed && v.header.methods.contains(&Method::Session) && !last {
                at.at(
                    "reject_allowed",
                    "`reject_allowed` in a session vector only on its last step: a reject may end the connection the later steps need".into(),
                );
            }
            if let Some(f) = &a.fields {
                check_nums(
                    at.sink,
                    at.path,
                    at.text,
                    [
                        &f.version,
                        &f.profile_id,
                        &f.msg_type,
                        &f.flags,
                        &f.ts_unix_ms,
                    ],
                    &at.p,
                );
                for d in [&f.msg_id, &f.payload].into_iter().flatten() {
                    check_data(at.sink, at.path, at.text, d, &at.p);
                }
            }
            if let Some(n) = &a.unknown_flags {
                at.num(n);
            }
        }
        FrameExpect::Silence(s) => at.num(&s.ms),
        FrameExpect::Reply(r) => {
            for n in r.profile_id.iter().chain(&r.msg_type) {
                at.num(n);
            }
            if let Some(d) = &r.payload {
                check_data(at.sink, at.path, at.text, d, &at.p);
            }
            if let Some(spec) = &r.payload_p1 {
                if let Err(e) = crate::p1::encode(spec) {
                    at.at("payload_p1", e.to_string());
                }
            }
        }
        FrameExpect::A2aTasks(tasks) => {
            for t in tasks {
                for b in std::iter::once(&t.task_id).chain(&t.output) {
                    if let Err(e) = crate::p1::bytes_value(b) {
                        at.at(b, e.to_string());
                    }
                }
            }
        }
        FrameExpect::Flow(items) => {
            if session_only {
                at.at(
                    "flow",
                    "`flow` reads what an endpoint sends: it needs `methods: [session]`".into(),
                );
            }
            if items.is_empty() {
                at.at(
                    "flow",
                    "`flow` lists at least one message (use `silence` for none)".into(),
                );
            }
            for m in items {
                if let Err(e) = crate::p1::encode(&m.p1).and(crate::p1::class_of(&m.p1)) {
                    at.at("flow", e.to_string());
                }
                if let Some(n) = &m.repeat {
                    at.num(n);
                }
            }
        }
        FrameExpect::Nothing
        | FrameExpect::Close
        | FrameExpect::Stream(_)
        | FrameExpect::ErrorJson(_)
        | FrameExpect::Identity
        | FrameExpect::Forwarded
        | FrameExpect::ForwardedPayload => {}
    }
}

/// An `mcp_native` or `mcp_gateway` expectation: its rules and numbers.
fn check_jsonrpc_expect(at: &mut At<'_>, e: &JsonRpcExpect) {
    match e {
        JsonRpcExpect::Mcp(m) => {
            for r in &m.rule {
                if at.reg.resolve(r).is_none() {
                    at.at(
                        r,
                        format!("`rule` names {r}, which is not a registered requirement"),
                    );
                }
            }
        }
        JsonRpcExpect::NoResponse(n) => at.num(&n.ms),
        JsonRpcExpect::Response(r) => {
            if r.result.is_some() && r.error.is_some() {
                at.at(
                    "response:",
                    "a response expects `result` or `error`, not both".into(),
                );
            }
        }
        JsonRpcExpect::Nothing => {}
    }
}

/// The JSON-RPC family's steps: MCP session actions only under `mcp_native` alone, and every
/// step a line or an action, without repeats or clocks. (Their expectations are their own
/// by type; mixing the family with another is refused when the file is read.)
fn check_mcp_native(at: &mut At<'_>, v: &Vector, b: &JsonRpcBody) {
    let only_native = v.header.methods.iter().all(|m| *m == Method::McpNative);
    let session_steps = b.mcp.is_some()
        || b.steps.iter().any(|s| {
            s.mcp.is_some() || s.expect.iter().any(|e| matches!(e, JsonRpcExpect::Mcp(_)))
        });
    // A gateway vector may send a raw line and judge the answer with an `mcp` expectation
    // (its id and code rules: SI-033, SI-043); session actions stay `mcp_native`'s, since
    // gateway vectors run without the session and the peer judge.
    let gateway_lines = v.header.methods == [Method::McpGateway]
        && b.mcp.is_none()
        && b.steps.iter().all(|s| {
            s.mcp
                .as_ref()
                .is_none_or(|m| matches!(m, super::mcpnative::McpStep::Line(_)))
        });
    if session_steps && !only_native && !gateway_lines {
        at.at(
            "mcp:",
            "`mcp` (vector, step or expectation) needs `methods: [mcp_native]` alone (`[mcp_gateway]` alone takes `mcp: {line}` steps only)".into(),
        );
    }
    let foreign = b.steps.iter().any(|s| {
        let line = s.send.as_ref().is_some_and(|x| x.jsonrpc_line.is_some()) || s.mcp.is_some();
        !line || s.repeat.is_some() || s.at_ms.is_some()
    });
    if foreign {
        at.at(
            "steps:",
            "an mcp_native step sends a `jsonrpc_line` or takes an `mcp` action, and expects `response`, `no_response`, `mcp` or `nothing` (no repeat, at_ms)".into(),
        );
    }
}

/// A `jsonrpc_line` in a family that sends none (the mcp_proxy method sends them too, and
/// `catalog::mcpxcheck` checks its own).
fn misplaced_lines<E>(at: &mut At<'_>, steps: &[Step<E>]) {
    if steps
        .iter()
        .any(|s| s.send.as_ref().is_some_and(|x| x.jsonrpc_line.is_some()))
    {
        at.at(
            "steps:",
            "`jsonrpc_line`, `response` and `no_response` need `methods: [mcp_native]` or `[mcp_gateway]`".into(),
        );
    }
}
