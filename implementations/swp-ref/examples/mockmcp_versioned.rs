//! A plain MCP server on stdio that speaks one fixed protocol version, whatever the client
//! asks, and uses every newer feature it can, so the `mcp-proxy` tests see what an old
//! client must not: `mockmcp_versioned VERSION`.
//!
//! - `tools/list`: a tool with title, annotations, outputSchema, _meta, icons, execution.
//! - `tools/call` `rich`: text, audio, resource_link, embedded resource, structuredContent.
//! - `tools/call` `ask`: first sends `elicitation/create` and `notifications/resources/updated`
//!   and a progress notification with a message, then answers with the elicitation's action.
//! - `tools/call` `broken`: a result invalid in every version (`content` not an array).
//! - `resources/list`, `prompts/list`: titles, `_meta`, icons.

use serde_json::{json, Value};
use std::io::{BufRead, Write};

fn main() {
    let version = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "2025-11-25".into());
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut send = |v: Value| {
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    let mut waiting_call: Option<Value> = None;
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = v.get("id").cloned();
        let Some(method) = v.get("method").and_then(Value::as_str) else {
            // The client's answer to our elicitation.
            if id == Some(json!("elicit-1")) {
                if let Some(cid) = waiting_call.take() {
                    let action = v
                        .pointer("/result/action")
                        .cloned()
                        .unwrap_or(json!("none"));
                    send(json!({"jsonrpc": "2.0", "id": cid, "result": {"content": [
                        {"type": "text", "text": format!("elicitation: {action}")}]}}));
                }
            }
            continue;
        };
        let Some(id) = id else { continue };
        let icons = json!([{"src": "https://example.com/i.png", "mimeType": "image/png"}]);
        let result = match method {
            "initialize" => json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}, "prompts": {},
                                 "logging": {}, "completions": {}, "tasks": {"list": {}}},
                "serverInfo": {"name": "mockmcp-versioned", "title": "Mock", "version": "1", "icons": icons, "websiteUrl": "https://example.com"},
            }),
            "tools/list" => json!({"tools": [{
                "name": "rich", "title": "Rich", "description": "every content kind",
                "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
                "outputSchema": {"type": "object", "properties": {"n": {"type": "number"}}},
                "annotations": {"readOnlyHint": true}, "_meta": {"k": 1}, "icons": icons,
                "execution": {"taskSupport": "optional"}}]}),
            "tools/call" if v.pointer("/params/name") == Some(&json!("ask")) => {
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///watched"}}),
                );
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1, "message": "asking"}}),
                );
                send(
                    json!({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": {
                    "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
                );
                waiting_call = Some(id);
                continue;
            }
            // Invalid in every version: the proxy must answer the client with an error.
            "tools/call" if v.pointer("/params/name") == Some(&json!("broken")) => {
                json!({"content": "not an array"})
            }
            "tools/call" => json!({
                "content": [
                    {"type": "text", "text": "n is 1", "_meta": {"x": 1}},
                    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": {"lastModified": "2025-01-01T00:00:00Z"}},
                    {"type": "resource_link", "uri": "file:///r.txt", "name": "r.txt", "title": "R"},
                    {"type": "resource", "resource": {"uri": "file:///e.txt", "text": "embedded", "_meta": {"m": 1}}}
                ],
                "structuredContent": {"n": 1}
            }),
            "resources/list" => {
                json!({"resources": [{"uri": "file:///r.txt", "name": "r.txt", "title": "R", "_meta": {}, "icons": icons}]})
            }
            "prompts/list" => {
                json!({"prompts": [{"name": "p", "title": "P", "arguments": [{"name": "a", "title": "A"}], "icons": icons}]})
            }
            "ping" => json!({}),
            _ => {
                send(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                );
                continue;
            }
        };
        send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}
