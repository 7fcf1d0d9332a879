//! Content blocks (text, image, audio, resource_link, embedded resource, tool_use,
//! tool_result), their annotations and resource contents, per target version: what each
//! version can carry and the text fallbacks for kinds an older peer does not know.

use crate::outcome::WarningKind;
use crate::version::Version::{V2025_03_26 as V03, V2025_06_18 as V06, V2025_11_25 as V11};
use crate::walk::{Cx, Obj, R};
use serde_json::{json, Value};

/// Where a content block sits: the two unions of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// `ContentBlock`: tool results, prompt messages, tool_result content.
    Block,
    /// Sampling messages and results: text, image, audio, tool_use, tool_result.
    Sampling,
}

/// `Annotations` (`Annotated.annotations` in 2024-11-05): audience and priority in every
/// version, lastModified from 2025-06-18.
pub(crate) fn annotations(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "annotations")?;
    cx.drop_newer(o, "Annotations", &[("lastModified", V06)])
}

/// `TextResourceContents | BlobResourceContents`: uri always; `_meta` from 2025-06-18.
/// Never gains a name (errata 1: the seed's name generation is wrong).
pub(crate) fn resource_contents(cx: &mut Cx<'_>, v: &mut Value) -> R {
    let o = cx.obj(v, "ResourceContents")?;
    cx.str_field(o, "uri", true)?;
    cx.str_field(o, "mimeType", false)?;
    let text = o.get("text").map(Value::is_string);
    let blob = o.get("blob").map(Value::is_string);
    match (text, blob) {
        (Some(true), None) | (None, Some(true)) => {}
        (Some(true), Some(true)) => {
            return Err(cx.invalid("resource contents carry both `text` and `blob`"))
        }
        _ => return Err(cx.invalid("resource contents need a string `text` or a string `blob`")),
    }
    cx.drop_newer(o, "ResourceContents", &[("_meta", V06)])
}

/// The fields every block kind shares: `_meta` (2025-06-18) and `annotations`.
fn common(cx: &mut Cx<'_>, o: &mut Obj, what: &str) -> R {
    cx.drop_newer(o, what, &[("_meta", V06)])?;
    cx.field(o, "annotations", false, annotations)
}

/// Replaces the block `v` by a text block carrying `text` and the block's annotations,
/// with a `converted` warning.
fn to_text(
    cx: &mut Cx<'_>,
    v: &mut Value,
    text: String,
    detail: impl Into<std::borrow::Cow<'static, str>>,
) -> R {
    cx.warn(WarningKind::Converted, None, detail)?;
    let ann = v
        .as_object_mut()
        .and_then(|o| o.shift_remove("annotations"));
    let mut t = json!({"type": "text", "text": text});
    if let (Some(a), Some(o)) = (ann, t.as_object_mut()) {
        o.insert("annotations".into(), a);
    }
    *v = t;
    Ok(())
}

/// One content block at `place`.
pub(crate) fn content(cx: &mut Cx<'_>, v: &mut Value, place: Place) -> R {
    let o = cx.obj(v, "content block")?;
    let ty = cx.req_str(o, "type")?.to_owned();
    match (ty.as_str(), place) {
        ("text", _) => {
            cx.str_field(o, "text", true)?;
            common(cx, o, "TextContent")
        }
        ("image", _) => {
            cx.str_field(o, "data", true)?;
            cx.str_field(o, "mimeType", true)?;
            common(cx, o, "ImageContent")
        }
        ("audio", _) => {
            cx.str_field(o, "data", true)?;
            let mime = cx.req_str(o, "mimeType")?.to_owned();
            common(cx, o, "AudioContent")?;
            if cx.to < V03 {
                // Semantic preservation: the peer learns there was audio, and of what kind.
                to_text(
                    cx,
                    v,
                    format!("[Audio content: {mime}]"),
                    format!("audio content exists from 2025-03-26; replaced by a text block naming its type ({mime})"),
                )?;
            }
            Ok(())
        }
        ("resource", Place::Block) => {
            cx.field(o, "resource", true, resource_contents)?;
            common(cx, o, "EmbeddedResource")
        }
        ("resource_link", Place::Block) => {
            let uri = cx.req_str(o, "uri")?.to_owned();
            let name = cx.req_str(o, "name")?.to_owned();
            if cx.to < V06 {
                common(cx, o, "ResourceLink")?;
                to_text(
                    cx,
                    v,
                    format!("[Resource link: {name} <{uri}>]"),
                    "resource_link exists from 2025-06-18; replaced by a text block naming the link (its other fields are not carried)",
                )
            } else {
                crate::entities::resource_fields(cx, o, "ResourceLink")
            }
        }
        ("tool_use", Place::Sampling) => {
            let id = cx.req_str(o, "id")?.to_owned();
            let name = cx.req_str(o, "name")?.to_owned();
            cx.obj_field(o, "input", true)?;
            if cx.to < V11 {
                let input = o.get("input").map(Value::to_string).unwrap_or_default();
                to_text(
                    cx,
                    v,
                    format!("[Tool use {id}: {name} {input}]"),
                    "tool_use content exists from 2025-11-25; replaced by a text block",
                )?;
            }
            Ok(())
        }
        ("tool_result", Place::Sampling) => {
            let id = cx.req_str(o, "toolUseId")?.to_owned();
            cx.each(o, "content", true, |cx, b| content(cx, b, Place::Block))?;
            if let Some(sc) = o.get("structuredContent").filter(|sc| !sc.is_object()) {
                // Any JSON value from 2026-07-28 on (line 2469); an object in 2025-11-25.
                if !cx.from.is_stateless() {
                    return Err(cx.invalid("structuredContent must be an object"));
                }
                if cx.to >= V11 && !cx.to.is_stateless() {
                    let text = sc.to_string();
                    cx.warn(
                        WarningKind::FallbackAdded,
                        Some("content"),
                        "structuredContent the target cannot carry; its JSON is appended as a text block",
                    )?;
                    if let Some(Value::Array(blocks)) = o.get_mut("content") {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    cx.drop_field(
                        o,
                        "structuredContent",
                        "any JSON value from 2026-07-28 on; only an object before",
                    )?;
                }
            }
            if cx.to < V11 {
                let err = if o.get("isError") == Some(&Value::Bool(true)) {
                    " (error)"
                } else {
                    ""
                };
                let inner = o.get("content").map(Value::to_string).unwrap_or_default();
                to_text(
                    cx,
                    v,
                    format!("[Tool result for {id}{err}: {inner}]"),
                    "tool_result content exists from 2025-11-25; replaced by a text block carrying its content as JSON",
                )?;
            }
            Ok(())
        }
        (other, _) => Err(cx.invalid(format!(
            "content type {other:?} is not allowed here in any MCP version"
        ))),
    }
}

/// Visits every block of the array field `k` of `o`.
pub(crate) fn blocks(cx: &mut Cx<'_>, o: &mut Obj, k: &'static str, place: Place) -> R {
    cx.each(o, k, true, |cx, b| content(cx, b, place))
}

/// The single content block in field `k` (prompt messages).
pub(crate) fn block(cx: &mut Cx<'_>, o: &mut Obj, k: &'static str, place: Place) -> R {
    cx.field(o, k, true, |cx, b| content(cx, b, place))
}
