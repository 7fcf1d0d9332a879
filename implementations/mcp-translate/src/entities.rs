//! The listed things and the initialize payload: Implementation, client and server
//! capabilities, Tool, Resource (and ResourceLink), ResourceTemplate, Prompt and its
//! arguments, Root. Each says which of its fields appeared in which version.

use crate::content::annotations;
use crate::outcome::WarningKind;
use crate::version::Version::{
    V2025_03_26 as V03, V2025_06_18 as V06, V2025_11_25 as V11, V2026_07_28 as V26,
};
use crate::walk::{Cx, Obj, Seg, R};
use serde_json::Value;

/// `Implementation` (clientInfo, serverInfo): name and version always.
pub(crate) fn implementation(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "Implementation")?;
    cx.str_field(o, "name", true)?;
    cx.str_field(o, "version", true)?;
    cx.drop_newer(
        o,
        "Implementation",
        &[
            ("title", V06),
            ("icons", V11),
            ("description", V11),
            ("websiteUrl", V11),
        ],
    )
}

/// `ClientCapabilities`.
pub(crate) fn client_capabilities(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "ClientCapabilities")?;
    if cx.to >= V06 && cx.to < V11 {
        if let Some(Value::Object(e)) = o.get("elicitation") {
            // 2025-11-25 splits elicitation into form and url modes; an empty object means
            // form. A client declaring only url mode cannot be described to an older server
            // (it would send form requests), so the capability goes.
            if e.contains_key("url") && !e.contains_key("form") {
                cx.drop_field(
                    o,
                    "elicitation",
                    "the client declares only URL-mode elicitation, which 2025-06-18 cannot express",
                )?;
            }
        }
        if let Some(e) = o.get_mut("elicitation") {
            cx.at(Seg::K("elicitation"), |cx| {
                let e = cx.obj(e, "elicitation capability")?;
                cx.drop_newer(e, "elicitation", &[("form", V11), ("url", V11)])
            })?;
        }
    }
    if let Some(s) = o.get_mut("sampling") {
        cx.at(Seg::K("sampling"), |cx| {
            let s = cx.obj(s, "sampling capability")?;
            cx.drop_newer(s, "sampling", &[("context", V11), ("tools", V11)])
        })?;
    }
    if let Some(r) = o.get_mut("roots") {
        // 2026-07-28 has no roots/list_changed notification, so no listChanged (line 732).
        cx.at(Seg::K("roots"), |cx| {
            let r = cx.obj(r, "roots capability")?;
            cx.drop_removed(r, "roots", &[("listChanged", V26)])
        })?;
    }
    cx.drop_newer(
        o,
        "ClientCapabilities",
        &[("elicitation", V06), ("tasks", V11), ("extensions", V26)],
    )?;
    cx.drop_removed(o, "ClientCapabilities", &[("tasks", V26)])
}

/// `ServerCapabilities`. Across the eras the notification flags change meaning: in
/// 2026-07-28 they promise delivery on a `subscriptions/listen` stream, before it unprompted
/// notifications (and `resources/subscribe`). The translator bridges list changes toward a
/// stateless client (`correlate::Session::honoured`) but opens no stream for a session
/// client, and bridges resource subscriptions in neither direction; the flags it cannot
/// keep go.
pub(crate) fn server_capabilities(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "ServerCapabilities")?;
    let unbridged: &[(&'static str, &[&'static str])] = if cx.down() {
        &[
            ("resources", &["subscribe", "listChanged"]),
            ("tools", &["listChanged"]),
            ("prompts", &["listChanged"]),
        ]
    } else if cx.up() {
        &[("resources", &["subscribe"])]
    } else {
        &[]
    };
    for &(cap, flags) in unbridged {
        if let Some(c) = o.get_mut(cap) {
            cx.at(Seg::K(cap), |cx| {
                let c = cx.obj(c, "capability")?;
                for &f in flags {
                    cx.drop_field(
                        c,
                        f,
                        "a notification capability the translator does not bridge between a session version and 2026-07-28",
                    )?;
                }
                Ok(())
            })?;
        }
    }
    cx.drop_newer(
        o,
        "ServerCapabilities",
        &[("completions", V03), ("tasks", V11), ("extensions", V26)],
    )?;
    cx.drop_removed(o, "ServerCapabilities", &[("tasks", V26)])
}

/// `inputSchema` / `outputSchema`: JSON Schema documents whose keywords pass unchanged,
/// except `$schema`, which the schema types list from 2025-11-25 only.
fn schema_doc(cx: &mut Cx<'_>, v: &mut Value, what: &str) -> R {
    let o = cx.obj(v, what)?;
    match o.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        _ => return Err(cx.invalid(format!("{what}.type must be \"object\""))),
    }
    cx.drop_newer(o, what, &[("$schema", V11)])
}

/// `Tool`.
pub(crate) fn tool(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "Tool")?;
    cx.str_field(o, "name", true)?;
    cx.str_field(o, "description", false)?;
    cx.field(o, "inputSchema", true, |cx, s| {
        schema_doc(cx, s, "inputSchema")
    })?;
    if cx.to >= V06 {
        // 2026-07-28 takes any JSON Schema as outputSchema (line 2005); before, an object
        // schema only, so another one cannot go back.
        let object = o.get("outputSchema").and_then(|s| s.get("type"))
            == Some(&Value::String("object".into()));
        if cx.from.is_stateless() && !object {
            if cx.to.is_stateless() {
                cx.obj_field(o, "outputSchema", false)?;
            } else {
                cx.drop_field(
                    o,
                    "outputSchema",
                    "a non-object output schema (2026-07-28) has no form before it",
                )?;
            }
        } else {
            cx.field(o, "outputSchema", false, |cx, s| {
                schema_doc(cx, s, "outputSchema")
            })?;
        }
    }
    if cx.to == V03 && o.contains_key("title") {
        // 2025-03-26 has no Tool.title but ToolAnnotations.title is its display name: move
        // it there unless the annotations already carry one.
        let has = o.get("annotations").and_then(|a| a.get("title")).is_some();
        if !has {
            cx.warn(
                WarningKind::Converted,
                Some("title"),
                "Tool.title exists from 2025-06-18; moved into annotations.title",
            )?;
            if let Some(t) = o.shift_remove("title") {
                let a = o
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Default::default()));
                match a {
                    Value::Object(a) => {
                        a.insert("title".into(), t);
                    }
                    _ => return Err(cx.invalid("Tool.annotations must be an object")),
                }
            }
        }
    }
    if cx.to >= V03 {
        cx.field(o, "annotations", false, |cx, a| {
            cx.obj(a, "ToolAnnotations").map(|_| ())
        })?;
    }
    cx.drop_newer(
        o,
        "Tool",
        &[
            ("title", V06),
            ("annotations", V03),
            ("outputSchema", V06),
            ("_meta", V06),
            ("icons", V11),
            ("execution", V11),
        ],
    )?;
    cx.drop_removed(o, "Tool", &[("execution", V26)])
}

/// The fields of `Resource`, shared with `ResourceLink`.
pub(crate) fn resource_fields(cx: &mut Cx<'_>, o: &mut Obj, what: &str) -> R {
    cx.str_field(o, "uri", true)?;
    cx.str_field(o, "name", true)?;
    cx.field(o, "annotations", false, annotations)?;
    cx.drop_newer(o, what, &[("title", V06), ("_meta", V06), ("icons", V11)])
}

/// `Resource`.
pub(crate) fn resource(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "Resource")?;
    resource_fields(cx, o, "Resource")
}

/// `ResourceTemplate`.
pub(crate) fn resource_template(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "ResourceTemplate")?;
    cx.str_field(o, "uriTemplate", true)?;
    cx.str_field(o, "name", true)?;
    cx.field(o, "annotations", false, annotations)?;
    cx.drop_newer(
        o,
        "ResourceTemplate",
        &[("title", V06), ("_meta", V06), ("icons", V11)],
    )
}

/// `Prompt` and its `PromptArgument`s.
pub(crate) fn prompt(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "Prompt")?;
    cx.str_field(o, "name", true)?;
    cx.each(o, "arguments", false, |cx, a| {
        let a = cx.obj(a, "PromptArgument")?;
        cx.str_field(a, "name", true)?;
        cx.drop_newer(a, "PromptArgument", &[("title", V06)])
    })?;
    cx.drop_newer(
        o,
        "Prompt",
        &[("title", V06), ("_meta", V06), ("icons", V11)],
    )
}

/// `Root`.
pub(crate) fn root(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "Root")?;
    cx.str_field(o, "uri", true)?;
    cx.drop_newer(o, "Root", &[("_meta", V06)])
}
