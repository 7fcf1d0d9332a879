//! The gateway's Streamable HTTP transport on the wire, against `swp-ref serve --fixtures
//! conformance` over SWP: sessions issued at initialize, required, checked and ended by
//! DELETE; the `MCP-Protocol-Version` header; a call's messages on its SSE answer, or on the
//! session's GET stream when the call takes JSON; a server-to-client request answered by a
//! POST and carried back upstream on its msg_id. A hand-written HTTP/1.1 client, so the
//! octets are what is judged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_swp-ref");

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn gateway(name: &str) -> (Kill, u16) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pf = dir.join("port");
    let child = Command::new(BIN)
        .args([
            "mcp-gateway",
            "--listen",
            "http://127.0.0.1:0",
            "--port-file",
        ])
        .arg(&pf)
        .args(["--upstream-cmd", BIN, "serve", "--listen", "stdio"])
        .args(["--fixtures", "conformance"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let k = Kill(child);
    let t0 = Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(&pf)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return (k, p);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the gateway did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An answer's head and a reader positioned at its body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: BufReader<TcpStream>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The whole body: by Content-Length, or the chunks of a chunked one.
    fn text(mut self) -> String {
        let mut out = Vec::new();
        if self.header("transfer-encoding") == Some("chunked") {
            while let Some(c) = self.chunk() {
                out.extend(c);
            }
        } else {
            let n: usize = self
                .header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            out.resize(n, 0);
            self.body.read_exact(&mut out).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    /// The next chunk of a chunked body (`None` at its end).
    fn chunk(&mut self) -> Option<Vec<u8>> {
        let mut size = String::new();
        self.body.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim(), 16).ok()?;
        let mut data = vec![0; n + 2];
        self.body.read_exact(&mut data).ok()?;
        data.truncate(n);
        (n > 0).then_some(data)
    }

    /// The data of the next SSE event that carries some (keepalive comments skipped).
    fn event(&mut self) -> serde_json::Value {
        loop {
            let c = self.chunk().expect("the stream ended");
            let text = String::from_utf8(c).unwrap();
            if let Some(d) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
                return serde_json::from_str(d).unwrap();
            }
        }
    }
}

fn request(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!("{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.to_owned(), v.trim().to_owned()));
        }
    }
    Answer {
        status,
        headers,
        body: r,
    }
}

const BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

fn session(port: u16) -> String {
    let a = request(port, "POST", &[BOTH], INIT);
    assert_eq!(a.status, 200);
    let id = a
        .header("mcp-session-id")
        .expect("no session issued")
        .to_owned();
    assert_eq!(id.len(), 32, "{id}");
    id
}

#[test]
fn sessions_are_issued_required_checked_and_ended() {
    let (_g, port) = gateway("sessions");
    let sid = session(port);
    assert_ne!(sid, session(port), "each initialize gets its own session");
    let s = ("Mcp-Session-Id", sid.as_str());
    assert_eq!(request(port, "POST", &[BOTH], PING).status, 400);
    assert_eq!(
        request(port, "POST", &[BOTH, ("Mcp-Session-Id", "f00")], PING).status,
        404
    );
    assert_eq!(request(port, "POST", &[BOTH, s], PING).status, 200);
    let v = |v| ("MCP-Protocol-Version", v);
    assert_eq!(
        request(port, "POST", &[BOTH, s, v("2025-06-18")], PING).status,
        200
    );
    assert_eq!(
        request(port, "POST", &[BOTH, s, v("2099-01-01")], PING).status,
        400
    );
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(request(port, "POST", &[BOTH, s], note).status, 202);
    assert_eq!(request(port, "DELETE", &[], "").status, 400);
    assert_eq!(request(port, "DELETE", &[s], "").status, 200);
    assert_eq!(request(port, "DELETE", &[s], "").status, 404);
    assert_eq!(request(port, "POST", &[BOTH, s], PING).status, 404);
    assert_eq!(request(port, "PUT", &[s], "").status, 405);
}

#[test]
fn a_call_streams_its_messages_and_takes_the_clients_answer() {
    let (_g, port) = gateway("answer");
    let sid = session(port);
    let s = ("Mcp-Session-Id", sid.as_str());
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"Hi"}}}"#;
    let mut a = request(port, "POST", &[BOTH, s], call);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("text/event-stream"));
    let ask = a.event();
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "Hi");
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"}});
    // Only the session that was asked may answer: another one's answer is not taken as it.
    let other = session(port);
    let o = ("Mcp-Session-Id", other.as_str());
    assert_eq!(
        request(port, "POST", &[BOTH, o], &answer.to_string()).status,
        202
    );
    assert_eq!(
        request(port, "POST", &[BOTH, s], &answer.to_string()).status,
        202
    );
    let done = a.event();
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["content"][0]["text"], "LLM response: Hello");
    assert!(a.chunk().is_none(), "the stream ends after the response");

    // A call that produces nothing else is answered with JSON.
    let text = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}"#;
    let a = request(port, "POST", &[BOTH, s], text);
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert!(a.text().contains("simple text response"));
}

#[test]
fn the_get_stream_carries_a_calls_messages_when_the_call_takes_json() {
    let (_g, port) = gateway("get");
    let sid = session(port);
    let s = ("Mcp-Session-Id", sid.as_str());
    let sse = ("Accept", "text/event-stream");
    assert_eq!(request(port, "GET", &[s], "").status, 406);
    assert_eq!(request(port, "GET", &[sse], "").status, 400);
    let mut stream = request(port, "GET", &[s, sse], "");
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    // The table marks the stream open before the head is written: a second one is refused.
    assert_eq!(request(port, "GET", &[s, sse], "").status, 409);
    let call = r#"{"jsonrpc":"2.0","id":"log","method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}"#;
    let a = request(port, "POST", &[("Accept", "application/json"), s], call);
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert!(a.text().contains("executed successfully"));
    let logs: Vec<String> = (0..3)
        .map(|_| {
            stream.event()["params"]["data"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        logs,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    // DELETE ends the session and its stream.
    assert_eq!(request(port, "DELETE", &[s], "").status, 200);
    assert!(
        stream.chunk().is_none(),
        "the GET stream ends with its session"
    );
}

#[test]
fn each_session_is_held_to_the_version_it_agreed_to() {
    // An error response without an id is valid from 2025-11-25 on only. The 2025-06-18
    // session initializes last, so a gateway that held every client to the version last
    // negotiated would refuse the 2025-11-25 session's message too.
    let (_g, port) = gateway("versions");
    let newest = session(port);
    let older = {
        let init = INIT.replace("2025-11-25", "2025-06-18");
        let a = request(port, "POST", &[BOTH], &init);
        assert_eq!(a.status, 200);
        a.header("mcp-session-id").unwrap().to_owned()
    };
    let no_id = r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"x"}}"#;
    let at = |sid: &str| request(port, "POST", &[BOTH, ("Mcp-Session-Id", sid)], no_id).status;
    assert_eq!(at(&newest), 202);
    assert_eq!(at(&older), 400);
}
