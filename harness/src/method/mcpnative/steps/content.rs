//! The expectations about what a tool call carries and causes beyond its result's schema:
//! well-formed content blocks (`content`), log messages filtered by the level the client
//! set (`log_floor`), and the server's own requests during a call (`server_request`).

use super::check::Checked;
use super::common::*;
use super::runner::Runner;
use crate::catalog::mcpnative::McpExpect;
use crate::method::mcpnative::conv::{short, Conv};
use crate::method::mcpnative::stop::Stop;
use crate::report::result::Verdict;
use base64::Engine as _;
use serde_json::Value;

/// The syslog severities of MCP logging, least severe first (RFC 5424 order, as the schema's
/// `LoggingLevel` lists them).
pub(super) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

impl<'v> Runner<'v> {
    /// The expectations of this file, in order.
    pub(super) fn check_more(
        &mut self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        done: &Done,
        notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        self.expect_content(e, done, acc)?;
        self.expect_log_floor(conv, e, notes_from, acc)?;
        self.expect_server_request(conv, e, acc)?;
        expect_tool_schemas(e, done, acc)
    }

    /// `content`: every content block of every tool result the step got.
    fn expect_content(&self, e: &McpExpect, done: &Done, acc: &mut Checked) -> Result<(), Stop> {
        if !e.content {
            return Ok(());
        }
        let Checked { expected, observed } = acc;
        expected.push(
            "content blocks whose base64 data decodes and whose mimeTypes are media types".into(),
        );
        let answers = done
            .response
            .iter()
            .map(|a| (done.tool.as_deref(), a))
            .chain(done.calls.iter().map(|(n, a)| (n.as_deref(), a)));
        let mut kinds = std::collections::BTreeMap::<String, usize>::new();
        for (tool, a) in answers {
            let Some(blocks) = a.msg.pointer("/result/content").and_then(Value::as_array) else {
                continue;
            };
            let tool = tool.unwrap_or("the tool");
            for (i, b) in blocks.iter().enumerate() {
                let kind = b.get("type").and_then(Value::as_str).unwrap_or("?");
                *kinds.entry(kind.to_owned()).or_default() += 1;
                if let Some(why) = block_problem(b) {
                    return Err(Stop::fail(
                        format!("{tool}: content block {i} ({kind}): {why}"),
                        expected.join("; "),
                        short(&b.to_string()),
                    ));
                }
            }
        }
        let seen: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        *observed = if seen.is_empty() {
            "no content blocks".into()
        } else {
            format!("content blocks: {}", seen.join(", "))
        };
        Ok(())
    }

    /// `log_floor`: no log message below the level arrived during the step.
    fn expect_log_floor(
        &self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        notes_from: usize,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(floor) = &e.log_floor else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        let Some(min) = LEVELS.iter().position(|l| l == floor) else {
            return Err(Stop::harness(format!(
                "log_floor {floor:?} is not an MCP logging level"
            )));
        };
        expected.push(format!("no log message below {floor}"));
        let mut seen = 0;
        for (_, m, p) in conv.notifications.get(notes_from..).unwrap_or_default() {
            if m != "notifications/message" {
                continue;
            }
            seen += 1;
            let level = p.get("level").and_then(Value::as_str).unwrap_or_default();
            // An unknown level is the schema's to judge.
            if LEVELS
                .iter()
                .position(|l| *l == level)
                .is_some_and(|n| n < min)
            {
                return Err(Stop::fail(
                    format!("a {level} log message after the client set the level to {floor}"),
                    expected.join("; "),
                    short(&p.to_string()),
                ));
            }
        }
        *observed = format!("{seen} log message(s), none below {floor}");
        Ok(())
    }

    /// `server_request`: the server asked the client during the step.
    fn expect_server_request(
        &self,
        conv: &mut Conv<'_>,
        e: &McpExpect,
        acc: &mut Checked,
    ) -> Result<(), Stop> {
        let Some(method) = &e.server_request else {
            return Ok(());
        };
        let Checked { expected, observed } = acc;
        expected.push(format!("a {method} request from the server"));
        let asked = conv
            .server_requests
            .get(self.requests_from..)
            .unwrap_or_default()
            .iter()
            .filter(|m| *m == method)
            .count();
        if asked == 0 {
            return Err(Stop {
                verdict: Verdict::Inconclusive,
                ..Stop::fail(
                    format!("the tool the manifest declares for {method} sent none during the call, so there was no round trip to judge"),
                    expected.join("; "),
                    "no server request",
                )
            });
        }
        *observed = format!("{asked} {method} request(s), answered");
        Ok(())
    }
}

/// `tool_schemas`: the schemas of the listed tools are valid in their dialect.
fn expect_tool_schemas(e: &McpExpect, done: &Done, acc: &mut Checked) -> Result<(), Stop> {
    if !e.tool_schemas {
        return Ok(());
    }
    let Checked { expected, observed } = acc;
    expected
        .push("tool schemas valid in their dialect (2020-12 unless $schema names another)".into());
    let Some(answer) = done.response.as_ref() else {
        return Err(Stop::harness(
            "`tool_schemas` needs a step that waits for tools/list",
        ));
    };
    // A refusal is a failure of the listing (a server that declares tools answers it), not
    // a schema the harness could not read.
    let Some(tools) = answer
        .msg
        .pointer("/result/tools")
        .and_then(Value::as_array)
    else {
        return Err(Stop::fail(
            "tools/list was not answered with a list of tools",
            expected.join("; "),
            short(&answer.msg.to_string()),
        )
        .breaking(&[list_rule("tools/list").to_owned()]));
    };
    let (mut judged, mut unknown) = (0, Vec::new());
    for t in tools {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("(unnamed)");
        for field in ["inputSchema", "outputSchema"] {
            let Some(schema) = t.get(field) else { continue };
            match dialect_problem(schema) {
                Dialect::Valid => judged += 1,
                Dialect::Unknown(d) => unknown.push(format!("{name}.{field} ({d})")),
                Dialect::Invalid(why) => {
                    return Err(Stop::fail(
                        format!(
                        "tool {name}: its {field} is not a valid JSON Schema in its dialect: {why}"
                    ),
                        expected.join("; "),
                        short(&schema.to_string()),
                    ))
                }
            }
        }
    }
    *observed = format!("{judged} schema(s) of {} tool(s) valid", tools.len());
    if !unknown.is_empty() {
        observed.push_str(&format!(
            "; not judged, in a dialect the harness does not know: {}",
            unknown.join(", ")
        ));
    }
    Ok(())
}

/// What the meta-schema of a schema's dialect says of it.
enum Dialect {
    Valid,
    /// `$schema` names a dialect the harness has no meta-schema for.
    Unknown(String),
    Invalid(String),
}

/// The dialects whose meta-schemas the validator carries, by the URI `$schema` names them
/// with (with or without the empty fragment, over http or https).
const DIALECTS: [&str; 5] = [
    "json-schema.org/draft/2020-12/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-04/schema",
];

fn dialect_problem(schema: &Value) -> Dialect {
    if let Some(uri) = schema.get("$schema") {
        let known = uri.as_str().is_some_and(|u| {
            let bare = u
                .trim_end_matches('#')
                .trim_start_matches("https://")
                .trim_start_matches("http://");
            DIALECTS.contains(&bare)
        });
        if !known {
            return Dialect::Unknown(short(&uri.to_string()));
        }
    }
    if !schema.is_object() && !schema.is_boolean() {
        return Dialect::Invalid("not an object".into());
    }
    // The meta-schema is chosen from `$schema`, 2020-12 without one (SEP-1613).
    match jsonschema::meta::validate(schema) {
        Ok(()) => Dialect::Valid,
        Err(e) => Dialect::Invalid(format!("{e} (at {})", e.instance_path())),
    }
}

/// What is wrong with one content block where the schema cannot say (`None`: nothing).
fn block_problem(b: &Value) -> Option<String> {
    let kind = b.get("type").and_then(Value::as_str)?;
    let b64 = |field: &str, v: &Value| -> Option<String> {
        let s = v.get(field).and_then(Value::as_str)?;
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .is_err()
            .then(|| format!("`{field}` is not base64: {}", short(s)))
    };
    let mime = |v: &Value| -> Option<String> {
        let m = v.get("mimeType").and_then(Value::as_str)?;
        (!is_media_type(m)).then(|| format!("mimeType {m:?} is not a media type (type/subtype)"))
    };
    match kind {
        "image" | "audio" => b64("data", b).or_else(|| mime(b)),
        "resource" => {
            let r = b.get("resource")?;
            b64("blob", r).or_else(|| mime(r))
        }
        "resource_link" => mime(b),
        _ => None,
    }
}

/// Whether `m` is `type/subtype` with optional parameters (RFC 6838 §4.2 names, loosely:
/// RFC 9110 tokens on either side of the slash).
fn is_media_type(m: &str) -> bool {
    let essence = m.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
    };
    matches!(essence.split_once('/'), Some((t, s)) if token(t) && token(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn media_types_are_type_slash_subtype() {
        for ok in [
            "image/png",
            "audio/wav",
            "text/plain; charset=utf-8",
            "application/vnd.a+json",
        ] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in ["png", "image/", "/png", "image png", "", "image/png/x"] {
            assert!(!is_media_type(bad), "{bad}");
        }
    }

    #[test]
    fn schemas_are_judged_in_their_dialect() {
        let ok = |v: Value| matches!(dialect_problem(&v), Dialect::Valid);
        assert!(ok(
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        ));
        assert!(ok(
            json!({"type": "object", "$defs": {"x": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/x"}}})
        ));
        for d in [
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft-07/schema",
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-04/schema#",
        ] {
            assert!(ok(json!({"$schema": d, "type": "object"})), "{d}");
        }
        assert!(matches!(
            dialect_problem(&json!({"type": "object", "properties": {"a": {"type": "strang"}}})),
            Dialect::Invalid(_)
        ));
        assert!(matches!(
            dialect_problem(&json!({"type": "object", "required": "a"})),
            Dialect::Invalid(_)
        ));
        assert!(matches!(
            dialect_problem(
                &json!({"$schema": "https://example.com/my-dialect", "type": "object"})
            ),
            Dialect::Unknown(_)
        ));
    }

    #[test]
    fn blocks_are_judged_by_kind() {
        assert_eq!(
            block_problem(
                &json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
            ),
            None
        );
        assert!(block_problem(
            &json!({"type": "image", "data": "not base64!", "mimeType": "image/png"})
        )
        .is_some_and(|w| w.contains("base64")));
        assert!(
            block_problem(&json!({"type": "audio", "data": "AAAA", "mimeType": "wav"}))
                .is_some_and(|w| w.contains("media type"))
        );
        assert!(block_problem(
            &json!({"type": "resource", "resource": {"uri": "x:y", "blob": "%%%"}})
        )
        .is_some());
        assert_eq!(
            block_problem(&json!({"type": "resource", "resource": {"uri": "x:y", "text": "hi"}})),
            None
        );
        assert!(block_problem(
            &json!({"type": "resource_link", "uri": "x:y", "name": "n", "mimeType": "nope"})
        )
        .is_some());
        assert_eq!(block_problem(&json!({"type": "text", "text": "%%%"})), None);
    }
}
