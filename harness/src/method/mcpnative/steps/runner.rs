//! One vector's step runner: its state (`${NAME}` bindings, ids, the tools seen) and the
//! loop that runs each step, judges it on its own and records it.

use super::common::*;
use crate::catalog::mcpnative::{McpStep, SessionHeader};
use crate::catalog::vector::{JsonRpcBody, JsonRpcStep, Vector};
use crate::method::mcpnative::attribution::Focus;
use crate::method::mcpnative::conv::{Arrived, Conv};
use crate::method::mcpnative::record::{End, Ran, StepRecord};
use crate::method::mcpnative::stop::Stop;
use crate::report::result::{Dir, Verdict};
use crate::sut::McpNativeSpec;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Runs one vector's steps.
pub(crate) struct Runner<'v> {
    pub(crate) vector: &'v Vector,
    /// The vector's own body: its steps and what the server must declare.
    pub(crate) body: &'v JsonRpcBody,
    pub(crate) spec: &'v McpNativeSpec,
    /// `${NAME}` values: the manifest's params, `PROTOCOL_VERSION`, and what steps bound.
    pub(crate) vars: BTreeMap<String, Value>,
    pub(crate) next_id: i64,
    pub(crate) opened: bool,
    /// Tool definitions seen in `tools/list`, by name.
    pub(crate) tools: BTreeMap<String, Value>,
    /// The steps closed the server's stdin (its exit is then expected).
    pub(crate) closed_input: bool,
    /// The requirements the step being run tests: a check the harness knows belongs to
    /// another rule fails the step only when the step tests that rule.
    pub(crate) tested: Vec<String>,
    /// The session an earlier vector opened, which this vector's `open` takes up instead of
    /// opening one.
    pub(in crate::method::mcpnative) reuse: Option<Opened>,
    /// What this vector's own `open` negotiated (a plain session only).
    pub(in crate::method::mcpnative) opened_with: Option<Opened>,
    /// Requests sent with `wait: false` that no `await` has collected.
    pub(crate) pending: Vec<Value>,
    /// How many server requests had arrived when the step being run began.
    pub(crate) requests_from: usize,
}

/// A plain session as its `initialize` left it.
#[derive(Debug, Clone)]
pub(in crate::method::mcpnative) struct Opened {
    /// The `initialize` answer.
    pub(in crate::method::mcpnative) response: Arrived,
    /// The negotiated version.
    pub(in crate::method::mcpnative) version: String,
    /// The capabilities the server declared.
    pub(in crate::method::mcpnative) caps: Value,
    /// The vector that opened it.
    pub(in crate::method::mcpnative) by: String,
}

impl<'v> Runner<'v> {
    pub(crate) fn new(
        vector: &'v Vector,
        body: &'v JsonRpcBody,
        spec: &'v McpNativeSpec,
    ) -> Runner<'v> {
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
            body,
            spec,
            vars,
            next_id: 1,
            opened: false,
            tools: BTreeMap::new(),
            closed_input: false,
            tested: Vec::new(),
            reuse: None,
            opened_with: None,
            pending: Vec::new(),
            requests_from: 0,
        }
    }

    /// The requirements step `n` tests: a set-up step, what it checks of the server; any
    /// other, its own requirements (or the vector's) and the rules its expectations name.
    pub(super) fn step_requirements(&self, n: usize, setup: bool) -> Vec<String> {
        let Some(s) = self.body.steps.get(n) else {
            return self.vector.header.requirements.clone();
        };
        if setup {
            return setup_rules(s);
        }
        let mut out = if s.requirements.is_empty() {
            self.vector.header.requirements.clone()
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
    pub(super) fn vector_rules(&self) -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> =
            self.vector.header.requirements.iter().cloned().collect();
        for s in &self.body.steps {
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
    pub(super) fn judged_by(
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
    pub(super) fn precondition(
        &self,
        conv: &Conv<'_>,
        s: &JsonRpcStep,
        records: &[StepRecord],
    ) -> Option<String> {
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

    pub(super) fn text_vars(&self) -> BTreeMap<String, String> {
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
    pub(super) fn fill_str(&self, s: &str) -> Result<String, Stop> {
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
    pub(super) fn fill(&self, v: &Value) -> Result<Value, Stop> {
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
    pub(crate) fn run(&mut self, conv: &mut Conv<'_>) -> Ran {
        let steps = &self.body.steps;
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
        let mut end = self.probe_sessions(conv).err().map(End::NotApplicable);
        let run_steps = if end.is_some() { 0 } else { steps.len() };
        for (n, s) in steps.iter().enumerate().take(run_steps) {
            conv.focus = Focus {
                step: n,
                watch_all: mcp_expects(s).any(|e| e.quiet_ms.is_some()),
                expects: mcp_expects(s)
                    .filter_map(|e| e.notification.as_ref().map(|x| x.method.clone()))
                    .chain(mcp_expects(s).filter_map(|e| e.server_request.clone()))
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
                Verdict::NotApplicable if !records[n].failures.is_empty() => {
                    // The step failed on what the server sent (a broken listing) before it
                    // found nothing to use: its failure stands, and nothing later runs.
                    end = Some(End::Cut(
                        Verdict::Fail,
                        format!("step {} failed, and {}", n + 1, stop.why),
                    ));
                    break;
                }
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
            if let Err(st) = conv.settle(self.spec.timing.silence_ms) {
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
}
