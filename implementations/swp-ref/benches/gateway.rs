//! The MCP gateway's cost: the sans-IO pipeline per message (envelope schema, tool input
//! schema, output check), then whole round trips through `swp-ref mcp-gateway` to the
//! reference endpoint over stdio, HTTP keep-alive and WebSocket, one request in flight.
//!
//! A plain `main` with bounded loops: each scenario stops after its count or [`TIME_CAP`].
//! Run with `cargo bench -p swp-ref --bench gateway`.

use serde_json::json;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use swp_ref::gateway::pipeline::{Ingress, Pipeline};

const BIN: &str = env!("CARGO_BIN_EXE_swp-ref");
/// Time cap per scenario.
const TIME_CAP: Duration = Duration::from_millis(1_500);
/// Unmeasured operations first.
const WARM_UP: usize = 1_000;

const PING: &str = r#"{"jsonrpc":"2.0","id":"b-1","method":"ping","params":{}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":"b-2","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;
const RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":"b-2","result":{"content":[{"type":"text","text":"5.0"}],"structuredContent":{"sum":5.0}}}"#;

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// Runs `op` until `n` runs or the cap, recording each duration in ns.
fn measure(n: usize, mut op: impl FnMut()) -> Vec<u64> {
    for _ in 0..WARM_UP {
        op();
    }
    let mut lat = Vec::with_capacity(n);
    let start = Instant::now();
    while lat.len() < n && start.elapsed() < TIME_CAP {
        let t = Instant::now();
        op();
        lat.push(t.elapsed().as_nanos() as u64);
    }
    lat.sort_unstable();
    lat
}

fn row(what: &str, lat: &[u64]) {
    let mean = lat.iter().sum::<u64>() as f64 / lat.len().max(1) as f64 / 1000.0;
    println!(
        "{what:<34} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
        lat.len(),
        mean,
        pct(lat, 0.5),
        pct(lat, 0.99),
        pct(lat, 0.999)
    );
}

fn pipeline_rows() {
    let mut p = Pipeline::default();
    p.learn_tools(&json!({"tools": swp_ref::endpoint::tools::definitions()}))
        .expect("tools");
    row(
        "pipeline ingress ping",
        &measure(200_000, || {
            black_box(p.ingress(black_box(PING.as_bytes())));
        }),
    );
    row(
        "pipeline ingress tools/call",
        &measure(200_000, || {
            black_box(p.ingress(black_box(CALL.as_bytes())));
        }),
    );
    let pending = match p.ingress(CALL.as_bytes()) {
        Ingress::Forward(f) => f.pending,
        Ingress::Reject { error, .. } => panic!("{error}"),
    };
    row(
        "pipeline egress tools/call result",
        &measure(200_000, || {
            black_box(p.egress(black_box(&pending), black_box(RESULT)).is_ok());
        }),
    );
    row(
        "pipeline ingress invalid envelope",
        &measure(200_000, || {
            black_box(p.ingress(black_box(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#,
            )));
        }),
    );
}

fn gateway(listen: &[&str], piped: bool) -> Kill {
    Kill(
        Command::new(BIN)
            .arg("mcp-gateway")
            .args(listen)
            .args(["--upstream-cmd", BIN, "serve", "--listen", "stdio"])
            .stdin(if piped { Stdio::piped() } else { Stdio::null() })
            .stdout(if piped { Stdio::piped() } else { Stdio::null() })
            .stderr(Stdio::null())
            .spawn()
            .expect("start the gateway"),
    )
}

fn port_of(dir: &std::path::Path) -> u16 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(p) = std::fs::read_to_string(dir.join("port"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return p;
        }
        assert!(Instant::now() < until, "no port");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn stdio_rows() {
    let mut g = gateway(&["--listen", "stdio"], true);
    let mut input = g.0.stdin.take().expect("stdin");
    let mut out = BufReader::new(g.0.stdout.take().expect("stdout"));
    let mut line = String::new();
    for (name, msg) in [("stdio ping", PING), ("stdio tools/call", CALL)] {
        let lat = measure(50_000, || {
            writeln!(input, "{msg}").expect("write");
            input.flush().expect("flush");
            line.clear();
            out.read_line(&mut line).expect("read");
            assert!(line.contains("result"), "{line}");
        });
        row(name, &lat);
    }
}

/// Reads one small response: until the JSON body's closing brace ends what was read (HTTP
/// and WebSocket alike put the body last).
fn read_reply(s: &mut TcpStream, buf: &mut [u8]) {
    let mut got = 0;
    loop {
        got += s.read(&mut buf[got..]).expect("read");
        if got > 0 && buf[got - 1] == b'}' {
            return;
        }
    }
}

fn http_rows(port: u16) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut buf = vec![0u8; 64 * 1024];
    for (name, msg) in [
        ("http keep-alive ping", PING),
        ("http keep-alive tools/call", CALL),
    ] {
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{msg}",
            msg.len()
        );
        let lat = measure(50_000, || {
            s.write_all(req.as_bytes()).expect("write");
            read_reply(&mut s, &mut buf);
        });
        row(name, &lat);
    }
}

fn ws_rows(port: u16) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(b"GET /mcp HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").expect("upgrade");
    let mut buf = vec![0u8; 64 * 1024];
    let n = s.read(&mut buf).expect("101");
    assert!(buf[..n].starts_with(b"HTTP/1.1 101"));
    for (name, msg) in [("websocket ping", PING), ("websocket tools/call", CALL)] {
        let mask = [1u8, 2, 3, 4];
        let mut frame = vec![0x81, 0x80 | 126];
        frame.extend_from_slice(&(msg.len() as u16).to_be_bytes());
        frame.extend_from_slice(&mask);
        frame.extend(msg.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        let lat = measure(50_000, || {
            s.write_all(&frame).expect("write");
            read_reply(&mut s, &mut buf);
        });
        row(name, &lat);
    }
}

fn main() {
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "scenario", "ops", "mean µs", "p50 µs", "p99 µs", "p99.9 µs"
    );
    pipeline_rows();
    stdio_rows();
    let dir = std::env::temp_dir().join(format!("swp-gw-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pf = dir.join("port");
    let _g = gateway(
        &[
            "--listen",
            "http://127.0.0.1:0",
            "--port-file",
            pf.to_str().expect("utf-8"),
        ],
        false,
    );
    let port = port_of(&dir);
    http_rows(port);
    ws_rows(port);
    let _ = std::fs::remove_dir_all(&dir);
}
