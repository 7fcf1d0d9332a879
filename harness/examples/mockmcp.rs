//! A small plain MCP server (no SWP) on stdio, newline-delimited JSON-RPC, for testing the
//! harness's `mcp_native` engine without network: `mockmcp good | lax | garbage | crash`.
//!
//! - `good`: conformant for every `mcpnative` vector. Before answering `tools/list` it sends
//!   a notification and two server requests (`roots/list`, `sampling/createMessage`) and
//!   answers only once the harness has replied to both correctly (`{"roots": []}` and error
//!   -32601), so the engine's routing is under test too.
//! - `lax`: like servers seen in the wild: no answer to malformed JSON or to a request
//!   without `jsonrpc`, and requests are processed before `initialize`.
//! - `garbage`: writes a line that is not JSON instead of answering `initialize`.
//! - `crash`: exits with status 3 on `tools/list`.

use serde_json::{json, Value};
use std::io::{BufRead, Write};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let good = mode == "good";
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut send = |v: Value| {
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    };
    let mut initialized = false;
    // The id of a tools/list waiting for the harness's answers to our two requests.
    let mut pending: Option<Value> = None;
    let (mut roots_ok, mut sampling_ok) = (None::<bool>, None::<bool>);
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let v: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => {
                if good {
                    send(json!({"jsonrpc": "2.0", "id": null,
                                "error": {"code": -32700, "message": "Parse error"}}));
                }
                continue;
            }
        };
        let id = v.get("id").cloned();
        if v.get("jsonrpc") != Some(&json!("2.0")) {
            if good {
                send(json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null),
                            "error": {"code": -32600, "message": "Invalid Request"}}));
            }
            continue;
        }
        let Some(method) = v.get("method").and_then(Value::as_str) else {
            // The harness's answer to one of our requests.
            match id.as_ref().and_then(Value::as_str) {
                Some("srv-roots") => {
                    roots_ok = Some(v.pointer("/result/roots") == Some(&json!([])))
                }
                Some("srv-sampling") => {
                    sampling_ok = Some(v.pointer("/error/code") == Some(&json!(-32601)))
                }
                _ => {}
            }
            if let (Some(r), Some(s), Some(pid)) = (roots_ok, sampling_ok, pending.clone()) {
                pending = None;
                if r && s {
                    send(json!({"jsonrpc": "2.0", "id": pid,
                                "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}}));
                } else {
                    send(json!({"jsonrpc": "2.0", "id": pid,
                                "error": {"code": -32603, "message": "wrong answers to server requests"}}));
                }
            }
            continue;
        };
        let Some(id) = id else {
            if method == "notifications/initialized" {
                initialized = true;
            }
            continue;
        };
        if good && !initialized && !matches!(method, "initialize" | "ping") {
            send(json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32002, "message": "not initialized"}}));
            continue;
        }
        let result = match method {
            "initialize" => {
                if mode == "garbage" {
                    let _ = writeln!(std::io::stdout(), "starting up...");
                    continue;
                }
                let pv = v
                    .pointer("/params/protocolVersion")
                    .cloned()
                    .unwrap_or(Value::Null);
                json!({"protocolVersion": pv,
                       "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                       "serverInfo": {"name": "mockmcp", "version": "0"}})
            }
            "tools/list" => {
                if mode == "crash" {
                    std::process::exit(3);
                }
                if good {
                    send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": "info", "data": "listing tools"}}));
                    send(json!({"jsonrpc": "2.0", "id": "srv-roots", "method": "roots/list"}));
                    send(json!({"jsonrpc": "2.0", "id": "srv-sampling",
                                "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}));
                    pending = Some(id);
                    continue;
                }
                json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
            }
            "tools/call" => {
                let msg = v
                    .pointer("/params/arguments/message")
                    .cloned()
                    .unwrap_or(Value::Null);
                json!({"content": [{"type": "text", "text": format!("Echo: {}", msg.as_str().unwrap_or(""))}]})
            }
            "resources/list" => json!({"resources": [{"uri": "mock://doc", "name": "doc"}]}),
            "resources/read" if v.pointer("/params/uri") == Some(&json!("mock://doc")) => {
                json!({"contents": [{"uri": "mock://doc", "mimeType": "text/plain", "text": "mock"}]})
            }
            "prompts/list" => json!({"prompts": [{"name": "mock-prompt"}]}),
            "prompts/get" if v.pointer("/params/name") == Some(&json!("mock-prompt")) => {
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
            }
            "ping" => json!({}),
            _ => {
                send(json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32601, "message": "Method not found"}}));
                continue;
            }
        };
        send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}
