//! `swp-ref mcp-proxy` end to end: the test is the client at an old version, the proxy sits
//! in front of a mock server speaking a newer one (and of the real
//! @modelcontextprotocol/server-everything, installed pinned by
//! scripts/install-mcp-servers.sh); everything that reaches the client is checked against
//! the official schema of the client's version, published and closed-world.

#[path = "../../mcp-translate/tests/common/mod.rs"]
mod common;

use mcp_translate::{Direction, Version};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples")
        .join(name);
    // Always through cargo: `cargo test --test` alone does not rebuild examples, and a
    // stale mock would test an old server. A no-op when it is up to date.
    let st = Command::new(std::env::var("CARGO").unwrap_or("cargo".into()))
        .current_dir(root())
        .args(["build", "-q", "-p", "swp-ref", "--example", name])
        .status()
        .unwrap();
    assert!(
        st.success() && p.is_file(),
        "cannot build the {name} example"
    );
    p
}

/// The test as the proxy's client.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    version: Version,
    /// Requests this client sent: id → method, to type the results.
    sent: HashMap<String, String>,
    seen: Vec<Value>,
}

impl Client {
    fn start(version: Version, server: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_swp-ref"))
            .args(["mcp-proxy", "--client-version", version.as_str(), "--"])
            .args(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines() {
                let Ok(l) = l else { return };
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            lines: rx,
            version,
            sent: HashMap::new(),
            seen: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
            self.sent.insert(id.to_string(), m.to_owned());
        }
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the proxy, schema-checked for the client's version.
    fn next(&mut self) -> Value {
        let l = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("no message from the proxy within 20 s");
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        let answers = v
            .get("id")
            .and_then(|id| self.sent.get(&id.to_string()))
            .cloned();
        if let Err(why) = common::check_message(
            self.version,
            Direction::ServerToClient,
            &v,
            answers.as_deref(),
        ) {
            panic!("reached a {} client: {why}\n{v}", self.version);
        }
        self.seen.push(v.clone());
        v
    }

    /// Reads until the response to `id`, answering server requests with `answer`.
    fn response(&mut self, id: Value, mut answer: impl FnMut(&Value) -> Value) -> Value {
        loop {
            let v = self.next();
            if v.get("method").is_some() {
                if let Some(rid) = v.get("id") {
                    let a = answer(&v);
                    self.send(json!({"jsonrpc": "2.0", "id": rid, "result": a}));
                }
                continue;
            }
            if v.get("id") == Some(&id) {
                return v;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version.as_str(), "capabilities": {"roots": {}, "sampling": {}},
            "clientInfo": {"name": "proxy-test", "version": "1"}}}),
        );
        let r = self.response(json!(0), |_| json!({}));
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mock(version: &str) -> Vec<String> {
    vec![
        example("mockmcp_versioned").display().to_string(),
        version.into(),
    ]
}

#[test]
fn a_2024_client_sees_only_2024_through_the_proxy() {
    let server = mock("2025-11-25");
    let args: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut c = Client::start(Version::V2024_11_05, &args);
    let init = c.initialize();
    assert_eq!(
        init.pointer("/result/protocolVersion"),
        Some(&json!("2024-11-05"))
    );
    assert_eq!(
        init.pointer("/result/serverInfo"),
        Some(&json!({"name": "mockmcp-versioned", "version": "1"}))
    );
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = c.response(json!(1), |_| json!({}));
    assert_eq!(
        tools.pointer("/result/tools/0"),
        Some(
            &json!({"name": "rich", "description": "every content kind", "inputSchema": {"type": "object"}})
        )
    );
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "rich", "arguments": {}}}));
    let call = c.response(json!(2), |_| json!({}));
    assert_eq!(
        call.pointer("/result/content"),
        Some(&json!([
            {"type": "text", "text": "n is 1"},
            {"type": "text", "text": "[Audio content: audio/wav]", "annotations": {}},
            {"type": "text", "text": "[Resource link: r.txt <file:///r.txt>]"},
            {"type": "resource", "resource": {"uri": "file:///e.txt", "text": "embedded"}},
            {"type": "text", "text": "{\"n\":1}"}
        ]))
    );
    // The server asks for elicitation: the proxy declines for the 2024 client, which never
    // sees the request; the server's notifications arrive, translated.
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}));
    let ask = c.response(json!(3), |req| {
        panic!("a 2024-11-05 client got a server request: {req}")
    });
    assert_eq!(
        ask.pointer("/result/content/0/text"),
        Some(&json!("elicitation: \"decline\""))
    );
    assert!(
        c.seen
            .iter()
            .any(|m| m["method"] == "notifications/resources/updated"),
        "resources/updated was not forwarded"
    );
    let progress = c
        .seen
        .iter()
        .find(|m| m["method"] == "notifications/progress")
        .expect("progress");
    assert!(progress["params"].get("message").is_none());
    for (id, m) in [(4, "resources/list"), (5, "prompts/list")] {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": m}));
        c.response(json!(id), |_| json!({}));
    }
    // A result that cannot be translated (invalid in every version) is not forwarded; the
    // client gets an error for its request instead of waiting forever.
    c.send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "broken", "arguments": {}}}));
    let broken = c.response(json!(6), |_| json!({}));
    assert_eq!(
        broken.pointer("/error/code"),
        Some(&json!(-32603)),
        "{broken}"
    );
}

#[test]
fn a_2025_06_18_client_gets_the_elicitation_and_answers_it() {
    let server = mock("2025-06-18");
    let args: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut c = Client::start(Version::V2025_06_18, &args);
    c.initialize();
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}));
    let mut asked = false;
    let ask = c.response(json!(3), |req| {
        assert_eq!(req["method"], "elicitation/create");
        asked = true;
        json!({"action": "accept", "content": {"name": "Ada"}})
    });
    assert!(asked);
    assert_eq!(
        ask.pointer("/result/content/0/text"),
        Some(&json!("elicitation: \"accept\""))
    );
}

#[test]
fn a_2025_03_26_client_batch_is_split_and_reassembled() {
    let server = mock("2025-06-18");
    let args: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut c = Client::start(Version::V2025_03_26, &args);
    c.initialize();
    c.sent.insert("10".into(), "tools/list".into());
    c.sent.insert("11".into(), "ping".into());
    c.send(json!([
        {"jsonrpc": "2.0", "id": 10, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 11, "method": "ping"}
    ]));
    let batch = c.next();
    let items = batch.as_array().expect("one batch response");
    let mut ids: Vec<i64> = items.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [10, 11]);
    let tools = items.iter().find(|r| r["id"] == 10).unwrap();
    assert_eq!(
        tools.pointer("/result/tools/0/annotations/title"),
        Some(&json!("Rich"))
    );
    for r in items {
        common::check_message(
            Version::V2025_03_26,
            Direction::ServerToClient,
            r,
            Some(if r["id"] == 10 { "tools/list" } else { "ping" }),
        )
        .unwrap();
    }
}

fn install() -> PathBuf {
    let out = Command::new("bash")
        .arg(root().join("scripts/install-mcp-servers.sh"))
        .output()
        .expect("cannot run scripts/install-mcp-servers.sh");
    assert!(
        out.status.success(),
        "installing the pinned MCP servers failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    root().join(
        "target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )
}

/// Against server-everything: whatever it sends (it answers with its own newest version and
/// sends newer fields regardless) reaches the old client valid for the client's version,
/// and what that version supports arrives intact.
fn everything(version: Version) {
    let js = install();
    let js = js.display().to_string();
    let mut c = Client::start(version, &["node", &js, "stdio"]);
    let init = c.initialize();
    assert_eq!(
        init.pointer("/result/protocolVersion"),
        Some(&json!(version.as_str()))
    );
    assert!(init.pointer("/result/serverInfo/name").is_some());
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = c.response(json!(1), |_| json!({"roots": []}));
    let list = tools
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .expect("tools")
        .clone();
    assert!(
        list.len() >= 5,
        "server-everything lists its tools: {tools}"
    );
    let names: Vec<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    let echo = list.iter().find(|t| t["name"] == "echo").unwrap();
    assert!(
        echo.get("inputSchema").is_some() && echo.get("description").is_some(),
        "{echo}"
    );
    let mut id = 10;
    for t in &list {
        let name = t["name"].as_str().unwrap();
        // Call the tools whose schema needs no required arguments, plus echo.
        let required = t
            .pointer("/inputSchema/required")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let args = if name == "echo" {
            json!({"message": "hi"})
        } else if required == 0 {
            json!({})
        } else {
            continue;
        };
        id += 1;
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}));
        let r = c.response(json!(id), |req| match req["method"].as_str() {
            Some("roots/list") => json!({"roots": []}),
            Some("sampling/createMessage") => json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "test"}),
            _ => json!({}),
        });
        if name == "echo" {
            assert_eq!(
                r.pointer("/result/content/0"),
                Some(&json!({"type": "text", "text": "Echo: hi"}))
            );
        }
    }
    for (m, key) in [
        ("resources/list", "resources"),
        ("prompts/list", "prompts"),
        ("resources/templates/list", "resourceTemplates"),
    ] {
        id += 1;
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": m}));
        let r = c.response(json!(id), |_| json!({"roots": []}));
        assert!(
            r.pointer(&format!("/result/{key}"))
                .is_some_and(Value::is_array),
            "{m}: {r}"
        );
    }
    id += 1;
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": "demo://resource/static/document/architecture.md"}}));
    c.response(json!(id), |_| json!({}));
}

#[test]
fn server_everything_through_the_proxy_for_a_2024_11_05_client() {
    everything(Version::V2024_11_05);
}

#[test]
fn server_everything_through_the_proxy_for_a_2025_03_26_client() {
    everything(Version::V2025_03_26);
}
