//! Test support: checks messages against the official MCP schemas (`schema.json` of each
//! version) with the jsonschema crate, as published and in a closed-world variant where
//! typed objects admit only the fields their version lists, so a newer field that reached
//! an older peer fails. The schemas are read from ../shared/mcp-schema beside the checkout
//! (or `MCP_SCHEMA_DIR`); see docs/mcp-translation.md for why they are not vendored.
#![allow(dead_code)]

use mcp_translate::{Direction, Version};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Where the official schemas are: `MCP_SCHEMA_DIR`, else `mcp-schema` in the mirror beside the
/// checkout (`SWP_SHARED_DIR`, else `../shared`). When they are missing, `SWP_REQUIRE_MCP_SCHEMAS=1` (set by `.ci/run` whenever
/// the directory exists) fails the test; otherwise the official-schema cross-check is left
/// out with a notice, and the tests still judge every output against the vectors' exact
/// expectations and the library's own per-version tables. See docs/mcp-translation.md.
pub fn schema_dir() -> Option<PathBuf> {
    static NOTICE: std::sync::Once = std::sync::Once::new();
    let dir = std::env::var_os("MCP_SCHEMA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // SWP_SHARED_DIR moves the mirror beside the checkout (docs/testing.md).
            std::env::var_os("SWP_SHARED_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
                })
                .join("mcp-schema")
        });
    if dir.join("2025-06-18/schema.json").is_file() {
        return Some(dir);
    }
    let why = format!(
        "the official MCP schemas are not at {} (expected <version>/schema.json; set MCP_SCHEMA_DIR)",
        dir.display()
    );
    assert!(
        std::env::var_os("SWP_REQUIRE_MCP_SCHEMAS").is_none(),
        "{why}"
    );
    NOTICE.call_once(|| eprintln!("NOTICE: {why}; the official-schema cross-check is left out"));
    None
}

fn load(version: Version) -> Value {
    let p = schema_dir()
        .expect("checked by check_message")
        .join(version.as_str())
        .join("schema.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Properties whose values are open maps or JSON Schema documents in every version.
const OPEN: &[&str] = &[
    "_meta",
    "experimental",
    "arguments",
    "structuredContent",
    "inputSchema",
    "outputSchema",
    "metadata",
    "input",
    "data",
];

/// Closes every object schema that lists `properties` and says nothing about additional
/// ones: only the listed names (plus `jsonrpc` and `id` on request/notification types,
/// which the older schemas describe without the envelope).
fn close(node: &mut Value) {
    match node {
        Value::Object(o) => {
            let names: Option<Vec<String>> =
                match (o.get("properties"), o.get("additionalProperties")) {
                    (Some(Value::Object(p)), None) => Some(p.keys().cloned().collect()),
                    _ => None,
                };
            if let Some(mut names) = names {
                if names.iter().any(|n| n == "method") {
                    names.push("jsonrpc".into());
                    names.push("id".into());
                    // Every version's Request.params admits `_meta` (progressToken); the
                    // generated schemas lose it where a request redefines its params.
                    if let Some(Value::Object(p)) = o
                        .get_mut("properties")
                        .and_then(|p| p.get_mut("params"))
                        .and_then(|p| p.get_mut("properties"))
                    {
                        p.entry("_meta")
                            .or_insert_with(|| json!({"type": "object"}));
                    }
                }
                o.insert("propertyNames".into(), json!({"enum": names}));
            }
            for (k, child) in o.iter_mut() {
                match k.as_str() {
                    "properties" => {
                        if let Value::Object(props) = child {
                            for (name, s) in props.iter_mut() {
                                if !OPEN.contains(&name.as_str()) {
                                    close(s);
                                }
                            }
                        }
                    }
                    "propertyNames" | "enum" | "const" | "required" => {}
                    _ => close(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

fn defs_key(v: Version) -> &'static str {
    if v >= Version::V2025_11_25 {
        "$defs"
    } else {
        "definitions"
    }
}

type Cache = HashMap<(Version, String, bool), &'static jsonschema::Validator>;

fn validator(version: Version, def: &str, closed: bool) -> &'static jsonschema::Validator {
    static DOCS: OnceLock<Mutex<HashMap<(Version, bool), Value>>> = OnceLock::new();
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let key = (version, def.to_owned(), closed);
    if let Some(v) = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .get(&key)
    {
        return v;
    }
    let mut doc = DOCS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry((version, closed))
        .or_insert_with(|| {
            let mut d = load(version);
            if closed {
                close(&mut d);
            }
            d
        })
        .clone();
    let dk = defs_key(version);
    assert!(
        doc[dk].get(def).is_some(),
        "{version} schema has no definition {def}"
    );
    doc.as_object_mut()
        .unwrap()
        .insert("$ref".into(), json!(format!("#/{dk}/{def}")));
    let v: &'static jsonschema::Validator = Box::leak(Box::new(
        jsonschema::validator_for(&doc).unwrap_or_else(|e| panic!("{version} {def}: {e}")),
    ));
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .insert(key, v);
    v
}

/// The schema definition of the result answering `method` in `version`: across the
/// eras `initialize` and `server/discover` answer each other's request (the translator
/// turns one into the other).
pub fn result_def(method: &str, version: Version) -> &'static str {
    let stateless = version >= Version::V2026_07_28;
    match method {
        "initialize" | "server/discover" if stateless => "DiscoverResult",
        "initialize" | "server/discover" => "InitializeResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "sampling/createMessage" => "CreateMessageResult",
        "roots/list" => "ListRootsResult",
        "elicitation/create" => "ElicitResult",
        _ => "Result",
    }
}

/// Extension fields in the vectors are named `x-...`; the closed world admits them, as
/// every version's published schema does.
fn without_extensions(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !k.starts_with("x-"))
                .map(|(k, v)| (k.clone(), without_extensions(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_extensions).collect()),
        other => other.clone(),
    }
}

fn check(version: Version, def: &str, closed: bool, v: &Value) -> Result<(), String> {
    let val = validator(version, def, closed);
    let stripped;
    let v = if closed {
        stripped = without_extensions(v);
        &stripped
    } else {
        v
    };
    let errs: Vec<String> = val
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not a valid {def} of MCP {version}{}: {}",
            if closed { " (closed world)" } else { "" },
            errs.join("; ")
        ))
    }
}

/// Checks one message (or a 2025-03-26 batch) against the official schema of `version`,
/// as published and closed-world. `answers` types result responses.
pub fn check_message(
    version: Version,
    dir: Direction,
    msg: &Value,
    answers: Option<&str>,
) -> Result<(), String> {
    if schema_dir().is_none() {
        return Ok(());
    }
    check(version, "JSONRPCMessage", false, msg)?;
    if let Value::Array(items) = msg {
        for m in items {
            check_message(version, dir, m, answers)?;
        }
        return Ok(());
    }
    let side = match dir {
        Direction::ClientToServer => "Client",
        Direction::ServerToClient => "Server",
    };
    let stateless = version >= Version::V2026_07_28;
    if msg.get("method").is_some() {
        let kind = if msg.get("id").is_some() {
            "Request"
        } else {
            "Notification"
        };
        if stateless && kind == "Request" && side == "Server" {
            return Err(format!(
                "{version} servers send no JSON-RPC requests: {msg}"
            ));
        }
        let def = format!("{side}{kind}");
        // Methods no version defines are not MCP messages: only the envelope applies.
        let method = msg["method"].as_str().unwrap_or_default();
        if method.starts_with("vendor/") {
            return Ok(());
        }
        check(version, &def, false, msg)?;
        return check(version, &def, true, msg);
    }
    if msg.get("error").is_some() {
        let def = if version >= Version::V2025_11_25 {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        return check(version, def, false, msg);
    }
    if stateless && side == "Client" {
        return Err(format!("{version} clients send no JSON-RPC results: {msg}"));
    }
    let def = if stateless && msg["result"]["resultType"] == "input_required" {
        "InputRequiredResult"
    } else {
        result_def(answers.unwrap_or_default(), version)
    };
    check(version, def, false, &msg["result"])?;
    check(version, def, true, &msg["result"])
}
