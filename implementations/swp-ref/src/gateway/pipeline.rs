//! The one validation pipeline every gateway transport shares (seed 003, seed 001 §3), under
//! one envelope policy: a client message in, either a profile-1 payload to forward upstream
//! or a canonical error to answer with; an upstream response in, the client's response out.
//! It remembers the protocol version the upstream agreed to at initialize, since the MCP
//! schema's rules are that version's. Sans-IO: the transports own sockets and waiting, this
//! owns every decision.

use super::canonical::{Canonical, GatewayError};
use super::envelope::{self, Envelope};
use super::policy::EnvelopePolicy;
use super::schemas::SchemaRegistry;
use serde_json::Value;
use swp_profiles::mcp::{MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST, MSG_TYPE_RESPONSE};

/// Largest client message the gateway parses (one JSON-RPC message).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A request, notification or (MCP policy) client response to send upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct Forward {
    /// The profile-1 msg_type: request, notification or response.
    pub msg_type: u64,
    /// The payload: the client's octets, unchanged (no parse and re-serialise on the way
    /// through).
    pub payload: Vec<u8>,
    /// What the response check needs to know about the request.
    pub pending: Pending,
}

/// What the gateway remembers about a forwarded request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pending {
    /// The JSON-RPC id as raw JSON text (`"a"` or `0`; `None` for a notification, or for an
    /// error response without an id).
    pub id: Option<String>,
    /// The method.
    pub method: String,
    /// The tool called, for tools/call.
    pub tool: Option<String>,
}

/// The pipeline's answer to a client message.
#[derive(Debug, Clone, PartialEq)]
pub enum Ingress {
    /// Send this upstream.
    Forward(Forward),
    /// Answer the client with this canonical error; `id` is raw JSON text.
    Reject {
        /// The request id as raw JSON, or `null`.
        id: String,
        /// The method, when the message had a string one (for logs).
        method: Option<String>,
        /// The error.
        error: GatewayError,
    },
}

/// The pipeline: the envelope schema, then the tool I/O schemas.
#[derive(Debug, Default)]
pub struct Pipeline {
    schemas: SchemaRegistry,
    policy: EnvelopePolicy,
    /// The protocol version of the last initialize the upstream answered.
    negotiated: Option<String>,
}

impl Pipeline {
    /// A pipeline holding client messages to `policy`.
    pub fn new(policy: EnvelopePolicy) -> Self {
        Pipeline {
            policy,
            ..Pipeline::default()
        }
    }

    /// The envelope policy.
    pub fn policy(&self) -> EnvelopePolicy {
        self.policy
    }

    /// The protocol version the upstream agreed to at the last initialize, if any.
    pub fn negotiated(&self) -> Option<&str> {
        self.negotiated.as_deref()
    }

    /// The tool schemas learnt so far.
    pub fn schemas(&self) -> &SchemaRegistry {
        &self.schemas
    }

    /// Learns the tool set from a tools/list result (the gateway asks for one at start).
    pub fn learn_tools(&mut self, result: &Value) -> Result<usize, GatewayError> {
        self.schemas.load_tools_list(result)
    }

    /// Checks one client message at the last negotiated protocol version.
    pub fn ingress(&self, bytes: &[u8]) -> Ingress {
        self.ingress_at(bytes, self.negotiated.as_deref())
    }

    /// Checks one client message at MCP `version` (a transport that keeps sessions knows
    /// each session's own; `None` before initialize).
    pub fn ingress_at(&self, bytes: &[u8], version: Option<&str>) -> Ingress {
        let reject = |id: String, method: Option<String>, code, detail: String| Ingress::Reject {
            id,
            method,
            error: GatewayError::new(code, detail),
        };
        if bytes.len() > MAX_MESSAGE_BYTES {
            return reject(
                "null".into(),
                None,
                Canonical::InvalidEnvelope,
                format!(
                    "message of {} octets exceeds {MAX_MESSAGE_BYTES}",
                    bytes.len()
                ),
            );
        }
        let msg: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            // Seed 003's table is closed: text that is not JSON is not a valid envelope. MCP
            // is JSON-RPC, whose answer is the parse error.
            Err(e) => {
                let code = match self.policy {
                    EnvelopePolicy::Seed003 => Canonical::InvalidEnvelope,
                    EnvelopePolicy::Mcp => Canonical::ParseError,
                };
                return reject("null".into(), None, code, format!("not JSON: {e}"));
            }
        };
        let id_raw = msg
            .get("id")
            .filter(|v| v.is_string() || v.is_number())
            .map_or_else(|| "null".to_owned(), Value::to_string);
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let env = match envelope::check(&msg, self.policy, version) {
            Ok(e) => e,
            Err(error) => {
                return Ingress::Reject {
                    id: id_raw,
                    method,
                    error,
                }
            }
        };
        match env {
            // The upstream asked the client something (sampling, elicitation, ping); the
            // answer goes back to it under that request's msg_id (the transport finds it).
            Envelope::Response { id } => Ingress::Forward(Forward {
                msg_type: MSG_TYPE_RESPONSE,
                payload: bytes.to_vec(),
                pending: Pending {
                    id,
                    method: String::new(),
                    tool: None,
                },
            }),
            Envelope::Notification { method } => Ingress::Forward(Forward {
                msg_type: MSG_TYPE_NOTIFICATION,
                payload: bytes.to_vec(),
                pending: Pending {
                    id: None,
                    method,
                    tool: None,
                },
            }),
            Envelope::Request { id, method, params } => {
                let tool = if method == "tools/call" {
                    match self.schemas.check_call(&params) {
                        Ok(t) => Some(t),
                        Err(error) => {
                            return Ingress::Reject {
                                id: id_raw,
                                method: Some(method),
                                error,
                            }
                        }
                    }
                } else {
                    None
                };
                Ingress::Forward(Forward {
                    msg_type: MSG_TYPE_REQUEST,
                    payload: bytes.to_vec(),
                    pending: Pending {
                        id: Some(id),
                        method,
                        tool,
                    },
                })
            }
        }
    }

    /// Checks the upstream's response to a forwarded request and returns what the client
    /// gets: the upstream octets unchanged, or a canonical error.
    pub fn egress(&mut self, pending: &Pending, payload: &[u8]) -> Result<Vec<u8>, GatewayError> {
        let parsed = swp_profiles::mcp::parse(swp_profiles::mcp::MSG_TYPE_RESPONSE, payload)
            .map_err(|e| {
                GatewayError::new(Canonical::InternalError, format!("upstream response: {e}"))
            })?;
        let swp_profiles::mcp::McpMessage::Response { id, result, .. } = parsed else {
            return Err(GatewayError::new(
                Canonical::InternalError,
                "upstream sent no response",
            ));
        };
        // §5: the JSON-RPC id is never changed, so the upstream must answer with the one the
        // client sent (the gateway forwarded it untouched).
        if id.get() == "null" {
            // An SWP error frame (the upstream rejected the frame itself): the client's id
            // must survive, so it becomes the gateway's internal error on that id.
            return Err(GatewayError::new(
                Canonical::InternalError,
                format!(
                    "the upstream rejected the request: {}",
                    String::from_utf8_lossy(payload)
                ),
            ));
        }
        let expected: Option<Value> = pending
            .id
            .as_deref()
            .and_then(|i| serde_json::from_str(i).ok());
        let got: Option<Value> = serde_json::from_str(id.get()).ok();
        if got != expected {
            return Err(GatewayError::new(
                Canonical::InternalError,
                format!(
                    "upstream answered id {} to request id {:?}",
                    id.get(),
                    pending.id
                ),
            ));
        }
        if let Some(result) = result {
            let value = || -> Result<Value, GatewayError> {
                serde_json::from_str(result.get()).map_err(|e| {
                    GatewayError::new(Canonical::InternalError, format!("upstream result: {e}"))
                })
            };
            if let Some(tool) = &pending.tool {
                self.schemas.check_result(tool, tool, &value()?)?;
            } else if pending.method == "tools/list" {
                // A fresh tools/list teaches the gateway the current tool set.
                self.schemas.load_tools_list(&value()?)?;
            } else if pending.method == "initialize" {
                // The version agreed decides the MCP schema's rules from here on.
                if let Some(v) = value()?.get("protocolVersion").and_then(Value::as_str) {
                    self.negotiated = Some(v.to_owned());
                }
            }
        }
        Ok(payload.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pipeline() -> Pipeline {
        seeded(EnvelopePolicy::Seed003)
    }

    fn seeded(policy: EnvelopePolicy) -> Pipeline {
        let mut p = Pipeline::new(policy);
        p.learn_tools(&json!({"tools": crate::endpoint::tools::definitions()}))
            .unwrap();
        p
    }

    fn rejected(i: Ingress) -> (String, Canonical) {
        match i {
            Ingress::Reject { id, error, .. } => (id, error.code),
            other => panic!("expected a reject, got {other:?}"),
        }
    }

    #[test]
    fn ingress_forwards_octets_unchanged_or_rejects_canonically() {
        let p = pipeline();
        let msg = b"{ \"jsonrpc\":\"2.0\", \"id\":\"a\",\"method\":\"ping\",\"params\":{} }";
        match p.ingress(msg) {
            Ingress::Forward(f) => {
                assert_eq!(f.payload, msg);
                assert_eq!(f.msg_type, MSG_TYPE_REQUEST);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            rejected(p.ingress(b"{")),
            ("null".into(), Canonical::InvalidEnvelope)
        );
        assert_eq!(
            rejected(p.ingress(br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}"#)),
            ("7".into(), Canonical::InvalidEnvelope)
        );
        assert_eq!(
            rejected(p.ingress(
                br#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"zz"}}"#
            )),
            ("\"c\"".into(), Canonical::ToolNotFound)
        );
        assert_eq!(
            rejected(p.ingress(
                br#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}"#
            ))
            .1,
            Canonical::InvalidToolInput
        );
    }

    #[test]
    fn egress_checks_outputs_and_ids() {
        let mut p = pipeline();
        let pending = Pending {
            id: Some("\"9\"".into()),
            method: "tools/call".into(),
            tool: Some("broken_output".into()),
        };
        let bad = br#"{"jsonrpc":"2.0","id":"9","result":{"content":[],"structuredContent":{"count":"three"}}}"#;
        assert_eq!(
            p.egress(&pending, bad).unwrap_err().code,
            Canonical::InternalError
        );
        let pending = Pending {
            id: Some("\"9\"".into()),
            method: "ping".into(),
            tool: None,
        };
        let ok = br#"{"jsonrpc":"2.0","id":"9","result":{}}"#;
        assert_eq!(p.egress(&pending, ok).unwrap(), ok);
        let wrong = br#"{"jsonrpc":"2.0","id":"8","result":{}}"#;
        assert_eq!(
            p.egress(&pending, wrong).unwrap_err().code,
            Canonical::InternalError
        );
    }

    fn forwarded(i: Ingress) -> Forward {
        match i {
            Ingress::Forward(f) => f,
            other => panic!("expected a forward, got {other:?}"),
        }
    }

    #[test]
    fn the_mcp_policy_takes_what_the_mcp_schema_allows() {
        let p = seeded(EnvelopePolicy::Mcp);
        let f = forwarded(p.ingress(br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#));
        assert_eq!(
            (f.msg_type, f.pending.id.as_deref()),
            (MSG_TYPE_REQUEST, Some("0"))
        );
        let f = forwarded(p.ingress(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#));
        assert_eq!(
            (f.msg_type, f.pending.id.as_deref()),
            (MSG_TYPE_RESPONSE, Some("7"))
        );
        assert_eq!(
            rejected(p.ingress(b"{")),
            ("null".into(), Canonical::ParseError)
        );
        assert_eq!(
            rejected(p.ingress(br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":[]}"#)),
            ("7".into(), Canonical::InvalidEnvelope)
        );
        // tools/call still goes through the tool schemas, whatever the id's type.
        assert_eq!(
            rejected(p.ingress(
                br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"zz"}}"#
            )),
            ("3".into(), Canonical::ToolNotFound)
        );
        // The same messages under seed 003 are envelope errors.
        let s = pipeline();
        for msg in [
            &br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            assert_eq!(rejected(s.ingress(msg)).1, Canonical::InvalidEnvelope);
        }
    }

    #[test]
    fn egress_matches_integer_ids_by_value_and_learns_the_version() {
        let mut p = seeded(EnvelopePolicy::Mcp);
        assert_eq!(p.negotiated(), None);
        let pending = Pending {
            id: Some("0".into()),
            method: "initialize".into(),
            tool: None,
        };
        let ok = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(p.egress(&pending, ok).unwrap(), ok);
        assert_eq!(p.negotiated(), Some("2025-06-18"));
        // From now on an error response without an id is not valid MCP.
        let no_id = br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"no"}}"#;
        assert_eq!(rejected(p.ingress(no_id)).1, Canonical::InvalidEnvelope);
        assert!(matches!(
            p.ingress_at(no_id, Some("2025-11-25")),
            Ingress::Forward(_)
        ));
        // The string "0" is another id than the integer 0.
        let wrong = br#"{"jsonrpc":"2.0","id":"0","result":{}}"#;
        assert_eq!(
            p.egress(&pending, wrong).unwrap_err().code,
            Canonical::InternalError
        );
    }
}
