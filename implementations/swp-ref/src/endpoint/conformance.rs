//! The conformance fixture set (`swp-ref serve --fixtures conformance`): the tools,
//! resources, resource template and prompts that the official MCP conformance suite's
//! server scenarios name, with the behaviour each scenario describes, so the suite can run
//! against the reference over SWP (through `swp-ref mcp-gateway`). The tools that log,
//! report progress or ask the client (sampling, elicitation) are [`Script`]s: their
//! notifications and server-to-client requests travel over profile 1 like any other
//! message, and carry the client request's id in `params._meta` under [`RELATED_KEY`] so a
//! gateway can route them to the client whose call they belong to.

use super::mcp::Action;
use super::script::{Script, Step};
use super::tools::KNOWN_PROTOCOL_VERSIONS;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use swp_profiles::mcp::jsonrpc;

/// The `_meta` key naming the client request a server-originated message belongs to (its
/// JSON-RPC id, unchanged). MCP leaves that relation to the transport (Streamable HTTP
/// sends such messages on the request's own stream); over one shared SWP link the payload
/// has to carry it (docs/mcp-gateway.md, "Server-to-client messages").
pub const RELATED_KEY: &str = "swp-ref/relatedRequestId";

/// The protocol version answered when the client asks for one the reference does not know.
pub const NEWEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// A 1x1 red PNG (RGBA), base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// JSON-RPC "resource not found" (MCP resources).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// Most resource subscriptions one connection keeps.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// Log levels in order of severity (MCP logging).
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Which MCP tools, resources and prompts the endpoint serves on profile 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fixtures {
    /// The small deterministic tool set the project's own vectors use ([`super::tools`]).
    #[default]
    Reference,
    /// The official MCP conformance suite's fixtures (this module).
    Conformance,
}

/// How a server-to-client request's answer becomes the tool call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// `sampling/createMessage`: the model's text.
    Sampling,
    /// `elicitation/create` for `test_elicitation`: the action and content.
    Elicitation,
    /// `elicitation/create` for the SEP-1034 and SEP-1330 tools.
    ElicitationCompleted,
}

/// What one connection remembers for the fixtures: the log level and the subscriptions.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Index into [`LEVELS`] of the lowest level sent (`None`: everything).
    level: Option<usize>,
    subscriptions: Vec<String>,
}

/// Answers a request of the fixture set, or `None` for a method it leaves to the
/// reference's own handler (ping, the `swp/*` hooks).
pub fn handle(
    state: &mut State,
    id: &RawValue,
    method: &str,
    params: Option<&RawValue>,
) -> Option<Action> {
    let p: Value = params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let id = id.get();
    let ok = |v: Value| Some(Action::Reply(jsonrpc::result(id, &v.to_string())));
    let invalid = |m: &str| {
        Some(Action::Reply(jsonrpc::error(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!("Invalid params: {m}"),
            None,
        )))
    };
    let arg = |name: &str| {
        p.pointer(&format!("/arguments/{name}"))
            .and_then(Value::as_str)
    };
    match method {
        "initialize" => ok(initialize(&p)),
        "tools/list" => ok(json!({ "tools": tool_definitions() })),
        "tools/call" => {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            call(state, id, name, &p)
        }
        "resources/list" => ok(json!({ "resources": resources() })),
        "resources/templates/list" => ok(json!({"resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "description": "A resource template: {id} is substituted into the data",
            "mimeType": "application/json"
        }]})),
        "resources/read" => match p.get("uri").and_then(Value::as_str) {
            None => invalid("resources/read takes {\"uri\": string}"),
            Some(uri) => match read(uri) {
                Some(contents) => ok(json!({ "contents": [contents] })),
                None => Some(Action::Reply(jsonrpc::error(
                    id,
                    RESOURCE_NOT_FOUND,
                    "Resource not found",
                    Some(&json!({ "uri": uri }).to_string()),
                ))),
            },
        },
        "resources/subscribe" | "resources/unsubscribe" => {
            let Some(uri) = p.get("uri").and_then(Value::as_str) else {
                return invalid("takes {\"uri\": string}");
            };
            state.subscriptions.retain(|s| s != uri);
            if method == "resources/subscribe" {
                if state.subscriptions.len() >= MAX_SUBSCRIPTIONS {
                    return invalid("too many subscriptions on this connection");
                }
                state.subscriptions.push(uri.to_owned());
            }
            ok(json!({}))
        }
        "prompts/list" => ok(json!({ "prompts": prompts() })),
        "prompts/get" => {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            match prompt(name, &arg) {
                Ok(messages) => ok(json!({ "messages": messages })),
                Err(m) => invalid(&m),
            }
        }
        "completion/complete" => {
            let typed = p
                .pointer("/argument/value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let values: Vec<&str> = ["paris", "park", "party", "test", "testing"]
                .into_iter()
                .filter(|c| c.starts_with(typed))
                .collect();
            ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
        }
        "logging/setLevel" => {
            match LEVELS
                .iter()
                .position(|l| Some(*l) == p.get("level").and_then(Value::as_str))
            {
                Some(k) => {
                    state.level = Some(k);
                    ok(json!({}))
                }
                None => invalid("level must be one of the MCP log levels"),
            }
        }
        _ => None,
    }
}

fn initialize(p: &Value) -> Value {
    let asked = p.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| KNOWN_PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(NEWEST_PROTOCOL_VERSION);
    json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": false},
            "resources": {"subscribe": true, "listChanged": false},
            "prompts": {"listChanged": false},
            "logging": {},
            "completions": {}
        },
        "serverInfo": {"name": "swp-ref-conformance", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// The fixture tools, in a stable order.
pub fn tool_definitions() -> Value {
    let none = json!({"type": "object", "properties": {}});
    let text_arg = |name: &str, what: &str| {
        json!({
            "type": "object",
            "properties": {name: {"type": "string", "description": what}},
            "required": [name]
        })
    };
    let plain = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": none});
    json!([
        plain("test_simple_text", "Returns a simple text"),
        plain("test_image_content", "Returns an image"),
        plain("test_audio_content", "Returns audio"),
        plain("test_embedded_resource", "Returns an embedded resource"),
        plain("test_multiple_content_types", "Returns text, an image and a resource"),
        plain("test_tool_with_logging", "Sends three log messages while it runs"),
        plain("test_tool_with_progress", "Reports progress while it runs"),
        plain("test_error_handling", "Always fails (isError)"),
        {"name": "test_sampling", "description": "Asks the client's model (sampling)",
         "inputSchema": text_arg("prompt", "The prompt to send to the model")},
        {"name": "test_elicitation", "description": "Asks the user (elicitation)",
         "inputSchema": text_arg("message", "The message to show the user")},
        plain("test_elicitation_sep1034_defaults", "Elicits fields with default values"),
        plain("test_elicitation_sep1330_enums", "Elicits every kind of enum field"),
        plain("test_reconnection", "Answers once its result is ready"),
        {"name": "json_schema_2020_12_tool",
         "description": "Tool with JSON Schema 2020-12 features",
         "inputSchema": {
             "$schema": "https://json-schema.org/draft/2020-12/schema",
             "type": "object",
             "$defs": {"address": {"type": "object", "properties": {
                 "street": {"type": "string"}, "city": {"type": "string"}}}},
             "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
             "additionalProperties": false
         }}
    ])
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn image() -> Value {
    json!({"type": "image", "data": PNG, "mimeType": "image/png"})
}

/// A short silent WAV (8 kHz, 8-bit mono, 8 samples), base64.
fn wav() -> String {
    use base64::Engine as _;
    let samples = [0x80u8; 8];
    let mut w = Vec::with_capacity(44 + samples.len());
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    w.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    w.extend_from_slice(&1u16.to_le_bytes()); // block align
    w.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    w.extend_from_slice(b"data");
    w.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    w.extend_from_slice(&samples);
    base64::engine::general_purpose::STANDARD.encode(w)
}

/// `_meta` naming the client request `id` (raw JSON) a server message belongs to.
fn related(id: &str) -> Value {
    let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
    json!({ RELATED_KEY: id })
}

fn call(state: &State, id: &str, name: &str, p: &Value) -> Option<Action> {
    let content = |c: Value| {
        Some(Action::Reply(jsonrpc::result(
            id,
            &json!({"content": c}).to_string(),
        )))
    };
    let arg = |k: &str| {
        p.pointer(&format!("/arguments/{k}"))
            .and_then(Value::as_str)
    };
    let done = |t: &str| jsonrpc::result(id, &json!({"content": [text(t)]}).to_string());
    let notify = |after_ms: u64, method: &str, params: Value| Step::Notify {
        after_ms,
        payload: json!({"jsonrpc": "2.0", "method": method, "params": params})
            .to_string()
            .into_bytes(),
    };
    let ask = |method: &'static str, params: Value, finish: Finish| {
        let mut params = params;
        params["_meta"] = related(id);
        Some(Action::Script(Script(vec![Step::Ask {
            method,
            params: params.to_string(),
            finish,
        }])))
    };
    match name {
        "test_simple_text" => content(json!([text("This is a simple text response for testing.")])),
        "test_image_content" => content(json!([image()])),
        "test_audio_content" => content(json!([{"type": "audio", "data": wav(), "mimeType": "audio/wav"}])),
        "test_embedded_resource" => content(json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}])),
        "test_multiple_content_types" => content(json!([
            text("Multiple content types test:"),
            image(),
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
             "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
        ])),
        "test_error_handling" => Some(Action::Reply(jsonrpc::result(
            id,
            &json!({"isError": true, "content": [text("This tool intentionally returns an error for testing")]})
                .to_string(),
        ))),
        "test_tool_with_logging" => {
            // Sent unless the client asked for a level above info.
            let sends = state.level.is_none_or(|l| l <= 1);
            let log = |after_ms: u64, msg: &str| {
                notify(after_ms, "notifications/message", json!({
                    "level": "info", "logger": "test_tool_with_logging", "data": msg,
                    "_meta": related(id)}))
            };
            let mut steps = Vec::new();
            if sends {
                steps.push(log(0, "Tool execution started"));
                steps.push(log(50, "Tool processing data"));
                steps.push(log(50, "Tool execution completed"));
            }
            steps.push(Step::Reply {
                after_ms: if sends { 0 } else { 100 },
                payload: done("Tool with logging executed successfully"),
            });
            Some(Action::Script(Script(steps)))
        }
        "test_tool_with_progress" => {
            // Without a token nothing is reported; the call takes as long all the same.
            let steps = match p.pointer("/_meta/progressToken") {
                Some(t) => [0u64, 50, 100]
                    .into_iter()
                    .map(|progress| {
                        notify(if progress == 0 { 0 } else { 50 }, "notifications/progress", json!({
                            "progressToken": t, "progress": progress, "total": 100,
                            "_meta": related(id)}))
                    })
                    .chain([Step::Reply { after_ms: 0, payload: done("Tool with progress executed successfully") }])
                    .collect(),
                None => vec![Step::Reply { after_ms: 100, payload: done("Tool with progress executed successfully") }],
            };
            Some(Action::Script(Script(steps)))
        }
        "test_sampling" => match arg("prompt") {
            Some(prompt) => ask("sampling/createMessage", json!({
                "messages": [{"role": "user", "content": text(prompt)}],
                "maxTokens": 100}), Finish::Sampling),
            None => Some(Action::Reply(jsonrpc::error(id, jsonrpc::INVALID_PARAMS, "Invalid params: test_sampling takes {\"prompt\": string}", None))),
        },
        "test_elicitation" => match arg("message") {
            Some(message) => ask("elicitation/create", json!({
                "message": message,
                "requestedSchema": {"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}},
                 "required": ["username", "email"]}}), Finish::Elicitation),
            None => Some(Action::Reply(jsonrpc::error(id, jsonrpc::INVALID_PARAMS, "Invalid params: test_elicitation takes {\"message\": string}", None))),
        },
        "test_elicitation_sep1034_defaults" => ask("elicitation/create", json!({
            "message": "Please review the defaults",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                           "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verified", "default": true}}}
        }), Finish::ElicitationCompleted),
        "test_elicitation_sep1330_enums" => ask("elicitation/create", json!({
            "message": "Please choose",
            "requestedSchema": {"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string",
                                  "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}}}}
        }), Finish::ElicitationCompleted),
        "test_reconnection" => content(json!([text("Reconnection test completed")])),
        "json_schema_2020_12_tool" => {
            let args = p.get("arguments").cloned().unwrap_or(json!({}));
            content(json!([text(&format!("Received: {args}"))]))
        }
        other => Some(Action::Reply(jsonrpc::error(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!("Unknown tool: {other}"),
            None,
        ))),
    }
}

/// The terminal response of a script that asked the client: built from the client's
/// answer, or (`None`) an error result when none came in time.
pub fn finish(f: Finish, request_id: &str, answer: Option<&[u8]>) -> Vec<u8> {
    let answer: Option<Value> = answer.and_then(|a| serde_json::from_slice(a).ok());
    let result = |t: String, is_error: bool| {
        let mut r = json!({"content": [text(&t)]});
        if is_error {
            r["isError"] = json!(true);
        }
        jsonrpc::result(request_id, &r.to_string())
    };
    let Some(answer) = answer else {
        return result("The client did not answer in time".into(), true);
    };
    if let Some(e) = answer.get("error") {
        return result(format!("The client refused the request: {e}"), true);
    }
    let r = answer.get("result").cloned().unwrap_or(Value::Null);
    match f {
        Finish::Sampling => {
            let said = r
                .pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            result(format!("LLM response: {said}"), false)
        }
        Finish::Elicitation | Finish::ElicitationCompleted => {
            let action = r.get("action").and_then(Value::as_str).unwrap_or("unknown");
            let content = r.get("content").cloned().unwrap_or(Value::Null);
            let lead = if f == Finish::Elicitation {
                "User response"
            } else {
                "Elicitation completed"
            };
            result(format!("{lead}: action={action}, content={content}"), false)
        }
    }
}

fn resources() -> Value {
    json!([
        {"uri": "test://static-text", "name": "static-text",
         "description": "A static text resource", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "static-binary",
         "description": "A static binary resource (a PNG)", "mimeType": "image/png"},
        {"uri": "test://watched-resource", "name": "watched-resource",
         "description": "A resource clients may subscribe to", "mimeType": "text/plain"}
    ])
}

fn read(uri: &str) -> Option<Value> {
    match uri {
        "test://static-text" => Some(json!({"uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource."})),
        "test://static-binary" => Some(json!({"uri": uri, "mimeType": "image/png", "blob": PNG})),
        "test://watched-resource" => Some(json!({"uri": uri, "mimeType": "text/plain",
            "text": "The watched resource."})),
        _ => {
            let id = uri
                .strip_prefix("test://template/")?
                .strip_suffix("/data")?;
            if id.is_empty() || id.contains('/') {
                return None;
            }
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Some(json!({"uri": uri, "mimeType": "application/json", "text": data.to_string()}))
        }
    }
}

fn prompts() -> Value {
    let arg = |name: &str, what: &str| json!({"name": name, "description": what, "required": true});
    json!([
        {"name": "test_simple_prompt", "description": "A prompt without arguments"},
        {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
         "arguments": [arg("arg1", "First test argument"), arg("arg2", "Second test argument")]},
        {"name": "test_prompt_with_embedded_resource", "description": "A prompt embedding a resource",
         "arguments": [arg("resourceUri", "URI of the resource to embed")]},
        {"name": "test_prompt_with_image", "description": "A prompt with an image"}
    ])
}

fn prompt<'a>(name: &str, arg: &dyn Fn(&str) -> Option<&'a str>) -> Result<Value, String> {
    let user = |content: Value| json!({"role": "user", "content": content});
    let need = |k: &str| arg(k).ok_or_else(|| format!("{name} needs the argument {k}"));
    match name {
        "test_simple_prompt" => Ok(json!([user(text("This is a simple prompt for testing."))])),
        "test_prompt_with_arguments" => {
            let (a, b) = (need("arg1")?, need("arg2")?);
            Ok(json!([user(text(&format!(
                "Prompt with arguments: arg1='{a}', arg2='{b}'"
            )))]))
        }
        "test_prompt_with_embedded_resource" => {
            let uri = need("resourceUri")?;
            Ok(json!([
                user(
                    json!({"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}})
                ),
                user(text("Please process the embedded resource above."))
            ]))
        }
        "test_prompt_with_image" => Ok(json!([
            user(image()),
            user(text("Please analyze the image above."))
        ])),
        _ => Err(format!("unknown prompt {name:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    fn reply(a: Option<Action>) -> Value {
        match a {
            Some(Action::Reply(p)) => serde_json::from_slice(&p).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn run(method: &str, params: &str) -> Option<Action> {
        let p = raw(params);
        handle(&mut State::default(), &raw("1"), method, Some(&p))
    }

    #[test]
    fn resources_and_the_template_substitute() {
        let v = reply(run(
            "resources/read",
            r#"{"uri":"test://template/123/data"}"#,
        ));
        let t = v["result"]["contents"][0]["text"].as_str().unwrap();
        assert!(t.contains("Data for ID: 123"), "{t}");
        let v = reply(run("resources/read", r#"{"uri":"test://template//data"}"#));
        assert_eq!(v["error"]["code"], RESOURCE_NOT_FOUND);
        let v = reply(run("resources/read", r#"{"uri":"test://static-binary"}"#));
        assert_eq!(v["result"]["contents"][0]["mimeType"], "image/png");
    }

    #[test]
    fn prompts_need_their_arguments() {
        let v = reply(run(
            "prompts/get",
            r#"{"name":"test_prompt_with_arguments","arguments":{"arg1":"hello","arg2":"world"}}"#,
        ));
        assert_eq!(
            v["result"]["messages"][0]["content"]["text"],
            "Prompt with arguments: arg1='hello', arg2='world'"
        );
        let v = reply(run(
            "prompts/get",
            r#"{"name":"test_prompt_with_arguments","arguments":{"arg1":"x"}}"#,
        ));
        assert_eq!(v["error"]["code"], jsonrpc::INVALID_PARAMS);
    }

    #[test]
    fn logging_tool_sends_three_logs_unless_filtered() {
        let mut state = State::default();
        let p = raw(r#"{"name":"test_tool_with_logging","arguments":{}}"#);
        let Some(Action::Script(Script(steps))) =
            handle(&mut state, &raw("\"c\""), "tools/call", Some(&p))
        else {
            panic!("no script")
        };
        let logs: Vec<Value> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Notify { payload, .. } => serde_json::from_slice(payload).ok(),
                _ => None,
            })
            .collect();
        assert_eq!(logs.len(), 3);
        assert_eq!(logs[0]["params"]["_meta"][RELATED_KEY], "c");
        let level = raw(r#"{"level":"error"}"#);
        reply(handle(
            &mut state,
            &raw("2"),
            "logging/setLevel",
            Some(&level),
        ));
        let Some(Action::Script(Script(steps))) =
            handle(&mut state, &raw("3"), "tools/call", Some(&p))
        else {
            panic!("no script")
        };
        assert_eq!(steps.len(), 1, "filtered out at level error");
    }

    #[test]
    fn sampling_asks_with_the_prompt_and_the_related_id() {
        let Some(Action::Script(Script(steps))) = run(
            "tools/call",
            r#"{"name":"test_sampling","arguments":{"prompt":"Hi"}}"#,
        ) else {
            panic!("no script")
        };
        let [Step::Ask { method, params, .. }] = &steps[..] else {
            panic!("{steps:?}")
        };
        assert_eq!(*method, "sampling/createMessage");
        let v: Value = serde_json::from_str(params).unwrap();
        assert_eq!(v["messages"][0]["content"]["text"], "Hi");
        assert_eq!(v["_meta"][RELATED_KEY], 1);
        let refused = finish(
            Finish::Sampling,
            "1",
            Some(br#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}"#),
        );
        let v: Value = serde_json::from_slice(&refused).unwrap();
        assert_eq!(v["result"]["isError"], true);
    }

    #[test]
    fn other_methods_are_left_to_the_reference() {
        assert!(run("ping", "{}").is_none());
        // The fixture set replaces the reference tools: theirs are unknown here.
        let v = reply(run("tools/call", r#"{"name":"echo"}"#));
        assert_eq!(v["error"]["code"], jsonrpc::INVALID_PARAMS);
    }
}
