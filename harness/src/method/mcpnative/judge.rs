//! The judge of every message an MCP server sends, sans-IO: what the client sent (requests
//! pending, capabilities, subscriptions, progress tokens) in, each server message out as a
//! response, notification or request, with the first rule it breaks: the official schema of
//! the negotiated version (MCPN-020), one response per request (MCPN-021), requests and
//! notifications only for negotiated capabilities (MCPN-022, MCPN-023), nothing but pings
//! before `initialized` (MCPN-024), progress on live tokens only (MCPN-027). Each violation
//! carries a key naming the defect without ids or times, so the same defect seen in many
//! vectors counts once when it belongs to none of them (`docs/mcp-native.md`, Attribution).

use super::eventids::EventIds;
use super::schema::{self, SchemaError, VersionSchema};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Every message is valid against the schema of the negotiated version.
pub const SCHEMA: &str = "MCPN-020";
/// One response per request, with its id.
pub const ONE_RESPONSE: &str = "MCPN-021";
/// Server requests only for capabilities the client declared.
pub const CLIENT_CAPS: &str = "MCPN-022";
/// Server notifications only for capabilities the server declared.
pub const SERVER_CAPS: &str = "MCPN-023";
/// No server requests but ping before `initialized`.
pub const BEFORE_INITIALIZED: &str = "MCPN-024";
/// Progress only for live tokens, always increasing.
pub const PROGRESS: &str = "MCPN-027";
/// An unknown method gets error -32601.
pub const METHOD_NOT_FOUND: &str = "MCPN-009";

/// The class of a message that is no JSON-RPC message at all (the transport's noise).
pub const NOT_A_MESSAGE: &str = "not a JSON-RPC message";

/// A rule a server message broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The requirement ID.
    pub rule: &'static str,
    /// What happened, in the protocol's terms.
    pub why: String,
    /// The defect's class: the rule, the message's method and the kind of problem, never an
    /// id, a value or a time, so one defect seen in many vectors has one key.
    pub key: String,
}

impl Violation {
    fn new(rule: &'static str, class: impl std::fmt::Display, why: String) -> Violation {
        Violation {
            rule,
            key: format!("{rule} {class}"),
            why,
        }
    }
}

/// What a server message is.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A response: to `method` when it answers a pending request.
    Response {
        /// Its id (`Null` when absent).
        id: Value,
        /// The method of the request it answers, when known.
        method: Option<String>,
        /// The whole message.
        msg: Value,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// A request from the server.
    Request {
        /// Its id.
        id: Value,
        /// Its method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// Not a JSON-RPC message at all.
    Garbage,
}

/// A request the client sent and the server has not answered.
#[derive(Debug, Clone)]
struct Pending {
    method: String,
    progress: Option<String>,
}

/// The client side of one session, as far as judging the server needs it.
#[derive(Debug)]
pub struct Peer {
    /// The version the client asked for.
    pub requested: String,
    /// The negotiated version, once the session is open.
    pub version: Option<String>,
    /// The capabilities the server declared (`Null` before it did).
    pub server_caps: Value,
    /// The capabilities the client declared.
    pub client_caps: Value,
    /// The client sent `notifications/initialized` (always true on 2026-07-28).
    pub initialized: bool,
    pending: BTreeMap<String, Pending>,
    /// Requests answered, with their method (a second answer names it).
    answered: BTreeMap<String, String>,
    /// Messages sent whose id the server cannot read: each may be answered by one error
    /// without an id (JSON-RPC 2.0 §5; docs/spec-issues.md SI-033).
    unreadable: usize,
    progress: BTreeMap<String, f64>,
    /// Tokens of requests already answered: progress on them is late.
    finished_tokens: BTreeSet<String>,
    subscribed: BTreeSet<String>,
    /// The SSE event ids the server gave in the session (MCPN-076).
    pub event_ids: EventIds,
    /// Where the official schemas are (`None`: not configured).
    dir: Option<PathBuf>,
    schemas: BTreeMap<String, VersionSchema>,
}

/// The text an id is compared by (`1` and `"1"` differ).
fn key(id: &Value) -> String {
    id.to_string()
}

/// Whether a capability is declared: a dotted path into the capabilities object whose value
/// is an object or `true`.
pub fn declared(caps: &Value, path: &str) -> bool {
    let mut v = caps;
    for part in path.split('.') {
        match v.get(part) {
            Some(x) => v = x,
            None => return false,
        }
    }
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        _ => true,
    }
}

impl Peer {
    /// No request of the client's is waiting for its answer.
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// A session about to ask for `requested`, judged by the schemas under `dir`.
    pub fn new(requested: &str, client_caps: Value, dir: Option<PathBuf>) -> Peer {
        Peer {
            requested: requested.to_owned(),
            version: None,
            server_caps: Value::Null,
            client_caps,
            initialized: false,
            pending: BTreeMap::new(),
            answered: BTreeMap::new(),
            unreadable: 0,
            progress: BTreeMap::new(),
            finished_tokens: BTreeSet::new(),
            subscribed: BTreeSet::new(),
            event_ids: EventIds::default(),
            dir,
            schemas: BTreeMap::new(),
        }
    }

    /// The version messages are judged by: the negotiated one, else the requested one when
    /// the harness knows it, else the newest session version.
    pub fn judged_version(&self) -> String {
        match &self.version {
            Some(v) => v.clone(),
            None if schema::is_known(&self.requested) => self.requested.clone(),
            None => schema::NEWEST_SESSION.to_owned(),
        }
    }

    /// Whether the session is stateless (2026-07-28).
    pub fn stateless(&self) -> bool {
        schema::is_stateless(&self.judged_version())
    }

    /// The schema of `version`.
    pub fn schema(&mut self, version: &str) -> Result<VersionSchema, SchemaError> {
        if let Some(s) = self.schemas.get(version) {
            return Ok(s.clone());
        }
        let dir = self
            .dir
            .as_deref()
            .ok_or_else(|| SchemaError::NotConfigured {
                version: version.to_owned(),
            })?;
        let s = VersionSchema::open(dir, version)?;
        self.schemas.insert(version.to_owned(), s.clone());
        Ok(s)
    }

    /// The client sent a request.
    pub fn sent_request(&mut self, id: &Value, method: &str, progress: Option<&Value>) {
        let token = progress.map(key);
        if let Some(t) = &token {
            self.progress.remove(t);
        }
        self.pending.insert(
            key(id),
            Pending {
                method: method.to_owned(),
                progress: token,
            },
        );
    }

    /// The client sent a message whose id the server cannot read (not JSON, no id).
    pub fn sent_unreadable(&mut self) {
        self.unreadable += 1;
    }

    /// The client subscribed to (or, `false`, unsubscribed from) `uri`.
    pub fn subscription(&mut self, uri: &str, on: bool) {
        if on {
            self.subscribed.insert(uri.to_owned());
        } else {
            self.subscribed.remove(uri);
        }
    }

    /// Whether the judged version defines `method` as a client request: a method it does
    /// not define is unknown to MCP, and its error code is MCPN-009's (-32601). `None` when
    /// the schema is unavailable.
    pub fn defines_method(&mut self, method: &str) -> Option<bool> {
        let v = self.judged_version();
        let s = self.schema(&v).ok().filter(|s| s.has("ClientRequest"))?;
        Some(s.member_for("ClientRequest", method).is_some())
    }

    /// Whether a request with `id` is still unanswered.
    pub fn is_pending(&self, id: &Value) -> bool {
        self.pending.contains_key(&key(id))
    }

    /// Judges one message the server sent; `http_status` is the status of the HTTP response
    /// that carried it (Streamable HTTP). `Err` when the schema needed is unavailable.
    pub fn judge(
        &mut self,
        msg: &Value,
        http_status: Option<u16>,
    ) -> Result<(Inbound, Option<Violation>), SchemaError> {
        let version = self.judged_version();
        let Some(obj) = msg.as_object() else {
            return Ok((
                Inbound::Garbage,
                Some(Violation::new(
                    SCHEMA,
                    NOT_A_MESSAGE,
                    format!(
                        "the server sent {}, which is not a JSON-RPC message object",
                        kind(msg)
                    ),
                )),
            ));
        };
        // An object with nothing of a JSON-RPC message (no method, id, result or error) is
        // noise on the transport, like a line that is not JSON; one with an id is a broken
        // response and judged as one.
        if ["method", "id", "result", "error"]
            .iter()
            .all(|k| !obj.contains_key(*k))
        {
            return Ok((
                Inbound::Garbage,
                Some(Violation::new(
                    SCHEMA,
                    NOT_A_MESSAGE,
                    format!(
                        "the server sent a JSON object with no method, id, result or error: {}",
                        short(msg)
                    ),
                )),
            ));
        }
        let method = obj.get("method").and_then(Value::as_str).map(str::to_owned);
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        match (method, obj.get("id")) {
            (Some(method), Some(id)) => {
                let v = self.judge_request(&version, msg, &method)?;
                Ok((
                    Inbound::Request {
                        id: id.clone(),
                        method,
                        params,
                    },
                    v,
                ))
            }
            (Some(method), None) => {
                let v = self.judge_notification(&version, msg, &method, &params)?;
                Ok((Inbound::Notification { method, params }, v))
            }
            (None, _) => self.judge_response(&version, msg, http_status),
        }
    }

    fn schema_problem(
        &mut self,
        version: &str,
        def: &str,
        what: &str,
        instance: &Value,
    ) -> Result<Option<Violation>, SchemaError> {
        let s = self.schema(version)?;
        Ok(s.check(def, instance)?.err().map(|why| {
            Violation::new(
                SCHEMA,
                format!("{what} breaks the schema"),
                format!("{what} breaks the {version} schema ({def}): {why}"),
            )
        }))
    }

    fn judge_request(
        &mut self,
        version: &str,
        msg: &Value,
        method: &str,
    ) -> Result<Option<Violation>, SchemaError> {
        let s = self.schema(version)?;
        if !s.has("ServerRequest") {
            return Ok(Some(Violation::new(
                SCHEMA,
                format!("a {method} request where the version has no server requests"),
                format!(
                    "the server sent a {method} request; {version} has no requests from server to client"
                ),
            )));
        }
        let def = s
            .member_for("ServerRequest", method)
            .unwrap_or_else(|| "JSONRPCRequest".into());
        if let Some(v) =
            self.schema_problem(version, &def, &format!("the {method} request"), msg)?
        {
            return Ok(Some(v));
        }
        let needs = match method {
            "sampling/createMessage" => Some("sampling"),
            "roots/list" => Some("roots"),
            "elicitation/create" => Some("elicitation"),
            _ => None,
        };
        if let Some(cap) = needs {
            if !declared(&self.client_caps, cap) {
                return Ok(Some(Violation::new(
                    CLIENT_CAPS,
                    format!("{method} to a client without `{cap}`"),
                    format!(
                        "the server sent {method} to a client that did not declare the `{cap}` capability"
                    ),
                )));
            }
        }
        if !self.initialized && method != "ping" {
            return Ok(Some(Violation::new(
                BEFORE_INITIALIZED,
                format!("{method} before initialized"),
                format!(
                    "the server sent a {method} request before the client's notifications/initialized"
                ),
            )));
        }
        Ok(None)
    }

    fn judge_notification(
        &mut self,
        version: &str,
        msg: &Value,
        method: &str,
        params: &Value,
    ) -> Result<Option<Violation>, SchemaError> {
        let s = self.schema(version)?;
        let def = s
            .member_for("ServerNotification", method)
            .unwrap_or_else(|| "JSONRPCNotification".into());
        if let Some(v) =
            self.schema_problem(version, &def, &format!("the {method} notification"), msg)?
        {
            return Ok(Some(v));
        }
        let caps = &self.server_caps;
        let missing = |path: &str| -> Option<Violation> {
            (!declared(caps, path)).then(|| {
                Violation::new(
                    SERVER_CAPS,
                    format!("{method} without `{path}` declared"),
                    format!(
                        "the server sent {method} without declaring `{path}` in its capabilities"
                    ),
                )
            })
        };
        let v = match method {
            "notifications/message" if schema::is_stateless(version) => Some(Violation::new(
                SERVER_CAPS,
                "notifications/message without a log level asked for",
                "the server sent notifications/message for a request that set no log level (2026-07-28: it MUST NOT)".into(),
            )),
            "notifications/message" => missing("logging"),
            "notifications/tools/list_changed" => missing("tools.listChanged"),
            "notifications/prompts/list_changed" => missing("prompts.listChanged"),
            "notifications/resources/list_changed" => missing("resources.listChanged"),
            "notifications/resources/updated" => {
                missing("resources.subscribe").or_else(|| {
                    let uri = params.get("uri").and_then(Value::as_str).unwrap_or_default();
                    (!self.subscribed.contains(uri)).then(|| {
                        Violation::new(
                            SERVER_CAPS,
                            "notifications/resources/updated for a resource not subscribed",
                            format!(
                                "the server sent notifications/resources/updated for {uri}, to which the client did not subscribe"
                            ),
                        )
                    })
                })
            }
            "notifications/progress" => self.progress(params),
            _ => None,
        };
        Ok(v)
    }

    fn progress(&mut self, params: &Value) -> Option<Violation> {
        let token = params.get("progressToken").map(key).unwrap_or_default();
        let live = self
            .pending
            .values()
            .any(|p| p.progress.as_deref() == Some(token.as_str()));
        if !live {
            return Some(if self.finished_tokens.contains(&token) {
                Violation::new(
                    PROGRESS,
                    "progress after the response",
                    format!("progress for token {token} after the response to its request"),
                )
            } else {
                Violation::new(
                    PROGRESS,
                    "progress for a token not in flight",
                    format!("progress for token {token}, which no request in flight carries"),
                )
            });
        }
        let value = params
            .get("progress")
            .and_then(Value::as_f64)
            .unwrap_or_default();
        if let Some(last) = self.progress.insert(token.clone(), value) {
            if value <= last {
                return Some(Violation::new(
                    PROGRESS,
                    "progress that does not increase",
                    format!(
                        "progress for token {token} went from {last} to {value}; it must increase"
                    ),
                ));
            }
        }
        None
    }

    fn judge_response(
        &mut self,
        version: &str,
        msg: &Value,
        http_status: Option<u16>,
    ) -> Result<(Inbound, Option<Violation>), SchemaError> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let is_error = msg.get("error").is_some();
        let result = msg.get("result");
        let error_env = if schema::at_least(version, "2025-11-25") {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        let answers = |method: Option<String>| Inbound::Response {
            id: id.clone(),
            method,
            msg: msg.clone(),
        };
        if id.is_null() {
            // An error about a message whose id nobody could read (SI-033): `null` fills
            // the gap up to 2025-06-18 and may be absent from 2025-11-25 on; both pass.
            // So may an HTTP error status's body, which answers the exchange, not an id.
            let allowed =
                is_error && (self.unreadable > 0 || http_status.is_some_and(|s| s >= 400));
            if !allowed {
                let v = Violation::new(
                    ONE_RESPONSE,
                    "a response without an id",
                    format!(
                        "the server sent a response without an id ({}), which answers no request the client sent",
                        short(msg)
                    ),
                );
                return Ok((answers(None), Some(v)));
            }
            self.unreadable = self.unreadable.saturating_sub(1);
            let mut without = msg.clone();
            if let Some(o) = without.as_object_mut() {
                o.remove("id");
            }
            let envelope = if schema::at_least(version, "2025-11-25") {
                without
            } else {
                // The older schemas require an id here; judge everything else.
                let mut m = without;
                if let Some(o) = m.as_object_mut() {
                    o.insert("id".into(), Value::from(0));
                }
                m
            };
            let v = self.schema_problem(version, error_env, "the error response", &envelope)?;
            return Ok((answers(None), v));
        }
        let k = key(&id);
        let Some(p) = self.pending.remove(&k) else {
            let v = match self.answered.get(&k) {
                Some(method) => Violation::new(
                    ONE_RESPONSE,
                    format!("a second response to {method}"),
                    format!(
                        "a second response to request {k} ({method}): {}",
                        short(msg)
                    ),
                ),
                None => Violation::new(
                    ONE_RESPONSE,
                    "a response to an id never sent",
                    format!(
                        "a response to id {k}, which the client never sent: {}",
                        short(msg)
                    ),
                ),
            };
            return Ok((answers(None), Some(v)));
        };
        self.answered.insert(k, p.method.clone());
        if let Some(t) = &p.progress {
            self.finished_tokens.insert(t.clone());
        }
        let method = p.method.clone();
        if is_error {
            let v = self.schema_problem(
                version,
                error_env,
                &format!("the error response to {method}"),
                msg,
            )?;
            return Ok((answers(Some(method)), v));
        }
        // The initialize result is judged by the version it announces.
        let rv = match (
            method.as_str(),
            result.and_then(|r| r.get("protocolVersion")),
        ) {
            ("initialize", Some(Value::String(pv))) if schema::is_known(pv) => pv.clone(),
            _ => version.to_owned(),
        };
        let result_env = if schema::at_least(&rv, "2025-11-25") {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        };
        if let Some(v) =
            self.schema_problem(&rv, result_env, &format!("the response to {method}"), msg)?
        {
            return Ok((answers(Some(method)), Some(v)));
        }
        let result = result.cloned().unwrap_or(Value::Null);
        let def = match schema::result_def(&method) {
            Some(d)
                if schema::is_stateless(&rv)
                    && result.get("resultType") == Some(&Value::from("input_required")) =>
            {
                let _ = d;
                "InputRequiredResult"
            }
            Some(d) => d,
            None => "Result",
        };
        let mut v = self.schema_problem(&rv, def, &format!("the {method} result"), &result)?;
        if v.is_none() && method == "completion/complete" {
            // A bound the older schemas state only in prose.
            let n = result
                .pointer("/completion/values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if n > 100 {
                v = Some(Violation::new(
                    "MCPN-043",
                    "completion/complete with more than 100 values",
                    format!("completion/complete returned {n} values; at most 100 are allowed"),
                ));
            }
        }
        Ok((answers(Some(method)), v))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "a JSON array",
        Value::String(_) => "a JSON string",
        Value::Number(_) => "a JSON number",
        Value::Bool(_) => "a JSON boolean",
        Value::Null => "JSON null",
        Value::Object(_) => "a JSON object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        s.chars().take(200).collect::<String>() + "…"
    } else {
        s
    }
}
