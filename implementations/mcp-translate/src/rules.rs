//! The per-method rules: request params, notification params and results, keyed on the
//! method (for results, the method of the request they answer).

use crate::content::{self, Place};
use crate::entities;
use crate::outcome::{ErrorKind, WarningKind};
use crate::version::Version::{
    self, V2025_03_26 as V03, V2025_06_18 as V06, V2025_11_25 as V11, V2026_07_28 as V26,
};
use crate::walk::{kind_of, Cx, Obj, Seg, R};
use serde_json::Value;

/// Rewrites `protocolVersion` to the target's.
fn protocol_version(cx: &mut Cx<'_>, o: &mut Obj) -> R {
    let now = cx.req_str(o, "protocolVersion")?;
    if now != cx.to.as_str() {
        cx.warn(
            WarningKind::VersionRewritten,
            Some("protocolVersion"),
            format!("{now} → {}", cx.to),
        )?;
        o.insert(
            "protocolVersion".into(),
            Value::String(cx.to.as_str().into()),
        );
    }
    Ok(())
}

/// Request params of `method` (already an object). `Ok(false)`: the request cannot be
/// represented for the target and must be answered on the receiver's behalf.
pub(crate) fn request_params(cx: &mut Cx<'_>, method: &str, p: &mut Obj) -> R<bool> {
    match method {
        "initialize" => {
            protocol_version(cx, p)?;
            cx.field(p, "capabilities", true, entities::client_capabilities)?;
            cx.field(p, "clientInfo", true, entities::implementation)?;
        }
        "tools/call" => {
            cx.str_field(p, "name", true)?;
            cx.obj_field(p, "arguments", false)?;
            cx.drop_newer(p, "CallToolRequest.params", &[("task", V11)])?;
            cx.drop_removed(p, "CallToolRequest.params", &[("task", V26)])?;
        }
        "subscriptions/listen" => cx.obj_field(p, "notifications", true)?,
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            cx.str_field(p, "uri", true)?;
        }
        "prompts/get" => {
            cx.str_field(p, "name", true)?;
            cx.obj_field(p, "arguments", false)?;
        }
        "logging/setLevel" => cx.str_field(p, "level", true)?,
        "completion/complete" => {
            cx.field(p, "ref", true, |cx, r| {
                let r = cx.obj(r, "ref")?;
                match cx.req_str(r, "type")? {
                    "ref/prompt" => {
                        cx.str_field(r, "name", true)?;
                        cx.drop_newer(r, "PromptReference", &[("title", V06)])
                    }
                    "ref/resource" => cx.str_field(r, "uri", true),
                    other => Err(cx.invalid(format!("unknown reference type {other:?}"))),
                }
            })?;
            cx.obj_field(p, "argument", true)?;
            cx.drop_newer(p, "CompleteRequest.params", &[("context", V06)])?;
        }
        "sampling/createMessage" => {
            sampling_messages(cx, p)?;
            match p.get("maxTokens") {
                Some(Value::Number(_)) => {}
                _ => return Err(cx.invalid("`maxTokens` must be a number")),
            }
            cx.drop_newer(
                p,
                "CreateMessageRequest.params",
                &[("tools", V11), ("toolChoice", V11), ("task", V11)],
            )?;
            // An input request, not a JSON-RPC request, from 2026-07-28 on: no `_meta`.
            cx.drop_removed(
                p,
                "CreateMessageRequest.params",
                &[("task", V26), ("_meta", V26)],
            )?;
        }
        "elicitation/create" => return elicitation(cx, p),
        _ => {}
    }
    Ok(true)
}

/// Sampling messages: from 2025-11-25 a message may carry an array of blocks; older peers
/// get one message per block, same role, in order.
fn sampling_messages(cx: &mut Cx<'_>, p: &mut Obj) -> R {
    let Some(Value::Array(msgs)) = p.get_mut("messages") else {
        return Err(cx.invalid("`messages` must be an array"));
    };
    let mut split = false;
    cx.at(Seg::K("messages"), |cx| {
        for (i, m) in msgs.iter_mut().enumerate() {
            cx.at(Seg::I(i), |cx| {
                let o = cx.obj(m, "SamplingMessage")?;
                cx.str_field(o, "role", true)?;
                cx.drop_newer(o, "SamplingMessage", &[("_meta", V11)])?;
                if matches!(o.get("content"), Some(Value::Array(_))) {
                    content::blocks(cx, o, "content", Place::Sampling)?;
                    if cx.to < V11 {
                        let n = o.get("content").and_then(Value::as_array).map_or(0, Vec::len);
                        if n == 0 {
                            return Err(cx.at(Seg::K("content"), |cx| {
                                Ok(cx.err(
                                    ErrorKind::Unrepresentable,
                                    "an empty content array has no form before 2025-11-25",
                                ))
                            })?);
                        }
                        cx.warn(
                            WarningKind::Converted,
                            Some("content"),
                            format!("content arrays exist from 2025-11-25; split into {n} messages of the same role"),
                        )?;
                        split = true;
                    }
                    Ok(())
                } else {
                    content::block(cx, o, "content", Place::Sampling)
                }
            })?;
        }
        Ok(())
    })?;
    if split {
        let old = std::mem::take(msgs);
        for m in old {
            match m {
                Value::Object(mut o) => match o.shift_remove("content") {
                    Some(Value::Array(blocks)) => {
                        for b in blocks {
                            let mut one = o.clone();
                            one.insert("content".into(), b);
                            msgs.push(Value::Object(one));
                        }
                    }
                    Some(c) => {
                        o.insert("content".into(), c);
                        msgs.push(Value::Object(o));
                    }
                    None => msgs.push(Value::Object(o)),
                },
                other => msgs.push(other),
            }
        }
    }
    Ok(())
}

/// `elicitation/create` toward a 2025-06-18 peer from 2025-11-25 (older peers never get it:
/// the method table answers for them). URL mode and multi-select enums have no 2025-06-18
/// form: `Ok(false)`, answered on the client's behalf.
fn elicitation(cx: &mut Cx<'_>, p: &mut Obj) -> R<bool> {
    cx.str_field(p, "message", true)?;
    let url = p.get("mode").and_then(Value::as_str) == Some("url");
    // 2025-11-25 requires the id in URL mode: a 2025-11-25 sender must have sent one (even
    // toward a peer that will never see it), and toward 2025-11-25 it must be there (a
    // 2026-07-28 input request gets one before this, MCPX-307). Checked before the drop
    // below takes it away toward 2026-07-28 (mcpxproxy_0025).
    if url && (cx.to == V11 || cx.from == V11) {
        cx.str_field(p, "elicitationId", true)?;
    }
    // An input request from 2026-07-28 on: no `_meta`, no task, and no elicitation id (no
    // notifications/elicitation/complete to correlate).
    cx.drop_removed(
        p,
        "ElicitRequest.params",
        &[("task", V26), ("_meta", V26), ("elicitationId", V26)],
    )?;
    if url {
        cx.str_field(p, "url", true)?;
        return Ok(cx.to >= V11);
    }
    cx.obj_field(p, "requestedSchema", true)?;
    if cx.to >= V11 {
        return Ok(true);
    }
    let multi = p
        .get("requestedSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|props| {
            props
                .values()
                .any(|s| s.get("type").and_then(Value::as_str) == Some("array"))
        });
    if multi {
        return Ok(false);
    }
    cx.drop_newer(p, "ElicitRequest.params", &[("mode", V11), ("task", V11)])?;
    cx.field(p, "requestedSchema", true, |cx, s| {
        let s = cx.obj(s, "requestedSchema")?;
        cx.drop_newer(s, "requestedSchema", &[("$schema", V11)])?;
        let Some(Value::Object(props)) = s.get_mut("properties") else {
            return Err(cx.invalid("requestedSchema.properties must be an object"));
        };
        cx.at(Seg::K("properties"), |cx| {
            for (name, prop) in props.iter_mut() {
                cx.at(Seg::O(name.clone()), |cx| primitive_schema(cx, prop))?;
            }
            Ok(())
        })
    })?;
    Ok(true)
}

/// A `PrimitiveSchemaDefinition` for 2025-06-18: titled single-select (`oneOf`) becomes
/// `enum` + `enumNames`; `default` stays only on booleans.
fn primitive_schema(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "property schema")?;
    let ty = cx.req_str(o, "type")?.to_owned();
    if ty == "string" {
        if let Some(Value::Array(one_of)) = o.get("oneOf") {
            let mut values = Vec::new();
            let mut names = Vec::new();
            for c in one_of {
                match (c.get("const"), c.get("title")) {
                    (Some(Value::String(k)), Some(Value::String(t))) => {
                        values.push(Value::String(k.clone()));
                        names.push(Value::String(t.clone()));
                    }
                    _ => return Err(cx.invalid("oneOf options need string `const` and `title`")),
                }
            }
            cx.warn(
                WarningKind::Converted,
                Some("oneOf"),
                "titled single-select exists from 2025-11-25; written as enum + enumNames",
            )?;
            o.shift_remove("oneOf");
            o.insert("enum".into(), Value::Array(values));
            o.insert("enumNames".into(), Value::Array(names));
        }
    }
    if ty != "boolean" {
        cx.drop_newer(o, "property schema", &[("default", V11)])?;
    }
    Ok(())
}

/// Notification params of `method`. `Ok(false)`: the notification cannot be represented
/// for the target and is not forwarded.
pub(crate) fn notification_params(cx: &mut Cx<'_>, method: &str, p: &mut Obj) -> R<bool> {
    match method {
        "notifications/progress" => {
            match p.get("progressToken") {
                Some(Value::String(_) | Value::Number(_)) => {}
                _ => return Err(cx.invalid("`progressToken` must be a string or a number")),
            }
            if !p.get("progress").is_some_and(Value::is_number) {
                return Err(cx.invalid("`progress` must be a number"));
            }
            cx.drop_newer(p, "ProgressNotification.params", &[("message", V03)])?;
        }
        // requestId is optional in 2025-11-25 only (a task cancellation).
        "notifications/cancelled" if !p.contains_key("requestId") => {
            if cx.from >= V26 || cx.from < V11 {
                return Err(cx.invalid("required field `requestId` is missing"));
            }
            if cx.to < V11 || cx.to >= V26 {
                return Ok(false);
            }
        }
        "notifications/subscriptions/acknowledged" => cx.obj_field(p, "notifications", true)?,
        "notifications/resources/updated" => cx.str_field(p, "uri", true)?,
        "notifications/message" => cx.str_field(p, "level", true)?,
        _ => {}
    }
    Ok(true)
}

/// Whether `method` requires params in version `v`: every 2026-07-28 request carries
/// `_meta`.
pub(crate) fn params_required(method: &str, v: Version) -> bool {
    if v.is_stateless()
        && crate::methods::lookup(method).is_some_and(|i| {
            i.request && i.sender == crate::methods::Sender::Client && i.exists_in(v)
        })
    {
        return true;
    }
    matches!(
        method,
        "initialize"
            | "tools/call"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "prompts/get"
            | "logging/setLevel"
            | "completion/complete"
            | "sampling/createMessage"
            | "elicitation/create"
            | "tasks/get"
            | "tasks/result"
            | "tasks/cancel"
            | "notifications/cancelled"
            | "notifications/progress"
            | "notifications/message"
            | "notifications/resources/updated"
            | "notifications/elicitation/complete"
            | "notifications/tasks/status"
            | "notifications/subscriptions/acknowledged"
    )
}

/// The result answering `method`.
pub(crate) fn result(cx: &mut Cx<'_>, method: &str, r: &mut Obj) -> R {
    match method {
        "initialize" => {
            protocol_version(cx, r)?;
            cx.field(r, "capabilities", true, entities::server_capabilities)?;
            cx.field(r, "serverInfo", true, entities::implementation)?;
            cx.str_field(r, "instructions", false)?;
        }
        "tools/list" => cx.each(r, "tools", true, entities::tool)?,
        "tools/call" => call_tool_result(cx, r)?,
        "resources/list" => cx.each(r, "resources", true, entities::resource)?,
        "resources/templates/list" => {
            cx.each(r, "resourceTemplates", true, entities::resource_template)?
        }
        "resources/read" => cx.each(r, "contents", true, content::resource_contents)?,
        "prompts/list" => cx.each(r, "prompts", true, entities::prompt)?,
        "prompts/get" => cx.each(r, "messages", true, |cx, m| {
            let m = cx.obj(m, "PromptMessage")?;
            cx.str_field(m, "role", true)?;
            content::block(cx, m, "content", Place::Block)
        })?,
        "server/discover" => {
            cx.each(r, "supportedVersions", true, |cx, v| match v {
                Value::String(_) => Ok(()),
                _ => Err(cx.invalid("supportedVersions lists strings")),
            })?;
            cx.field(r, "capabilities", true, entities::server_capabilities)?;
            cx.str_field(r, "instructions", false)?;
        }
        "completion/complete" => cx.field(r, "completion", true, |cx, c| {
            let c = cx.obj(c, "completion")?;
            // "Must not exceed 100 items" in every version; a schema bound in 2026-07-28.
            match c.get("values") {
                Some(Value::Array(v)) if v.len() <= 100 && v.iter().all(Value::is_string) => Ok(()),
                Some(Value::Array(v)) if v.len() > 100 => Err(cx.invalid(format!(
                    "completion.values has {} items; at most 100 are allowed",
                    v.len()
                ))),
                _ => Err(cx.invalid("completion.values must be an array of strings")),
            }
        })?,
        "roots/list" => {
            cx.each(r, "roots", true, entities::root)?;
            cx.drop_removed(r, "ListRootsResult", &[("_meta", V26)])?;
        }
        "sampling/createMessage" => create_message_result(cx, r)?,
        "elicitation/create" => {
            cx.str_field(r, "action", true)?;
            cx.drop_removed(r, "ElicitResult", &[("_meta", V26)])?;
            if cx.to < V11 {
                if let Some(Value::Object(c)) = r.get("content") {
                    if c.values().any(Value::is_array) {
                        return Err(cx.err(
                            ErrorKind::Unrepresentable,
                            "array answers (multi-select) exist from 2025-11-25",
                        ));
                    }
                }
            }
        }
        m if m.starts_with("tasks/") && cx.to < V11 => {
            return Err(cx.err(
                ErrorKind::Unrepresentable,
                format!("{m} results exist from 2025-11-25"),
            ))
        }
        _ => {}
    }
    Ok(())
}

/// `CallToolResult` (or a 2025-11-25 `CreateTaskResult`).
fn call_tool_result(cx: &mut Cx<'_>, r: &mut Obj) -> R {
    // Only a 2025-11-25 sender has CreateTaskResult: from any other version a result with
    // `task` and no `content` is a CallToolResult missing its required content (mcpx_0151).
    if r.contains_key("task") && !r.contains_key("content") && cx.from >= V11 && cx.from < V26 {
        if cx.to < V11 || cx.to >= V26 {
            return Err(cx.err(
                ErrorKind::Unrepresentable,
                "a task-augmented tools/call result (CreateTaskResult) exists in 2025-11-25 only",
            ));
        }
        return cx.obj_field(r, "task", true);
    }
    content::blocks(cx, r, "content", Place::Block)?;
    if let Some(sc) = r.get("structuredContent") {
        // Any JSON value from 2026-07-28 on; an object before.
        if !sc.is_object() && !cx.from.is_stateless() {
            return Err(cx.at(Seg::K("structuredContent"), |cx| {
                Ok(cx.invalid(format!(
                    "structuredContent must be an object, found {}",
                    kind_of(sc)
                )))
            })?);
        }
        let object = sc.is_object();
        if cx.to < V06 || (!object && !cx.to.is_stateless()) {
            // 2025-06-18 tools guidance: a tool returning structured content SHOULD also
            // return its JSON in a text block. Keep one that is already there (same JSON),
            // else add it, so the older peer still gets the data.
            let has = r
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks.iter().any(|b| {
                        b.get("type").and_then(Value::as_str) == Some("text")
                            && b.get("text")
                                .and_then(Value::as_str)
                                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                                .is_some_and(|j| &j == sc)
                    })
                });
            if !has {
                let text = sc.to_string();
                cx.warn(
                    WarningKind::FallbackAdded,
                    Some("content"),
                    "structuredContent the target cannot carry; its JSON is appended as a text block",
                )?;
                if let Some(Value::Array(blocks)) = r.get_mut("content") {
                    blocks.push(serde_json::json!({"type": "text", "text": text}));
                }
            }
            if !object && cx.to >= V06 {
                cx.drop_field(
                    r,
                    "structuredContent",
                    "any JSON value from 2026-07-28 on; only an object before",
                )?;
            }
        }
    }
    cx.drop_newer(r, "CallToolResult", &[("structuredContent", V06)])
}

/// `CreateMessageResult` toward the server: one block before 2025-11-25.
fn create_message_result(cx: &mut Cx<'_>, r: &mut Obj) -> R {
    cx.str_field(r, "role", true)?;
    cx.str_field(r, "model", true)?;
    if matches!(r.get("content"), Some(Value::Array(_))) {
        content::blocks(cx, r, "content", Place::Sampling)?;
        if cx.to < V11 {
            let Some(Value::Array(blocks)) = r.get_mut("content") else {
                return Ok(());
            };
            let one = match blocks.len() {
                1 => blocks.pop(),
                _ if blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("text")) =>
                {
                    let text: Vec<&str> = blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect();
                    Some(serde_json::json!({"type": "text", "text": text.join("\n\n")}))
                }
                _ => None,
            };
            let Some(one) = one else {
                return Err(cx.at(Seg::K("content"), |cx| {
                    Ok(cx.err(
                        ErrorKind::Unrepresentable,
                        "several non-text blocks in one sampling result have no form before 2025-11-25",
                    ))
                })?);
            };
            cx.warn(
                WarningKind::Converted,
                Some("content"),
                "content arrays exist from 2025-11-25; written as one block",
            )?;
            r.insert("content".into(), one);
        }
        Ok(())
    } else {
        content::block(cx, r, "content", Place::Sampling)
    }
}
