//! Checks of one vector beyond its YAML shape: every expression evaluates, every code and
//! requirement exists, hex is hex, each method gets the steps it can run. Problems are
//! collected with their positions.

use super::requirements::Registry;
use super::vector::{Data, Expect, FrameSpec, Method, Num, Part, RejectSpec, Send, Shape, Vector};
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
fn check_shape(sink: &mut Sink, path: &Path, text: &str, v: &Vector) {
    if !v.methods.contains(&Method::Session) {
        if v.shape.is_some() {
            sink.at(
                path,
                text,
                "shape:",
                "`shape` marks session vectors only".into(),
            );
        }
        return;
    }
    let has = Shape::of(v);
    if has != v.shape {
        let say = |s: Option<Shape>| s.map_or("none", Shape::as_str);
        sink.at(
            path,
            text,
            if v.shape.is_some() {
                "shape:"
            } else {
                "steps:"
            },
            format!(
                "the steps have shape {}, the vector says {}: write `shape: {}`{}",
                say(has),
                say(v.shape),
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

/// Records every problem of vector `v` (from `path`, whose text is `text`).
pub fn check_vector(sink: &mut Sink, reg: &Registry, path: &Path, text: &str, v: &Vector) {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if v.id != stem {
        sink.at(
            path,
            text,
            "id:",
            format!("id {:?} must equal the file name {stem:?}", v.id),
        );
    }
    let dir = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if v.namespace != dir {
        sink.at(
            path,
            text,
            "namespace:",
            format!(
                "namespace {:?} must equal the directory {dir:?}",
                v.namespace
            ),
        );
    }
    if !v.id.starts_with(&format!("{}_", v.namespace)) {
        sink.at(
            path,
            text,
            "id:",
            format!(
                "id {:?} must start with the namespace and an underscore",
                v.id
            ),
        );
    }
    if v.requirements.is_empty() {
        sink.at(path, text, "requirements:", "at least one requirement ID is needed: a vector that tests nothing named is not traceable".into());
    }
    for r in &v.requirements {
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
    if v.methods.is_empty() {
        sink.at(
            path,
            text,
            "methods:",
            "at least one method (codec, session) is needed".into(),
        );
    }
    if v.steps.is_empty() {
        sink.at(path, text, "steps:", "at least one step is needed".into());
    }
    let p = probe_params();
    for c in &v.applies_when.holds {
        match expr::holds(c, &p) {
            Ok(_) | Err(ExprError::Range(_) | ExprError::DivZero(_)) => {}
            Err(e) => sink.at(path, text, c, e.to_string()),
        }
    }
    check_shape(sink, path, text, v);
    for (i, s) in v.steps.iter().enumerate() {
        let last = i + 1 == v.steps.len();
        for r in &s.requirements {
            if reg.resolve(r).is_none() {
                sink.at(
                    path,
                    text,
                    r,
                    format!("unknown requirement {r:?} in a step's requirements: expected an ID or alias from vectors/requirements/"),
                );
            } else if !v.requirements.contains(r) {
                sink.at(
                    path,
                    text,
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
            (Some(send), 1) => check_send(sink, path, text, send, &p),
            (None, 1) => {}
            _ => sink.at(
                path,
                text,
                "steps:",
                "each step needs exactly one of `send`, `mcp`, `end: true` or `corrupt_record: true`"
                    .into(),
            ),
        }
        if s.second_connection
            && (v.methods != [Method::Session] || s.side.is_some() || v.topology.is_some())
        {
            sink.at(
                path,
                text,
                "second_connection",
                "`second_connection` is a second client of an endpoint: it needs `methods: [session]`, no `side` and no `topology`".into(),
            );
        }
        if s.mcp.is_none() && s.expect.as_slice().is_empty() {
            sink.at(
                path,
                text,
                "steps:",
                "a step needs `expect` (only an `mcp` step may leave it out)".into(),
            );
        }
        for e in s.expect.as_slice() {
            if let Expect::Mcp(m) = e {
                for r in &m.rule {
                    if reg.resolve(r).is_none() {
                        sink.at(
                            path,
                            text,
                            r,
                            format!("`rule` names {r}, which is not a registered requirement"),
                        );
                    }
                }
            }
        }
        for n in s.repeat.iter().chain(&s.at_ms) {
            check_num(sink, path, text, n, &p);
        }
        for e in s.expect.as_slice() {
            match e {
                Expect::Denied(_) if v.methods.iter().any(|m| *m != Method::Session) => {
                    sink.at(
                        path,
                        text,
                        "denied",
                        "`denied` reads what an endpoint answers: it needs `methods: [session]`"
                            .into(),
                    );
                }
                Expect::Answer(a) => {
                    for c in &a.err.also {
                        check_code(sink, path, text, c);
                    }
                }
                Expect::Reject(RejectSpec::Code(c)) | Expect::Denied(RejectSpec::Code(c)) => {
                    check_code(sink, path, text, c)
                }
                Expect::Reject(RejectSpec::Full(f)) | Expect::Denied(RejectSpec::Full(f)) => {
                    for r in &f.code_requirements {
                        if reg.resolve(r).is_none() {
                            sink.at(
                                path,
                                text,
                                r,
                                format!("unknown requirement {r:?} in code_requirements"),
                            );
                        }
                    }
                    check_code(sink, path, text, &f.code);
                    for c in &f.also {
                        check_code(sink, path, text, c);
                    }
                }
                Expect::Accept(a) => {
                    if a.reject_allowed && v.methods.contains(&Method::Session) && !last {
                        sink.at(
                            path,
                            text,
                            "reject_allowed",
                            "`reject_allowed` in a session vector only on its last step: a reject may end the connection the later steps need".into(),
                        );
                    }
                    if let Some(f) = &a.fields {
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
                            &p,
                        );
                        for d in [&f.msg_id, &f.payload].into_iter().flatten() {
                            check_data(sink, path, text, d, &p);
                        }
                    }
                    if let Some(n) = &a.unknown_flags {
                        check_num(sink, path, text, n, &p);
                    }
                }
                Expect::Silence(s) => check_num(sink, path, text, &s.ms, &p),
                Expect::Reply(r) => {
                    for n in r.profile_id.iter().chain(&r.msg_type) {
                        check_num(sink, path, text, n, &p);
                    }
                    if let Some(d) = &r.payload {
                        check_data(sink, path, text, d, &p);
                    }
                    if let Some(spec) = &r.payload_p1 {
                        if let Err(e) = crate::p1::encode(spec) {
                            sink.at(path, text, "payload_p1", e.to_string());
                        }
                    }
                }
                Expect::A2aTasks(tasks) => {
                    for t in tasks {
                        for b in std::iter::once(&t.task_id).chain(&t.output) {
                            if let Err(e) = crate::p1::bytes_value(b) {
                                sink.at(path, text, b, e.to_string());
                            }
                        }
                    }
                }
                Expect::Flow(items) => {
                    if v.methods.iter().any(|m| *m != Method::Session) {
                        sink.at(
                            path,
                            text,
                            "flow",
                            "`flow` reads what an endpoint sends: it needs `methods: [session]`"
                                .into(),
                        );
                    }
                    if items.is_empty() {
                        sink.at(
                            path,
                            text,
                            "flow",
                            "`flow` lists at least one message (use `silence` for none)".into(),
                        );
                    }
                    for m in items {
                        if let Err(e) = crate::p1::encode(&m.p1).and(crate::p1::class_of(&m.p1)) {
                            sink.at(path, text, "flow", e.to_string());
                        }
                        if let Some(n) = &m.repeat {
                            check_num(sink, path, text, n, &p);
                        }
                    }
                }
                Expect::NoResponse(n) => check_num(sink, path, text, &n.ms, &p),
                Expect::Response(r) => {
                    if r.result.is_some() && r.error.is_some() {
                        sink.at(
                            path,
                            text,
                            "response:",
                            "a response expects `result` or `error`, not both".into(),
                        );
                    }
                }
                Expect::Nothing
                | Expect::Close
                | Expect::Stream(_)
                | Expect::ErrorJson(_)
                | Expect::Identity
                | Expect::Forwarded
                | Expect::ForwardedPayload
                | Expect::Translated(_)
                | Expect::TranslationError(_)
                | Expect::OneOf(_)
                | Expect::Arrives(_)
                | Expect::Mcp(_) => {}
            }
        }
    }
    check_mcp_native(sink, path, text, v);
    for (needle, message) in super::mcpxcheck::problems(v) {
        sink.at(path, text, needle, message);
    }
}

/// The `mcp_native` method has its own steps (`jsonrpc_line`, `response`, `no_response`);
/// they cannot mix with the SWP methods.
fn check_mcp_native(sink: &mut Sink, path: &Path, text: &str, v: &Vector) {
    let native = v.methods.iter().any(|m| m.is_jsonrpc());
    if native && !v.methods.iter().all(|m| m.is_jsonrpc()) {
        sink.at(
            path,
            text,
            "methods:",
            "the mcp_native and mcp_gateway methods cannot be combined with codec or session"
                .into(),
        );
    }
    let only_native = v.methods.iter().all(|m| *m == Method::McpNative);
    let session_steps = v.mcp.is_some()
        || v.steps.iter().any(|s| {
            s.mcp.is_some()
                || s.expect
                    .as_slice()
                    .iter()
                    .any(|e| matches!(e, Expect::Mcp(_)))
        });
    if session_steps && !only_native {
        sink.at(
            path,
            text,
            "mcp:",
            "`mcp` (vector, step or expectation) needs `methods: [mcp_native]` alone".into(),
        );
    }
    let (mut foreign, mut misplaced) = (false, false);
    for s in &v.steps {
        let line = s.send.as_ref().is_some_and(|x| x.jsonrpc_line.is_some()) || s.mcp.is_some();
        let is_json = |e: &Expect| {
            matches!(
                e,
                Expect::Response(_) | Expect::NoResponse(_) | Expect::Mcp(_)
            )
        };
        let exp = s.expect.as_slice();
        let json_expect = exp.iter().any(is_json);
        let other_expect = exp
            .iter()
            .any(|e| !is_json(e) && !matches!(e, Expect::Nothing));
        foreign |= native && (!line || other_expect || s.repeat.is_some() || s.at_ms.is_some());
        // The mcp_proxy method sends `jsonrpc_line` too (catalog::mcpx checks it).
        let proxy = v.methods.contains(&Method::McpProxy);
        misplaced |= !native && ((line && !proxy) || json_expect);
    }
    if foreign {
        sink.at(
            path,
            text,
            "steps:",
            "an mcp_native step sends a `jsonrpc_line` or takes an `mcp` action, and expects `response`, `no_response`, `mcp` or `nothing` (no repeat, at_ms)".into(),
        );
    }
    if misplaced {
        sink.at(
            path,
            text,
            "steps:",
            "`jsonrpc_line`, `response` and `no_response` need `methods: [mcp_native]` or `[mcp_gateway]`".into(),
        );
    }
}
