//! Whether an MCP message that arrived is the one a vector expects: equal as JSON, except an
//! error's free text and the values a proxy chooses itself (captures, `?{name}`), which
//! bind on first sight and must agree afterwards.

use crate::catalog::mcpx::{capture_name, pieces, Piece};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What the captures of a conversation are bound to so far.
pub type Binds = BTreeMap<String, Value>;

/// How many key assignments one object may try before the match gives up: object sizes
/// in a vector are small, and a hostile message must not make the judge search forever.
const MAX_TRIES: usize = 10_000;

/// Whether `got` is `want`, binding `want`'s unbound captures on success (on failure,
/// `binds` is unchanged). An error response's `error.message` may be any string:
/// JSON-RPC leaves that text to the sender (only `code` is meant for programs), so a
/// vector that spelled out the reference proxy's wording would fail every other proxy
/// that answers the same error in its own words. With `any_code`, an error response's
/// `error.code` may be any integer too.
pub fn same_message(got: &Value, want: &Value, any_code: bool, binds: &mut Binds) -> bool {
    let mut trial = binds.clone();
    let mut budget = MAX_TRIES;
    if matches(got, want, any_code, &mut trial, &mut budget) {
        *binds = trial;
        true
    } else {
        false
    }
}

fn matches(got: &Value, want: &Value, any_code: bool, b: &mut Binds, budget: &mut usize) -> bool {
    if let Some(name) = want.as_str().and_then(capture_name) {
        return bind(b, name, got);
    }
    match (got, want) {
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len()
                && g.iter()
                    .zip(w)
                    .all(|(g, w)| matches(g, w, any_code, b, budget))
        }
        (Value::Object(g), Value::Object(w)) => match (g.get("error"), w.get("error")) {
            (Some(Value::Object(ge)), Some(Value::Object(we)))
                if matches!(ge.get("message"), Some(Value::String(_)))
                    && matches!(we.get("message"), Some(Value::String(_)))
                    && (!any_code || ge.get("code").is_some_and(Value::is_i64)) =>
            {
                let strip = |o: &Map<String, Value>, e: &Map<String, Value>| {
                    let mut o = o.clone();
                    let mut e = e.clone();
                    e.remove("message");
                    if any_code {
                        e.remove("code");
                    }
                    o.insert("error".into(), Value::Object(e));
                    o
                };
                object(&strip(g, ge), &strip(w, we), any_code, b, budget)
            }
            _ => object(g, w, any_code, b, budget),
        },
        _ => got == want,
    }
}

/// Binds `name` to `v`, or checks it is already bound to `v`.
fn bind(b: &mut Binds, name: &str, v: &Value) -> bool {
    match b.get(name) {
        Some(x) => x == v,
        None => {
            b.insert(name.to_owned(), v.clone());
            true
        }
    }
}

/// Objects: every literal key of `w` is in `g` with a matching value, and the keys of `g`
/// that `w` does not name go one to one to `w`'s capture keys, in some assignment under
/// which the values match too.
fn object(
    g: &Map<String, Value>,
    w: &Map<String, Value>,
    any_code: bool,
    b: &mut Binds,
    budget: &mut usize,
) -> bool {
    let captured: Vec<(&str, &Value)> = w
        .iter()
        .filter_map(|(k, v)| capture_name(k).map(|n| (n, v)))
        .collect();
    let literal = w.iter().filter(|(k, _)| capture_name(k).is_none());
    for (k, wv) in literal {
        match g.get(k.as_str()) {
            Some(gv) if matches(gv, wv, any_code, b, budget) => {}
            _ => return false,
        }
    }
    let rest: Vec<(&String, &Value)> = g
        .iter()
        .filter(|(k, _)| !w.contains_key(k.as_str()))
        .collect();
    if rest.len() != captured.len() {
        return false;
    }
    let mut used = vec![false; rest.len()];
    assign(&captured, &rest, &mut used, any_code, b, budget)
}

/// Backtracking: gives the first capture key of `caps` each unused key of `rest` in turn.
fn assign(
    caps: &[(&str, &Value)],
    rest: &[(&String, &Value)],
    used: &mut [bool],
    any_code: bool,
    b: &mut Binds,
    budget: &mut usize,
) -> bool {
    let Some(((name, cv), more)) = caps.split_first() else {
        return true;
    };
    for i in 0..rest.len() {
        if used[i] || *budget == 0 {
            continue;
        }
        *budget -= 1;
        let (gk, gv) = rest[i];
        let mut trial = b.clone();
        if bind(&mut trial, name, &Value::String(gk.clone()))
            && matches(gv, cv, any_code, &mut trial, budget)
        {
            used[i] = true;
            if assign(more, rest, used, any_code, &mut trial, budget) {
                *b = trial;
                return true;
            }
            used[i] = false;
        }
    }
    false
}

/// `line` with every `?{name}` written as the JSON text of its binding; the first unbound
/// name is the error.
pub fn substitute(line: &str, binds: &Binds) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    for p in pieces(line) {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Use(n) => {
                let v = binds
                    .get(n)
                    .ok_or_else(|| format!("?{{{n}}} is not bound by an earlier arrival"))?;
                out.push_str(&v.to_string());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{same_message, substitute, Binds};
    use serde_json::json;

    fn same(got: &serde_json::Value, want: &serde_json::Value, any: bool) -> bool {
        same_message(got, want, any, &mut Binds::new())
    }

    #[test]
    fn an_error_message_is_free_text_and_nothing_else_is() {
        let want = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
        let reworded = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}});
        assert!(same(&reworded, &want, false));
        let other_code = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Method not found"}});
        assert!(!same(&other_code, &want, false));
        let other_id =
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}});
        assert!(!same(&other_id, &want, false));
        let no_text = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": 7}});
        assert!(!same(&no_text, &want, false));
        // Outside an error, a message's text is compared like any other value.
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"message": "a"}});
        let log2 = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"message": "b"}});
        assert!(!same(&log, &log2, false));
        assert!(same(&json!([reworded]), &json!([want]), false));
        // With any_error_code, the code is the sender's too, but it is still an integer.
        assert!(same(&other_code, &want, true));
        let text_code = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}});
        assert!(!same(&text_code, &want, true));
        assert!(!same(
            &other_id,
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 0, "message": ""}}),
            true
        ));
    }

    #[test]
    fn a_capture_binds_once_and_must_agree_after() {
        let mut b = Binds::new();
        let want = json!({"id": "?{up}", "method": "tools/call"});
        assert!(same_message(
            &json!({"id": "upstream:1", "method": "tools/call"}),
            &want,
            false,
            &mut b
        ));
        assert_eq!(b["up"], json!("upstream:1"));
        // Bound: the same value again, and nothing else.
        assert!(!same_message(
            &json!({"id": 7, "method": "tools/call"}),
            &want,
            false,
            &mut b
        ));
        assert!(same_message(
            &json!({"id": "upstream:1", "method": "tools/call"}),
            &want,
            false,
            &mut b
        ));
        // A failed match binds nothing.
        let mut c = Binds::new();
        assert!(!same_message(
            &json!({"id": 1, "method": "x"}),
            &json!({"id": "?{i}", "method": "y"}),
            false,
            &mut c
        ));
        assert!(c.is_empty());
        // A capture is a whole string; other text is compared as is.
        assert!(!same(&json!({"a": "x"}), &json!({"a": "?{}"}), false));
        assert!(same(&json!({"a": "?{}"}), &json!({"a": "?{}"}), false));
    }

    #[test]
    fn capture_keys_take_the_keys_the_sender_chose_one_to_one() {
        let want = json!({"inputRequests": {
            "?{a}": {"method": "elicitation/create", "params": {"message": "A"}},
            "?{b}": {"method": "elicitation/create", "params": {"message": "B"}},
        }});
        let got = json!({"inputRequests": {
            "k2": {"method": "elicitation/create", "params": {"message": "B"}},
            "k1": {"method": "elicitation/create", "params": {"message": "A"}},
        }});
        let mut b = Binds::new();
        assert!(same_message(&got, &want, false, &mut b));
        assert_eq!((b["a"].clone(), b["b"].clone()), (json!("k1"), json!("k2")));
        // One entry where two are expected (two requests merged under one key) fails.
        let merged = json!({"inputRequests": {"7": {"method": "elicitation/create", "params": {"message": "B"}}}});
        assert!(!same(&merged, &want, false));
        // So does an extra key, or a value that matches no capture's.
        let extra = json!({"inputRequests": {
            "k1": {"method": "elicitation/create", "params": {"message": "A"}},
            "k2": {"method": "elicitation/create", "params": {"message": "B"}},
            "k3": {"method": "elicitation/create", "params": {"message": "C"}},
        }});
        assert!(!same(&extra, &want, false));
    }

    #[test]
    fn substitution_writes_json_text_and_refuses_unbound_names() {
        let mut b = Binds::new();
        b.insert("k".into(), json!("input:1:a"));
        b.insert("n".into(), json!(7));
        assert_eq!(
            substitute(
                r#"{"id":?{n},"inputResponses":{?{k}:{}},"x":"?{ not a name"}"#,
                &b
            )
            .unwrap(),
            r#"{"id":7,"inputResponses":{"input:1:a":{}},"x":"?{ not a name"}"#
        );
        assert_eq!(substitute("?{n}?{n}", &b).unwrap(), "77");
        assert_eq!(substitute("?{n} ?{", &b).unwrap(), "7 ?{");
        assert!(substitute("?{missing}", &b)
            .unwrap_err()
            .contains("missing"));
    }
}
