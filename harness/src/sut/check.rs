//! Checking a manifest file: every problem found, each with its line and column and what
//! was expected, rather than the first; and the typed [`Manifest`] when there are none.

use super::file::{
    ErrorFrameSpec, Kind, Limits, ManifestFile, McpTransport, PkiSource, Policy, RejectMode, Start,
    Transport,
};
use super::manifest::{Claims, Manifest, Reach, SutKind, NO_BUILTIN};
use crate::catalog::class::Class;
use crate::catalog::vector::Method;
use crate::support::diag::{Problem, Sink};
use std::path::Path;

/// The methods a kind of SUT can be driven by.
fn methods_of(kind: Kind) -> &'static [Method] {
    match kind {
        Kind::Builtin | Kind::Testee => &[Method::Codec, Method::Translate],
        Kind::Endpoint => &[Method::Session],
        Kind::McpServer => &[Method::McpNative, Method::McpGateway],
        Kind::McpProxy => &[Method::McpProxy],
    }
}

/// What is wrong with an error frame's `code_pointer`, if anything: one that can find no
/// code would make every reject look like a timeout, or like a close without the promised
/// error frame, so it is refused here. That is a pointer that is not one (no leading `/`),
/// or one that finds no string in the manifest's own `example` payload, where one is given.
fn code_pointer_problem(ef: &ErrorFrameSpec) -> Option<String> {
    const FIELD: &str = "reject_signal.error_frame.code_pointer";
    let p = &ef.code_pointer;
    if !p.is_empty() && !p.starts_with('/') {
        return Some(format!(
            "{FIELD} `{p}` is not a JSON pointer: it starts with `/`, e.g. /error/data/swp_error"
        ));
    }
    let example = ef.example.as_ref()?;
    let found = match example.pointer(p) {
        Some(serde_json::Value::String(_)) => return None,
        None => "nothing".to_owned(),
        Some(v) => format!("{v}, not a code string"),
    };
    let hint = code_in(example, String::new())
        .map(|at| format!(" (its ERR_* code is at {at})"))
        .unwrap_or_default();
    Some(format!(
        "{FIELD} `{p}` finds {found} in reject_signal.error_frame.example{hint}"
    ))
}

/// The JSON pointer of the first string starting `ERR_` in `v` (below `at`), for a hint.
fn code_in(v: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value;
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match v {
        Value::String(s) if s.starts_with("ERR_") => Some(at),
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| code_in(x, format!("{at}/{}", escape(k)))),
        Value::Array(xs) => xs
            .iter()
            .enumerate()
            .find_map(|(i, x)| code_in(x, format!("{at}/{i}"))),
        _ => None,
    }
}

/// The manifest in `text` (named `path` in problems), or every problem with it.
pub fn check(text: &str, path: &Path) -> Result<Manifest, Vec<Problem>> {
    let mut sink = Sink::default();
    let Some(f) = sink.parse::<ManifestFile>(path, text) else {
        return Err(sink.problems);
    };
    let mut at = |needle: &str, message: String| sink.at(path, text, needle, message);
    let kind_name = format!("kind {}", f.kind.as_str());

    if f.methods.is_empty() {
        at("methods", "methods: at least one method is required".into());
    }
    let allowed = methods_of(f.kind);
    for m in &f.methods {
        if !allowed.contains(m) {
            let names: Vec<&str> = allowed.iter().map(|m| m.as_str()).collect();
            at(
                m.as_str(),
                format!(
                    "method {} does not fit {kind_name}, which is driven by {}",
                    m.as_str(),
                    names.join(" or ")
                ),
            );
        }
    }
    for name in f.params.keys() {
        let well_formed = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !well_formed {
            at(
                name,
                format!("params: {name:?} is not a parameter name (A-Z, 0-9 and _)"),
            );
        } else if crate::plan::placeholders::RUNTIME.contains(&name.as_str()) {
            at(
                name,
                format!(
                    "params: {name} is filled by the harness at run time and cannot be declared"
                ),
            );
        }
    }
    // The SWP sections: every SWP kind declares them; an MCP-only kind may leave them out.
    let mcp_only = matches!(f.kind, Kind::McpServer | Kind::McpProxy);
    let limits = match f.limits {
        Some(l) => l,
        None => {
            if !mcp_only {
                at(
                    "kind",
                    format!("{kind_name} needs `limits` (MAX_FRAME_BYTES, MIN_MSG_ID_BYTES, MAX_MSG_ID_BYTES, MAX_EXT_BYTES, MAX_PAYLOAD_BYTES)"),
                );
            }
            Limits::UNUSED
        }
    };
    let policy = match f.policy {
        Some(p) => p,
        None => {
            if !mcp_only {
                at(
                    "kind",
                    format!("{kind_name} needs `policy` (at least timestamp_freshness)"),
                );
            }
            Policy::unused()
        }
    };
    if let Err(e) = limits.check() {
        at("limits", format!("limits are incoherent: {e}"));
    }
    if let Some(r) = policy.rate_limit {
        if r.frames == 0 || r.window_ms == 0 {
            at(
                "rate_limit",
                format!(
                    "rate_limit {{frames: {}, window_ms: {}}} admits no frame; both must be at least 1 (omit rate_limit for none)",
                    r.frames, r.window_ms
                ),
            );
        }
    }
    let class = match f.claims.class.as_deref().map(str::parse::<Class>) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            at("class", format!("claims.class: {e}"));
            None
        }
    };
    for (present, section, belongs) in [
        (f.session.is_some(), "session", Kind::Endpoint),
        (f.mcp_native.is_some(), "mcp_native", Kind::McpServer),
    ] {
        if present && f.kind != belongs {
            at(
                &format!("{section}:"),
                format!(
                    "`{section}` belongs to kind {}; this manifest is {kind_name}",
                    belongs.as_str()
                ),
            );
        }
    }
    let start = f.start.clone();
    let need_start = |at: &mut dyn FnMut(&str, String), what: &str| -> Option<Start> {
        if start.is_none() {
            at("kind", format!("{kind_name} needs `start` ({what})"));
        }
        start.clone()
    };
    let kind = match f.kind {
        Kind::Builtin => {
            if cfg!(not(feature = "builtin-sut")) {
                at("kind", NO_BUILTIN.into());
            }
            if f.start.is_some() {
                at(
                    "start",
                    "kind builtin runs in process; it has no `start`".into(),
                );
            }
            Some(SutKind::Builtin)
        }
        Kind::Testee => need_start(&mut at, "command and args of the testee process")
            .map(|start| SutKind::Testee { start }),
        Kind::McpProxy => need_start(&mut at, "the proxy, once per vector")
            .map(|start| SutKind::McpProxy { start }),
        Kind::McpServer => {
            let start = need_start(&mut at, "the server, once per vector");
            match (&f.mcp_native, start) {
                (None, _) => {
                    at(
                        "kind",
                        "kind mcp-server needs `mcp_native` (transport, protocol_version)".into(),
                    );
                    None
                }
                (Some(spec), Some(start)) => {
                    // The server writes the port it bound to ${PORT_FILE}, or listens on the
                    // free port the harness chose, ${PORT} (in an argument or its environment).
                    let uses_port = start
                        .args
                        .iter()
                        .chain([&start.command])
                        .chain(start.env.values())
                        .any(|a| a.contains("${PORT_FILE}") || a.contains("${PORT}"));
                    if spec.transport != McpTransport::Stdio && !uses_port {
                        at("transport", "mcp_native over http or websocket needs `start` to take ${PORT_FILE} (where the server writes the port it bound) or ${PORT} (a free port the harness chose), in an argument or in `env`".into());
                    }
                    Some(SutKind::McpServer {
                        start,
                        mcp_native: spec.clone(),
                    })
                }
                (Some(_), None) => None,
            }
        }
        Kind::Endpoint => match &f.session {
            None => {
                at(
                    "kind",
                    "kind endpoint needs `session` (transport, reject_signal)".into(),
                );
                None
            }
            Some(sess) => {
                let reach = match (sess.transport, &sess.address, &f.start) {
                    (Transport::Stdio, Some(_), _) => {
                        at(
                            "address",
                            "a stdio endpoint is started per vector; it has no `address`".into(),
                        );
                        None
                    }
                    (Transport::Stdio, None, None) => {
                        at("transport", "a stdio endpoint needs `start`".into());
                        None
                    }
                    (_, Some(_), Some(_)) => {
                        at("address", "give `address` (already listening) or `start` (the harness starts it), not both".into());
                        None
                    }
                    (_, None, None) => {
                        at(
                            "transport",
                            "a tcp/tls endpoint needs `address` or `start`".into(),
                        );
                        None
                    }
                    (_, Some(a), None) => Some(Reach::Address(a.clone())),
                    (_, None, Some(s)) => Some(Reach::Start(s.clone())),
                };
                match (sess.transport, &sess.tls) {
                    (Transport::Tls, None) => at("transport", "transport tls needs `tls`".into()),
                    (Transport::Tls, Some(t)) if t.pki == PkiSource::Files && t.ca.is_none() => at(
                        "pki",
                        "tls.pki files needs `ca` (the server certificate's CA)".into(),
                    ),
                    (Transport::Stdio | Transport::Tcp, Some(_)) => {
                        at("tls:", "`tls` applies to transport tls only".into())
                    }
                    _ => {}
                }
                let rs = &sess.reject_signal;
                if matches!(rs.mode, RejectMode::ErrorFrame | RejectMode::Both)
                    && rs.error_frame.is_none()
                {
                    at(
                        "reject_signal",
                        "reject_signal mode error-frame/both needs `error_frame`".into(),
                    );
                }
                if let Some(why) = rs.error_frame.as_ref().and_then(code_pointer_problem) {
                    at("code_pointer", why);
                }
                if rs.mode == RejectMode::Close && rs.after.is_some() {
                    at("reject_signal", "reject_signal.after is for endpoints that send error frames: with mode close every reject already ends the stream".into());
                }
                if rs.mode == RejectMode::Close && sess.probe.is_none() {
                    at("reject_signal", "reject_signal mode close needs a `probe`: without one an accept cannot be told from a slow reject".into());
                }
                reach.map(|reach| SutKind::Endpoint {
                    session: Box::new(sess.clone()),
                    reach,
                })
            }
        },
    };
    match kind {
        Some(kind) if sink.problems.is_empty() => Ok(Manifest {
            name: f.name,
            version: f.version,
            kind,
            methods: f.methods,
            claims: Claims {
                class,
                profiles: f.claims.profiles,
            },
            core_profile_id: f.core_profile_id,
            p1_payload: f.p1_payload,
            params: f.params,
            limits,
            policy,
        }),
        _ => Err(sink.problems),
    }
}
