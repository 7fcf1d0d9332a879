//! Runs every `vectors/mcpx` translation vector against the library directly (the harness
//! runs the same files through its `translate` method), and checks every expected output
//! against the official schema of its version, so a vector cannot expect an invalid
//! message.

mod common;

use mcp_translate::{translate, Answering, Direction, Hop, NoRequests, RequestLookup, Version};
use serde_json::Value;
use std::path::PathBuf;

fn vectors() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors/mcpx");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let v: Value =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        out.push((p.file_name().unwrap().to_string_lossy().into_owned(), v));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        out.len() >= 60,
        "expected the mcpx catalog, found {} files",
        out.len()
    );
    out
}

fn version(v: &Value) -> Version {
    v.as_str().unwrap().parse().unwrap()
}

fn direction(v: &Value) -> Direction {
    serde_json::from_value(v.clone()).unwrap()
}

#[test]
fn every_mcpx_vector_holds_for_the_library() {
    let mut failures = Vec::new();
    for (file, v) in vectors() {
        for step in v["steps"].as_array().unwrap() {
            let t = &step["send"]["translate"];
            let hop = Hop {
                from: version(&t["from"]),
                to: version(&t["to"]),
                direction: direction(&t["direction"]),
            };
            let answers = t.get("answers").and_then(Value::as_str);
            let lookup: Box<dyn RequestLookup> = match answers {
                Some(m) => Box::new(Answering(m)),
                None => Box::new(NoRequests),
            };
            let got = translate(t["message"].clone(), &hop, lookup.as_ref());
            // In a `one_of` the first alternative is this library's own choice; every
            // alternative's messages must still be valid for the target version.
            let exp = match step["expect"].get("one_of").and_then(Value::as_array) {
                Some(alts) => {
                    for alt in alts.iter().skip(1) {
                        for m in alt["translated"]["messages"]
                            .as_array()
                            .into_iter()
                            .flatten()
                        {
                            if let Err(why) =
                                common::check_message(hop.to, hop.direction, m, answers)
                            {
                                failures
                                    .push(format!("{file}: alternative message invalid: {why}"));
                            }
                        }
                    }
                    &alts[0]
                }
                None => &step["expect"],
            };
            if let Some(e) = exp.get("translation_error") {
                match got {
                    Ok(o) => {
                        failures.push(format!("{file}: expected an error, got {:?}", o.messages))
                    }
                    Err(err) => {
                        let kind = serde_json::to_value(err.kind).unwrap();
                        if kind != e["kind"]
                            || e.get("message_type")
                                .is_some_and(|m| m.as_str() != Some(err.message_type.as_str()))
                            || e.get("path")
                                .is_some_and(|p| p.as_str() != Some(err.path.as_str()))
                        {
                            failures.push(format!("{file}: expected {e}, got {err}"));
                        }
                        assert_eq!((err.from, err.to), (hop.from, hop.to), "{file}");
                    }
                }
                continue;
            }
            let e = &exp["translated"];
            let empty = Value::Array(vec![]);
            match got {
                Err(err) => failures.push(format!("{file}: unexpected error {err}")),
                Ok(o) => {
                    if Value::Array(o.messages.clone()) != e["messages"] {
                        failures.push(format!(
                            "{file}: messages\n  got  {}\n  want {}",
                            Value::Array(o.messages.clone()),
                            e["messages"]
                        ));
                    }
                    if Value::Array(o.replies.clone()) != *e.get("replies").unwrap_or(&empty) {
                        failures.push(format!("{file}: replies got {:?}", o.replies));
                    }
                    let got_w: Vec<Value> = o
                        .warnings
                        .iter()
                        .map(|w| serde_json::json!({"kind": w.kind, "path": w.path}))
                        .collect();
                    if Value::Array(got_w.clone()) != *e.get("warnings").unwrap_or(&empty) {
                        failures.push(format!(
                            "{file}: warnings\n  got  {}\n  want {}",
                            Value::Array(got_w),
                            e.get("warnings").unwrap_or(&empty)
                        ));
                    }
                }
            }
            // The expected outputs themselves must be valid for their versions.
            for m in e["messages"].as_array().unwrap() {
                if let Err(why) = common::check_message(hop.to, hop.direction, m, answers) {
                    failures.push(format!("{file}: expected message invalid: {why}"));
                }
            }
            // A reply answers the request of the input with its id.
            let asked = |id: &Value| {
                let items = match &t["message"] {
                    Value::Array(a) => a.clone(),
                    m => vec![m.clone()],
                };
                items
                    .into_iter()
                    .find(|m| m.get("id") == Some(id) && m.get("method").is_some())
                    .and_then(|m| m["method"].as_str().map(str::to_owned))
            };
            for m in e
                .get("replies")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let method = m.get("id").and_then(asked);
                if let Err(why) =
                    common::check_message(hop.from, hop.direction.reverse(), m, method.as_deref())
                {
                    failures.push(format!("{file}: expected reply invalid: {why}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The inputs of downgrade vectors that expect drops must fail the closed-world check of
/// the target: proof that the schema check can fail and is not vacuous.
#[test]
fn the_schema_check_catches_newer_fields() {
    if common::schema_dir().is_none() {
        return;
    }
    let tool = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "t", "title": "T", "inputSchema": {"type": "object"}}]}});
    assert!(common::check_message(
        Version::V2024_11_05,
        Direction::ServerToClient,
        &tool,
        Some("tools/list")
    )
    .is_err());
    assert!(common::check_message(
        Version::V2025_06_18,
        Direction::ServerToClient,
        &tool,
        Some("tools/list")
    )
    .is_ok());
    let audio = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [
        {"type": "audio", "data": "AA", "mimeType": "audio/wav"}]}});
    assert!(common::check_message(
        Version::V2024_11_05,
        Direction::ServerToClient,
        &audio,
        Some("tools/call")
    )
    .is_err());
    let elicit = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
        "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
    assert!(common::check_message(
        Version::V2025_03_26,
        Direction::ServerToClient,
        &elicit,
        None
    )
    .is_err());
    let batch = serde_json::json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    assert!(common::check_message(
        Version::V2025_06_18,
        Direction::ClientToServer,
        &batch,
        None
    )
    .is_err());
    assert!(common::check_message(
        Version::V2025_03_26,
        Direction::ClientToServer,
        &batch,
        None
    )
    .is_ok());
}
