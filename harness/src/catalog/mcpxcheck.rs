//! The catalog's checks of vectors of the `translate` and `mcp_proxy` methods: what only
//! those methods may send and expect, and the captures a proxy vector binds before it uses
//! them.

use super::mcpx::{captures_in, pieces, Piece};
use super::vector::{Body, ProxyBody, ProxyExpect, Step, Topology, TranslateExpect, Vector};

/// Problems of a vector's use of the translate and mcp_proxy methods: `(text to locate,
/// message)`. Which expectations each may give, and that neither combines with another
/// method, the file's conversion already holds.
pub fn problems(v: &Vector) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    match &v.body {
        Body::Translate(b) => {
            for s in &b.steps {
                if !well_formed(s) {
                    out.push((
                        "steps:",
                        "a translate step sends `translate` and expects exactly one `translated`, `translation_error`, or `one_of` at least two of them".into(),
                    ));
                }
            }
        }
        Body::McpProxy(b) => out.extend(proxy_problems(b)),
        Body::Frames(b) => out.extend(foreign_sends(&b.steps)),
        Body::JsonRpc(b) => out.extend(foreign_sends(&b.steps)),
    }
    out
}

/// A translate step sends one message and expects one outcome (or a choice of two or more).
fn well_formed(s: &Step<TranslateExpect>) -> bool {
    let plain = |e: &TranslateExpect| !matches!(e, TranslateExpect::OneOf(_));
    let ours = match s.expect.as_slice() {
        [TranslateExpect::OneOf(alts)] => alts.len() >= 2 && alts.iter().all(plain),
        [_] => true,
        _ => false,
    };
    s.send.as_ref().is_some_and(|x| x.translate.is_some())
        && ours
        && s.repeat.is_none()
        && s.at_ms.is_none()
        && s.side.is_none()
}

/// A message to translate in a vector of another method, once per step that sends one.
fn foreign_sends<E>(steps: &[Step<E>]) -> Vec<(&'static str, String)> {
    steps
        .iter()
        .filter(|s| s.send.as_ref().is_some_and(|x| x.translate.is_some()))
        .map(|_| {
            (
                "steps:",
                "`translate`, `translated` and `translation_error` need `methods: [translate]`"
                    .into(),
            )
        })
        .collect()
}

/// Problems of an mcp_proxy vector.
fn proxy_problems(b: &ProxyBody) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if b.proxy.is_none() {
        out.push((
            "methods:",
            "an mcp_proxy vector needs `proxy: {client_version}`".into(),
        ));
    }
    if b.topology != Some(Topology::Intermediary) {
        out.push((
            "methods:",
            "an mcp_proxy vector has `topology: intermediary`".into(),
        ));
    }
    let mut bound: Vec<String> = Vec::new();
    for s in &b.steps {
        let line = s.send.as_ref().is_some_and(|x| x.jsonrpc_line.is_some());
        if !line || s.repeat.is_some() || s.at_ms.is_some() {
            out.push((
                "steps:",
                "an mcp_proxy step sends a `jsonrpc_line` (from `side`) and expects `arrives` or `silence`".into(),
            ));
        }
        // Only the proxy method writes captures into its lines; elsewhere `?{` is text.
        let to_send = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_deref());
        for p in to_send.map(pieces).unwrap_or_default() {
            if let Piece::Use(n) = p {
                if !bound.iter().any(|b| b == n) {
                    out.push((
                        "jsonrpc_line",
                        format!("`?{{{n}}}` is used before an earlier step's `arrives` binds it"),
                    ));
                }
            }
        }
        for e in &s.expect {
            if let ProxyExpect::Arrives(a) = e {
                captures_in(&a.json, &mut bound);
                if a.any_error_code && a.json.pointer("/error/code").is_none() {
                    out.push((
                        "any_error_code",
                        "`any_error_code` needs `json` to be an error response (with error.code)"
                            .into(),
                    ));
                }
            }
        }
    }
    out
}
