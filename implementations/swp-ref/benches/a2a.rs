//! A2A costs: P1 decode + lifecycle step per message (sans-IO, in process), and a whole task
//! (Task in; 3 Events and the Result out) round trip through `swp-ref serve` over one
//! loopback TCP connection, one task in flight.
//!
//! A plain `main` with bounded loops (count or [`TIME_CAP`]). Run with
//! `cargo bench -p swp-ref --bench a2a`.

use bytes::Bytes;
use prost::Message;
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use swp_core::frame::FrameDecoder;
use swp_core::{e1, Envelope, Limits};
use swp_profiles::a2a::{self, A2aMessage, Lifecycle};
use swp_profiles::p1::pb::a2a::{Event, Result as A2aResult, Task};

const TIME_CAP: Duration = Duration::from_millis(2_000);

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
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize] as f64 / 1000.0
}

fn row(what: &str, mut lat: Vec<u64>) {
    lat.sort_unstable();
    let mean = lat.iter().sum::<u64>() as f64 / lat.len().max(1) as f64 / 1000.0;
    println!(
        "{what:<40} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        lat.len(),
        mean,
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 0.999)
    );
}

fn task_id(n: u64) -> Bytes {
    Bytes::from(format!("task-{n:012}"))
}

/// One task's messages as they cross the wire: Task, 3 Events, Result.
fn lifecycle_messages(n: u64) -> Vec<(u64, Vec<u8>)> {
    let id = task_id(n);
    let mut v = vec![(
        a2a::MSG_TASK,
        Task {
            task_id: id.clone(),
            kind: "events".into(),
            input: Bytes::from_static(b"3"),
        }
        .encode_to_vec(),
    )];
    for k in 1..=3u8 {
        v.push((
            a2a::MSG_EVENT,
            Event {
                task_id: id.clone(),
                message: format!("step {k} of 3"),
                event_payload: Bytes::from(vec![k]),
            }
            .encode_to_vec(),
        ));
    }
    v.push((
        a2a::MSG_RESULT,
        A2aResult {
            task_id: id,
            ok: true,
            output: Bytes::from_static(b"3"),
            error_message: String::new(),
        }
        .encode_to_vec(),
    ));
    v
}

fn in_process() {
    // Per message: decode for its msg_type, check required fields, step the lifecycle.
    let mut l = Lifecycle::default();
    let mut lat = Vec::with_capacity(1_000_000);
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < TIME_CAP && lat.len() < 1_000_000 {
        for (t, p) in lifecycle_messages(n) {
            let t0 = Instant::now();
            let seen = match a2a::decode(t, black_box(&p)).expect("valid") {
                A2aMessage::Task(x) => l.task("", &x),
                A2aMessage::Event(x) => l.event("", &x),
                A2aMessage::Result(x) => l.result("", &x),
                A2aMessage::Handshake(_) => unreachable!(),
            };
            black_box(seen.expect("in lifecycle"));
            lat.push(t0.elapsed().as_nanos() as u64);
        }
        n += 1;
    }
    row("P1 decode + lifecycle step, per message", lat);
}

fn loopback() {
    let dir = std::env::temp_dir().join(format!("swp-a2a-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pf = dir.join("port");
    let _server = Kill(
        Command::new(env!("CARGO_BIN_EXE_swp-ref"))
            .args(["serve", "--listen", "tcp://127.0.0.1:0", "--port-file"])
            .arg(&pf)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    let until = Instant::now() + Duration::from_secs(10);
    let port: u16 = loop {
        if let Some(p) = std::fs::read_to_string(&pf)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break p;
        }
        assert!(Instant::now() < until, "no port");
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = std::fs::remove_dir_all(&dir);
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let limits = Limits::default();
    let mut dec = FrameDecoder::new(limits);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut lat = Vec::new();
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < TIME_CAP && lat.len() < 200_000 {
        let (t, p) = lifecycle_messages(n).swap_remove(0);
        let env = Envelope {
            version: 1,
            profile_id: 2,
            msg_type: t,
            msg_id: Bytes::from(format!("bench-{n:010}")),
            payload: Bytes::from(p),
            ..Envelope::default()
        };
        let frame = e1::frame_bytes(&env).expect("frame");
        let t0 = Instant::now();
        s.write_all(&frame).expect("write");
        let mut events = 0;
        'task: loop {
            let k = s.read(&mut chunk).expect("read");
            assert!(k > 0, "server closed");
            dec.feed(&chunk[..k]);
            while let Some(body) = dec.next_body().expect("frames") {
                let env = e1::decode(&body, &limits).expect("decode");
                match env.msg_type {
                    3 => events += 1,
                    4 => break 'task,
                    other => panic!("msg_type {other}"),
                }
            }
        }
        assert_eq!(events, 3);
        if n >= 200 {
            lat.push(t0.elapsed().as_nanos() as u64);
        }
        n += 1;
    }
    row("task round trip (Task → 3 Events + Result)", lat);
}

fn main() {
    println!(
        "{:<40} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "scenario", "ops", "mean µs", "p50 µs", "p99 µs", "p99.9 µs"
    );
    in_process();
    loopback();
}
