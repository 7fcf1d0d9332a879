//! One JSON-RPC message through the rules: classify it (request, notification, result,
//! error), decide its fate for the target version (forward, drop, answer on the receiver's
//! behalf, replace) and hand its params or result to the per-method rules.

use crate::methods::{self, Sender, INPUT_CAPABLE};
use crate::outcome::{ErrorKind, WarningKind};
use crate::rules;
use crate::stateless::{self, Kind, SUBSCRIPTION_ID};
use crate::version::{Direction, Version};
use crate::walk::{kind_of, Cx, Obj, Seg, R};
use crate::RequestLookup;
use serde_json::{json, Value};

/// What becomes of one message.
#[derive(Debug)]
pub(crate) enum Fate {
    /// Deliver it (translated in place).
    Forward,
    /// Do not deliver it.
    Drop,
    /// Do not deliver it; send this back to the sender. The string is the method of the
    /// request it answers (how the answer is checked).
    Reply(Value, String),
    /// Deliver it, and send this message back to the sender.
    Also(Value),
    /// Deliver these instead of it.
    Instead(Vec<Value>),
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

/// The answer given for a receiver that has no such request: elicitation is declined
/// (the user was never asked); `ping` and `logging/setLevel`, which 2026-07-28 removed,
/// succeed (the translator is alive, and carries the level per request); anything else is
/// the -32601 the receiver would answer itself.
fn on_behalf(id: &Value, method: &str, to: Version) -> Value {
    match method {
        "elicitation/create" => decline(id),
        "ping" | "logging/setLevel" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        _ => method_not_found(id, method, to),
    }
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
    if o.contains_key("method") {
        return call(cx, o);
    }
    response(cx, o, lookup)
}

/// A request or a notification.
fn call(cx: &mut Cx<'_>, o: &mut Obj) -> R<Fate> {
    let method = match o.get("method") {
        Some(Value::String(m)) => m.clone(),
        _ => {
            cx.message_type = "JSON-RPC message".into();
            return Err(cx.invalid("`method` must be a string"));
        }
    };
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
                format!("{method} is not an MCP method of any known version; forwarded unchanged"),
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
    if !info.exists_in(cx.from) {
        let why = if info.is_input_request() && cx.from.is_stateless() {
            " as a JSON-RPC request (it travels inside an input_required result)"
        } else {
            ""
        };
        return Err(cx.invalid(format!("{method} is not part of MCP {}{why}", cx.from)));
    }
    let side = |s: Sender| match s {
        Sender::Client => Some(Direction::ClientToServer),
        Sender::Server => Some(Direction::ServerToClient),
        Sender::Both => None,
    };
    if side(info.sender_in(cx.from)).is_some_and(|d| d != cx.dir) {
        return Err(cx.invalid(format!(
            "{method} is sent by the {} only in {}",
            if cx.dir == Direction::ServerToClient {
                "client"
            } else {
                "server"
            },
            cx.from
        )));
    }
    // Between the eras some messages become others.
    if cx.up() && method == "initialize" {
        stateless::initialize_to_discover(cx, o)?;
        return Ok(Fate::Forward);
    }
    if cx.down() && method == "server/discover" {
        stateless::discover_to_initialize(cx, o)?;
        return Ok(Fate::Forward);
    }
    if cx.down() && method == "subscriptions/listen" {
        let id = id.unwrap_or_default();
        let ack = stateless::listen_acknowledgement(cx, &id, o)?;
        return Ok(Fate::Reply(ack, method));
    }
    if !info.exists_in(cx.to) {
        let since = if info.since > cx.to {
            format!("exists from {}", info.since)
        } else {
            format!("does not exist in {}", cx.to)
        };
        return match id {
            Some(id) => {
                cx.warn(
                    WarningKind::AnsweredOnBehalf,
                    None,
                    format!("{method} {since}; answered on the receiver's behalf"),
                )?;
                Ok(Fate::Reply(on_behalf(&id, &method, cx.to), method))
            }
            None => {
                cx.warn(
                    WarningKind::NotificationDropped,
                    None,
                    format!("{method} {since}; not forwarded"),
                )?;
                Ok(Fate::Drop)
            }
        };
    }
    if side(info.sender_in(cx.to)).is_some_and(|d| d != cx.dir) {
        // Client progress: 2026-07-28 servers send no requests a client could report on.
        cx.warn(
            WarningKind::NotificationDropped,
            None,
            format!(
                "{method} is sent by servers only in {}; not forwarded",
                cx.to
            ),
        )?;
        return Ok(Fate::Drop);
    }
    let c2s = cx.dir == Direction::ClientToServer;
    if o.get("params").is_none() && rules::params_required(&method, cx.from) {
        return Err(cx.invalid(format!("{method} needs `params`")));
    }
    if info.request && c2s && cx.down() {
        stateless::request_meta_down(cx, &method, o)?;
    }
    let keep = match o.get_mut("params") {
        None => true,
        Some(p) => cx.at(Seg::K("params"), |cx| {
            let p = cx.obj(p, "params")?;
            if info.request {
                if c2s && cx.from.is_stateless() && !cx.down() {
                    stateless::check_request_meta(cx, p)?;
                }
                rules::request_params(cx, &method, p)
            } else {
                rules::notification_params(cx, &method, p)
            }
        })?,
    };
    if !info.request && keep {
        return notification_route(cx, &method, o);
    }
    if info.request && keep && c2s && cx.up() {
        stateless::request_meta_up(cx, o)?;
    }
    Ok(match (keep, id) {
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
            Fate::Reply(on_behalf(&id, &method, cx.to), method)
        }
        (false, None) => {
            cx.warn(
                WarningKind::NotificationDropped,
                None,
                format!("this {method} has no form in {}; not forwarded", cx.to),
            )?;
            Fate::Drop
        }
    })
}

/// Where a notification goes across the eras. 2026-07-28 delivers list changes only on a
/// `subscriptions/listen` stream that asked for them (tagged with its id), and servers
/// cancel nothing but such streams.
fn notification_route(cx: &mut Cx<'_>, method: &str, o: &mut Obj) -> R<Fate> {
    let s2c = cx.dir == Direction::ServerToClient;
    let stream = matches!(
        method,
        "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
    );
    if cx.up() && s2c && stream {
        let ids: Vec<Value> = cx.session.listeners(method).into_iter().cloned().collect();
        if ids.is_empty() {
            cx.warn(
                WarningKind::NotificationDropped,
                None,
                format!(
                    "{} delivers {method} only on a subscriptions/listen stream that asked for it, and none is open",
                    cx.to
                ),
            )?;
            return Ok(Fate::Drop);
        }
        let copies = ids
            .into_iter()
            .map(|id| {
                let mut m = o.clone();
                let p = m
                    .entry("params")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(p) = p {
                    let meta = p
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Value::Object(meta) = meta {
                        meta.insert(SUBSCRIPTION_ID.into(), id);
                    }
                }
                Value::Object(m)
            })
            .collect();
        return Ok(Fate::Instead(copies));
    }
    if method == "notifications/cancelled" && s2c && (cx.up() || cx.down()) {
        // A session server cancels its own requests, which a 2026-07-28 client never sees
        // as such; a 2026-07-28 server cancels only listen streams, which a session client
        // never opened.
        cx.warn(
            WarningKind::NotificationDropped,
            None,
            "a server's notifications/cancelled names a request the receiver never had",
        )?;
        return Ok(Fate::Drop);
    }
    if method == "notifications/cancelled" && !s2c && cx.down() {
        let listen = o
            .get("params")
            .and_then(|p| p.get("requestId"))
            .is_some_and(|id| cx.session.is_listen(id));
        if listen {
            cx.warn(
                WarningKind::NotificationDropped,
                None,
                "ends a subscriptions/listen stream the translator answered; the server never saw it",
            )?;
            return Ok(Fate::Drop);
        }
    }
    if cx.down() {
        if let Some(Value::Object(p)) = o.get_mut("params") {
            cx.at(Seg::K("params"), |cx| {
                if let Some(Value::Object(m)) = p.get_mut("_meta") {
                    cx.at(Seg::K("_meta"), |cx| {
                        cx.drop_field(
                            m,
                            SUBSCRIPTION_ID,
                            "names a subscriptions/listen stream, which session versions do not have",
                        )
                    })?;
                    if m.is_empty() {
                        p.shift_remove("_meta");
                    }
                }
                Ok(())
            })?;
            let optional = !rules::params_required(method, cx.to);
            if optional && p.is_empty() {
                o.shift_remove("params");
            }
        }
    }
    Ok(Fate::Forward)
}

/// A response.
fn response(cx: &mut Cx<'_>, o: &mut Obj, lookup: &dyn RequestLookup) -> R<Fate> {
    let has_result = o.contains_key("result");
    let has_error = o.contains_key("error");
    if has_result == has_error {
        cx.message_type = "JSON-RPC response".into();
        return Err(cx.invalid("a response carries exactly one of `result` and `error`"));
    }
    if has_error {
        return error(cx, o);
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
    let mut method = method.to_owned();
    if cx.check {
        // A checked output answers what its request became across the eras.
        match (method.as_str(), cx.to.is_stateless()) {
            ("initialize", true) => method = "server/discover".into(),
            ("server/discover", false) => method = "initialize".into(),
            _ => {}
        }
    }
    cx.message_type = format!("{method} result");
    let Some(r) = o.get_mut("result") else {
        return Ok(Fate::Forward);
    };
    cx.at(Seg::K("result"), |cx| {
        let r = cx.obj(r, "result")?;
        result(cx, &method, &id, r)
    })
}

/// A result answering `method` (request `id`).
fn result(cx: &mut Cx<'_>, method: &str, id: &Value, r: &mut Obj) -> R<Fate> {
    if cx.dir == Direction::ClientToServer {
        if cx.up() {
            return Err(cx.err(
                ErrorKind::Unrepresentable,
                format!(
                    "a client result has no form in {}: servers send no requests, and the answer to an input request travels in the retried request's inputResponses (an intermediary does it: correlate::rounds)",
                    cx.to
                ),
            ));
        }
        if cx.from.is_stateless() {
            return Err(cx.invalid(format!(
                "{} clients answer no JSON-RPC requests (input responses travel in the retried request)",
                cx.from
            )));
        }
        rules::result(cx, method, r)?;
        return Ok(Fate::Forward);
    }
    if cx.from.is_stateless() {
        match methods::lookup(method) {
            Some(i) if i.exists_in(cx.from) && i.sender == Sender::Client => {}
            _ => {
                return Err(cx.invalid(format!(
                    "{method} is not a request a {} server answers",
                    cx.from
                )))
            }
        }
        return match stateless::result_common(cx, method, r)? {
            Kind::InputRequired if !INPUT_CAPABLE.contains(&method) => {
                Err(cx.invalid(format!("an input_required result does not answer {method}")))
            }
            Kind::InputRequired => {
                let round = stateless::input_requests(cx, id, r)?;
                if cx.to.is_stateless() {
                    return Ok(Fate::Forward);
                }
                Ok(Fate::Instead(
                    round.requests.into_iter().map(|(_, m)| m).collect(),
                ))
            }
            Kind::Complete if cx.down() && method == "server/discover" => {
                stateless::discover_result_to_initialize(cx, r)?;
                Ok(Fate::Forward)
            }
            Kind::Complete if !methods::lookup(method).is_some_and(|i| i.exists_in(cx.to)) => {
                Err(cx.err(
                    ErrorKind::Unrepresentable,
                    format!("{method} does not exist in {}", cx.to),
                ))
            }
            Kind::Complete => {
                rules::result(cx, method, r)?;
                Ok(Fate::Forward)
            }
        };
    }
    // A session server answers only requests its own version has: server/discover from a
    // 2025-11-25 server, or tasks/get from a 2025-06-18 one, answers nothing it was asked
    // (mcpx_0154; mcpx_0136 is the 2026-07-28 side). A method no version defines passes.
    if methods::lookup(method).is_some_and(|i| !i.exists_in(cx.from)) {
        return Err(cx.invalid(format!(
            "{method} is not a request a {} server answers",
            cx.from
        )));
    }
    if cx.up() {
        if method == "initialize" {
            let initialized = stateless::initialize_result_to_discover(cx, r)?;
            return Ok(Fate::Also(initialized));
        }
        if !methods::lookup(method).is_some_and(|i| i.exists_in(cx.to)) {
            return Err(cx.err(
                ErrorKind::Unrepresentable,
                format!("{method} does not exist in {}", cx.to),
            ));
        }
        rules::result(cx, method, r)?;
        stateless::result_up(cx, method, r);
        return Ok(Fate::Forward);
    }
    rules::result(cx, method, r)?;
    Ok(Fate::Forward)
}

/// An error response.
fn error(cx: &mut Cx<'_>, o: &mut Obj) -> R<Fate> {
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
    if cx.up() && cx.dir == Direction::ServerToClient {
        // 2026-07-28 retired -32002 (resource not found) for -32602 (schema line 422).
        if let Some(Value::Object(e)) = o.get_mut("error") {
            if e.get("code").and_then(Value::as_i64) == Some(-32002) {
                cx.at(Seg::K("error"), |cx| {
                    cx.warn(
                        WarningKind::Converted,
                        Some("code"),
                        "-32002 (resource not found) is -32602 from 2026-07-28 on",
                    )
                })?;
                e.insert("code".into(), json!(-32602));
            }
        }
    }
    match o.get("id") {
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
    }
}
