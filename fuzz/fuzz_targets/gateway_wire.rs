//! The gateway's hostile-input edges: HTTP request heads, WebSocket frames and the
//! validation pipeline (envelope schema, tool input schemas) must never panic on any octets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use swp_ref::gateway::{http, pipeline::Pipeline, ws};

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(head)) = http::parse_head(data) {
        let _ = head.content_length(1 << 20);
        let _ = head.header_has("connection", "upgrade");
    }
    let mut dec = ws::Decoder::new(64 * 1024);
    let mut buf = data.to_vec();
    for _ in 0..64 {
        match dec.decode(&mut buf) {
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    // Schemas compile once; ingress is what meets hostile octets.
    static PIPELINE: std::sync::OnceLock<Pipeline> = std::sync::OnceLock::new();
    let p = PIPELINE.get_or_init(|| {
        let mut p = Pipeline::default();
        let tools = serde_json::json!({"tools": swp_ref::endpoint::tools::definitions()});
        let _ = p.learn_tools(&tools);
        p
    });
    let _ = p.ingress(data);
});
