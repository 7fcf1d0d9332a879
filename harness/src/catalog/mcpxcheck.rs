//! The catalog's checks of vectors of the `translate` and `mcp_proxy` methods: what only
//! those methods may send and expect, and the captures a proxy vector binds before it uses
//! them.

use super::mcpx::{captures_in, pieces, Piece};
use super::vector::{Expect, Method, Topology, Vector};

/// Problems of a vector's use of the translate method: `(text to locate, message)`.
pub fn problems(v: &Vector) -> Vec<(&'static str, String)> {
    let translate = v.methods.contains(&Method::Translate);
    let mut out = Vec::new();
    if translate && v.methods.len() > 1 {
        out.push((
            "methods:",
            "the translate method cannot be combined with other methods".into(),
        ));
    }
    for s in &v.steps {
        let sends = s.send.as_ref().is_some_and(|x| x.translate.is_some());
        let exp = s.expect.as_slice();
        let ours = |e: &Expect| match e {
            Expect::Translated(_) | Expect::TranslationError(_) => true,
            Expect::OneOf(alts) => {
                alts.len() >= 2
                    && alts
                        .iter()
                        .all(|a| matches!(a, Expect::Translated(_) | Expect::TranslationError(_)))
            }
            _ => false,
        };
        let well_formed = sends
            && exp.len() == 1
            && ours(&exp[0])
            && s.repeat.is_none()
            && s.at_ms.is_none()
            && s.side.is_none();
        if translate && !well_formed {
            out.push((
                "steps:",
                "a translate step sends `translate` and expects exactly one `translated`, `translation_error`, or `one_of` at least two of them".into(),
            ));
        }
        if !translate && (sends || exp.iter().any(ours)) {
            out.push((
                "steps:",
                "`translate`, `translated` and `translation_error` need `methods: [translate]`"
                    .into(),
            ));
        }
    }
    out.extend(proxy_problems(v));
    out
}

/// Problems of a vector's use of the mcp_proxy method.
fn proxy_problems(v: &Vector) -> Vec<(&'static str, String)> {
    let proxy = v.methods.contains(&Method::McpProxy);
    let mut out = Vec::new();
    if proxy {
        if v.methods.len() > 1 {
            out.push((
                "methods:",
                "the mcp_proxy method cannot be combined with other methods".into(),
            ));
        }
        if v.proxy.is_none() {
            out.push((
                "methods:",
                "an mcp_proxy vector needs `proxy: {client_version}`".into(),
            ));
        }
        if v.topology != Some(Topology::Intermediary) {
            out.push((
                "methods:",
                "an mcp_proxy vector has `topology: intermediary`".into(),
            ));
        }
    } else if v.proxy.is_some() {
        out.push(("proxy:", "`proxy` needs `methods: [mcp_proxy]`".into()));
    }
    let mut bound: Vec<String> = Vec::new();
    for s in &v.steps {
        let line = s.send.as_ref().is_some_and(|x| x.jsonrpc_line.is_some());
        let fits = |e: &Expect| matches!(e, Expect::Arrives(_) | Expect::Silence(_));
        let arrives = s
            .expect
            .as_slice()
            .iter()
            .any(|e| matches!(e, Expect::Arrives(_)));
        if proxy
            && (!line
                || !s.expect.as_slice().iter().all(fits)
                || s.repeat.is_some()
                || s.at_ms.is_some())
        {
            out.push((
                "steps:",
                "an mcp_proxy step sends a `jsonrpc_line` (from `side`) and expects `arrives` or `silence`".into(),
            ));
        }
        if !proxy && arrives {
            out.push(("steps:", "`arrives` needs `methods: [mcp_proxy]`".into()));
        }
        // Only the proxy method writes captures into its lines; elsewhere `?{` is text.
        let to_send = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_deref());
        for p in to_send.filter(|_| proxy).map(pieces).unwrap_or_default() {
            if let Piece::Use(n) = p {
                if !bound.iter().any(|b| b == n) {
                    out.push((
                        "jsonrpc_line",
                        format!("`?{{{n}}}` is used before an earlier step's `arrives` binds it"),
                    ));
                }
            }
        }
        for e in s.expect.as_slice() {
            if let Expect::Arrives(a) = e {
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
