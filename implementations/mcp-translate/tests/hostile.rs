//! Hostile input: arbitrary JSON, in any version pair and direction, never panics the
//! translator; it translates or returns a typed error, and what it returns is valid for
//! the target by the crate's own validator.

use mcp_translate::{translate, translate_bytes, validate, Answering, Direction, Hop, Version};
use proptest::prelude::*;
use serde_json::{json, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        prop_oneof![
            Just("2.0"),
            Just("text"),
            Just("audio"),
            Just("resource_link"),
            Just("tools/call"),
            Just("elicitation/create"),
            Just("initialize"),
            Just("tasks/get"),
            Just("x"),
            Just("notifications/progress"),
            Just("image"),
            Just("resource"),
            Just("url"),
            Just("server/discover"),
            Just("input_required"),
            Just("complete"),
            Just("subscriptions/listen")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("jsonrpc"),
                        Just("id"),
                        Just("method"),
                        Just("params"),
                        Just("result"),
                        Just("error"),
                        Just("content"),
                        Just("type"),
                        Just("tools"),
                        Just("name"),
                        Just("inputSchema"),
                        Just("messages"),
                        Just("mode"),
                        Just("uri"),
                        Just("text"),
                        Just("mimeType"),
                        Just("data"),
                        Just("structuredContent"),
                        Just("capabilities"),
                        Just("_meta"),
                        Just("resultType"),
                        Just("inputRequests"),
                        Just("requestState")
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics(v in json_value(), from in 0usize..5, to in 0usize..5, c2s in any::<bool>(), m in 0usize..5) {
        let hop = Hop {
            from: Version::ALL[from],
            to: Version::ALL[to],
            direction: if c2s { Direction::ClientToServer } else { Direction::ServerToClient },
        };
        let lookup = Answering(["tools/call", "tools/list", "sampling/createMessage", "initialize", "server/discover"][m]);
        let bytes = serde_json::to_vec(&v).unwrap();
        let _ = translate_bytes(&bytes, &hop, &lookup);
        if let Ok(out) = translate(v, &hop, &lookup) {
            if hop.from != hop.to {
                for msg in &out.messages {
                    prop_assert!(validate(msg, hop.to, hop.direction, &lookup).is_ok());
                }
            }
        }
    }
}
