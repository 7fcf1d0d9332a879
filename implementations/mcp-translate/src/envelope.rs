//! One JSON-RPC message through the rules: classify it (request, notification, result,
//! error), decide its fate for the target version (forward, drop, answer on the receiver's
//! behalf) and hand its params or result to the per-method rules.

use crate::methods::{self, Sender};
use crate::outcome::{ErrorKind, WarningKind};
use crate::rules;
use crate::version::{Direction, Version};
use crate::walk::{kind_of, Cx, Seg, R};
use crate::RequestLookup;
use serde_json::{json, Value};

/// What becomes of one message.
#[derive(Debug)]
pub(crate) enum Fate {
    /// Deliver it (translated in place).
    Forward,
    /// Do not deliver it.
    Drop,
    /// Do not deliver it; send this response back to the sender.
    Reply(Value),
}

fn valid_id(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_))
}

/// The JSON-RPC error a receiver answers for a method it does not have.
pub(crate) fn method_not_found(id: &Value, method: &str, to: Version) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32601,
        "message": format!("Method not found: {method} is not part of MCP {to}"),
    }})
}

/// The answer given on an older client's behalf to an elicitation it cannot see.
pub(crate) fn decline(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}})
}

/// Translates `v` in place and says what becomes of it.
pub(crate) fn message(cx: &mut Cx<'_>, v: &mut Value, lookup: &dyn RequestLookup) -> R<Fate> {
    let Value::Object(o) = v else {
        return Err(cx.invalid(format!(
            "a JSON-RPC message must be an object, found {}",
            kind_of(v)
        )));
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        cx.message_type = "JSON-RPC message".into();
        return Err(cx.invalid("`jsonrpc` must be \"2.0\""));
    }
    if let Some(m) = o.get("method") {
        let Value::String(method) = m else {
            cx.message_type = "JSON-RPC message".into();
            return Err(cx.invalid("`method` must be a string"));
        };
        let method = method.clone();
        let id = o.get("id").cloned();
        cx.message_type = if id.is_some() {
            format!("{method} request")
        } else {
            method.clone()
        };
        if let Some(id) = &id {
            if !valid_id(id) {
                return Err(cx.invalid("a request `id` must be a string or a number"));
            }
        }
        if o.contains_key("result") || o.contains_key("error") {
            return Err(cx.invalid("a message with `method` carries no `result` or `error`"));
        }
        let Some(info) = methods::lookup(&method) else {
            // Forward compatibility: a method no version defines (an extension) passes as
            // it is. Checking an output does not flag it: it was not translated.
            if !cx.check {
                cx.warn(
                    WarningKind::UnknownMethodForwarded,
                    None,
                    format!(
                        "{method} is not an MCP method of any known version; forwarded unchanged"
                    ),
                )?;
            }
            return Ok(Fate::Forward);
        };
        if info.request != id.is_some() {
            return Err(cx.invalid(if info.request {
                format!("{method} is a request and needs an `id`")
            } else {
                format!("{method} is a notification and carries no `id`")
            }));
        }
        let wrong_side = matches!(
            (info.sender, cx.dir),
            (Sender::Client, Direction::ServerToClient)
                | (Sender::Server, Direction::ClientToServer)
        );
        if wrong_side {
            return Err(cx.invalid(format!(
                "{method} is sent by the {} only",
                if info.sender == Sender::Client {
                    "client"
                } else {
                    "server"
                }
            )));
        }
        if info.since > cx.to {
            return match id {
                Some(id) => {
                    let reply = if method == "elicitation/create" {
                        decline(&id)
                    } else {
                        method_not_found(&id, &method, cx.to)
                    };
                    cx.warn(
                        WarningKind::AnsweredOnBehalf,
                        None,
                        format!(
                            "{method} exists from {}; answered on the receiver's behalf",
                            info.since
                        ),
                    )?;
                    Ok(Fate::Reply(reply))
                }
                None => {
                    cx.warn(
                        WarningKind::NotificationDropped,
                        None,
                        format!("{method} exists from {}; not forwarded", info.since),
                    )?;
                    Ok(Fate::Drop)
                }
            };
        }
        let Some(p) = o.get_mut("params") else {
            if rules::params_required(&method) {
                return Err(cx.invalid(format!("{method} needs `params`")));
            }
            return Ok(Fate::Forward);
        };
        let keep = cx.at(Seg::K("params"), |cx| {
            let p = cx.obj(p, "params")?;
            if info.request {
                rules::request_params(cx, &method, p)
            } else {
                rules::notification_params(cx, &method, p)
            }
        })?;
        return Ok(match (keep, id) {
            (true, _) => Fate::Forward,
            (false, Some(id)) => {
                cx.warn(
                    WarningKind::AnsweredOnBehalf,
                    None,
                    format!(
                        "this {method} has no form in {}; answered on the receiver's behalf",
                        cx.to
                    ),
                )?;
                Fate::Reply(if method == "elicitation/create" {
                    decline(&id)
                } else {
                    method_not_found(&id, &method, cx.to)
                })
            }
            (false, None) => {
                cx.warn(
                    WarningKind::NotificationDropped,
                    None,
                    format!("this {method} has no form in {}; not forwarded", cx.to),
                )?;
                Fate::Drop
            }
        });
    }
    // A response.
    let has_result = o.contains_key("result");
    let has_error = o.contains_key("error");
    if has_result == has_error {
        cx.message_type = "JSON-RPC response".into();
        return Err(cx.invalid("a response carries exactly one of `result` and `error`"));
    }
    if has_error {
        cx.message_type = "error response".into();
        let e = o.get("error").and_then(Value::as_object);
        let ok = e.is_some_and(|e| {
            e.get("code").is_some_and(|c| c.is_i64() || c.is_u64())
                && e.get("message").is_some_and(Value::is_string)
        });
        if !ok {
            return Err(cx.at(Seg::K("error"), |cx| {
                Ok(cx.invalid("`error` needs an integer `code` and a string `message`"))
            })?);
        }
        return match o.get("id") {
            Some(id) if valid_id(id) => Ok(Fate::Forward),
            Some(Value::Null) | None if cx.to < Version::V2025_11_25 => {
                // Before 2025-11-25 an error response always names the request it answers.
                cx.warn(
                    WarningKind::ResponseDropped,
                    None,
                    format!(
                        "an error response without a request id has no form in {}",
                        cx.to
                    ),
                )?;
                Ok(Fate::Drop)
            }
            None => Ok(Fate::Forward),
            Some(Value::Null) => {
                cx.warn(
                    WarningKind::Converted,
                    Some("id"),
                    "a null id is written as an absent id (2025-11-25)",
                )?;
                o.shift_remove("id");
                Ok(Fate::Forward)
            }
            Some(_) => Err(cx.invalid("a response `id` must be a string or a number")),
        };
    }
    let id = match o.get("id") {
        Some(id) if valid_id(id) => id.clone(),
        _ => {
            cx.message_type = "result response".into();
            return Err(cx.invalid("a result response needs a string or number `id`"));
        }
    };
    let Some(method) = lookup.method_of(&id) else {
        cx.message_type = "result response".into();
        return Err(cx.err(
            ErrorKind::MissingContext,
            format!("no request with id {id} is known, so the result's type is unknown"),
        ));
    };
    let method = method.to_owned();
    cx.message_type = format!("{method} result");
    let Some(r) = o.get_mut("result") else {
        return Ok(Fate::Forward);
    };
    cx.at(Seg::K("result"), |cx| {
        let r = cx.obj(r, "result")?;
        rules::result(cx, &method, r)
    })?;
    Ok(Fate::Forward)
}
