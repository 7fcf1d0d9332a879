//! The reference server's small deterministic MCP tool set (`initialize`, `tools/list`,
//! `tools/call`), so gateway and MCP vectors have exact expectations: the same request
//! always gets the same octets back.
//!
//! | tool           | input                      | output (structuredContent)          |
//! |----------------|----------------------------|-------------------------------------|
//! | `echo`         | `{message: string}`        | `{echo: string}`                    |
//! | `add`          | `{a: number, b: number}`   | `{sum: number}`                     |
//! | `fail`         | `{}`                       | none; `isError: true` (a tool-level failure, passed through unchanged) |
//! | `broken_output`| `{}`                       | `{count: "three"}`, which breaks its own outputSchema (`count` integer), so gateways that check outputs have something to catch |

use serde_json::{json, Value};
use std::sync::OnceLock;

/// The protocol version the reference answers `initialize` with when the client asks for
/// one it does not know.
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-06-18";

/// Versions the reference agrees to when a client asks for them.
pub const KNOWN_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The tools/list result, serialized once.
pub fn tools_list_result() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| json!({ "tools": definitions() }).to_string())
}

/// The tool definitions, in a stable order (seed 001 §7: names and parameters are stable).
pub fn definitions() -> Value {
    json!([
        {
            "name": "echo",
            "description": "Returns its message.",
            "inputSchema": {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"echo": {"type": "string"}},
                "required": ["echo"]
            }
        },
        {
            "name": "add",
            "description": "Adds two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"sum": {"type": "number"}},
                "required": ["sum"]
            }
        },
        {
            "name": "fail",
            "description": "Always fails at tool level (isError).",
            "inputSchema": {"type": "object", "additionalProperties": false}
        },
        {
            "name": "broken_output",
            "description": "Returns output that breaks its own outputSchema.",
            "inputSchema": {"type": "object", "additionalProperties": false},
            "outputSchema": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"]
            }
        }
    ])
}

/// The initialize result for a requested protocol version (raw params text).
pub fn initialize_result(params: Option<&str>) -> String {
    let asked = params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|v| {
            v.get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let version = match asked {
        Some(v) if KNOWN_PROTOCOL_VERSIONS.contains(&v.as_str()) => v,
        _ => DEFAULT_PROTOCOL_VERSION.to_owned(),
    };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "swp-ref", "version": env!("CARGO_PKG_VERSION")}
    })
    .to_string()
}

/// The outcome of a tools/call: a result (JSON text) or a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The CallToolResult, as JSON text.
    Result(String),
    /// A JSON-RPC error: code and message.
    Error(i64, String),
}

/// Runs a tools/call (raw params text).
pub fn call(params: Option<&str>) -> CallOutcome {
    let invalid = |m: &str| CallOutcome::Error(-32602, format!("Invalid params: {m}"));
    let Some(v) = params.and_then(|p| serde_json::from_str::<Value>(p).ok()) else {
        return invalid("tools/call takes {\"name\": string, \"arguments\": object}");
    };
    let Some(name) = v.get("name").and_then(Value::as_str) else {
        return invalid("tools/call takes {\"name\": string, \"arguments\": object}");
    };
    let empty = Value::Object(Default::default());
    let args = v.get("arguments").unwrap_or(&empty);
    let Some(args) = args.as_object() else {
        return invalid("arguments must be an object");
    };
    let text_result = |text: String, structured: Value| {
        CallOutcome::Result(
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured})
                .to_string(),
        )
    };
    match name {
        "echo" => match args.get("message").and_then(Value::as_str) {
            Some(m) if args.len() == 1 => text_result(m.to_owned(), json!({"echo": m})),
            _ => invalid("echo takes {\"message\": string}"),
        },
        "add" => match (
            args.get("a").and_then(Value::as_f64),
            args.get("b").and_then(Value::as_f64),
        ) {
            (Some(a), Some(b)) if args.len() == 2 => {
                let sum = json!(a + b);
                text_result(sum.to_string(), json!({"sum": sum}))
            }
            _ => invalid("add takes {\"a\": number, \"b\": number}"),
        },
        "fail" => CallOutcome::Result(
            json!({"content": [{"type": "text", "text": "the tool failed"}], "isError": true})
                .to_string(),
        ),
        "broken_output" => text_result("three".into(), json!({"count": "three"})),
        other => CallOutcome::Error(-32602, format!("Unknown tool: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_deterministic() {
        assert_eq!(
            call(Some(r#"{"name":"echo","arguments":{"message":"hi"}}"#)),
            CallOutcome::Result(
                r#"{"content":[{"type":"text","text":"hi"}],"structuredContent":{"echo":"hi"}}"#
                    .into()
            )
        );
        assert_eq!(
            call(Some(r#"{"name":"add","arguments":{"a":2,"b":3}}"#)),
            CallOutcome::Result(
                r#"{"content":[{"type":"text","text":"5.0"}],"structuredContent":{"sum":5.0}}"#
                    .into()
            )
        );
        assert!(matches!(
            call(Some(r#"{"name":"nope"}"#)),
            CallOutcome::Error(-32602, _)
        ));
        assert!(matches!(
            call(Some(r#"{"name":"add","arguments":{"a":"2","b":3}}"#)),
            CallOutcome::Error(-32602, _)
        ));
        assert!(matches!(call(None), CallOutcome::Error(-32602, _)));
        assert!(tools_list_result().starts_with(r#"{"tools":[{"name":"echo""#));
    }

    #[test]
    fn initialize_agrees_to_known_versions() {
        assert!(
            initialize_result(Some(r#"{"protocolVersion":"2024-11-05"}"#))
                .contains(r#""protocolVersion":"2024-11-05""#)
        );
        assert!(
            initialize_result(Some(r#"{"protocolVersion":"1999-01-01"}"#))
                .contains(DEFAULT_PROTOCOL_VERSION)
        );
    }
}
