//! The rules between a session version (one `initialize`, results without `resultType`,
//! server requests as JSON-RPC requests) and the stateless 2026-07-28 (`server/discover`,
//! protocol version and client capabilities in every request's `_meta`, `resultType` and
//! caching hints on results, server requests inside `input_required` results, notifications
//! on `subscriptions/listen` streams). `docs/mcp-translation.md` gives the schema lines.

use crate::entities;
use crate::methods::{self, INPUT_CAPABLE};
use crate::outcome::{ErrorKind, WarningKind};
use crate::rules;
use crate::version::Version;
use crate::walk::{find, kind_of, Cx, Obj, Seg, R};
use serde_json::{json, Map, Value};

/// `RequestMetaObject` keys (schema 2026-07-28 lines 63-111).
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const CLIENT_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `ResultMetaObject` (line 157) and `NotificationMetaObject` (line 133) keys.
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Results that carry `ttlMs` and `cacheScope` in 2026-07-28 (`CacheableResult`, line 1081).
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

/// The `Implementation` written where a session version requires one and the stateless
/// peer gave none (`clientInfo` and `serverInfo` are optional in 2026-07-28 `_meta`).
fn unknown_implementation() -> Value {
    json!({"name": "unknown", "version": "unknown"})
}

/// The id given to the session request that carries input request `key` of the
/// `input_required` answer to request `id`: unique per request and key, and readable back
/// by an intermediary (`correlate::rounds`).
pub(crate) fn input_id(id: &Value, key: &str) -> Value {
    Value::String(format!("input:{id}:{key}"))
}

/// The `params` object of a message, created empty when absent.
fn params_of<'o>(cx: &Cx<'_>, o: &'o mut Obj) -> R<&'o mut Obj> {
    let p = o
        .entry("params")
        .or_insert_with(|| Value::Object(Map::new()));
    match p {
        Value::Object(p) => Ok(p),
        other => Err(cx.invalid(format!(
            "params must be an object, found {}",
            kind_of(other)
        ))),
    }
}

/// Checks a 2026-07-28 request `_meta` (`params` already an object): protocol version and
/// client capabilities are required (`RequestParams`, line 179).
pub(crate) fn check_request_meta(cx: &mut Cx<'_>, p: &mut Obj) -> R {
    cx.field(p, "_meta", true, |cx, m| {
        let m = cx.obj(m, "_meta")?;
        cx.str_field(m, PROTOCOL_VERSION, true)?;
        cx.obj_field(m, CLIENT_CAPS, true)?;
        cx.obj_field(m, CLIENT_INFO, false)?;
        cx.str_field(m, LOG_LEVEL, false)
    })
}

/// Up: a session client's request gets the `_meta` a 2026-07-28 request carries, from what
/// the session established (`{}` capabilities when nothing is known: the client is then
/// assumed to support no optional capability, which the schema defines as the empty object).
pub(crate) fn request_meta_up(cx: &mut Cx<'_>, o: &mut Obj) -> R {
    let session = cx.session;
    let to = cx.to;
    let p = params_of(cx, o)?;
    let meta = p
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(cx.at(Seg::K("params"), |cx| {
            Ok(cx.invalid("params._meta must be an object"))
        })?);
    };
    meta.insert(PROTOCOL_VERSION.into(), Value::String(to.as_str().into()));
    match &session.client_capabilities {
        Some(c) => {
            meta.insert(CLIENT_CAPS.into(), c.clone());
        }
        None => {
            meta.insert(CLIENT_CAPS.into(), json!({}));
            cx.at(Seg::K("params"), |cx| {
                cx.at(Seg::K("_meta"), |cx| {
                    cx.warn(
                        WarningKind::FallbackAdded,
                        Some(CLIENT_CAPS),
                        "the client's capabilities are not known here: declared as none ({})",
                    )
                })
            })?;
        }
    }
    if let Some(i) = &session.client_info {
        meta.insert(CLIENT_INFO.into(), i.clone());
    }
    if let Some(l) = &session.log_level {
        meta.insert(LOG_LEVEL.into(), Value::String(l.clone()));
    }
    Ok(())
}

/// Removes a `_meta` key that restates a session fact: silently when the session holds the
/// same value, else with a `dropped` warning.
fn drop_restated(cx: &mut Cx<'_>, meta: &mut Obj, k: &'static str, known: Option<&Value>) -> R {
    let Some(v) = meta.shift_remove(k) else {
        return Ok(());
    };
    if known != Some(&v) {
        cx.warn(
            WarningKind::Dropped,
            Some(k),
            "a per-request value the session version can only state once (or not at all)",
        )?;
    }
    Ok(())
}

/// Down: a 2026-07-28 request loses the `_meta` keys a session version states once (or not
/// at all); empty `_meta` and `params` go.
pub(crate) fn request_meta_down(cx: &mut Cx<'_>, method: &str, o: &mut Obj) -> R {
    let session = cx.session;
    let Some(Value::Object(p)) = o.get_mut("params") else {
        return Err(cx.invalid(format!(
            "{method} needs `params` with `_meta` in 2026-07-28"
        )));
    };
    cx.at(Seg::K("params"), |cx| {
        check_request_meta(cx, p)?;
        let log = session.log_level.clone().map(Value::String);
        cx.field(p, "_meta", true, |cx, m| {
            let m = cx.obj(m, "_meta")?;
            m.shift_remove(PROTOCOL_VERSION);
            drop_restated(cx, m, CLIENT_CAPS, session.client_capabilities.as_ref())?;
            drop_restated(cx, m, CLIENT_INFO, session.client_info.as_ref())?;
            drop_restated(cx, m, LOG_LEVEL, log.as_ref())
        })?;
        if INPUT_CAPABLE.contains(&method) {
            for k in ["inputResponses", "requestState"] {
                cx.drop_field(
                    p,
                    k,
                    "a retry's answers to input requests: the session server asked for them as requests of its own (an intermediary answers those)",
                )?;
            }
        }
        if p.get("_meta").and_then(Value::as_object).is_some_and(Map::is_empty) {
            p.shift_remove("_meta");
        }
        Ok(())
    })?;
    if o.get("params")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        o.shift_remove("params");
    }
    Ok(())
}

/// Up: `initialize` has no 2026-07-28 form; what it asks for is `server/discover`, with its
/// capabilities and client info in `_meta`.
pub(crate) fn initialize_to_discover(cx: &mut Cx<'_>, o: &mut Obj) -> R {
    let Some(Value::Object(p)) = o.get_mut("params") else {
        return Err(cx.invalid("initialize needs `params`"));
    };
    let (caps, info) = cx.at(Seg::K("params"), |cx| {
        cx.str_field(p, "protocolVersion", true)?;
        cx.field(p, "capabilities", true, entities::client_capabilities)?;
        cx.field(p, "clientInfo", true, entities::implementation)?;
        p.shift_remove("protocolVersion");
        let caps = p.shift_remove("capabilities").unwrap_or_default();
        let info = p.shift_remove("clientInfo").unwrap_or_default();
        Ok((caps, info))
    })?;
    cx.warn(
        WarningKind::Converted,
        None,
        "initialize does not exist in 2026-07-28: sent as server/discover, capabilities and clientInfo in _meta",
    )?;
    let mut meta = match p.shift_remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    meta.insert(
        PROTOCOL_VERSION.into(),
        Value::String(cx.to.as_str().into()),
    );
    meta.insert(CLIENT_CAPS.into(), caps);
    meta.insert(CLIENT_INFO.into(), info);
    p.insert("_meta".into(), Value::Object(meta));
    o.insert("method".into(), Value::String("server/discover".into()));
    Ok(())
}

/// Down: `server/discover` becomes the `initialize` a session server needs, made of the
/// request's `_meta`.
pub(crate) fn discover_to_initialize(cx: &mut Cx<'_>, o: &mut Obj) -> R {
    let session = cx.session;
    let to = cx.to;
    let Some(Value::Object(p)) = o.get_mut("params") else {
        return Err(cx.invalid("server/discover needs `params` with `_meta`"));
    };
    let (caps, info, rest) = cx.at(Seg::K("params"), |cx| {
        check_request_meta(cx, p)?;
        let Some(Value::Object(m)) = p.get_mut("_meta") else {
            return Err(cx.invalid("`_meta` must be an object"));
        };
        cx.at(Seg::K("_meta"), |cx| {
            m.shift_remove(PROTOCOL_VERSION);
            let mut caps = m.shift_remove(CLIENT_CAPS).unwrap_or_default();
            cx.at(Seg::K(CLIENT_CAPS), |cx| {
                entities::client_capabilities(cx, &mut caps)
            })?;
            let info = match m.shift_remove(CLIENT_INFO) {
                Some(mut i) => {
                    cx.at(Seg::K(CLIENT_INFO), |cx| entities::implementation(cx, &mut i))?;
                    i
                }
                None => {
                    cx.warn(
                        WarningKind::FallbackAdded,
                        Some(CLIENT_INFO),
                        "initialize requires clientInfo and the request gave none: written as name and version \"unknown\"",
                    )?;
                    unknown_implementation()
                }
            };
            let log = session.log_level.clone().map(Value::String);
            drop_restated(cx, m, LOG_LEVEL, log.as_ref())?;
            Ok((caps, info, std::mem::take(m)))
        })
    })?;
    cx.warn(
        WarningKind::Converted,
        None,
        "server/discover does not exist before 2026-07-28: sent as initialize, made of its _meta",
    )?;
    let mut np = Map::new();
    np.insert("protocolVersion".into(), Value::String(to.as_str().into()));
    np.insert("capabilities".into(), caps);
    np.insert("clientInfo".into(), info);
    if !rest.is_empty() {
        np.insert("_meta".into(), Value::Object(rest));
    }
    o.insert("method".into(), Value::String("initialize".into()));
    o.insert("params".into(), Value::Object(np));
    Ok(())
}

/// Down: `subscriptions/listen` toward a session server. The translator answers it: a
/// session server sends its list_changed notifications unprompted, so the stream can carry
/// those it declared (`Session::honoured`); the acknowledgement says which. The stream
/// stays open (its result is sent only when the server ends it, line 1349).
pub(crate) fn listen_acknowledgement(cx: &mut Cx<'_>, id: &Value, o: &mut Obj) -> R<Value> {
    let Some(Value::Object(p)) = o.get_mut("params") else {
        return Err(cx.invalid("subscriptions/listen needs `params`"));
    };
    let requested = cx.at(Seg::K("params"), |cx| {
        check_request_meta(cx, p)?;
        cx.obj_field(p, "notifications", true)?;
        Ok(p.get("notifications").cloned().unwrap_or_default())
    })?;
    cx.warn(
        WarningKind::AnsweredOnBehalf,
        None,
        "subscriptions/listen does not exist before 2026-07-28: acknowledged for the server with the notifications it sends unprompted",
    )?;
    Ok(
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUBSCRIPTION_ID: id}, "notifications": cx.session.honoured(&requested)}}),
    )
}

/// What a 2026-07-28 result's `resultType` says.
pub(crate) enum Kind {
    /// `complete`: translate the result.
    Complete,
    /// `input_required`: the server needs input before it can answer.
    InputRequired,
}

/// Checks a 2026-07-28 server result's common fields (`resultType`, and the caching hints
/// of a `CacheableResult`) and, toward a session version, removes them. `resultType`
/// `complete` is what an absent one means (line 230), so it goes silently; the caching
/// hints are information and go with a warning.
pub(crate) fn result_common(cx: &mut Cx<'_>, method: &str, r: &mut Obj) -> R<Kind> {
    let kind = match find(r, "resultType") {
        Some(Value::String(t)) if t == "complete" => Kind::Complete,
        Some(Value::String(t)) if t == "input_required" => Kind::InputRequired,
        Some(Value::String(t)) => {
            let t = t.clone();
            return Err(cx.at(Seg::K("resultType"), |cx| {
                Ok(cx.err(
                    ErrorKind::Unrepresentable,
                    format!("resultType {t:?} has no meaning before 2026-07-28 or in it"),
                ))
            })?);
        }
        Some(other) => {
            return Err(cx.invalid(format!(
                "`resultType` must be a string, found {}",
                kind_of(other)
            )))
        }
        None => return Err(cx.invalid("required field `resultType` is missing")),
    };
    if matches!(kind, Kind::InputRequired) {
        return Ok(kind);
    }
    if CACHEABLE.contains(&method) {
        match find(r, "ttlMs") {
            Some(Value::Number(n)) if n.is_u64() => {}
            _ => return Err(cx.invalid("`ttlMs` must be a non-negative integer")),
        }
        match find(r, "cacheScope").and_then(Value::as_str) {
            Some("public" | "private") => {}
            _ => return Err(cx.invalid("`cacheScope` must be \"public\" or \"private\"")),
        }
    }
    // A discover result becomes a whole initialize result (`discover_result_to_initialize`).
    if cx.to.is_stateless() || method == "server/discover" {
        return Ok(kind);
    }
    r.shift_remove("resultType");
    for k in ["ttlMs", "cacheScope"] {
        cx.drop_field(
            r,
            k,
            "a 2026-07-28 caching hint; session versions have none",
        )?;
    }
    result_meta_down(cx, r)?;
    Ok(kind)
}

/// Down: the server identity a 2026-07-28 result carries in `_meta` goes (silently when the
/// session already told the client the same).
fn result_meta_down(cx: &mut Cx<'_>, r: &mut Obj) -> R {
    let known = cx.session.server_info.clone();
    if let Some(Value::Object(m)) = r.get_mut("_meta") {
        cx.at(Seg::K("_meta"), |cx| {
            drop_restated(cx, m, SERVER_INFO, known.as_ref())
        })?;
        if m.is_empty() {
            r.shift_remove("_meta");
        }
    }
    Ok(())
}

/// Up: a session server's result gets what every 2026-07-28 result carries: `resultType`
/// `complete` (what its absence meant), the caching hints that promise nothing (`ttlMs` 0:
/// stale at once; `cacheScope` private: not shared across authorisations), and the server
/// identity the session established.
pub(crate) fn result_up(cx: &mut Cx<'_>, method: &str, r: &mut Obj) {
    if !r.contains_key("resultType") {
        r.insert("resultType".into(), Value::String("complete".into()));
    }
    if CACHEABLE.contains(&method) {
        if !r.contains_key("ttlMs") {
            r.insert("ttlMs".into(), json!(0));
        }
        if !r.contains_key("cacheScope") {
            r.insert("cacheScope".into(), json!("private"));
        }
    }
    if let Some(info) = &cx.session.server_info {
        if let Value::Object(m) = r
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            m.entry(SERVER_INFO).or_insert_with(|| info.clone());
        }
    }
}

/// Up: a session server's `initialize` result is what a stateless client's
/// `server/discover` asks for: its capabilities and identity, `supportedVersions` the
/// target alone (what the intermediary speaks to the client). The session is completed on
/// the client's behalf: the returned `notifications/initialized` goes back to the server.
pub(crate) fn initialize_result_to_discover(cx: &mut Cx<'_>, r: &mut Obj) -> R<Value> {
    cx.str_field(r, "protocolVersion", true)?;
    cx.field(r, "capabilities", true, entities::server_capabilities)?;
    cx.field(r, "serverInfo", true, entities::implementation)?;
    cx.str_field(r, "instructions", false)?;
    cx.warn(
        WarningKind::Converted,
        None,
        "an initialize result is the server/discover result of 2026-07-28; notifications/initialized sent to the server for the client",
    )?;
    r.shift_remove("protocolVersion");
    let info = r.shift_remove("serverInfo").unwrap_or_default();
    let caps = r.shift_remove("capabilities").unwrap_or_default();
    let instructions = r.shift_remove("instructions");
    let mut meta = match r.shift_remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    meta.insert(SERVER_INFO.into(), info);
    let rest = std::mem::take(r);
    r.insert("supportedVersions".into(), json!([cx.to.as_str()]));
    r.insert("capabilities".into(), caps);
    if let Some(i) = instructions {
        r.insert("instructions".into(), i);
    }
    r.insert("ttlMs".into(), json!(0));
    r.insert("cacheScope".into(), json!("private"));
    r.insert("resultType".into(), json!("complete"));
    r.insert("_meta".into(), Value::Object(meta));
    r.extend(rest);
    Ok(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
}

/// Down: a `server/discover` result answers the `initialize` a session client sent
/// (translated into that request). `supportedVersions` and the caching hints have no place
/// in it; a missing server identity is written as "unknown".
pub(crate) fn discover_result_to_initialize(cx: &mut Cx<'_>, r: &mut Obj) -> R {
    cx.each(r, "supportedVersions", true, |cx, v| {
        if v.is_string() {
            Ok(())
        } else {
            Err(cx.invalid("supportedVersions lists strings"))
        }
    })?;
    cx.field(r, "capabilities", true, entities::server_capabilities)?;
    cx.str_field(r, "instructions", false)?;
    cx.warn(
        WarningKind::Converted,
        None,
        "a server/discover result answers initialize before 2026-07-28",
    )?;
    let info = match r.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(m) => m.shift_remove(SERVER_INFO),
        None => None,
    };
    let info = match info {
        Some(mut i) => {
            cx.at(Seg::K("_meta"), |cx| {
                cx.at(Seg::K(SERVER_INFO), |cx| {
                    entities::implementation(cx, &mut i)
                })
            })?;
            i
        }
        None => {
            cx.at(Seg::K("_meta"), |cx| {
                cx.warn(
                    WarningKind::FallbackAdded,
                    Some(SERVER_INFO),
                    "initialize results require serverInfo and the server gave none: written as name and version \"unknown\"",
                )
            })?;
            unknown_implementation()
        }
    };
    cx.drop_field(
        r,
        "supportedVersions",
        "the versions a 2026-07-28 server supports; an initialize result names one",
    )?;
    for k in ["ttlMs", "cacheScope"] {
        cx.drop_field(
            r,
            k,
            "a 2026-07-28 caching hint; session versions have none",
        )?;
    }
    r.shift_remove("resultType");
    if r.get("_meta")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        r.shift_remove("_meta");
    }
    let caps = r.shift_remove("capabilities").unwrap_or_default();
    let instructions = r.shift_remove("instructions");
    let rest = std::mem::take(r);
    r.insert("protocolVersion".into(), json!(cx.to.as_str()));
    r.insert("capabilities".into(), caps);
    r.insert("serverInfo".into(), info);
    if let Some(i) = instructions {
        r.insert("instructions".into(), i);
    }
    r.extend(rest);
    Ok(())
}

/// The server requests an `input_required` result asks a session client to answer.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    /// `(key, request)` for the client, in the order the result lists them.
    pub requests: Vec<(String, Value)>,
    /// `(key, answer)` given on the client's behalf (it cannot take the request).
    pub answered: Vec<(String, Value)>,
    /// The state to pass back on the retry.
    pub state: Option<String>,
}

/// Walks the `inputRequests` of an `input_required` result answering request `id`. Toward a
/// session client each becomes a server request (id [`input_id`]); one the client cannot
/// take is answered for it (elicitation: decline). Checking 2026-07-28 only validates.
pub(crate) fn input_requests(cx: &mut Cx<'_>, id: &Value, r: &mut Obj) -> R<InputRound> {
    let mut round = InputRound::default();
    match r.get("requestState") {
        None => {}
        Some(Value::String(s)) => round.state = Some(s.clone()),
        Some(_) => return Err(cx.invalid("`requestState` must be a string")),
    }
    if round.state.is_none() && !r.contains_key("inputRequests") {
        return Err(
            cx.invalid("an input_required result carries inputRequests, requestState or both")
        );
    }
    let to = cx.to;
    let stateless = to.is_stateless();
    let mut keys: Vec<String> = Vec::new();
    if let Some(reqs) = r.get_mut("inputRequests") {
        let Value::Object(reqs) = reqs else {
            return Err(cx.at(Seg::K("inputRequests"), |cx| {
                Ok(cx.invalid("`inputRequests` must be an object"))
            })?);
        };
        cx.at(Seg::K("inputRequests"), |cx| {
            for (key, req) in reqs.iter_mut() {
                keys.push(key.clone());
                cx.at(Seg::O(key.clone()), |cx| {
                    let o = cx.obj(req, "input request")?;
                    let method = cx.req_str(o, "method")?.to_owned();
                    if !methods::INPUT_REQUESTS.contains(&method.as_str()) {
                        return Err(cx.invalid(format!(
                            "{method} is not an input request (sampling/createMessage, roots/list, elicitation/create)"
                        )));
                    }
                    if stateless {
                        return input_request_params(cx, &method, o, None).map(|_| ());
                    }
                    let rid = input_id(id, key);
                    match input_request_params(cx, &method, o, Some(&rid))? {
                        true => {
                            let mut m = Map::new();
                            m.insert("jsonrpc".into(), json!("2.0"));
                            m.insert("id".into(), rid);
                            m.insert("method".into(), Value::String(method));
                            if let Some(p) = o.shift_remove("params") {
                                m.insert("params".into(), p);
                            }
                            round.requests.push((key.clone(), Value::Object(m)));
                        }
                        false => {
                            cx.warn(
                                WarningKind::AnsweredOnBehalf,
                                None,
                                format!("{method} has no form the {to} client can take: declined for it"),
                            )?;
                            round.answered.push((key.clone(), json!({"action": "decline"})));
                        }
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })?;
    }
    if stateless {
        return Ok(round);
    }
    cx.warn(
        WarningKind::Converted,
        None,
        format!(
            "an input_required result has no form in {to}: its {} input request(s) sent to the client as server requests",
            keys.len()
        ),
    )?;
    if round.state.is_some() {
        cx.warn(
            WarningKind::Dropped,
            Some("requestState"),
            "goes back to the server with the retried request (an intermediary keeps it)",
        )?;
    }
    Ok(round)
}

/// One input request's params, translated for `cx.to` (a session client, or checked for
/// 2026-07-28). `Ok(false)`: the target cannot take it.
fn input_request_params(cx: &mut Cx<'_>, method: &str, o: &mut Obj, id: Option<&Value>) -> R<bool> {
    if method == "elicitation/create" && cx.to < Version::V2025_06_18 {
        return Ok(false);
    }
    match o.get_mut("params") {
        None if method == "roots/list" => Ok(true),
        None => Err(cx.invalid(format!("{method} needs `params`"))),
        Some(p) => cx.at(Seg::K("params"), |cx| {
            let p = cx.obj(p, "params")?;
            if method == "elicitation/create"
                && cx.to == Version::V2025_11_25
                && p.get("mode").and_then(Value::as_str) == Some("url")
                && !p.contains_key("elicitationId")
            {
                // 2025-11-25 requires an id for URL elicitation, used only to correlate a
                // notifications/elicitation/complete, which 2026-07-28 servers never send.
                if let Some(Value::String(id)) = id {
                    cx.warn(
                        WarningKind::FallbackAdded,
                        Some("elicitationId"),
                        "2025-11-25 requires elicitationId for URL elicitation: the request's id is used",
                    )?;
                    p.insert("elicitationId".into(), Value::String(id.clone()));
                }
            }
            rules::request_params(cx, method, p)
        }),
    }
}

/// Translates the params of a session server's request (`sampling/createMessage`,
/// `roots/list`, `elicitation/create`) into the input request a 2026-07-28 client gets.
pub(crate) fn input_request_up(cx: &mut Cx<'_>, method: &str, o: &mut Obj) -> R<bool> {
    input_request_params(cx, method, o, None)
}

/// Translates a client's answer to input request `method` (a session client's result going
/// to a 2026-07-28 server, or a 2026-07-28 client's input response going to a session
/// server).
pub(crate) fn input_response(cx: &mut Cx<'_>, method: &str, r: &mut Value) -> R {
    let r = cx.obj(r, "input response")?;
    rules::result(cx, method, r)
}
