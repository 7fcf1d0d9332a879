//! Round-trip benchmark of `swp-ref serve` over one loopback connection: starts the release
//! binary on 127.0.0.1:0 (plain TCP with the default busy poll, plain TCP without it, and
//! TLS 1.3 with mTLS, and the byte-preserving relay in front of the plain server), then drives `ping` requests with 1 and with 16 requests in flight and
//! prints round trips per second and latency percentiles.
//!
//! A plain `main` (no harness) with bounded loops: each scenario stops after
//! [`ROUND_TRIPS`] round trips or [`TIME_CAP`], whichever comes first, so the whole run
//! stays under fifteen seconds. Run with `cargo bench -p swp-ref --bench roundtrip`.

use bytes::Bytes;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swp_core::{e1, frame, Envelope, Limits};

/// Round trips measured per scenario.
const ROUND_TRIPS: usize = 200_000;
/// Time cap per scenario (eight scenarios), so the whole bench stays under fifteen seconds.
const TIME_CAP: Duration = Duration::from_millis(1_500);
/// Unmeasured round trips first (connection set-up, allocator and cache warm-up).
const WARM_UP: usize = 2_000;
/// Slots for send times; more than the deepest pipeline, indexed by request number.
const RING: usize = 64;

/// The server process, killed when dropped so a failing bench leaves nothing behind.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(dir: &Path, args: &[&str]) -> (Server, u16) {
    let port_file = dir.join("port");
    let _ = std::fs::remove_file(&port_file);
    let child = Command::new(env!("CARGO_BIN_EXE_swp-ref"))
        .args(args)
        .arg("--port-file")
        .arg(&port_file)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start swp-ref serve");
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = std::fs::read_to_string(&port_file) {
            if let Ok(port) = s.trim().parse() {
                return (server, port);
            }
        }
        assert!(
            Instant::now() < deadline,
            "server did not write its port file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Appends the frame of ping request number `n` (msg_id and JSON-RPC id both derive from it).
fn put_request(out: &mut Vec<u8>, n: u64) {
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type: 1,
        msg_id: Bytes::from(format!("bench-{n:010}")),
        payload: Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#)),
        ..Envelope::default()
    };
    e1::encode_frame(&env, out).expect("frame fits");
}

/// The request number a response answers.
fn answered(env: &Envelope) -> u64 {
    assert_eq!(env.msg_type, 2, "not a response");
    let id = std::str::from_utf8(&env.msg_id).expect("utf-8 msg_id");
    id.strip_prefix("bench-")
        .and_then(|n| n.parse().ok())
        .expect("a bench msg_id")
}

struct Run {
    round_trips: usize,
    elapsed: Duration,
    latencies_ns: Vec<u64>,
}

/// Keeps `depth` requests in flight on one connection until `total` have been answered
/// or the time cap passes. Replacements for every response in one read go out in one write.
fn run(sock: &mut impl ReadWrite, depth: usize, total: usize, cap: Duration) -> Run {
    let limits = Limits::default();
    let mut sent_at = [Instant::now(); RING];
    let mut latencies_ns = Vec::with_capacity(total);
    let mut out = Vec::with_capacity(depth * 64);
    let mut next: u64 = 0;
    for _ in 0..depth.min(total) {
        put_request(&mut out, next);
        sent_at[next as usize % RING] = Instant::now();
        next += 1;
    }
    sock.write_all(&out).expect("write");
    sock.flush().expect("flush");
    let start = Instant::now();
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending = bytes::BytesMut::new();
    let mut done = 0usize;
    while done < total {
        let n = sock.read(&mut buf).expect("read");
        assert!(n > 0, "server closed the connection");
        let now = Instant::now();
        pending.extend_from_slice(&buf[..n]);
        out.clear();
        let mut rest = pending.split().freeze();
        while let Some((body, tail)) = frame::take_frame(&rest, &limits).expect("valid frame") {
            let env = e1::decode(&body, &limits).expect("valid envelope");
            let k = answered(&env);
            latencies_ns.push(now.duration_since(sent_at[k as usize % RING]).as_nanos() as u64);
            done += 1;
            rest = tail;
            if (next as usize) < total && start.elapsed() < cap {
                put_request(&mut out, next);
                sent_at[next as usize % RING] = Instant::now();
                next += 1;
            }
        }
        pending.extend_from_slice(&rest);
        if !out.is_empty() {
            sock.write_all(&out).expect("write");
            sock.flush().expect("flush");
        } else if done as u64 == next {
            break;
        }
    }
    Run {
        round_trips: done,
        elapsed: start.elapsed(),
        latencies_ns,
    }
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1_000.0
}

/// A client stream: plain TCP or a rustls client over TCP.
trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn tcp(port: u16) -> TcpStream {
    let sock = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    sock.set_nodelay(true).expect("nodelay");
    sock.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    sock
}

/// Writes a CA, a server certificate for 127.0.0.1 and a client certificate into `dir`
/// and returns the client configuration (TLS 1.3, client certificate, trusting the CA).
fn pki(dir: &Path) -> Arc<ClientConfig> {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let issuer = Issuer::new(ca, ca_key);
    let server_key = KeyPair::generate().expect("key");
    let server = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("params");
    let server_cert = server.signed_by(&server_key, &issuer).expect("server cert");
    let client_key = KeyPair::generate().expect("key");
    let mut client = CertificateParams::default();
    client.subject_alt_names = vec![SanType::URI(
        "spiffe://bench.test/client".try_into().expect("uri"),
    )];
    let client_cert = client.signed_by(&client_key, &issuer).expect("client cert");
    std::fs::write(dir.join("ca.pem"), ca_cert.pem()).expect("write");
    std::fs::write(dir.join("server.pem"), server_cert.pem()).expect("write");
    std::fs::write(dir.join("server.key"), server_key.serialize_pem()).expect("write");

    let mut roots = RootCertStore::empty();
    roots.add(ca_cert.der().clone()).expect("root");
    let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(client_key.serialize_der()));
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("versions")
            .with_root_certificates(roots)
            .with_client_auth_cert(vec![client_cert.der().clone()], key)
            .expect("client config");
    Arc::new(config)
}

fn tls(port: u16, config: &Arc<ClientConfig>) -> StreamOwned<ClientConnection, TcpStream> {
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let conn = ClientConnection::new(config.clone(), name).expect("client");
    StreamOwned::new(conn, tcp(port))
}

fn report(transport: &str, depth: usize, mut r: Run) {
    r.latencies_ns.sort_unstable();
    let l = &r.latencies_ns;
    println!(
        "{:>10} {:>9} {:>12} {:>12.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        transport,
        depth,
        r.round_trips,
        r.round_trips as f64 / r.elapsed.as_secs_f64(),
        pct(l, 0.50),
        pct(l, 0.99),
        pct(l, 0.999),
        pct(l, 1.0),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; this binary takes no options of its own.
    let dir = std::env::temp_dir().join(format!("swp-ref-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let client_config = pki(&dir);
    let (_tcp_server, tcp_port) = start_server(&dir, &["serve", "--listen", "tcp://127.0.0.1:0"]);
    let (_nopoll_server, nopoll_port) = start_server(
        &dir,
        &[
            "serve",
            "--listen",
            "tcp://127.0.0.1:0",
            "--busy-poll-us",
            "0",
        ],
    );
    let (ca, cert, key) = (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    );
    let tls_args = [
        "serve",
        "--listen",
        "tls://127.0.0.1:0",
        "--tls13-only",
        "--cert",
        cert.to_str().expect("utf-8 path"),
        "--key",
        key.to_str().expect("utf-8 path"),
        "--client-ca",
        ca.to_str().expect("utf-8 path"),
    ];
    let (_tls_server, tls_port) = start_server(&dir, &tls_args);
    // The byte-preserving relay in front of the plain TCP server: the difference between
    // the `relay` and `tcp` rows is what relaying costs.
    let upstream = format!("127.0.0.1:{tcp_port}");
    let (_relay, relay_port) = start_server(
        &dir,
        &[
            "relay",
            "--listen",
            "tcp://127.0.0.1:0",
            "--upstream",
            &upstream,
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);

    println!("swp-ref serve, one loopback connection, ping (profile 1) round trips");
    println!(
        "{:>10} {:>9} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "transport", "in flight", "round trips", "rt/s", "p50 µs", "p99 µs", "p99.9 µs", "max µs"
    );
    for depth in [1usize, 16] {
        let mut s = tcp(tcp_port);
        let _ = run(&mut s, depth, WARM_UP, TIME_CAP);
        report("tcp", depth, run(&mut s, depth, ROUND_TRIPS, TIME_CAP));
    }
    for depth in [1usize, 16] {
        let mut s = tcp(nopoll_port);
        let _ = run(&mut s, depth, WARM_UP, TIME_CAP);
        report(
            "tcp-nopoll",
            depth,
            run(&mut s, depth, ROUND_TRIPS, TIME_CAP),
        );
    }
    for depth in [1usize, 16] {
        let mut s = tcp(relay_port);
        let _ = run(&mut s, depth, WARM_UP, TIME_CAP);
        report("relay", depth, run(&mut s, depth, ROUND_TRIPS, TIME_CAP));
    }
    for depth in [1usize, 16] {
        let mut s = tls(tls_port, &client_config);
        let _ = run(&mut s, depth, WARM_UP, TIME_CAP);
        report("tls1.3", depth, run(&mut s, depth, ROUND_TRIPS, TIME_CAP));
    }
}
