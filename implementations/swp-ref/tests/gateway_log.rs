//! The gateway's structured log against a golden file per envelope policy: the same messages
//! over stdio and HTTP, deterministic mode (times and durations redacted), so each file shows
//! both transports' events side by side and any change to the log layout or to the
//! pipeline's decisions shows as a diff. `SWP_UPDATE_GOLDEN=1` rewrites the golden files.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_swp-ref");

/// The messages sent on each transport: a success, a tool call, each canonical error, a
/// notification and text that is not JSON.
const MESSAGES: [&str; 8] = [
    r#"{"jsonrpc":"2.0","id":"g-1","method":"ping","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":"g-2","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":"g-4","method":"tools/call","params":{"name":"add","arguments":{"a":"x","b":1}}}"#,
    r#"{"jsonrpc":"2.0","id":"g-5","method":"tools/call","params":{"name":"missing"}}"#,
    r#"{"jsonrpc":"2.0","id":"g-6","method":"tools/call","params":{"name":"broken_output","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "not json",
];

fn work(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The gateway under the default envelope policy (mcp).
fn gateway(listen: &[&str], log: &Path, stdin: Stdio, stdout: Stdio) -> Kill {
    gateway_as(&[], listen, log, stdin, stdout)
}

fn gateway_as(policy: &[&str], listen: &[&str], log: &Path, stdin: Stdio, stdout: Stdio) -> Kill {
    let child = Command::new(BIN)
        .arg("mcp-gateway")
        .args(policy)
        .args(listen)
        .args(["--deterministic", "--log"])
        .arg(log)
        .args(["--upstream-cmd", BIN, "serve", "--listen", "stdio"])
        .stdin(stdin)
        .stdout(stdout)
        .spawn()
        .unwrap();
    Kill(child)
}

fn stdio_answers(policy: &[&str], log: &Path) -> Vec<String> {
    let mut g = gateway_as(
        policy,
        &["--listen", "stdio"],
        log,
        Stdio::piped(),
        Stdio::piped(),
    );
    let mut input = g.0.stdin.take().unwrap();
    for m in MESSAGES {
        writeln!(input, "{m}").unwrap();
    }
    drop(input);
    let out = BufReader::new(g.0.stdout.take().unwrap());
    let lines: Vec<String> = out.lines().map(Result::unwrap).collect();
    assert!(g.0.wait().unwrap().success());
    lines
}

/// The port the gateway wrote to `port_file`, waiting up to 10 s.
fn wait_port(port_file: &Path) -> u16 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(p) = std::fs::read_to_string(port_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return p;
        }
        assert!(Instant::now() < until, "the gateway wrote no port");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn post(port: u16, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let status = resp[9..12].parse().unwrap();
    let body = resp.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

fn http_answers(policy: &[&str], log: &Path, dir: &Path) -> Vec<(u16, String)> {
    let port_file = dir.join("port");
    let pf = port_file.to_str().unwrap();
    let _g = gateway_as(
        policy,
        &[
            "--listen",
            "http://127.0.0.1:0",
            "--port-file",
            pf,
            "--sessions-optional",
        ],
        log,
        Stdio::null(),
        Stdio::null(),
    );
    let port = wait_port(&port_file);
    // Seed 001 §5: only the MCP route is served, and only POST or a WebSocket upgrade on it.
    for (req, status) in [
        (
            "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            404,
        ),
        (
            "GET /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            405,
        ),
        (
            "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
            411,
        ),
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        assert!(
            resp.starts_with(&format!("HTTP/1.1 {status} ")),
            "{req:?} -> {resp:?}"
        );
    }
    MESSAGES.iter().map(|m| post(port, m)).collect()
}

#[test]
fn logs_match_the_golden_file_and_transports_answer_alike_under_seed_003() {
    // Seed 003: the numeric id is an invalid envelope, and each canonical error has its
    // own HTTP status.
    golden_run(
        "seed-003",
        &["--envelope", "seed-003"],
        [200, 200, 400, 422, 404, 500, 202, 400],
        "gateway-log.jsonl",
    );
}

#[test]
fn logs_match_the_golden_file_and_transports_answer_alike_under_mcp() {
    // MCP (the default): the numeric id is answered, tool errors are JSON-RPC errors in a
    // 200, and only unusable input (text that is not JSON) is an HTTP client error.
    golden_run(
        "mcp",
        &[],
        [200, 200, 200, 200, 200, 200, 202, 400],
        "gateway-log-mcp.jsonl",
    );
}

fn golden_run(tag: &str, policy: &[&str], want_statuses: [u16; 8], golden: &str) {
    let dir = work(&format!("gateway-log-{tag}"));
    let log = dir.join("gateway.jsonl");
    let stdio = stdio_answers(policy, &log);
    let http = http_answers(policy, &log, &dir);

    // Parity: every message that gets an answer gets the same octets on both transports.
    let http_bodies: Vec<&str> = http
        .iter()
        .map(|(_, b)| b.as_str())
        .filter(|b| !b.is_empty())
        .collect();
    assert_eq!(stdio, http_bodies);
    let statuses: Vec<u16> = http.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, want_statuses);

    let got = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = got
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 * MESSAGES.len());
    for l in &lines {
        for field in [
            "timestamp",
            "ids",
            "transport",
            "route",
            "method",
            "status",
            "duration_ms",
            "error",
            "metadata",
        ] {
            assert!(l.get(field).is_some(), "{field} missing in {l}");
        }
        assert_eq!(
            l["metadata"],
            serde_json::json!({"schemaVersion": "1", "deterministic": true})
        );
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(golden);
    // Only `1` rewrites, and a rewrite fails the test, so it is reviewed, never passed.
    if std::env::var("SWP_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&golden, &got).unwrap();
        panic!("SWP_UPDATE_GOLDEN=1 rewrote 1 file ({}); review the diff and commit, then run without SWP_UPDATE_GOLDEN", golden.display());
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    if got != want {
        let diff = similar::TextDiff::from_lines(&want, &got);
        panic!(
            "the gateway log differs from {} (SWP_UPDATE_GOLDEN=1 rewrites it):\n{}",
            golden.display(),
            diff.unified_diff()
        );
    }
}

const STREAM: &str = r#"{"jsonrpc":"2.0","id":"s-1","method":"swp/stream","params":{"count":3}}"#;

/// The partials of `swp/stream`, then its terminal response, as lines of JSON.
fn assert_stream_order(lines: &[String]) {
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (k, l) in lines[..3].iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["method"], "notifications/progress", "{l}");
        assert_eq!(v["params"]["progressToken"], "s-1");
        assert_eq!(v["params"]["progress"], k + 1);
    }
    let last: serde_json::Value = serde_json::from_str(&lines[3]).unwrap();
    assert_eq!(last["id"], "s-1");
    assert!(last.get("result").is_some(), "{last}");
}

#[test]
fn stream_partials_reach_stdio_and_websocket_clients_before_the_response() {
    let dir = work("gateway-stream");
    let log = dir.join("gateway.jsonl");

    // stdio: the partials are lines before the response line.
    let mut g = gateway(&["--listen", "stdio"], &log, Stdio::piped(), Stdio::piped());
    let mut input = g.0.stdin.take().unwrap();
    writeln!(input, "{STREAM}").unwrap();
    drop(input);
    let lines: Vec<String> = BufReader::new(g.0.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .collect();
    assert_stream_order(&lines);

    // WebSocket: the partials are text messages before the response message.
    let port_file = dir.join("port");
    let pf = port_file.to_str().unwrap();
    let _g = gateway(
        &[
            "--listen",
            "http://127.0.0.1:0",
            "--port-file",
            pf,
            "--sessions-optional",
        ],
        &log,
        Stdio::null(),
        Stdio::null(),
    );
    let port = wait_port(&port_file);
    let mut ws = Ws::connect(port);
    ws.send(STREAM);
    let msgs = ws.read(4);
    assert_stream_order(&msgs);
}

/// A WebSocket client on `/mcp`, enough for these tests: masked text frames out, short
/// unmasked text frames in.
struct Ws {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Ws {
    fn connect(port: u16) -> Ws {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /mcp HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = s.read(&mut chunk).unwrap();
            assert!(n > 0, "closed during the upgrade");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        assert!(buf.starts_with(b"HTTP/1.1 101"));
        buf.drain(..head_end);
        Ws { s, buf }
    }

    fn send(&mut self, text: &str) {
        assert!(text.len() < 126, "short messages only");
        let mask = [7u8, 1, 2, 3];
        let mut frame = vec![0x81, 0x80 | text.len() as u8];
        frame.extend_from_slice(&mask);
        frame.extend(text.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.s.write_all(&frame).unwrap();
    }

    /// The next `n` text messages (server frames are unmasked, under 64 KiB here).
    fn read(&mut self, n: usize) -> Vec<String> {
        let mut msgs = Vec::new();
        let mut chunk = [0u8; 4096];
        while msgs.len() < n {
            let buf = &mut self.buf;
            // (header length, payload length) once the header is in.
            let frame = match buf.get(1).map(|b| b & 0x7f) {
                Some(126) if buf.len() >= 4 => {
                    Some((4, u16::from_be_bytes([buf[2], buf[3]]) as usize))
                }
                Some(l) if l < 126 => Some((2, l as usize)),
                Some(l) => panic!("a length form this client does not read: {l}"),
                None => None,
            };
            if let Some((head, len)) = frame.filter(|(h, l)| buf.len() >= h + l) {
                assert_eq!(buf[0], 0x81, "a text frame");
                msgs.push(String::from_utf8(buf[head..head + len].to_vec()).unwrap());
                buf.drain(..head + len);
                continue;
            }
            let got = self.s.read(&mut chunk).unwrap();
            assert!(got > 0, "closed before the response");
            buf.extend_from_slice(&chunk[..got]);
        }
        msgs
    }
}

#[test]
fn websocket_and_http_clients_are_held_to_the_envelope_policy() {
    // The SDK's first request (id 0) and a ping without params: answered under mcp (the
    // default), refused as invalid envelopes under seed-003, on the WebSocket transport.
    let msgs = [
        r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"w","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}"#,
    ];
    for (tag, policy) in [("mcp", &[][..]), ("seed", &["--envelope", "seed-003"][..])] {
        let dir = work(&format!("gateway-ws-{tag}"));
        let port_file = dir.join("port");
        let pf = port_file.to_str().unwrap();
        // No initialize first: requests are served outside a session.
        let _g = gateway_as(
            policy,
            &[
                "--listen",
                "http://127.0.0.1:0",
                "--port-file",
                pf,
                "--sessions-optional",
            ],
            &dir.join("gateway.jsonl"),
            Stdio::null(),
            Stdio::null(),
        );
        let port = wait_port(&port_file);
        // Over HTTP, a client's response is accepted like a notification under mcp.
        let (status, body) = post(port, msgs[2]);
        let want_status = if tag == "mcp" { 202 } else { 400 };
        assert_eq!(status, want_status, "{tag}: {body}");
        assert_eq!(body.is_empty(), tag == "mcp", "{tag}: {body}");
        let mut ws = Ws::connect(port);
        for m in msgs {
            ws.send(m);
        }
        // Under mcp the client's response (id 1) is forwarded upstream and answered with
        // nothing, so three answers come back; under seed-003 it is refused too.
        let n = if tag == "mcp" { 3 } else { 4 };
        let got: Vec<serde_json::Value> = ws
            .read(n)
            .iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect();
        let summary: Vec<(serde_json::Value, Option<i64>)> = got
            .iter()
            .map(|v| (v["id"].clone(), v["error"]["code"].as_i64()))
            .collect();
        use serde_json::json;
        let want = if tag == "mcp" {
            vec![(json!(0), None), (json!("w"), None), (json!(2), None)]
        } else {
            vec![
                (json!(0), Some(-32600)),
                (json!("w"), Some(-32600)),
                (json!(1), Some(-32600)),
                (json!(2), Some(-32600)),
            ]
        };
        assert_eq!(summary, want, "{tag}: {got:?}");
    }
}

#[test]
fn partials_of_a_request_with_an_integer_id_reach_its_client() {
    // The progress token is the integer 5, not the text "5": routed by the id's JSON.
    let dir = work("gateway-int-stream");
    let mut g = gateway(
        &["--listen", "stdio"],
        &dir.join("gateway.jsonl"),
        Stdio::piped(),
        Stdio::piped(),
    );
    let mut input = g.0.stdin.take().unwrap();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":5,"method":"swp/stream","params":{{"count":2}}}}"#
    )
    .unwrap();
    drop(input);
    let lines: Vec<serde_json::Value> = BufReader::new(g.0.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for l in &lines[..2] {
        assert_eq!(l["params"]["progressToken"], 5, "{l}");
    }
    assert_eq!(lines[2]["id"], 5);
    assert!(lines[2].get("result").is_some(), "{}", lines[2]);
}
