//! Manifests of the trivial SUTs (`examples/trivialsut.rs`): one mode for every frame, the
//! reference's params, so every vector the reference runs applies to them too.

use std::path::{Path, PathBuf};

/// The `params` block of reference-tls.yaml, so every vector the reference runs applies
/// here too and the two cannot drift apart.
pub fn reference_params() -> String {
    let tls = super::root().join("implementations/manifests/reference-tls.yaml");
    let text = std::fs::read_to_string(tls).unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with("params:"))
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The manifest of `trivialsut MODE` over stdio: every profile claimed, the reference's
/// params, short timing (nothing it does takes long), a probe where it can be refused.
pub fn manifest(mode: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let probe = if mode == "accept-all" {
        // It answers nothing, so accepts are confirmed by quiet windows alone.
        String::new()
    } else {
        r#"  probe:
    frame: {profile_id: 1, msg_type: 1, payload: {json: {jsonrpc: "2.0", id: "probe", method: "ping"}}}
    reply_profile_id: 1
    reply_msg_type: 2
"#
        .to_owned()
    };
    let text = format!(
        r#"name: trivial-{mode}
version: "0"
kind: endpoint
start: {{command: "{}", args: ["{mode}"]}}
methods: [session]
claims: {{class: C0, profiles: [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]}}
params:
{}limits: {{MAX_FRAME_BYTES: 8388608, MIN_MSG_ID_BYTES: 8, MAX_MSG_ID_BYTES: 64, MAX_EXT_BYTES: 4096, MAX_PAYLOAD_BYTES: 8387584}}
policy:
  timestamp_freshness: true
  max_clock_skew_ms: 300000
  unknown_profile: error-reply
  rate_limit: {{frames: 64, window_ms: 1000}}
  reject_duplicate_msg_id: true
session:
  transport: stdio
  reject_signal:
    mode: error-frame
    error_frame: {{profile_id: 1, msg_type: 2, code_pointer: /error/data/swp_error}}
    after: continue
{probe}  timing: {{step_ms: 450, silence_ms: 100, vector_ms: 20000}}
"#,
        super::example("trivialsut").display(),
        reference_params(),
    );
    let p = dir.join(format!("trivial-{mode}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}
