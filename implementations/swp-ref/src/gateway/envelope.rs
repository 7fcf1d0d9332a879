//! The MCP envelope schema of the gateway contract (seed 003), as a JSON Schema (draft
//! 2020-12) compiled once: a request has a string `id`, `jsonrpc` "2.0", a non-empty
//! `method` and an object `params`; extra properties are allowed. A notification (no `id`)
//! has the same rules minus `id`, and `params` optional, since MCP notifications such as
//! `notifications/initialized` carry none.

use super::canonical::{Canonical, GatewayError};
use jsonschema::Validator;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// A message that passed the envelope schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// A request: to be answered.
    Request {
        /// The id (a string, by the schema).
        id: String,
        /// The method.
        method: String,
        /// The params object.
        params: Value,
    },
    /// A notification: forwarded, never answered.
    Notification {
        /// The method.
        method: String,
    },
}

/// The request envelope schema.
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

/// The notification envelope schema.
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

fn compiled(
    cell: &'static OnceLock<Option<Validator>>,
    schema: fn() -> Value,
) -> Option<&'static Validator> {
    cell.get_or_init(|| jsonschema::draft202012::new(&schema()).ok())
        .as_ref()
}

/// Checks one message (already parsed as JSON) against the envelope schema.
pub fn check(msg: &Value) -> Result<Envelope, GatewayError> {
    static REQUEST: OnceLock<Option<Validator>> = OnceLock::new();
    static NOTIFICATION: OnceLock<Option<Validator>> = OnceLock::new();
    let is_notification = msg.as_object().is_some_and(|o| !o.contains_key("id"));
    let validator = if is_notification {
        compiled(&NOTIFICATION, notification_schema)
    } else {
        compiled(&REQUEST, request_schema)
    }
    // The schemas are constants; failing to compile them is a bug, reported as such.
    .ok_or_else(|| {
        GatewayError::new(
            Canonical::InternalError,
            "the envelope schema does not compile",
        )
    })?;
    if let Err(e) = validator.validate(msg) {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() { "/".to_owned() } else { at };
        return Err(GatewayError::new(
            Canonical::InvalidEnvelope,
            format!("envelope schema: {e} (at {at})"),
        ));
    }
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    Ok(if is_notification {
        Envelope::Notification { method }
    } else {
        Envelope::Request {
            id: msg["id"].as_str().unwrap_or_default().to_owned(),
            method,
            params: msg["params"].clone(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: Value) -> Option<Canonical> {
        check(&v).err().map(|e| e.code)
    }

    #[test]
    fn the_envelope_contract() {
        let ok = json!({"jsonrpc":"2.0","id":"1","method":"ping","params":{},"extra":true});
        assert!(matches!(check(&ok), Ok(Envelope::Request { .. })));
        assert!(matches!(
            check(&json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Envelope::Notification { .. })
        ));
        for bad in [
            json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":null,"method":"ping","params":{}}),
            json!({"jsonrpc":"1.0","id":"1","method":"ping","params":{}}),
            json!({"id":"1","method":"ping","params":{}}),
            json!({"jsonrpc":"2.0","id":"1","method":"","params":{}}),
            json!({"jsonrpc":"2.0","id":"1","method":"ping"}),
            json!({"jsonrpc":"2.0","id":"1","method":"ping","params":[]}),
            json!({"jsonrpc":"2.0","method":"n","params":5}),
            json!([{"jsonrpc":"2.0","id":"1","method":"ping","params":{}}]),
            json!("ping"),
        ] {
            assert_eq!(code(bad.clone()), Some(Canonical::InvalidEnvelope), "{bad}");
        }
    }
}
