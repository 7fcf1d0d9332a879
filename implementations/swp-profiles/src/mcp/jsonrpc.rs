//! JSON-RPC response bodies that echo a request id octet for octet (§5: ids are never
//! changed). Core errors map to JSON-RPC codes by `ErrorCode::jsonrpc_code` (§6).

/// JSON-RPC "parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "invalid request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC "internal error".
pub const INTERNAL_ERROR: i64 = -32603;

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// A success response; `id` and `result` are raw JSON text.
pub fn result(id: &str, result: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(PREFIX.len() + id.len() + 11 + result.len() + 1);
    v.extend_from_slice(PREFIX);
    v.extend_from_slice(id.as_bytes());
    v.extend_from_slice(br#","result":"#);
    v.extend_from_slice(result.as_bytes());
    v.push(b'}');
    v
}

/// An error response; `id` is raw JSON text, `data` raw JSON text when present.
pub fn error(id: &str, code: i64, message: &str, data: Option<&str>) -> Vec<u8> {
    // Serializing a &str cannot fail.
    let message = serde_json::to_string(message).unwrap_or_default();
    let body = match data {
        Some(d) => format!("{{\"code\":{code},\"message\":{message},\"data\":{d}}}"),
        None => format!("{{\"code\":{code},\"message\":{message}}}"),
    };
    let mut v = Vec::with_capacity(PREFIX.len() + id.len() + 10 + body.len() + 1);
    v.extend_from_slice(PREFIX);
    v.extend_from_slice(id.as_bytes());
    v.extend_from_slice(br#","error":"#);
    v.extend_from_slice(body.as_bytes());
    v.push(b'}');
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use swp_core::ErrorCode;

    #[test]
    fn bodies_echo_the_raw_id() {
        assert_eq!(
            String::from_utf8(result("1.0e2", "{}")).unwrap(),
            r#"{"jsonrpc":"2.0","id":1.0e2,"result":{}}"#
        );
        let e = error("\"a\"", INTERNAL_ERROR, "Internal \"x\"", Some("{\"k\":1}"));
        let v: serde_json::Value = serde_json::from_slice(&e).unwrap();
        assert_eq!(v["error"]["message"], "Internal \"x\"");
        assert_eq!(v["error"]["data"]["k"], 1);
    }

    #[test]
    fn core_errors_map_per_section_6() {
        for (c, j) in [
            (ErrorCode::InvalidFrame, -32700),
            (ErrorCode::UnsupportedVersion, -32600),
            (ErrorCode::UnknownProfile, -32601),
            (ErrorCode::InvalidEnvelope, -32600),
        ] {
            assert_eq!(c.jsonrpc_code(), Some(j), "{c:?}");
        }
        assert_eq!(
            swp_core::CoreCategory::InternalError.jsonrpc_code(),
            INTERNAL_ERROR
        );
    }
}
