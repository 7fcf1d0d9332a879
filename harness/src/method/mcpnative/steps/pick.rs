//! The `pick` and `walk` steps: what a vector exercises, taken from the server's own
//! answers (its tools, resources and prompts).

use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::{Pick, WalkSpec};
use crate::method::mcpnative::args;
use crate::method::mcpnative::conv::{short, Conv};
use crate::method::mcpnative::judge::declared;
use crate::method::mcpnative::stop::Stop;
use crate::method::mcpnative::uritemplate;
use crate::report::result::{Dir, NaCause};
use crate::sut::ToolEffect;
use serde_json::{json, Map, Value};

impl<'v> Runner<'v> {
    pub(super) fn pick(&mut self, conv: &mut Conv<'_>, p: Pick) -> Result<Done, Stop> {
        let choice = |why: &str| Stop::not_applicable(NaCause::SutChoice, why.to_owned());
        let untested = |why: String| Stop::not_applicable(NaCause::Untested, why);
        match p {
            Pick::Tool | Pick::ToolWithArguments => {
                let tools = self.listed_tools(conv)?;
                if tools.is_empty() {
                    return Err(choice("the server lists no tools"));
                }
                // The tools the manifest vouches for come first, in its order; then the
                // tools annotated as changing nothing and reaching nothing outside.
                let vouched = self.vouched(&tools, None);
                let mut safe: Vec<&Value> = tools
                    .iter()
                    .filter(|t| callable(t) && !vouched.iter().any(|v| std::ptr::eq(*v, *t)))
                    .collect();
                // A tool with an outputSchema tests more: its structured result is checked.
                safe.sort_by_key(|t| t.get("outputSchema").is_none());
                let safe: Vec<&Value> = vouched.into_iter().chain(safe).collect();
                if safe.is_empty() {
                    return Err(untested(format!(
                        "none of the {} listed tools is named and annotated readOnlyHint: true and openWorldHint: false (without required task execution), and the manifest vouches for none (mcp_native.tools); the harness calls only tools that change nothing and reach nothing outside the machine",
                        tools.len()
                    )));
                }
                for t in safe {
                    let schema = t
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object"}));
                    let Some(good) = self.declared_args(t).or_else(|| args::valid(&schema)) else {
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
                        let Some(var) = uritemplate::variables(tpl).into_iter().next() else {
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
            Pick::SamplingTool => self.pick_effect(conv, ToolEffect::Sampling),
            Pick::ElicitationTool => self.pick_effect(conv, ToolEffect::Elicitation),
            Pick::LoggingTool => self.pick_effect(conv, ToolEffect::Logging),
            Pick::Template => self.pick_template(conv),
        }
    }

    pub(super) fn walk(&mut self, conv: &mut Conv<'_>, w: &WalkSpec) -> Result<Done, Stop> {
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
}
