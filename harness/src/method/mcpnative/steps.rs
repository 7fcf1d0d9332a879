//! The steps of an `mcp_native` or `mcp_gateway` vector, run on a [`Conv`]: the session
//! actions (`open`, `request`, `pick`, `walk`, ...) with their `mcp` expectations, and the
//! plain `jsonrpc_line` steps with `response` / `no_response`. Each step is judged on its
//! own ([`super::record`]): a failing step does not stop the vector while the session is
//! usable, and a step that only gets the vector going (an `open` or `pick` before its own
//! steps) is set-up, whose answers are not the vector's matter.

use super::args;
use super::conv::{short, Arrived, Chan, Conv, Focus, Pumped, Stop};
use super::http::{Exchange, Verb};
use super::judge::{self, declared, Inbound};
use super::record::{End, Ran, StepRecord};
use super::schema;
use crate::catalog::mcpnative::{
    HttpSpec, McpExpect, McpStep, OpenSpec, Pick, RequestSpec, SessionHeader, WalkSpec,
};
use crate::catalog::vector::{Expect, Num, ResponseSpec, Step, Vector};
use crate::report::result::{Dir, NaCause, Verdict};
use crate::sut::McpNativeSpec;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Requirement IDs the steps' own checks name.
const INITIALIZE: &str = "MCPN-001";
const NEGOTIATION: &str = "MCPN-025";
const DISCOVER: &str = "MCPN-060";
const UNSUPPORTED_VERSION: &str = "MCPN-061";
const TOOL_CALL: &str = "MCPN-005";
const TOOL_RESULT: &str = "MCPN-030";

/// The requirement a list method's failure breaks.
fn list_rule(method: &str) -> &'static str {
    match method {
        "tools/list" => "MCPN-004",
        "resources/list" => "MCPN-006",
        "prompts/list" => "MCPN-007",
        "resources/templates/list" => "MCPN-036",
        _ => "MCPN-020",
    }
}

/// `resources/read` answers with the resource's contents.
const RESOURCE_READ: &str = "MCPN-013";

/// Whether a step only gets the vector going: an `open` or a `pick` without expectations
/// of its own that the vector's own steps follow. The last step is always the vector's
/// own (a vector of one `open` is about opening).
fn is_setup(s: &Step, last: bool) -> bool {
    !last
        && s.expect.as_slice().is_empty()
        && matches!(s.mcp, Some(McpStep::Open(_)) | Some(McpStep::Pick(_)))
}

/// What a set-up step checks of the server, and so the rules its failure breaks: the
/// session opens; the list it picks from is answered.
fn setup_rules(s: &Step) -> Vec<String> {
    let rules: &[&str] = match &s.mcp {
        Some(McpStep::Open(_)) => &[INITIALIZE],
        Some(McpStep::Pick(Pick::Tool | Pick::ToolWithArguments)) => &["MCPN-004"],
        Some(McpStep::Pick(Pick::Resource)) => &["MCPN-006"],
        Some(McpStep::Pick(Pick::BlobResource)) => &["MCPN-006", RESOURCE_READ],
        Some(McpStep::Pick(Pick::Prompt | Pick::PromptWithRequiredArgument)) => &["MCPN-007"],
        Some(McpStep::Pick(Pick::CompletionTarget)) => &["MCPN-007", "MCPN-036"],
        _ => &[],
    };
    rules.iter().map(|r| (*r).to_owned()).collect()
}

/// The `mcp` expectations of a step.
fn mcp_expects(s: &Step) -> impl Iterator<Item = &McpExpect> {
    s.expect.as_slice().iter().filter_map(|e| match e {
        Expect::Mcp(x) => Some(x.as_ref()),
        _ => None,
    })
}

/// Whether `actual` contains `expected`: objects by subset, arrays when every expected
/// element matches some actual element (`[]` matches any array), other values exactly.
pub fn json_matches(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| json_matches(x, v))),
        (Value::Array(a), Value::Array(e)) => {
            e.iter().all(|ev| a.iter().any(|av| json_matches(av, ev)))
        }
        _ => actual == expected,
    }
}

/// What a step produced, for its expectations.
#[derive(Default)]
struct Done {
    /// The response it waited for.
    response: Option<Arrived>,
    /// The HTTP exchange it started.
    exchange: Option<u64>,
    /// The tool a `tools/call` named.
    tool: Option<String>,
    /// What it showed, for the report.
    observed: String,
}

/// Runs one vector's steps.
pub(super) struct Runner<'v> {
    pub vector: &'v Vector,
    pub spec: &'v McpNativeSpec,
    /// `${NAME}` values: the manifest's params, `PROTOCOL_VERSION`, and what steps bound.
    pub vars: BTreeMap<String, Value>,
    next_id: i64,
    opened: bool,
    /// Tool definitions seen in `tools/list`, by name.
    tools: BTreeMap<String, Value>,
    /// The steps closed the server's stdin (its exit is then expected).
    pub closed_input: bool,
    /// The requirements the step being run tests: a check the harness knows belongs to
    /// another rule fails the step only when the step tests that rule.
    tested: Vec<String>,
}

impl<'v> Runner<'v> {
    pub fn new(vector: &'v Vector, spec: &'v McpNativeSpec) -> Runner<'v> {
        let mut vars: BTreeMap<String, Value> = spec
            .params
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        vars.insert(
            "PROTOCOL_VERSION".into(),
            Value::String(spec.protocol_version.clone()),
        );
        Runner {
            vector,
            spec,
            vars,
            next_id: 1,
            opened: false,
            tools: BTreeMap::new(),
            closed_input: false,
            tested: Vec::new(),
        }
    }

    /// The requirements step `n` tests: a set-up step, what it checks of the server; any
    /// other, its own requirements (or the vector's) and the rules its expectations name.
    fn step_requirements(&self, n: usize, setup: bool) -> Vec<String> {
        let Some(s) = self.vector.steps.get(n) else {
            return self.vector.requirements.clone();
        };
        if setup {
            return setup_rules(s);
        }
        let mut out = if s.requirements.is_empty() {
            self.vector.requirements.clone()
        } else {
            s.requirements.clone()
        };
        for e in mcp_expects(s) {
            for r in &e.rule {
                if !out.contains(r) {
                    out.push(r.clone());
                }
            }
        }
        out
    }

    /// The rules the vector tests anywhere: its own, its steps' and its expectations'.
    fn vector_rules(&self) -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> =
            self.vector.requirements.iter().cloned().collect();
        for s in &self.vector.steps {
            out.extend(s.requirements.iter().cloned());
            for e in mcp_expects(s) {
                out.extend(e.rule.iter().cloned());
            }
        }
        out
    }

    /// A check whose rule the harness knows failed: the step's failure when the step tests
    /// that rule, else a defect seen in passing (an incidental observation under the rule),
    /// and the step is judged on the rest (`Ok`).
    fn judged_by(
        &self,
        conv: &mut Conv<'_>,
        rule: &str,
        class: &str,
        stop: Stop,
    ) -> Result<(), Stop> {
        if self.tested.iter().any(|r| r == rule) {
            return Err(stop.breaking(&[rule.to_owned()]));
        }
        conv.note_incidental(
            rule,
            format!("{rule} {class}"),
            format!("{} (observed: {})", stop.why, stop.observed),
        );
        Ok(())
    }

    /// Why step `n` cannot run after what the steps before it did, if it cannot.
    fn precondition(&self, conv: &Conv<'_>, s: &Step, records: &[StepRecord]) -> Option<String> {
        let failed = records
            .iter()
            .position(|r| !r.failures.is_empty() || r.not_run.is_some());
        if let (Some(McpStep::Http(h)), Some(k)) = (&s.mcp, failed) {
            if h.session == Some(SessionHeader::Ended) && conv.session_ended.is_none() {
                return Some(format!(
                    "not run: it needs the session an earlier step ended, and step {} did not end one",
                    k + 1
                ));
            }
        }
        None
    }

    fn text_vars(&self) -> BTreeMap<String, String> {
        self.vars
            .iter()
            .map(|(k, v)| {
                let t = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), t)
            })
            .collect()
    }

    /// `${NAME}` filled in a string (the value's text).
    fn fill_str(&self, s: &str) -> Result<String, Stop> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let tail = &rest[i + 2..];
            let Some(j) = tail.find('}') else {
                out.push_str(&rest[i..]);
                rest = "";
                break;
            };
            let name = &tail[..j];
            match self.vars.get(name) {
                Some(Value::String(v)) => out.push_str(v),
                Some(v) => out.push_str(&v.to_string()),
                None => return Err(unbound(name)),
            }
            rest = &tail[j + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `${NAME}` filled in JSON: a string that is exactly `${NAME}` takes the bound value.
    fn fill(&self, v: &Value) -> Result<Value, Stop> {
        Ok(match v {
            Value::String(s) => {
                if let Some(name) = s.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
                    if !name.contains("${") {
                        return self.vars.get(name).cloned().ok_or_else(|| unbound(name));
                    }
                }
                Value::String(self.fill_str(s)?)
            }
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| self.fill(x)).collect::<Result<_, _>>()?)
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| Ok((k.clone(), self.fill(x)?)))
                    .collect::<Result<Map<_, _>, Stop>>()?,
            ),
            other => other.clone(),
        })
    }

    /// Runs every step, each judged on its own, then takes in what still arrives for
    /// `silence_ms` (late duplicates). A step that fails does not stop the vector: only a
    /// closed transport, the vector's time, a set-up step that could not do its part, a
    /// not-applicable or a harness error ends it, and the steps left are listed with why.
    pub fn run(&mut self, conv: &mut Conv<'_>) -> Ran {
        let steps = &self.vector.steps;
        let last = steps.len().saturating_sub(1);
        conv.setup = steps
            .iter()
            .enumerate()
            .map(|(n, s)| is_setup(s, n == last))
            .collect();
        conv.vector_rules = self.vector_rules();
        let mut records: Vec<StepRecord> = (0..steps.len())
            .map(|n| StepRecord {
                requirements: self.step_requirements(n, conv.is_setup(n)),
                ..StepRecord::default()
            })
            .collect();
        let mut end = None;
        for (n, s) in steps.iter().enumerate() {
            conv.focus = Focus {
                step: n,
                watch_all: mcp_expects(s).any(|e| e.quiet_ms.is_some()),
                expects: mcp_expects(s)
                    .filter_map(|e| e.notification.as_ref().map(|x| x.method.clone()))
                    .collect(),
            };
            self.tested = records[n].requirements.clone();
            if let Some(note) = &s.note {
                conv.log(Dir::Note, &format!("step {}: {note}", n + 1));
            }
            if let Some(why) = self.precondition(conv, s, &records) {
                conv.log(Dir::Note, &format!("step {}: {why}", n + 1));
                records[n].not_run = Some(why);
                continue;
            }
            records[n].ran = true;
            let r = match &s.mcp {
                Some(m) => self.mcp_step(conv, m, s),
                None => self.line_step(conv, s),
            };
            take_charged(conv, &mut records);
            let stop = match r {
                Ok((e, o)) => {
                    records[n].expected = e;
                    records[n].observed = o;
                    if conv.out_of_time && n < last {
                        end = Some(End::Cut(
                            Verdict::Timeout,
                            format!(
                                "the vector's time ({} ms) ran out after step {}",
                                self.spec.timing.vector_ms,
                                n + 1
                            ),
                        ));
                        break;
                    }
                    continue;
                }
                Err(stop) => Stop {
                    why: format!("step {}: {}", n + 1, stop.why),
                    ..stop
                },
            };
            match stop.verdict {
                Verdict::NotApplicable => {
                    // The step found the vector out of the server's scope: it judged nothing.
                    records[n].ran = false;
                    records[n].not_run = Some(format!("not applicable: {}", stop.why));
                    end = Some(End::NotApplicable(stop));
                    break;
                }
                Verdict::HarnessError => {
                    records[n].failures.push(stop.clone());
                    end = Some(End::Harness(stop));
                    break;
                }
                _ => {}
            }
            let stop = if conv.out_of_time {
                Stop {
                    verdict: Verdict::Timeout,
                    ..stop
                }
            } else {
                stop
            };
            if conv.is_setup(n) {
                // The vector could not get going: a defect of the server, but not what the
                // vector tests, so it counts once per run, whichever vectors meet it.
                let rule = stop
                    .broke
                    .first()
                    .cloned()
                    .or_else(|| records[n].requirements.first().cloned())
                    .unwrap_or_else(|| INITIALIZE.to_owned());
                let class = stop.key.as_deref().map_or_else(
                    || format!("set-up ({}) failed", describe_step_of(s)),
                    str::to_owned,
                );
                conv.note_incidental(&rule, format!("{rule} {class}"), stop.why.clone());
                records[n].setup_failure = Some(stop.or_breaking(&rule));
                end = Some(End::SetUp(n));
                break;
            }
            let opening = matches!(s.mcp, Some(McpStep::Open(_)) | Some(McpStep::Pick(_)));
            let cut = conv.out_of_time || conv.gone.is_some() || opening;
            records[n].failures.push(stop);
            if cut {
                // Nothing later can run: the transport is gone, the time is out, or the
                // session (or the thing to use) the later steps need is not there.
                let why = if conv.out_of_time {
                    format!(
                        "the vector's time ({} ms) ran out during step {}",
                        self.spec.timing.vector_ms,
                        n + 1
                    )
                } else if let Some(g) = &conv.gone {
                    format!("{g} during step {}", n + 1)
                } else {
                    format!(
                        "step {} did not open the session or find what to use",
                        n + 1
                    )
                };
                end = Some(End::Cut(Verdict::Fail, why));
                break;
            }
        }
        if let Some(e) = &end {
            let why = match e {
                End::NotApplicable(_) => "not run: the vector does not apply".to_owned(),
                End::Harness(_) => "not run: the harness could not go on".to_owned(),
                End::SetUp(k) => format!("not run: step {} (set-up) failed", k + 1),
                End::Cut(_, why) => format!("not run: {why}"),
            };
            for r in records.iter_mut().filter(|r| !r.ran && r.not_run.is_none()) {
                r.not_run = Some(why.clone());
            }
        }
        if end.is_none() && conv.peer.is_some() && !self.closed_input && conv.gone.is_none() {
            // Late duplicates answer their own requests; anything else arriving now belongs
            // to no step unless it breaks a rule the vector tests.
            conv.focus = Focus {
                step: last,
                ..Focus::default()
            };
            if let Err(st) = conv.drain(self.spec.timing.silence_ms) {
                if let Some(r) = records.get_mut(last) {
                    r.failures.push(Stop {
                        why: format!("after the last step: {}", st.why),
                        ..st
                    });
                }
            }
        }
        take_charged(conv, &mut records);
        Ran { records, end }
    }

    fn next_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    fn client_info() -> Value {
        json!({"name": "swp-conform", "version": env!("CARGO_PKG_VERSION")})
    }

    fn client_caps(&self) -> Value {
        self.vector
            .mcp
            .as_ref()
            .and_then(|m| m.client_capabilities.clone())
            .unwrap_or_else(|| json!({}))
    }

    /// Sends a request; `meta`: the version for a 2026-07-28 `params._meta` (`None`: no
    /// `_meta`). Returns its id.
    fn send_request(
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
    fn meta_version(&self, conv: &Conv<'_>) -> Option<String> {
        let peer = conv.peer.as_ref()?;
        peer.stateless().then(|| peer.judged_version())
    }

    /// Sends a request and waits for its response.
    fn call(
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

    fn mcp_step(
        &mut self,
        conv: &mut Conv<'_>,
        m: &McpStep,
        s: &Step,
    ) -> Result<(String, String), Stop> {
        let exps: Vec<&McpExpect> = s
            .expect
            .as_slice()
            .iter()
            .filter_map(|e| match e {
                Expect::Mcp(x) => Some(x.as_ref()),
                _ => None,
            })
            .collect();
        if exps.len() != s.expect.as_slice().len() {
            return Err(Stop::harness("an `mcp` step takes only `mcp` expectations"));
        }
        let notes_from = conv.notifications.len();
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
                conv.send_text(&text)
                    .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
                let exchange = conv.last_exchange;
                let wants = exps.iter().any(|e| {
                    e.result.is_some() || e.error.is_some() || e.empty || e.error_or_is_error
                });
                let response = match (wants, id) {
                    (true, Some(id)) => {
                        let d = conv.answer_deadline();
                        Some(conv.wait_response(&id, d)?)
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
            McpStep::CloseStdin => {
                self.closed_input = true;
                conv.close_input().map_err(|e| {
                    Stop::harness(format!("{e} (a stdio-only vector on another transport)"))
                })?;
                Done::default()
            }
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

    fn open(
        &mut self,
        conv: &mut Conv<'_>,
        o: &OpenSpec,
        exps: &[&McpExpect],
    ) -> Result<Done, Stop> {
        let asked = o
            .version
            .clone()
            .unwrap_or_else(|| self.spec.protocol_version.clone());
        let counter = exps.iter().any(|e| e.counter_offer);
        if let Some(p) = &mut conv.peer {
            p.requested = asked.clone();
        }
        let mut session_version = asked.clone();
        let stateless_era = schema::is_stateless(&self.spec.protocol_version);
        if stateless_era {
            let id = self.send_request(
                conv,
                "server/discover",
                Some(json!({})),
                Some(asked.clone()),
                false,
            )?;
            let d = conv.answer_deadline();
            let a = conv.wait_response(&id, d)?;
            let obs = short(&a.msg.to_string());
            match (a.msg.get("result"), a.msg.get("error")) {
                (Some(r), _) => {
                    if counter {
                        return Err(Stop::fail(
                            format!("{UNSUPPORTED_VERSION}: server/discover at version {asked}, which no MCP version is, got a result; a server MUST answer an unsupported version with error -32022"),
                            "error -32022 with data.supported and data.requested",
                            obs,
                        )
                        .breaking(&[UNSUPPORTED_VERSION.to_owned()]));
                    }
                    let listed: Vec<String> = r
                        .get("supportedVersions")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    if !listed.contains(&asked) {
                        return Err(Stop::fail(
                            format!("{DISCOVER}: server/discover answered a request at {asked} but lists only {listed:?} in supportedVersions"),
                            format!("supportedVersions listing {asked}"),
                            obs,
                        )
                        .breaking(&[DISCOVER.to_owned()])
                        .keyed("server/discover does not list the version it answers at"));
                    }
                    self.opened_at(conv, &asked, r.get("capabilities").cloned(), true);
                    return self.gate(conv, obs);
                }
                (None, Some(err)) => {
                    let code = err.get("code").and_then(Value::as_i64);
                    if code == Some(-32022) {
                        let supported: Vec<String> = err
                            .pointer("/data/supported")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect()
                            })
                            .unwrap_or_default();
                        if counter {
                            let requested = err.pointer("/data/requested").and_then(Value::as_str);
                            if supported.is_empty() || requested != Some(asked.as_str()) {
                                return Err(Stop::fail(
                                    format!("{UNSUPPORTED_VERSION}: error -32022 must carry data.supported (the versions it supports) and data.requested ({asked})"),
                                    "data.supported and data.requested",
                                    obs,
                                )
                                .breaking(&[UNSUPPORTED_VERSION.to_owned()]));
                            }
                            return Ok(Done {
                                response: Some(a),
                                observed: obs,
                                ..Done::default()
                            });
                        }
                        // The manifest's version is not the server's: take its newest.
                        let Some(v) = supported
                            .iter()
                            .filter(|v| schema::is_known(v))
                            .max()
                            .cloned()
                        else {
                            return Err(Stop::not_applicable(
                                NaCause::Untested,
                                format!("the server supports only {supported:?}, none of which the harness knows"),
                            ));
                        };
                        conv.log(
                            Dir::Note,
                            &format!("the server supports {supported:?}: continuing at {v}"),
                        );
                        if schema::is_stateless(&v) {
                            self.opened_at(conv, &v, None, true);
                            return self.gate(conv, obs);
                        }
                        session_version = v;
                    } else {
                        // No discovery: a server of the session era. Counter-offers come
                        // from its initialize.
                        conv.log(
                            Dir::Note,
                            &format!(
                                "server/discover refused (code {}): opening a session with initialize",
                                code.map_or("none".into(), |c| c.to_string())
                            ),
                        );
                        if !counter {
                            session_version = schema::NEWEST_SESSION.to_owned();
                        }
                    }
                }
                (None, None) => {
                    return Err(Stop::fail(
                        "the response has neither result nor error",
                        "a discovery result",
                        obs,
                    )
                    .keyed("server/discover answered with neither result nor error"))
                }
            }
        }
        if let Some(p) = &mut conv.peer {
            p.requested = session_version.clone();
        }
        let caps = self.client_caps();
        let id = self.send_request(
            conv,
            "initialize",
            Some(json!({
                "protocolVersion": session_version,
                "capabilities": caps,
                "clientInfo": Self::client_info(),
            })),
            None,
            false,
        )?;
        let d = conv.answer_deadline();
        let a = conv.wait_response(&id, d)?;
        let obs = short(&a.msg.to_string());
        let Some(r) = a.msg.get("result") else {
            let (rule, why) = if counter {
                (NEGOTIATION, format!("initialize at {session_version} was refused; a server that does not support the requested version MUST answer with another version it supports"))
            } else {
                (
                    INITIALIZE,
                    "initialize was answered with an error instead of an InitializeResult".into(),
                )
            };
            return Err(
                Stop::fail(format!("{rule}: {why}"), "an InitializeResult", obs)
                    .breaking(&[rule.to_owned()])
                    .keyed("initialize answered with an error"),
            );
        };
        let pv = r
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let negotiated = if pv == session_version {
            if counter && !schema::is_known(&pv) {
                return Err(Stop::fail(
                    format!("{NEGOTIATION}: the server accepted protocol version {pv}, which no MCP version is"),
                    "a counter-offer of a version the server supports",
                    obs,
                )
                .breaking(&[NEGOTIATION.to_owned()]));
            }
            pv.clone()
        } else {
            conv.log(
                Dir::Note,
                &format!("the server countered {session_version} with {pv}"),
            );
            if !schema::is_known(&pv) || schema::is_stateless(&pv) {
                if counter {
                    return Ok(Done {
                        response: Some(a),
                        observed: obs,
                        ..Done::default()
                    });
                }
                return Err(Stop::not_applicable(
                    NaCause::Untested,
                    format!("the server countered with protocol version {pv:?}, which the harness cannot speak; a client that does not support the server's version disconnects"),
                ));
            }
            pv.clone()
        };
        if counter && pv == session_version {
            return Err(Stop::fail(
                format!("{NEGOTIATION}: asked for {session_version}, the server answered with the same version"),
                "a counter-offer",
                obs,
            )
            .breaking(&[NEGOTIATION.to_owned()]));
        }
        self.opened_at(conv, &negotiated, r.get("capabilities").cloned(), false);
        if o.initialized {
            conv.send_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
            if let Some(p) = &mut conv.peer {
                p.initialized = true;
            }
        }
        let mut done = self.gate(conv, obs)?;
        done.response = Some(a);
        Ok(done)
    }

    /// The session is open at `version` with the server's capabilities.
    fn opened_at(
        &mut self,
        conv: &mut Conv<'_>,
        version: &str,
        caps: Option<Value>,
        stateless: bool,
    ) {
        if let Some(p) = &mut conv.peer {
            p.version = Some(version.to_owned());
            p.server_caps = caps.unwrap_or_else(|| json!({}));
            if stateless {
                p.initialized = true;
            }
        }
        conv.protocol_header = Some(version.to_owned());
        self.vars
            .insert("PROTOCOL_VERSION".into(), Value::String(version.to_owned()));
        self.opened = true;
    }

    /// After the first open: the vector applies only at its versions and with the
    /// capabilities it needs declared.
    fn gate(&mut self, conv: &mut Conv<'_>, observed: String) -> Result<Done, Stop> {
        let (Some(spec), Some(peer)) = (&self.vector.mcp, &conv.peer) else {
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
        Ok(Done {
            observed,
            ..Done::default()
        })
    }

    fn request(
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
        })
    }

    /// Every item of a list method, following `nextCursor` for up to `pages` pages.
    fn list_all(
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

    fn pick(&mut self, conv: &mut Conv<'_>, p: Pick) -> Result<Done, Stop> {
        let choice = |why: &str| Stop::not_applicable(NaCause::SutChoice, why.to_owned());
        let untested = |why: String| Stop::not_applicable(NaCause::Untested, why);
        match p {
            Pick::Tool | Pick::ToolWithArguments => {
                let tools = self.list_all(conv, "tools/list", "tools", 5)?;
                if tools.is_empty() {
                    return Err(choice("the server lists no tools"));
                }
                for t in &tools {
                    if let Some(n) = t.get("name").and_then(Value::as_str) {
                        self.tools.insert(n.to_owned(), t.clone());
                    }
                }
                let mut safe: Vec<&Value> = tools.iter().filter(|t| callable(t)).collect();
                if safe.is_empty() {
                    return Err(untested(format!(
                        "none of the {} listed tools is named and annotated readOnlyHint: true and openWorldHint: false (without required task execution); the harness calls only tools that change nothing and reach nothing outside the machine",
                        tools.len()
                    )));
                }
                // A tool with an outputSchema tests more: its structured result is checked.
                safe.sort_by_key(|t| t.get("outputSchema").is_none());
                for t in safe {
                    let schema = t
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object"}));
                    let Some(good) = args::valid(&schema) else {
                        continue;
                    };
                    let bad = args::invalid(&schema);
                    if p == Pick::ToolWithArguments && bad.is_none() {
                        continue;
                    }
                    let name = t
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    conv.log(
                        Dir::Note,
                        &format!("picked tool {name} with arguments {good}"),
                    );
                    self.vars.insert("TOOL".into(), json!(name));
                    self.vars.insert("TOOL_ARGS".into(), good);
                    if let Some(b) = bad {
                        self.vars.insert("TOOL_BAD_ARGS".into(), b);
                    }
                    return Ok(Done {
                        observed: format!("tool {name}"),
                        ..Done::default()
                    });
                }
                Err(untested(if p == Pick::ToolWithArguments {
                    "no callable tool has an inputSchema that arguments can break".into()
                } else {
                    "the harness could not build arguments valid against any callable tool's inputSchema".into()
                }))
            }
            Pick::Resource | Pick::BlobResource => {
                let rs = self.list_all(conv, "resources/list", "resources", 5)?;
                let uris: Vec<String> = rs
                    .iter()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
                    .collect();
                let Some(first) = uris.first() else {
                    return Err(choice("the server lists no resources"));
                };
                if p == Pick::Resource {
                    self.vars.insert("RESOURCE_URI".into(), json!(first));
                    return Ok(Done {
                        observed: format!("resource {first}"),
                        ..Done::default()
                    });
                }
                for uri in uris.iter().take(5) {
                    let a = self
                        .call(conv, "resources/read", Some(json!({"uri": uri})))
                        .map_err(|st| st.or_breaking(RESOURCE_READ))?;
                    let blob = a
                        .msg
                        .pointer("/result/contents")
                        .and_then(Value::as_array)
                        .is_some_and(|c| c.iter().any(|x| x.get("blob").is_some()));
                    if blob {
                        self.vars.insert("BLOB_URI".into(), json!(uri));
                        return Ok(Done {
                            observed: format!("blob resource {uri}"),
                            ..Done::default()
                        });
                    }
                }
                Err(choice(
                    "none of the first five listed resources reads as a blob",
                ))
            }
            Pick::Prompt | Pick::PromptWithRequiredArgument => {
                let ps = self.list_all(conv, "prompts/list", "prompts", 5)?;
                if ps.is_empty() {
                    return Err(choice("the server lists no prompts"));
                }
                let required = |pr: &Value| -> Vec<String> {
                    pr.get("arguments")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter(|x| x.get("required") == Some(&json!(true)))
                                .filter_map(|x| {
                                    x.get("name").and_then(Value::as_str).map(str::to_owned)
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let chosen = if p == Pick::Prompt {
                    ps.iter()
                        .find(|pr| required(pr).is_empty())
                        .or_else(|| ps.first())
                } else {
                    ps.iter().find(|pr| !required(pr).is_empty())
                };
                let Some(pr) = chosen else {
                    return Err(choice("no listed prompt has a required argument"));
                };
                let name = pr
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let req = required(pr);
                let all: Map<String, Value> = req
                    .iter()
                    .map(|a| (a.clone(), json!("swp-conform")))
                    .collect();
                let mut missing = all.clone();
                if let Some(first) = req.first() {
                    missing.remove(first);
                }
                self.vars.insert("PROMPT".into(), json!(name));
                self.vars.insert("PROMPT_ARGS".into(), Value::Object(all));
                self.vars
                    .insert("PROMPT_ARGS_MISSING".into(), Value::Object(missing));
                Ok(Done {
                    observed: format!("prompt {name}"),
                    ..Done::default()
                })
            }
            Pick::CompletionTarget => {
                let caps = conv
                    .peer
                    .as_ref()
                    .map(|p| p.server_caps.clone())
                    .unwrap_or_default();
                if declared(&caps, "prompts") {
                    let ps = self.list_all(conv, "prompts/list", "prompts", 5)?;
                    for pr in &ps {
                        let arg = pr
                            .get("arguments")
                            .and_then(Value::as_array)
                            .and_then(|a| a.first())
                            .and_then(|a| a.get("name"))
                            .and_then(Value::as_str);
                        if let (Some(name), Some(arg)) =
                            (pr.get("name").and_then(Value::as_str), arg)
                        {
                            self.vars.insert(
                                "COMPLETE_REF".into(),
                                json!({"type": "ref/prompt", "name": name}),
                            );
                            self.vars.insert(
                                "COMPLETE_ARGUMENT".into(),
                                json!({"name": arg, "value": ""}),
                            );
                            return Ok(Done {
                                observed: format!("argument {arg} of prompt {name}"),
                                ..Done::default()
                            });
                        }
                    }
                }
                if declared(&caps, "resources") {
                    let ts =
                        self.list_all(conv, "resources/templates/list", "resourceTemplates", 5)?;
                    for t in &ts {
                        let Some(tpl) = t.get("uriTemplate").and_then(Value::as_str) else {
                            continue;
                        };
                        let Some(var) = tpl
                            .split('{')
                            .nth(1)
                            .and_then(|x| x.split('}').next())
                            .map(|x| x.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']))
                            .and_then(|x| x.split([',', '*', ':']).next())
                            .filter(|x| !x.is_empty())
                        else {
                            continue;
                        };
                        self.vars.insert(
                            "COMPLETE_REF".into(),
                            json!({"type": "ref/resource", "uri": tpl}),
                        );
                        self.vars.insert(
                            "COMPLETE_ARGUMENT".into(),
                            json!({"name": var, "value": ""}),
                        );
                        return Ok(Done {
                            observed: format!("variable {var} of template {tpl}"),
                            ..Done::default()
                        });
                    }
                }
                Err(choice("the server lists no prompt with arguments and no resource template with a variable"))
            }
        }
    }

    fn walk(&mut self, conv: &mut Conv<'_>, w: &WalkSpec) -> Result<Done, Stop> {
        let key = match w.method.as_str() {
            "tools/list" => "tools",
            "resources/list" => "resources",
            "resources/templates/list" => "resourceTemplates",
            "prompts/list" => "prompts",
            other => return Err(Stop::harness(format!("walk: {other} is not a list method"))),
        };
        let max = w.max_pages.unwrap_or(20);
        let mut seen = std::collections::BTreeSet::new();
        let mut cursor: Option<String> = None;
        let (mut pages, mut items) = (0u32, 0usize);
        loop {
            if pages >= max {
                conv.log(Dir::Note, &format!("stopped after {max} pages"));
                break;
            }
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let a = self.call(conv, &w.method, params)?;
            pages += 1;
            let obs = short(&a.msg.to_string());
            let Some(r) = a.msg.get("result") else {
                return Err(Stop::fail(
                    format!("page {pages} of {} was answered with an error", w.method),
                    format!("a {} result", w.method),
                    obs,
                ));
            };
            items += r.get(key).and_then(Value::as_array).map_or(0, Vec::len);
            match r.get("nextCursor").and_then(Value::as_str) {
                None => break,
                Some(c) => {
                    if !seen.insert(c.to_owned()) {
                        return Err(Stop::fail(
                            format!(
                                "{} returned nextCursor {c:?} a second time: the list never ends",
                                w.method
                            ),
                            "each page's nextCursor leading further",
                            obs,
                        ));
                    }
                    cursor = Some(c.to_owned());
                }
            }
        }
        Ok(Done {
            observed: format!("{items} {key} on {pages} page(s)"),
            ..Done::default()
        })
    }

    fn http(&mut self, conv: &mut Conv<'_>, h: &HttpSpec) -> Result<Done, Stop> {
        let verb = match h.method.as_deref().unwrap_or("POST") {
            "POST" => Verb::Post,
            "GET" => Verb::Get,
            "DELETE" => Verb::Delete,
            other => return Err(Stop::harness(format!("http: unknown method {other}"))),
        };
        let which = h.session.unwrap_or(SessionHeader::Current);
        if which != SessionHeader::Current
            && self.opened
            && conv.http_session().is_none()
            && conv.session_ended.is_none()
        {
            return Err(Stop::not_applicable(
                NaCause::SutChoice,
                "the server assigned no Mcp-Session-Id (a server without sessions)",
            ));
        }
        let body = match &h.body {
            Some(b) => {
                let b = self.fill(b)?;
                if let (Some(id), Some(m)) = (b.get("id"), b.get("method").and_then(Value::as_str))
                {
                    conv.sent(id, m, None);
                }
                if let Some(peer) = &mut conv.peer {
                    match (b.get("id"), b.get("method").and_then(Value::as_str)) {
                        (Some(id), Some(m)) => peer.sent_request(id, m, None),
                        (None, Some("notifications/initialized")) => peer.initialized = true,
                        _ => {}
                    }
                }
                b.to_string().into_bytes()
            }
            None => Vec::new(),
        };
        let session = match which {
            SessionHeader::Current => conv.http_session(),
            SessionHeader::None => None,
            SessionHeader::Ended => conv.session_ended.clone(),
        };
        let protocol_version = match &h.protocol_version {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(self.fill_str(v)?),
            None => conv.protocol_header.clone(),
        };
        let headers = h
            .headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.fill_str(v)?)))
            .collect::<Result<Vec<_>, Stop>>()?;
        let n = conv
            .http(Exchange {
                verb,
                body,
                session,
                protocol_version,
                headers,
            })
            .map_err(|e| Stop::harness(e.0))?;
        if verb == Verb::Delete {
            let d = conv.answer_deadline();
            let st = conv.wait_status(n, d)?;
            if st.status == Some(405) {
                return Err(Stop::not_applicable(
                    NaCause::SutChoice,
                    "the server does not let clients end sessions (DELETE answered 405, which it may)",
                ));
            }
            if st.status.is_some_and(|s| (200..300).contains(&s)) {
                conv.end_http_session();
            }
        }
        Ok(Done {
            exchange: Some(n),
            ..Done::default()
        })
    }

    /// Checks one expectation against what the step produced.
    fn check(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        notes_from: usize,
    ) -> Result<(String, String), Stop> {
        let mut expected = Vec::new();
        let mut observed = String::new();
        if !e.http_status.is_empty() {
            let want: Vec<String> = e.http_status.iter().map(u16::to_string).collect();
            expected.push(format!("HTTP status {}", want.join(" or ")));
            let Some(n) = done.exchange else {
                return Err(Stop::harness(
                    "`http_status` on a step without an HTTP exchange",
                ));
            };
            let d = conv.answer_deadline();
            let st = conv.wait_status(n, d)?;
            let got = match (st.status, &st.failed) {
                (Some(s), _) => s,
                (None, Some(f)) => {
                    return Err(Stop::fail(
                        format!("the exchange failed: {f}"),
                        expected.join("; "),
                        f.clone(),
                    ))
                }
                (None, None) => 0,
            };
            observed = format!("HTTP {got}");
            if !e.http_status.contains(&got) {
                return Err(Stop::fail(
                    format!("HTTP status {got} instead of {}", want.join(" or ")),
                    expected.join("; "),
                    observed,
                ));
            }
        }
        if !e.http_content_type.is_empty() || e.http_no_body {
            let Some(n) = done.exchange else {
                return Err(Stop::harness(
                    "an HTTP expectation on a step without an HTTP exchange",
                ));
            };
            let d = conv.answer_deadline();
            let st = conv.wait_status(n, d)?;
            if !e.http_content_type.is_empty() && st.status.is_some_and(|s| (200..300).contains(&s))
            {
                expected.push(format!("Content-Type {}", e.http_content_type.join(" or ")));
                let mime = st
                    .content_type
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase();
                observed = format!(
                    "HTTP {} with Content-Type {:?}",
                    st.status.unwrap_or_default(),
                    st.content_type
                );
                if !e
                    .http_content_type
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(&mime))
                {
                    return Err(Stop::fail(
                        format!("a request answered with Content-Type {:?}", st.content_type),
                        expected.join("; "),
                        observed,
                    ));
                }
            }
            if e.http_no_body {
                expected.push("no body".into());
                let ended = loop {
                    if let Some(x) = conv
                        .exchanges
                        .get(&n)
                        .and_then(|x| x.ended.clone().or(x.failed.clone()))
                    {
                        break x;
                    }
                    match conv.pump(d)? {
                        Pumped::Got => {}
                        Pumped::Timeout | Pumped::Closed(_) => break "the body did not end".into(),
                    }
                };
                if ended != "no body" {
                    return Err(Stop::fail(
                        format!("the answer has a body ({ended})"),
                        expected.join("; "),
                        ended,
                    ));
                }
            }
        }
        let resp = || -> Result<&Arrived, Stop> {
            done.response.as_ref().ok_or_else(|| {
                Stop::harness("this expectation needs a step that waits for a response")
            })
        };
        let result_of = |a: &Arrived| a.msg.get("result").cloned();
        if let Some(want) = &e.result {
            let want = self.fill(want)?;
            expected.push(format!("a result containing {want}"));
            let a = resp()?;
            observed = short(&a.msg.to_string());
            let Some(got) = result_of(a) else {
                return Err(Stop::fail(
                    "an error instead of a result",
                    expected.join("; "),
                    observed,
                ));
            };
            if !json_matches(&got, &want) {
                return Err(Stop::fail(
                    "the result does not contain what was expected",
                    expected.join("; "),
                    observed,
                ));
            }
        }
        if e.empty {
            expected.push("an empty result".into());
            let a = resp()?;
            observed = short(&a.msg.to_string());
            let Some(got) = result_of(a) else {
                return Err(Stop::fail(
                    "an error instead of a result",
                    expected.join("; "),
                    observed,
                ));
            };
            let extra: Vec<&String> = got
                .as_object()
                .map(|o| {
                    o.keys()
                        .filter(|k| !matches!(k.as_str(), "_meta" | "resultType"))
                        .collect()
                })
                .unwrap_or_default();
            if !got.is_object() || !extra.is_empty() {
                return Err(Stop::fail(
                    format!("the result is not empty: it has {extra:?}"),
                    expected.join("; "),
                    observed,
                ));
            }
        }
        if let Some(want) = &e.error {
            let codes: Vec<String> = want.codes.iter().map(i64::to_string).collect();
            expected.push(if codes.is_empty() {
                "an error response".into()
            } else {
                format!("an error with code {}", codes.join(" or "))
            });
            let a = resp()?;
            observed = short(&a.msg.to_string());
            let Some(err) = a.msg.get("error") else {
                let is_error = a.msg.pointer("/result/isError") == Some(&json!(true));
                let why = if is_error {
                    "a result with isError: true instead of a JSON-RPC error response"
                } else {
                    "a result instead of an error"
                };
                return Err(Stop::fail(why, expected.join("; "), observed));
            };
            let code = err.get("code").and_then(Value::as_i64).unwrap_or_default();
            if !want.codes.is_empty() && !want.codes.contains(&code) {
                let stop = Stop::fail(
                    format!("error code {code} instead of {}", codes.join(" or ")),
                    expected.join("; "),
                    observed.clone(),
                );
                // The code of an error to a method MCP does not define is MCPN-009's: a
                // vector that only uses such a request (to see the session go on, or count
                // answers) does not fail for its code (mcpnative_0028, 0029).
                match code_rule(conv, a, &want.codes) {
                    Some(rule) => self.judged_by(
                        conv,
                        rule,
                        "an unknown method answered with a code other than -32601",
                        stop,
                    )?,
                    None => return Err(stop),
                }
            }
            for k in &want.data_has {
                if err.get("data").and_then(|d| d.get(k)).is_none() {
                    return Err(Stop::fail(
                        format!("the error's data lacks `{k}`"),
                        expected.join("; "),
                        observed,
                    ));
                }
            }
        }
        if e.error_or_is_error {
            expected.push("an error response or a result with isError: true".into());
            let a = resp()?;
            observed = short(&a.msg.to_string());
            let refused = a.msg.get("error").is_some()
                || a.msg.pointer("/result/isError") == Some(&json!(true));
            if !refused {
                return Err(Stop::fail(
                    "a successful result for arguments that break the tool's inputSchema",
                    expected.join("; "),
                    observed,
                ));
            }
        }
        if e.base64_blobs {
            use base64::Engine as _;
            expected.push("blob contents in base64".into());
            let a = resp()?;
            observed = short(&a.msg.to_string());
            let blobs: Vec<&str> = a
                .msg
                .pointer("/result/contents")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|x| x.get("blob").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            if blobs.is_empty() {
                return Err(Stop::fail(
                    "no blob contents in the result",
                    expected.join("; "),
                    observed,
                ));
            }
            for b in blobs {
                if base64::engine::general_purpose::STANDARD.decode(b).is_err() {
                    return Err(Stop::fail(
                        format!("a blob that is not base64: {}", short(b)),
                        expected.join("; "),
                        observed,
                    ));
                }
            }
        }
        if e.tool_output {
            expected.push(
                "a tool result whose structuredContent conforms to the tool's outputSchema".into(),
            );
            let a = resp()?;
            observed = short(&a.msg.to_string());
            // Each check names its rule: a step that does not test that rule (a progress
            // vector calling a tool) records another rule's defect in passing.
            'tool: {
                let Some(r) = result_of(a) else {
                    let stop = Stop::fail(
                        format!("{TOOL_CALL}: calling a listed tool with arguments valid against its inputSchema was answered with an error"),
                        expected.join("; "),
                        observed.clone(),
                    );
                    self.judged_by(
                        conv,
                        TOOL_CALL,
                        "a listed tool called with valid arguments answered with an error",
                        stop,
                    )?;
                    break 'tool;
                };
                let out = done
                    .tool
                    .as_ref()
                    .and_then(|t| self.tools.get(t))
                    .and_then(|t| t.get("outputSchema"))
                    .cloned();
                if r.get("isError") == Some(&json!(true)) {
                    break 'tool;
                }
                let Some(schema) = out else { break 'tool };
                let problem = match r.get("structuredContent") {
                    None => Some((
                        "a result without structuredContent",
                        "the tool declares an outputSchema, and its result has no structuredContent",
                    )),
                    Some(sc) => match args::is_valid(&schema, sc) {
                        Some(true) => None,
                        Some(false) => Some((
                            "structuredContent breaking the outputSchema",
                            "structuredContent does not conform to the tool's outputSchema",
                        )),
                        None => Some((
                            "an outputSchema the harness cannot compile",
                            "the tool's outputSchema is not a JSON Schema the harness can compile",
                        )),
                    },
                };
                if let Some((class, why)) = problem {
                    let stop = Stop::fail(
                        format!("{TOOL_RESULT}: {why}"),
                        expected.join("; "),
                        observed.clone(),
                    );
                    self.judged_by(conv, TOOL_RESULT, class, stop)?;
                }
            }
        }
        if let Some(nx) = &e.notification {
            let params = nx.params.as_ref().map(|p| self.fill(p)).transpose()?;
            expected.push(format!("a {} notification", nx.method));
            let d = conv.answer_deadline();
            loop {
                let hit = conv.notifications[notes_from..].iter().any(|(_, m, p)| {
                    m == &nx.method && params.as_ref().is_none_or(|want| json_matches(p, want))
                });
                if hit {
                    observed = format!("{} arrived", nx.method);
                    break;
                }
                match conv.pump(d)? {
                    Pumped::Got => {}
                    Pumped::Timeout | Pumped::Closed(_) => {
                        return Err(Stop::fail(
                            format!("no {} notification arrived", nx.method),
                            expected.join("; "),
                            "none",
                        ))
                    }
                }
            }
        }
        if let Some(ms) = e.quiet_ms {
            // Everything that arrives is judged: a reply to a notification, a second
            // response or one to an unknown id fails there. Responses to requests still in
            // flight (`wait: false`) are what they should be.
            expected.push(format!(
                "nothing but answers to requests in flight within {ms} ms"
            ));
            conv.drain(ms)?;
            if conv.peer.is_none() {
                if let Some(a) = conv.inbox.pop_front() {
                    return Err(Stop::fail(
                        "a response arrived",
                        expected.join("; "),
                        short(&a.msg.to_string()),
                    ));
                }
            }
            if observed.is_empty() {
                observed = "nothing else".into();
            }
        }
        if let Some(ms) = e.exit_ms {
            expected.push(format!("the server exits with status 0 within {ms} ms"));
            match conv.proc.wait_exit(Duration::from_millis(ms)) {
                Some(x) if x.success => observed = format!("the server {}", x.text),
                Some(x) => {
                    return Err(Stop::fail(
                        format!("the server {} when its stdin closed", x.text),
                        expected.join("; "),
                        x.text,
                    ))
                }
                None => {
                    return Err(Stop::fail(
                        format!("the server was still running {ms} ms after its stdin closed"),
                        expected.join("; "),
                        "still running",
                    ))
                }
            }
        }
        Ok((expected.join("; "), observed))
    }

    /// A `jsonrpc_line` step with `response` / `no_response` / `nothing`.
    fn line_step(&mut self, conv: &mut Conv<'_>, s: &Step) -> Result<(String, String), Stop> {
        let Some(line) = s.send.as_ref().and_then(|x| x.jsonrpc_line.as_ref()) else {
            return Err(Stop::harness("the step has no jsonrpc_line"));
        };
        let tv = self.text_vars();
        let line = fill_text(line, &tv);
        register_line(conv, &line);
        conv.send_text(&line)
            .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
        let (mut last_e, mut last_o) = (String::new(), String::new());
        for e in s.expect.as_slice() {
            match e {
                Expect::Response(r) => {
                    last_o = expect_response(conv, r, &tv)?;
                    last_e = describe_response(r, &tv);
                }
                Expect::NoResponse(nr) => {
                    let ms = match &nr.ms {
                        Num::Lit(m) => *m,
                        Num::Expr(x) => {
                            crate::plan::expr::eval(x, &crate::plan::expr::Params::new())
                                .map_err(|e| Stop::harness(format!("`{x}`: {e}")))?
                        }
                    };
                    last_o = expect_no_response(conv, nr.id.as_ref(), ms)?;
                    last_e = format!("no response within {ms} ms");
                }
                Expect::Nothing => {}
                other => {
                    return Err(Stop::harness(format!(
                        "{other:?} is not an mcp_native expectation"
                    )))
                }
            }
        }
        Ok((last_e, last_o))
    }
}

/// The rule that governs the code of the error `a` carries, when the harness knows it apart
/// from the vector: a request for a method the negotiated version does not define gets
/// -32601 (MCPN-009). `None` when the expected codes are not that rule's, or the method
/// is one MCP defines.
fn code_rule(conv: &mut Conv<'_>, a: &Arrived, codes: &[i64]) -> Option<&'static str> {
    if codes != [-32601] {
        return None;
    }
    let method = match &a.inbound {
        Inbound::Response {
            method: Some(m), ..
        } => m.clone(),
        _ => a
            .response_id()
            .and_then(|id| conv.method_of(id))
            .map(str::to_owned)?,
    };
    let defined = conv.peer.as_mut()?.defines_method(&method)?;
    (!defined).then_some(judge::METHOD_NOT_FOUND)
}

/// Moves the violations charged while a step ran into the records of the steps they
/// belong to (the step whose request a message answered may be an earlier one).
fn take_charged(conv: &mut Conv<'_>, records: &mut [StepRecord]) {
    for (k, stop) in std::mem::take(&mut conv.charged) {
        if let Some(r) = records.get_mut(k) {
            r.failures.push(Stop {
                why: format!("step {}: {}", k + 1, stop.why),
                ..stop
            });
        }
    }
}

/// What a step does, in words.
fn describe_step_of(s: &Step) -> String {
    s.mcp
        .as_ref()
        .map_or_else(|| "a JSON-RPC line".to_owned(), describe_step)
}

fn unbound(name: &str) -> Stop {
    Stop::harness(format!(
        "${{{name}}} is not bound: the manifest's mcp_native.params or an earlier pick step binds it"
    ))
}

/// `params._meta`, created as needed.
fn meta_of(params: &mut Option<Value>) -> &mut Map<String, Value> {
    let p = params.get_or_insert_with(|| json!({}));
    if !p.is_object() {
        *p = json!({});
    }
    let Some(o) = p.as_object_mut() else {
        unreachable!("made an object above")
    };
    let m = o.entry("_meta").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    match m.as_object_mut() {
        Some(m) => m,
        None => unreachable!("made an object above"),
    }
}

/// Whether the harness may call a tool: named, annotated read-only and closed-world (the
/// annotations' defaults are the opposite), and not requiring task execution.
fn callable(t: &Value) -> bool {
    // A tool without a name cannot be called (a broken list is judged where it is listed).
    if !t.get("name").is_some_and(Value::is_string) {
        return false;
    }
    let a = t.get("annotations");
    let hint = |k: &str| a.and_then(|a| a.get(k)).and_then(Value::as_bool);
    hint("readOnlyHint") == Some(true)
        && hint("openWorldHint") == Some(false)
        && t.pointer("/execution/taskSupport").and_then(Value::as_str) != Some("required")
}

/// Tells the judge what a hand-written line asks: a request's id is pending; a line whose
/// id the server cannot read may get an error without one. Returns the id its answer
/// carries (`null` for an unreadable one; `None` for a notification).
fn register_line(conv: &mut Conv<'_>, text: &str) -> Option<Value> {
    let parsed = serde_json::from_str::<Value>(text).ok();
    let (id, method) = match &parsed {
        Some(v) => (
            v.get("id")
                .filter(|i| i.is_string() || i.is_number())
                .cloned(),
            v.get("method").and_then(Value::as_str),
        ),
        None => (None, None),
    };
    let readable = parsed.is_some() && id.is_some();
    if let Some(id) = &id {
        conv.sent(id, method.unwrap_or("(no method)"), None);
    }
    if let Some(peer) = &mut conv.peer {
        match (&id, method) {
            (Some(id), Some(m)) => peer.sent_request(id, m, None),
            (Some(id), None) => peer.sent_request(id, "(no method)", None),
            (None, Some(_)) if parsed.as_ref().is_some_and(|v| v.get("id").is_none()) => {}
            _ => peer.sent_unreadable(),
        }
    }
    match (readable, method, &parsed) {
        (true, _, _) => id,
        (false, Some(_), Some(v)) if v.get("id").is_none() => None,
        _ => Some(Value::Null),
    }
}

fn describe_step(m: &McpStep) -> String {
    match m {
        McpStep::Open(_) => "the session opens".into(),
        McpStep::Request(r) => format!("a {} result", r.method),
        McpStep::Notify(n) => format!("{} sent", n.method),
        McpStep::Line(_) => "the line sent".into(),
        McpStep::Pick(p) => format!("a {} to pick", p.as_str()),
        McpStep::Walk(w) => format!("every page of {}", w.method),
        McpStep::Http(_) => "an HTTP exchange".into(),
        McpStep::CloseStdin => "stdin closed".into(),
    }
}

/// `${NAME}` replaced by text (plain `jsonrpc_line` steps).
fn fill_text(s: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = s.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    out
}

fn substitute(v: &Value, vars: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(fill_text(s, vars)),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), substitute(x, vars)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect()),
        other => other.clone(),
    }
}

fn describe_response(r: &ResponseSpec, vars: &BTreeMap<String, String>) -> String {
    let what = match (&r.result, &r.error) {
        (Some(res), _) => format!("a result containing {}", substitute(res, vars)),
        (None, Some(e)) => {
            let mut w = match e.code {
                Some(c) => format!("an error with code {c}"),
                None => "an error".to_owned(),
            };
            if let Some(m) = &e.message {
                w.push_str(&format!(", message {m:?}"));
            }
            if let Some(d) = &e.data {
                w.push_str(&format!(", data containing {d}"));
            }
            w
        }
        (None, None) => "a result or an error".to_owned(),
    };
    let status = r
        .http_status
        .map(|s| format!(" (HTTP {s} on the http transport)"))
        .unwrap_or_default();
    format!(
        "a JSON-RPC 2.0 response with id {} carrying {what}{status}",
        r.id
    )
}

/// A plain `response` expectation: the response with this id (others are set aside).
fn expect_response(
    conv: &mut Conv<'_>,
    r: &ResponseSpec,
    vars: &BTreeMap<String, String>,
) -> Result<String, Stop> {
    let exp = describe_response(r, vars);
    let deadline = conv.answer_deadline();
    let mut others: Vec<String> = Vec::new();
    let m = loop {
        if let Some(a) = conv.inbox.pop_front() {
            if a.response_id() == Some(&r.id) {
                break a;
            }
            others.push(a.response_id().map_or("(none)".into(), Value::to_string));
            conv.log(Dir::Note, "a response to another id (skipped)");
            continue;
        }
        match conv.pump(deadline)? {
            Pumped::Got => {}
            Pumped::Timeout => {
                let obs = if others.is_empty() {
                    "no response".to_owned()
                } else {
                    format!("only responses to other ids: {}", others.join(", "))
                };
                return Err(Stop::fail(
                    format!(
                        "no response with id {} within {} ms",
                        r.id, conv.timing.step_ms
                    ),
                    exp,
                    obs,
                ));
            }
            Pumped::Closed(why) => return Err(Stop::fail(why.clone(), exp, why)),
        }
    };
    let (msg, status) = (m.msg, m.status);
    let obs = short(&msg.to_string());
    let bad = |why: String| Stop::fail(why, exp.clone(), obs.clone());
    if msg.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(bad("the response lacks \"jsonrpc\": \"2.0\"".into()));
    }
    let (res, err) = (msg.get("result"), msg.get("error"));
    match (res, err) {
        (Some(_), Some(_)) => return Err(bad("the response has both result and error".into())),
        (None, None) => return Err(bad("the response has neither result nor error".into())),
        _ => {}
    }
    if let Some(want) = &r.result {
        let Some(got) = res else {
            return Err(bad("an error instead of a result".into()));
        };
        if !json_matches(got, &substitute(want, vars)) {
            return Err(bad("the result does not contain what was expected".into()));
        }
    }
    if let Some(want) = &r.error {
        let Some(got) = err else {
            return Err(bad("a result instead of an error".into()));
        };
        let code = got.get("code").and_then(Value::as_i64);
        if code.is_none() {
            return Err(bad("the error has no integer code".into()));
        }
        if want.code.is_some() && code != want.code {
            return Err(bad(format!(
                "error code {} instead of {}",
                code.unwrap_or_default(),
                want.code.unwrap_or_default()
            )));
        }
        if let Some(m) = &want.message {
            if got.get("message").and_then(Value::as_str) != Some(m.as_str()) {
                return Err(bad(format!("error message other than {m:?}")));
            }
        }
        if let Some(data) = &want.data {
            if !got.get("data").is_some_and(|d| json_matches(d, data)) {
                return Err(bad(format!("error data does not contain {data}")));
            }
        }
    }
    if let (Some(want), Some(got)) = (r.http_status, status) {
        if want != got {
            return Err(bad(format!("HTTP status {got} instead of {want}")));
        }
    }
    Ok(obs)
}

fn expect_no_response(conv: &mut Conv<'_>, id: Option<&Value>, ms: u64) -> Result<String, Stop> {
    let exp = match id {
        Some(id) => format!("no response with id {id} within {ms} ms"),
        None => format!("no response within {ms} ms"),
    };
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        while let Some(a) = conv.inbox.pop_front() {
            if id.is_none_or(|id| a.response_id() == Some(id)) {
                return Err(Stop::fail(
                    "a response arrived",
                    exp,
                    short(&a.msg.to_string()),
                ));
            }
            conv.log(Dir::Note, "a response to another id (skipped)");
        }
        match conv.pump(deadline)? {
            Pumped::Got => {}
            // A server that exits is not answering; later steps show whether it matters.
            Pumped::Timeout => return Ok("none".into()),
            Pumped::Closed(why) => return Ok(why),
        }
    }
}

impl Inbound {
    /// Whether it is a response.
    pub fn is_response(&self) -> bool {
        matches!(self, Inbound::Response { .. })
    }
}
