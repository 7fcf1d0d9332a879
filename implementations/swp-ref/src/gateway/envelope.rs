//! The envelope schemas client messages are checked against, one set per envelope policy,
//! each a JSON Schema (draft 2020-12) compiled once. Seed 003: a request has a string `id`,
//! `jsonrpc` "2.0", a non-empty `method` and an object `params`; a notification (no `id`) the
//! same minus `id`, with `params` optional (`notifications/initialized` carries none);
//! nothing else is a message. MCP (the JSON-RPC messages of the MCP schema): ids are strings
//! or integers, `params` is an optional object, and a client may also send a result or error
//! response (answering a server-initiated request); from 2025-11-25 an error response may
//! omit its id. Extra properties are allowed under both. Batches (2025-03-26) are refused
//! under both: profile 1 carries no batch (mcp-mapping §4).

use super::canonical::{Canonical, GatewayError};
use super::policy::{self, EnvelopePolicy};
use jsonschema::Validator;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// A message that passed the envelope schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// A request: to be answered.
    Request {
        /// The id as raw JSON text (a string under seed 003; a string or integer under MCP).
        id: String,
        /// The method.
        method: String,
        /// The params (`Null` when absent, which MCP allows).
        params: Value,
    },
    /// A notification: forwarded, never answered.
    Notification {
        /// The method.
        method: String,
    },
    /// A response from the client to a server-initiated request (MCP policy only).
    Response {
        /// The id as raw JSON text; `None` for an error response without one (2025-11-25+).
        id: Option<String>,
    },
}

/// The seed-003 request envelope schema.
pub fn request_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["id", "jsonrpc", "method", "params"],
        "properties": {
            "id": {"type": "string"},
            "jsonrpc": {"const": "2.0"},
            "method": {"type": "string", "minLength": 1},
            "params": {"type": "object"}
        },
        "additionalProperties": true
    })
}

/// The seed-003 notification envelope schema.
pub fn notification_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "method": {"type": "string", "minLength": 1},
            "params": {"type": "object"}
        },
        "additionalProperties": true
    })
}

/// The MCP schema's request (`JSONRPCRequest`): `id` a `RequestId` (string or integer), the
/// method any string, `params` an optional object.
pub fn mcp_request_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["id", "jsonrpc", "method"],
        "properties": {
            "id": {"type": ["string", "integer"]},
            "jsonrpc": {"const": "2.0"},
            "method": {"type": "string"},
            "params": {"type": "object"}
        },
        "additionalProperties": true
    })
}

/// The MCP schema's notification (`JSONRPCNotification`).
pub fn mcp_notification_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "method": {"type": "string"},
            "params": {"type": "object"}
        },
        "additionalProperties": true
    })
}

/// The MCP schema's responses: a result (an object) or an error (`code` an integer,
/// `message` a string), never both; the id a `RequestId`, required unless
/// `id_optional` (an error response from 2025-11-25 on).
fn mcp_response_schema(id_optional: bool) -> Value {
    let error_required = if id_optional {
        json!(["jsonrpc", "error"])
    } else {
        json!(["jsonrpc", "id", "error"])
    };
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "id": {"type": ["string", "integer"]},
            "jsonrpc": {"const": "2.0"},
            "result": {"type": "object"},
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}
            }
        },
        "oneOf": [
            {"required": ["jsonrpc", "id", "result"], "not": {"required": ["error"]}},
            {"required": error_required, "not": {"required": ["result"]}}
        ],
        "additionalProperties": true
    })
}

fn mcp_response_schema_strict() -> Value {
    mcp_response_schema(false)
}

fn mcp_response_schema_lax() -> Value {
    mcp_response_schema(true)
}

fn compiled(
    cell: &'static OnceLock<Option<Validator>>,
    schema: fn() -> Value,
) -> Result<&'static Validator, GatewayError> {
    cell.get_or_init(|| jsonschema::draft202012::new(&schema()).ok())
        .as_ref()
        // The schemas are constants; failing to compile them is a bug, reported as such.
        .ok_or_else(|| {
            GatewayError::new(
                Canonical::InternalError,
                "the envelope schema does not compile",
            )
        })
}

/// What shape a message claims to be, read before the schema judges it, so the error names
/// the rule of the shape the sender meant.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Request,
    Notification,
    Response,
}

fn shape(msg: &Value, policy: EnvelopePolicy) -> Shape {
    let Some(o) = msg.as_object() else {
        return Shape::Request;
    };
    match policy {
        EnvelopePolicy::Seed003 if !o.contains_key("id") => Shape::Notification,
        EnvelopePolicy::Seed003 => Shape::Request,
        EnvelopePolicy::Mcp if o.contains_key("method") && o.contains_key("id") => Shape::Request,
        EnvelopePolicy::Mcp if o.contains_key("method") => Shape::Notification,
        EnvelopePolicy::Mcp if o.contains_key("result") || o.contains_key("error") => {
            Shape::Response
        }
        EnvelopePolicy::Mcp if o.contains_key("id") => Shape::Request,
        EnvelopePolicy::Mcp => Shape::Notification,
    }
}

/// Checks one message (already parsed as JSON) against `policy`'s envelope schema, at the
/// negotiated MCP `version` (`None` before initialize).
pub fn check(
    msg: &Value,
    policy: EnvelopePolicy,
    version: Option<&str>,
) -> Result<Envelope, GatewayError> {
    static REQUEST: OnceLock<Option<Validator>> = OnceLock::new();
    static NOTIFICATION: OnceLock<Option<Validator>> = OnceLock::new();
    static MCP_REQUEST: OnceLock<Option<Validator>> = OnceLock::new();
    static MCP_NOTIFICATION: OnceLock<Option<Validator>> = OnceLock::new();
    static MCP_RESPONSE: OnceLock<Option<Validator>> = OnceLock::new();
    static MCP_RESPONSE_LAX: OnceLock<Option<Validator>> = OnceLock::new();
    let shape = shape(msg, policy);
    let validator = match (policy, shape) {
        (EnvelopePolicy::Seed003, Shape::Notification) => {
            compiled(&NOTIFICATION, notification_schema)
        }
        (EnvelopePolicy::Seed003, _) => compiled(&REQUEST, request_schema),
        (EnvelopePolicy::Mcp, Shape::Request) => compiled(&MCP_REQUEST, mcp_request_schema),
        (EnvelopePolicy::Mcp, Shape::Notification) => {
            compiled(&MCP_NOTIFICATION, mcp_notification_schema)
        }
        (EnvelopePolicy::Mcp, Shape::Response) if policy::error_id_optional(version) => {
            compiled(&MCP_RESPONSE_LAX, mcp_response_schema_lax)
        }
        (EnvelopePolicy::Mcp, Shape::Response) => {
            compiled(&MCP_RESPONSE, mcp_response_schema_strict)
        }
    }?;
    if let Err(e) = validator.validate(msg) {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() { "/".to_owned() } else { at };
        return Err(GatewayError::new(
            Canonical::InvalidEnvelope,
            format!("envelope schema: {e} (at {at})"),
        ));
    }
    let id = msg.get("id").map(Value::to_string);
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    Ok(match shape {
        Shape::Notification => Envelope::Notification { method },
        Shape::Response => Envelope::Response { id },
        Shape::Request => Envelope::Request {
            id: id.unwrap_or_else(|| "null".to_owned()),
            method,
            params: msg.get("params").cloned().unwrap_or(Value::Null),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: Value, policy: EnvelopePolicy) -> Option<Canonical> {
        check(&v, policy, None).err().map(|e| e.code)
    }

    /// Invalid under both policies.
    fn invalid_everywhere() -> Vec<Value> {
        vec![
            json!({"jsonrpc":"2.0","id":null,"method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":1.5,"method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":{},"method":"ping","params":{}}),
            json!({"jsonrpc":"1.0","id":"1","method":"ping","params":{}}),
            json!({"id":"1","method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":"1","method":"ping","params":[]}),
            json!({"jsonrpc":"2.0","method":"n","params":5}),
            json!({"jsonrpc":"2.0","id":"1","method":7}),
            json!([{"jsonrpc":"2.0","id":"1","method":"ping","params":{}}]),
            json!({"tool":"echo","input":{}}),
            json!("ping"),
        ]
    }

    #[test]
    fn the_seed_contract() {
        let seed = EnvelopePolicy::Seed003;
        let ok = json!({"jsonrpc":"2.0","id":"1","method":"ping","params":{},"extra":true});
        assert!(matches!(
            check(&ok, seed, None),
            Ok(Envelope::Request { .. })
        ));
        assert!(matches!(
            check(
                &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
                seed,
                None
            ),
            Ok(Envelope::Notification { .. })
        ));
        let seed_only = [
            json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":"1","method":"","params":{}}),
            json!({"jsonrpc":"2.0","id":"1","method":"ping"}),
            json!({"jsonrpc":"2.0","id":"1","result":{}}),
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}),
        ];
        for bad in invalid_everywhere().into_iter().chain(seed_only) {
            assert_eq!(
                code(bad.clone(), seed),
                Some(Canonical::InvalidEnvelope),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_mcp_schema() {
        let mcp = EnvelopePolicy::Mcp;
        for (msg, id) in [
            (
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}),
                "0",
            ),
            (json!({"jsonrpc":"2.0","id":-3,"method":"ping"}), "-3"),
            (
                json!({"jsonrpc":"2.0","id":"a","method":"ping","x":1}),
                "\"a\"",
            ),
            (json!({"jsonrpc":"2.0","id":"e","method":""}), "\"e\""),
        ] {
            match check(&msg, mcp, None) {
                Ok(Envelope::Request { id: got, .. }) => assert_eq!(got, id, "{msg}"),
                other => panic!("{msg}: {other:?}"),
            }
        }
        assert!(matches!(
            check(
                &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
                mcp,
                None
            ),
            Ok(Envelope::Notification { .. })
        ));
        for (msg, id) in [
            (json!({"jsonrpc":"2.0","id":0,"result":{}}), Some("0")),
            (
                json!({"jsonrpc":"2.0","id":"s","result":{"action":"accept"}}),
                Some("\"s\""),
            ),
            (
                json!({"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}),
                Some("2"),
            ),
            (
                json!({"jsonrpc":"2.0","error":{"code":-1,"message":"no"}}),
                None,
            ),
        ] {
            assert_eq!(
                check(&msg, mcp, Some("2025-11-25")),
                Ok(Envelope::Response {
                    id: id.map(str::to_owned)
                }),
                "{msg}"
            );
        }
        let mcp_invalid = [
            json!({"jsonrpc":"2.0","id":1,"result":[]}),
            json!({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}),
            json!({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}),
            json!({"jsonrpc":"2.0","id":1,"error":{"message":"m"}}),
            json!({"jsonrpc":"2.0","id":true,"result":{}}),
            json!({"id":1,"result":{}}),
        ];
        for bad in invalid_everywhere().into_iter().chain(mcp_invalid) {
            assert_eq!(
                code(bad.clone(), mcp),
                Some(Canonical::InvalidEnvelope),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_error_without_id_is_mcp_from_2025_11_25_on() {
        let msg = json!({"jsonrpc":"2.0","error":{"code":-1,"message":"no"}});
        for (version, ok) in [
            (Some("2024-11-05"), false),
            (Some("2025-06-18"), false),
            (Some("2025-11-25"), true),
            (None, true),
        ] {
            assert_eq!(
                check(&msg, EnvelopePolicy::Mcp, version).is_ok(),
                ok,
                "{version:?}"
            );
        }
    }
}
