//! Messages the benchmarks translate: a typical 2025-11-25 tools/list result (10 tools with
//! titles, annotations, schemas, icons) and a tools/call result carrying 1 MiB of text.
#![allow(dead_code)]

use serde_json::{json, Value};

/// A tools/list result of `n` tools as a 2025-11-25 server sends it.
pub fn tools_list(n: usize) -> Value {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "title": format!("Tool number {i}"),
                "description": "Looks up records in the catalogue by keyword and returns the matching entries with their identifiers and a short summary.",
                "inputSchema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "keywords"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "exact": {"type": "boolean"}
                    },
                    "required": ["query"],
                    "additionalProperties": false
                },
                "outputSchema": {"type": "object", "properties": {"hits": {"type": "array"}}},
                "annotations": {"title": format!("Tool {i}"), "readOnlyHint": true, "openWorldHint": false},
                "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                "execution": {"taskSupport": "optional"},
                "_meta": {"vendor/version": 3}
            })
        })
        .collect();
    json!({"jsonrpc": "2.0", "id": 17, "result": {"tools": tools, "nextCursor": "page-2"}})
}

/// A 2025-06-18 tools/call result whose text block carries `size` octets, with a small
/// structuredContent (dropped for 2024-11-05, its JSON added as a text block) and an audio
/// block (converted to text).
pub fn call_result(size: usize) -> Value {
    let text: String = "lorem ipsum dolor sit amet "
        .chars()
        .cycle()
        .take(size)
        .collect();
    json!({"jsonrpc": "2.0", "id": 18, "result": {
        "content": [
            {"type": "text", "text": text, "_meta": {"chunk": 1}},
            {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}
        ],
        "structuredContent": {"rows": 1, "ok": true},
        "isError": false
    }})
}
