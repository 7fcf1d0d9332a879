//! Property tests: a message of version A upgraded to any newer session version and
//! downgraded back is the original (only `protocolVersion` is rewritten, and back); up to
//! 2026-07-28 and back it is the original too when it uses nothing 2026-07-28 removed (only
//! the session/stateless conversions and the dropped caching hints are reported); and any
//! message of 2025-11-25 taken to 2026-07-28 and on to any older version is valid for each
//! by the official schema, published and closed-world.

mod common;

use mcp_translate::{translate, Answering, Direction, Hop, Version, WarningKind};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const V03: Version = Version::V2025_03_26;
const V06: Version = Version::V2025_06_18;
const V11: Version = Version::V2025_11_25;
const V26: Version = Version::V2026_07_28;

/// Random choices a generator consumes: one bit per optional field. `2` leaves out what
/// 2026-07-28 removed (tasks, tool execution, roots.listChanged).
#[derive(Debug, Clone)]
struct Bits(Vec<bool>, usize, bool);

impl Bits {
    fn next(&mut self) -> bool {
        let b = self
            .0
            .get(self.1 % self.0.len().max(1))
            .copied()
            .unwrap_or(false);
        self.1 += 1;
        b
    }
}

fn put(
    o: &mut Map<String, Value>,
    bits: &mut Bits,
    since: Version,
    at: Version,
    k: &str,
    v: Value,
) {
    if since <= at && bits.next() {
        o.insert(k.into(), v);
    }
}

fn annotations(bits: &mut Bits, at: Version) -> Value {
    let mut o = Map::new();
    put(
        &mut o,
        bits,
        Version::V2024_11_05,
        at,
        "audience",
        json!(["user"]),
    );
    put(
        &mut o,
        bits,
        Version::V2024_11_05,
        at,
        "priority",
        json!(0.25),
    );
    put(
        &mut o,
        bits,
        V06,
        at,
        "lastModified",
        json!("2025-01-01T00:00:00Z"),
    );
    Value::Object(o)
}

fn block(bits: &mut Bits, at: Version, pick: u8) -> Value {
    let kinds: Vec<&str> = ["text", "image", "resource", "audio", "resource_link"]
        .into_iter()
        .filter(|k| match *k {
            "audio" => at >= V03,
            "resource_link" => at >= V06,
            _ => true,
        })
        .collect();
    let kind = kinds[usize::from(pick) % kinds.len()];
    let mut o = match kind {
        "text" => json!({"type": "text", "text": "hello"}),
        "image" => json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
        "audio" => json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}),
        "resource" => {
            let mut r = json!({"uri": "file:///a.txt", "text": "a"});
            if at >= V06 && bits.next() {
                r["_meta"] = json!({"k": 1});
            }
            json!({"type": "resource", "resource": r})
        }
        _ => json!({"type": "resource_link", "uri": "file:///b", "name": "b"}),
    };
    let m = o.as_object_mut().unwrap();
    if bits.next() {
        m.insert("annotations".into(), annotations(bits, at));
    }
    put(m, bits, V06, at, "_meta", json!({"x": true}));
    if kind == "resource_link" {
        put(m, bits, V06, at, "title", json!("B"));
        put(
            m,
            bits,
            V11,
            at,
            "icons",
            json!([{"src": "https://example.com/i.png"}]),
        );
    }
    o
}

fn tool(bits: &mut Bits, at: Version, i: usize) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(format!("tool{i}")));
    put(
        &mut o,
        bits,
        Version::V2024_11_05,
        at,
        "description",
        json!("does things"),
    );
    let mut schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    if at >= V11 && bits.next() {
        schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    }
    o.insert("inputSchema".into(), schema);
    if at >= V03 && bits.next() {
        let mut a = Map::new();
        put(&mut a, bits, V03, at, "readOnlyHint", json!(true));
        put(&mut a, bits, V03, at, "title", json!("Display"));
        o.insert("annotations".into(), Value::Object(a));
    }
    put(&mut o, bits, V06, at, "title", json!("Tool"));
    put(
        &mut o,
        bits,
        V06,
        at,
        "outputSchema",
        json!({"type": "object"}),
    );
    put(&mut o, bits, V06, at, "_meta", json!({"m": 1}));
    put(
        &mut o,
        bits,
        V11,
        at,
        "icons",
        json!([{"src": "https://example.com/t.png"}]),
    );
    if !bits.2 {
        put(
            &mut o,
            bits,
            V11,
            at,
            "execution",
            json!({"taskSupport": "optional"}),
        );
    }
    Value::Object(o)
}

fn resource(bits: &mut Bits, at: Version) -> Value {
    let mut o = Map::new();
    o.insert("uri".into(), json!("file:///r"));
    o.insert("name".into(), json!("r"));
    put(
        &mut o,
        bits,
        Version::V2024_11_05,
        at,
        "mimeType",
        json!("text/plain"),
    );
    if bits.next() {
        o.insert("annotations".into(), annotations(bits, at));
    }
    put(&mut o, bits, V06, at, "title", json!("R"));
    put(&mut o, bits, V06, at, "_meta", json!({}));
    put(
        &mut o,
        bits,
        V11,
        at,
        "icons",
        json!([{"src": "https://example.com/r.png"}]),
    );
    Value::Object(o)
}

fn prompt(bits: &mut Bits, at: Version) -> Value {
    let mut arg = Map::new();
    arg.insert("name".into(), json!("city"));
    put(&mut arg, bits, V06, at, "title", json!("City"));
    let mut o = Map::new();
    o.insert("name".into(), json!("p"));
    o.insert("arguments".into(), json!([arg]));
    put(&mut o, bits, V06, at, "title", json!("P"));
    put(
        &mut o,
        bits,
        V11,
        at,
        "icons",
        json!([{"src": "https://example.com/p.png"}]),
    );
    Value::Object(o)
}

/// A message of version `at`: (message, direction, method its result answers).
fn message(
    bits: &mut Bits,
    at: Version,
    which: u8,
    n: usize,
    picks: &[u8],
) -> (Value, Direction, Option<&'static str>) {
    let s2c = Direction::ServerToClient;
    match which % 7 {
        0 => (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": (0..n).map(|i| tool(bits, at, i)).collect::<Vec<_>>()}}),
            s2c,
            Some("tools/list"),
        ),
        1 => {
            let content: Vec<Value> = picks.iter().map(|p| block(bits, at, *p)).collect();
            let mut r = json!({"content": content});
            if at >= V06 && bits.next() {
                r["structuredContent"] = json!({"n": 1});
                r["content"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "text", "text": "{\"n\":1}"}));
            }
            (
                json!({"jsonrpc": "2.0", "id": 2, "result": r}),
                s2c,
                Some("tools/call"),
            )
        }
        2 => (
            json!({"jsonrpc": "2.0", "id": 3, "result": {"resources": (0..n).map(|_| resource(bits, at)).collect::<Vec<_>>()}}),
            s2c,
            Some("resources/list"),
        ),
        3 => (
            json!({"jsonrpc": "2.0", "id": 4, "result": {"prompts": (0..n).map(|_| prompt(bits, at)).collect::<Vec<_>>()}}),
            s2c,
            Some("prompts/list"),
        ),
        4 => {
            let mut caps = Map::new();
            put(
                &mut caps,
                bits,
                Version::V2024_11_05,
                at,
                "logging",
                json!({}),
            );
            put(&mut caps, bits, V03, at, "completions", json!({}));
            if !bits.2 {
                put(&mut caps, bits, V11, at, "tasks", json!({"list": {}}));
            }
            let mut info = json!({"name": "s", "version": "1"});
            if at >= V06 && bits.next() {
                info["title"] = json!("S");
            }
            if at >= V11 && bits.next() {
                info["websiteUrl"] = json!("https://example.com");
            }
            (
                json!({"jsonrpc": "2.0", "id": 5, "result": {"protocolVersion": at.as_str(), "capabilities": caps, "serverInfo": info}}),
                s2c,
                Some("initialize"),
            )
        }
        5 => {
            let mut caps = Map::new();
            let roots = if bits.2 {
                json!({})
            } else {
                json!({"listChanged": true})
            };
            put(&mut caps, bits, Version::V2024_11_05, at, "roots", roots);
            put(&mut caps, bits, V06, at, "elicitation", json!({}));
            if !bits.2 {
                put(&mut caps, bits, V11, at, "tasks", json!({"cancel": {}}));
            }
            (
                json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"protocolVersion": at.as_str(), "capabilities": caps, "clientInfo": {"name": "c", "version": "1"}}}),
                Direction::ClientToServer,
                None,
            )
        }
        _ => {
            let mut p = Map::new();
            p.insert("progressToken".into(), json!("t"));
            p.insert("progress".into(), json!(n));
            put(&mut p, bits, V03, at, "message", json!("working"));
            (
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p}),
                s2c,
                None,
            )
        }
    }
}

fn version(i: u8) -> Version {
    Version::ALL[usize::from(i) % Version::ALL.len()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn upgrade_then_downgrade_gives_back_the_original(
        a in 0u8..4, b in 0u8..4, which in 0u8..7, n in 0usize..4,
        picks in proptest::collection::vec(0u8..5, 0..4),
        bits in proptest::collection::vec(any::<bool>(), 1..24),
    ) {
        let (lo, hi) = if version(a) <= version(b) { (version(a), version(b)) } else { (version(b), version(a)) };
        let (msg, dir, answers) = message(&mut Bits(bits, 0, false), lo, which, n, &picks);
        let lookup = Answering(answers.unwrap_or("ping"));
        let up = translate(msg.clone(), &Hop { from: lo, to: hi, direction: dir }, &lookup).unwrap();
        prop_assert_eq!(up.messages.len(), 1);
        let down = translate(up.messages[0].clone(), &Hop { from: hi, to: lo, direction: dir }, &lookup).unwrap();
        prop_assert_eq!(&down.messages, &vec![msg]);
        for w in up.warnings.iter().chain(&down.warnings) {
            prop_assert_eq!(w.kind, WarningKind::VersionRewritten, "{:?}", w);
        }
    }

    #[test]
    fn downgrades_of_the_newest_session_version_are_valid_for_the_target(
        to in 0u8..3, which in 0u8..7, n in 0usize..4,
        picks in proptest::collection::vec(0u8..5, 0..4),
        bits in proptest::collection::vec(any::<bool>(), 1..24),
    ) {
        let to = version(to);
        let (msg, dir, answers) = message(&mut Bits(bits, 0, false), V11, which, n, &picks);
        let lookup = Answering(answers.unwrap_or("ping"));
        let out = translate(msg, &Hop { from: V11, to, direction: dir }, &lookup).unwrap();
        for m in &out.messages {
            if let Err(why) = common::check_message(to, dir, m, answers) {
                return Err(TestCaseError::fail(why));
            }
        }
    }

    #[test]
    fn up_to_2026_and_back_keeps_what_2026_did_not_remove(
        lo in 0u8..4, which in 0u8..7, n in 0usize..4,
        picks in proptest::collection::vec(0u8..5, 0..4),
        bits in proptest::collection::vec(any::<bool>(), 1..24),
    ) {
        let lo = version(lo);
        let (msg, dir, answers) = message(&mut Bits(bits, 0, true), lo, which, n, &picks);
        let lookup = Answering(answers.unwrap_or("ping"));
        let up = translate(msg.clone(), &Hop { from: lo, to: V26, direction: dir }, &lookup).unwrap();
        prop_assert_eq!(up.messages.len(), 1);
        // The 2026-07-28 request that an initialize became is what the result answers.
        let back = Answering(if answers == Some("initialize") { "server/discover" } else { answers.unwrap_or("ping") });
        let down = translate(up.messages[0].clone(), &Hop { from: V26, to: lo, direction: dir }, &back).unwrap();
        prop_assert_eq!(&down.messages, &vec![msg]);
        for w in up.warnings.iter().chain(&down.warnings) {
            let ok = match w.kind {
                WarningKind::VersionRewritten => true,
                WarningKind::Converted => w.path.is_empty() || w.path == "/result",
                WarningKind::Dropped => ["/result/ttlMs", "/result/cacheScope", "/result/supportedVersions"].contains(&w.path.as_str()),
                _ => false,
            };
            prop_assert!(ok, "{:?}", w);
        }
    }

    #[test]
    fn through_2026_every_output_is_valid_for_its_version(
        to in 0u8..4, which in 0u8..7, n in 0usize..4,
        picks in proptest::collection::vec(0u8..5, 0..4),
        bits in proptest::collection::vec(any::<bool>(), 1..24),
    ) {
        let to = version(to);
        let (msg, dir, answers) = message(&mut Bits(bits, 0, false), V11, which, n, &picks);
        let lookup = Answering(answers.unwrap_or("ping"));
        let up = translate(msg, &Hop { from: V11, to: V26, direction: dir }, &lookup).unwrap();
        for m in &up.messages {
            if let Err(why) = common::check_message(V26, dir, m, answers) {
                return Err(TestCaseError::fail(why));
            }
        }
        let back = Answering(if answers == Some("initialize") { "server/discover" } else { answers.unwrap_or("ping") });
        for m in up.messages {
            let out = translate(m, &Hop { from: V26, to, direction: dir }, &back).unwrap();
            for m in &out.messages {
                if let Err(why) = common::check_message(to, dir, m, answers) {
                    return Err(TestCaseError::fail(why));
                }
            }
        }
    }
}
