//! The steps that talk MCP on an open session: requests with their ids and `_meta`,
//! `tools/call`, the gate on an opened session, paginated lists.

use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::{McpExpect, McpStep, RequestSpec};
use crate::catalog::vector::{JsonRpcExpect, JsonRpcStep};
use crate::method::mcpnative::conv::{short, Arrived, Chan, Conv};
use crate::method::mcpnative::http::{Exchange, Verb};
use crate::method::mcpnative::judge::declared;
use crate::method::mcpnative::stop::Stop;
use crate::report::result::Dir;
use crate::report::result::NaCause;
use serde_json::{json, Value};

impl<'v> Runner<'v> {
    pub(super) fn next_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    pub(super) fn client_info() -> Value {
        json!({"name": "swp-conform", "version": env!("CARGO_PKG_VERSION")})
    }

    pub(super) fn client_caps(&self) -> Value {
        self.body
            .mcp
            .as_ref()
            .and_then(|m| m.client_capabilities.clone())
            .unwrap_or_else(|| json!({}))
    }

    /// Sends a request; `meta`: the version for a 2026-07-28 `params._meta` (`None`: no
    /// `_meta`). Returns its id.
    pub(super) fn send_request(
        &mut self,
        conv: &mut Conv<'_>,
        method: &str,
        params: Option<Value>,
        meta: Option<String>,
        progress: bool,
    ) -> Result<Value, Stop> {
        let id = self.next_id();
        // The last request's id, for a later step that refers to it (a cancellation).
        self.vars.insert("REQUEST_ID".into(), id.clone());
        let mut params = params;
        let mut token = None;
        if progress {
            let t = json!(format!("swp-conform-progress-{id}"));
            self.vars.insert("PROGRESS_TOKEN".into(), t.clone());
            meta_of(&mut params).insert("progressToken".into(), t.clone());
            token = Some(t);
        }
        if let Some(v) = &meta {
            let caps = self.client_caps();
            let m = meta_of(&mut params);
            m.insert("io.modelcontextprotocol/protocolVersion".into(), json!(v));
            m.insert("io.modelcontextprotocol/clientCapabilities".into(), caps);
            m.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                Self::client_info(),
            );
            conv.protocol_header = Some(v.clone());
        }
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        conv.sent(&id, method, token.as_ref());
        if let Some(peer) = &mut conv.peer {
            peer.sent_request(&id, method, token.as_ref());
            if method == "resources/subscribe" {
                if let Some(uri) = msg.pointer("/params/uri").and_then(Value::as_str) {
                    peer.subscription(uri, true);
                }
            }
        }
        conv.send_text(&msg.to_string())
            .map_err(|e| Stop::fail(e.0.clone(), "the server reads what the harness sends", e.0))?;
        if let (Chan::Http(_), Some(n)) = (&conv.chan, conv.last_exchange) {
            conv.request_exchange.insert(id.to_string(), n);
        }
        Ok(id)
    }

    /// The version a request's `_meta` carries: the session's, on 2026-07-28.
    pub(super) fn meta_version(&self, conv: &Conv<'_>) -> Option<String> {
        let peer = conv.peer.as_ref()?;
        peer.stateless().then(|| peer.judged_version())
    }

    /// Sends a request and waits for its response.
    pub(super) fn call(
        &mut self,
        conv: &mut Conv<'_>,
        method: &str,
        params: Option<Value>,
    ) -> Result<Arrived, Stop> {
        let meta = self.meta_version(conv);
        let params = match (&meta, params) {
            (Some(_), None) => Some(json!({})),
            (_, p) => p,
        };
        let id = self.send_request(conv, method, params, meta, false)?;
        let d = conv.answer_deadline();
        conv.wait_response(&id, d)
    }

    pub(super) fn mcp_step(
        &mut self,
        conv: &mut Conv<'_>,
        m: &McpStep,
        s: &JsonRpcStep,
    ) -> Result<(String, String), Stop> {
        let exps: Vec<&McpExpect> = s
            .expect
            .as_slice()
            .iter()
            .filter_map(|e| match e {
                JsonRpcExpect::Mcp(x) => Some(x.as_ref()),
                _ => None,
            })
            .collect();
        if exps.len() != s.expect.as_slice().len() {
            return Err(Stop::harness("an `mcp` step takes only `mcp` expectations"));
        }
        let notes_from = conv.notifications.len();
        self.requests_from = conv.server_requests.len();
        let done = match m {
            McpStep::Open(o) => self.open(conv, o, &exps)?,
            McpStep::Request(r) => self.request(conv, r, exps.is_empty())?,
            McpStep::Notify(nf) => {
                let mut msg = json!({"jsonrpc": "2.0", "method": nf.method});
                if let Some(p) = &nf.params {
                    msg["params"] = self.fill(p)?;
                }
                if nf.method == "notifications/initialized" {
                    if let Some(p) = &mut conv.peer {
                        p.initialized = true;
                    }
                }
                conv.send_text(&msg.to_string())
                    .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
                Done::default()
            }
            McpStep::Line(l) => {
                let text = self.fill_str(l)?;
                let id = register_line(conv, &text);
                // A message that is no valid request object (no `jsonrpc: "2.0"`) is an
                // Invalid Request, whose error JSON-RPC 2.0 §5 lets carry a null id even
                // when the id is readable (docs/spec-issues.md SI-043): either id answers.
                let invalid = serde_json::from_str::<Value>(&text).ok().is_some_and(|v| {
                    v.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
                        && v.get("id").is_some_and(|i| !i.is_null())
                });
                if invalid {
                    if let Some(p) = &mut conv.peer {
                        p.sent_unreadable();
                    }
                }
                conv.send_text(&text)
                    .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
                let exchange = conv.last_exchange;
                let wants = exps.iter().any(|e| {
                    e.result.is_some() || e.error.is_some() || e.empty || e.error_or_is_error
                });
                let response = match (wants, id) {
                    (true, Some(id)) => {
                        let d = conv.answer_deadline();
                        let ids = if invalid {
                            vec![id, Value::Null]
                        } else {
                            vec![id]
                        };
                        Some(conv.wait_answer(&ids, d)?)
                    }
                    _ => None,
                };
                Done {
                    observed: response
                        .as_ref()
                        .map(|a| short(&a.msg.to_string()))
                        .unwrap_or_default(),
                    response,
                    exchange,
                    ..Done::default()
                }
            }
            McpStep::Pick(p) => self.pick(conv, *p)?,
            McpStep::Walk(w) => self.walk(conv, w)?,
            McpStep::Http(h) => self.http(conv, h)?,
            McpStep::CallTools(c) => self.call_tools(conv, c)?,
            McpStep::Await => self.await_all(conv)?,
            McpStep::CloseStdin => {
                self.closed_input = true;
                conv.close_input().map_err(|e| {
                    Stop::harness(format!("{e} (a stdio-only vector on another transport)"))
                })?;
                Done::default()
            }
            McpStep::Resume(r) => self.resume(conv, r)?,
        };
        let mut observed = done.observed.clone();
        let mut expected = String::new();
        for e in &exps {
            let (ex, ob) = self
                .check(conv, e, &done, notes_from)
                .map_err(|st| st.breaking(&e.rule))?;
            expected = ex;
            if !ob.is_empty() {
                observed = ob;
            }
        }
        if expected.is_empty() {
            expected = describe_step(m);
        }
        Ok((expected, observed))
    }

    /// After the first open: the vector applies only at its versions and with the
    /// capabilities it needs declared.
    pub(super) fn gate(&mut self, conv: &mut Conv<'_>, observed: String) -> Result<Done, Stop> {
        let (Some(spec), Some(peer)) = (&self.body.mcp, &conv.peer) else {
            return Ok(Done {
                observed,
                ..Done::default()
            });
        };
        let v = peer.judged_version();
        if !spec.versions.is_empty() && !spec.versions.iter().any(|x| x.as_str() == v) {
            let list: Vec<&str> = spec.versions.iter().map(|x| x.as_str()).collect();
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                format!(
                    "the session runs at {v}; the vector applies to {}",
                    list.join(", ")
                ),
            ));
        }
        for need in &spec.requires {
            if !declared(&peer.server_caps, need) {
                return Err(Stop::not_applicable(
                    NaCause::SutChoice,
                    format!("the server does not declare the `{need}` capability"),
                ));
            }
        }
        self.listen(conv)?;
        Ok(Done {
            observed,
            ..Done::default()
        })
    }

    /// Over Streamable HTTP, opens the server's `GET` stream for a vector that waits for
    /// log messages: a server sends what answers no request there, and a client that never
    /// opens it cannot blame the server for not hearing it. A server without the stream
    /// (405) is left to the vector's other steps.
    fn listen(&mut self, conv: &mut Conv<'_>) -> Result<(), Stop> {
        let logs = self.body.steps.iter().flat_map(mcp_expects).any(|e| {
            e.log_floor.is_some()
                || e.notification
                    .as_ref()
                    .is_some_and(|n| n.method == "notifications/message")
        });
        if !logs || !matches!(conv.chan, Chan::Http(_)) {
            return Ok(());
        }
        conv.log(
            Dir::Note,
            "opening the server's GET stream for its log messages",
        );
        conv.http(Exchange {
            verb: Verb::Get,
            body: Vec::new(),
            session: conv.http_session(),
            protocol_version: conv.protocol_header.clone(),
            headers: Vec::new(),
        })
        .map_err(|e| Stop::harness(e.0))?;
        Ok(())
    }

    pub(super) fn request(
        &mut self,
        conv: &mut Conv<'_>,
        r: &RequestSpec,
        default_check: bool,
    ) -> Result<Done, Stop> {
        let params = r.params.as_ref().map(|p| self.fill(p)).transpose()?;
        let meta = match &r.version {
            Some(v) if self.meta_version(conv).is_some() => Some(self.fill_str(v)?),
            _ => self.meta_version(conv),
        };
        let params = match (&meta, params) {
            (Some(_), None) => Some(json!({})),
            (_, p) => p,
        };
        let tool = (r.method == "tools/call")
            .then(|| {
                params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .flatten();
        let id = self.send_request(conv, &r.method, params.clone(), meta, r.progress)?;
        let exchange = conv.last_exchange;
        if !r.wait {
            self.pending.push(id);
            return Ok(Done {
                exchange,
                tool,
                ..Done::default()
            });
        }
        let d = conv.answer_deadline();
        let a = conv.wait_response(&id, d)?;
        if r.method == "resources/unsubscribe" && a.msg.get("result").is_some() {
            if let (Some(peer), Some(uri)) = (
                &mut conv.peer,
                params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str),
            ) {
                peer.subscription(uri, false);
            }
        }
        let obs = short(&a.msg.to_string());
        if default_check && a.msg.get("result").is_none() {
            return Err(Stop::fail(
                format!("{} was answered with an error", r.method),
                format!("a {} result", r.method),
                obs,
            ));
        }
        Ok(Done {
            response: Some(a),
            exchange,
            tool,
            observed: obs,
            ..Done::default()
        })
    }

    /// Every item of a list method, following `nextCursor` for up to `pages` pages.
    pub(super) fn list_all(
        &mut self,
        conv: &mut Conv<'_>,
        method: &str,
        key: &str,
        pages: u32,
    ) -> Result<Vec<Value>, Stop> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..pages {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let rule = list_rule(method);
            let a = self
                .call(conv, method, params)
                .map_err(|st| st.or_breaking(rule))?;
            let Some(r) = a.msg.get("result") else {
                return Err(Stop::fail(
                    format!("{rule}: {method} was answered with an error, though the server declares the capability"),
                    format!("a {method} result"),
                    short(&a.msg.to_string()),
                )
                .breaking(&[rule.to_owned()])
                .keyed(format!("{method} answered with an error")));
            };
            items.extend(
                r.get(key)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
            match r.get("nextCursor").and_then(Value::as_str) {
                Some(c) if Some(c) != cursor.as_deref() => cursor = Some(c.to_owned()),
                _ => break,
            }
        }
        Ok(items)
    }
}
