//! What the manifest vouches for: tools the harness may call (with their arguments and
//! effects: sampling, elicitation, logging), values for resource templates; and the steps
//! that use them or many requests at once (`call_tools`, `await`).

use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::CallToolsSpec;
use crate::method::mcpnative::args;
use crate::method::mcpnative::conv::{short, Conv};
use crate::method::mcpnative::stop::Stop;
use crate::method::mcpnative::uritemplate;
use crate::report::result::{Dir, NaCause, Verdict};
use crate::sut::ToolEffect;
use serde_json::{json, Value};

/// Why a vector needing a tool with `effect` does not apply to a manifest that declares none.
pub(crate) fn no_tool_with(effect: ToolEffect) -> String {
    format!(
        "the manifest declares no tool with does: [{}] (mcp_native.tools)",
        effect.as_str()
    )
}

/// Why a vector reading a resource template does not apply to a manifest that gives no values.
pub(crate) const NO_TEMPLATE_VALUES: &str =
    "the manifest gives values for no resource template (mcp_native.templates)";

impl<'v> Runner<'v> {
    /// The listed tools the manifest vouches for, in the manifest's order: with no effect
    /// (`None`), or with `effect`.
    pub(super) fn vouched<'t>(
        &self,
        listed: &'t [Value],
        effect: Option<ToolEffect>,
    ) -> Vec<&'t Value> {
        self.spec
            .tools
            .iter()
            .filter(|d| match effect {
                None => d.does.is_empty(),
                Some(e) => d.does.contains(&e),
            })
            .filter_map(|d| {
                listed
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(d.name.as_str()))
            })
            .collect()
    }

    /// The arguments the manifest gives for tool `t`.
    pub(super) fn declared_args(&self, t: &Value) -> Option<Value> {
        let name = t.get("name").and_then(Value::as_str)?;
        self.spec
            .tools
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| d.arguments.clone())
    }

    /// The arguments to call `t` with: the manifest's, else made from its `inputSchema`.
    fn args_for(&self, t: &Value) -> Option<Value> {
        self.declared_args(t).or_else(|| {
            let schema = t
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            args::valid(&schema)
        })
    }

    /// Lists the tools and remembers their definitions (for `outputSchema` checks).
    pub(super) fn listed_tools(&mut self, conv: &mut Conv<'_>) -> Result<Vec<Value>, Stop> {
        let tools = self.list_all(conv, "tools/list", "tools", 5)?;
        for t in &tools {
            if let Some(n) = t.get("name").and_then(Value::as_str) {
                self.tools.insert(n.to_owned(), t.clone());
            }
        }
        Ok(tools)
    }

    /// `pick: sampling_tool` and its kin: the first listed tool the manifest declares with
    /// `effect`.
    pub(super) fn pick_effect(
        &mut self,
        conv: &mut Conv<'_>,
        effect: ToolEffect,
    ) -> Result<Done, Stop> {
        let e = effect.as_str();
        let named: Vec<&str> = self
            .spec
            .tools
            .iter()
            .filter(|d| d.does.contains(&effect))
            .map(|d| d.name.as_str())
            .collect();
        if named.is_empty() {
            return Err(Stop::not_applicable(
                NaCause::Untested,
                no_tool_with(effect),
            ));
        }
        let named = named.join(", ");
        let tools = self.listed_tools(conv)?;
        let Some(t) = self
            .vouched(&tools, Some(effect))
            .into_iter()
            .next()
            .cloned()
        else {
            return Err(Stop::not_applicable(
                NaCause::Untested,
                format!("the manifest declares {named} with does: [{e}], and the server does not list it"),
            ));
        };
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(good) = self.args_for(&t) else {
            return Err(Stop::not_applicable(
                NaCause::Untested,
                format!("the manifest gives no arguments for {name}, and the harness could not make them from its inputSchema"),
            ));
        };
        conv.log(
            Dir::Note,
            &format!("picked tool {name} ({e}) with arguments {good}"),
        );
        self.vars.insert("TOOL".into(), json!(name));
        self.vars.insert("TOOL_ARGS".into(), good);
        Ok(Done {
            observed: format!("tool {name}"),
            ..Done::default()
        })
    }

    /// `pick: template`: the first listed resource template the manifest gives values for,
    /// expanded.
    pub(super) fn pick_template(&mut self, conv: &mut Conv<'_>) -> Result<Done, Stop> {
        if self.spec.templates.is_empty() {
            return Err(Stop::not_applicable(NaCause::Untested, NO_TEMPLATE_VALUES));
        }
        let ts = self.list_all(conv, "resources/templates/list", "resourceTemplates", 5)?;
        let listed: Vec<&str> = ts
            .iter()
            .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
            .collect();
        let Some((tpl, values)) = listed
            .iter()
            .find_map(|l| self.spec.templates.get_key_value(*l))
        else {
            let given: Vec<&str> = self.spec.templates.keys().map(String::as_str).collect();
            return Err(Stop::not_applicable(
                NaCause::Untested,
                format!(
                    "the manifest gives values for {}, and the server lists none of them",
                    given.join(", ")
                ),
            ));
        };
        let uri = uritemplate::expand(tpl, values).map_err(|e| {
            Stop::not_applicable(
                NaCause::Untested,
                format!("the harness cannot expand {tpl}: {e}"),
            )
        })?;
        conv.log(Dir::Note, &format!("expanded template {tpl} to {uri}"));
        self.vars.insert("TEMPLATE".into(), json!(tpl));
        self.vars.insert("TEMPLATE_URI".into(), json!(uri));
        Ok(Done {
            observed: format!("template {tpl} as {uri}"),
            ..Done::default()
        })
    }

    /// `call_tools`: every tool the harness may call, each once.
    pub(super) fn call_tools(
        &mut self,
        conv: &mut Conv<'_>,
        c: &CallToolsSpec,
    ) -> Result<Done, Stop> {
        let tools = self.listed_tools(conv)?;
        let vouched = self.vouched(&tools, None);
        let annotated = tools
            .iter()
            .filter(|t| callable(t) && !vouched.iter().any(|v| std::ptr::eq(*v, *t)));
        let chosen: Vec<Value> = vouched
            .iter()
            .copied()
            .chain(annotated)
            .take(c.max.unwrap_or(10) as usize)
            .cloned()
            .collect();
        let mut calls = Vec::new();
        let mut slow = Vec::new();
        for t in &chosen {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some(a) = self.args_for(t) else {
                conv.log(
                    Dir::Note,
                    &format!("{name}: no arguments valid against its inputSchema (not called)"),
                );
                continue;
            };
            let meta = self.meta_version(conv);
            let params = json!({"name": name, "arguments": a});
            let id = self.send_request(conv, "tools/call", Some(params), meta, false)?;
            let d = conv.answer_deadline();
            match conv.wait_response(&id, d) {
                Ok(answer) => calls.push((Some(name.to_owned()), answer)),
                // A tool may take longer than a step (a long-running operation): that is
                // no fault, and what it would return is not judged. The call is cancelled,
                // as a client that stops waiting does.
                Err(st)
                    if st.verdict == Verdict::Fail
                        && conv.gone.is_none()
                        && conv.closed.is_none()
                        && !conv.out_of_time =>
                {
                    conv.log(
                        Dir::Note,
                        &format!("{name}: no answer within the step's time; cancelled, not judged"),
                    );
                    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id, "reason": "swp-conform stopped waiting"}});
                    conv.send_text(&cancel.to_string())
                        .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
                    slow.push(name.to_owned());
                }
                Err(st) => return Err(st),
            }
        }
        if calls.is_empty() && !slow.is_empty() {
            return Err(Stop {
                verdict: Verdict::Inconclusive,
                ..Stop::fail(
                    format!(
                        "no tool answered within the step's time ({}): nothing to judge",
                        slow.join(", ")
                    ),
                    "a result from every tool the harness may call",
                    "no answer",
                )
            });
        }
        if calls.is_empty() {
            return Err(Stop::not_applicable(
                NaCause::Untested,
                format!(
                    "of the {} listed tools, none is annotated readOnlyHint: true and openWorldHint: false with arguments the harness can make, and the manifest vouches for none (mcp_native.tools)",
                    tools.len()
                ),
            ));
        }
        let names: Vec<&str> = calls.iter().filter_map(|(n, _)| n.as_deref()).collect();
        let mut observed = format!("{} tool(s) answered: {}", calls.len(), names.join(", "));
        if !slow.is_empty() {
            observed.push_str(&format!(
                "; not judged, no answer within the step's time: {}",
                slow.join(", ")
            ));
        }
        Ok(Done {
            observed,
            calls,
            ..Done::default()
        })
    }

    /// `await`: the response to every request still in flight.
    pub(super) fn await_all(&mut self, conv: &mut Conv<'_>) -> Result<Done, Stop> {
        let ids = std::mem::take(&mut self.pending);
        if ids.is_empty() {
            return Err(Stop::harness(
                "`await` with no request in flight (send some with wait: false first)",
            ));
        }
        let d = conv.answer_deadline();
        let mut calls = Vec::new();
        for id in &ids {
            let a = conv.wait_response(id, d)?;
            calls.push((None, a));
        }
        let got: Vec<String> = calls
            .iter()
            .map(|(_, a)| {
                let id = a.response_id().map(Value::to_string).unwrap_or_default();
                let what = if a.msg.get("result").is_some() {
                    "result"
                } else {
                    "error"
                };
                format!("{id}: {what}")
            })
            .collect();
        let observed = format!("{} responses ({})", calls.len(), got.join(", "));
        Ok(Done {
            observed: short(&observed),
            calls,
            ..Done::default()
        })
    }
}
