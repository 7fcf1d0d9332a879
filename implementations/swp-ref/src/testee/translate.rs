//! The reference answer to the testee `translate` operation: the mcp-translate library,
//! with the protocol's string-typed fields parsed and its typed outcome written back.

use mcp_translate::{Answering, Direction, Hop, NoRequests, RequestLookup, Version};
use swp_testee_proto::{TranslateReply, TranslateRequest, TranslateWarning};

fn name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Translates as the request says. `Err` when the request itself is malformed (an unknown
/// version or direction): a testee error, not a translation verdict.
pub fn translate(req: &TranslateRequest) -> Result<TranslateReply, String> {
    let from: Version = req.from.parse().map_err(|e| format!("from: {e}"))?;
    let to: Version = req.to.parse().map_err(|e| format!("to: {e}"))?;
    let direction: Direction =
        serde_json::from_value(serde_json::Value::String(req.direction.clone())).map_err(|_| {
            format!(
                "direction {:?}: expected client_to_server or server_to_client",
                req.direction
            )
        })?;
    let hop = Hop {
        from,
        to,
        direction,
    };
    let answering;
    let lookup: &dyn RequestLookup = match &req.answers {
        Some(m) => {
            answering = Answering(m);
            &answering
        }
        None => &NoRequests,
    };
    Ok(
        match mcp_translate::translate(req.message.clone(), &hop, lookup) {
            Ok(t) => TranslateReply::Translated {
                messages: t.messages,
                replies: t.replies,
                warnings: t
                    .warnings
                    .into_iter()
                    .map(|w| TranslateWarning {
                        kind: name(&w.kind),
                        path: w.path,
                        detail: w.detail.into_owned(),
                    })
                    .collect(),
            },
            Err(e) => TranslateReply::Error {
                kind: name(&e.kind),
                message_type: e.message_type,
                path: e.path,
                details: e.details,
            },
        },
    )
}
