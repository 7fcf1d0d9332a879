//! Hostile clients against the real `swp-ref serve`, `relay` and `mcp-gateway` processes
//! (issue 19, D1-D7): half-closes with replies pending, descriptor exhaustion, clients that
//! share JSON-RPC ids, foreign origins and non-loopback binds, smuggled requests,
//! slowloris and stalled bodies, memory floods, and amplification; and the relay's limits
//! against its `--help` (issue 30, D6). Every server listens on 127.0.0.1 with port 0, and
//! every wait is on a condition with a generous deadline.
//!
//! `SWP_REF_BIN=/path/to/old/swp-ref SWP_REF_OLD=1 cargo test -p swp-ref --test hostile`
//! replays the tests against an older build, without the limit flags it does not know.

#[path = "hostile/support.rs"]
mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::*;

const ID: &[u8] = b"req-000000000001";

// ---------------------------------------------------------------------------------------
// D1: a half-close while a reply is pending.

#[test]
fn d1_a_tcp_half_close_still_gets_the_delayed_reply_without_spinning_or_leaking() {
    let s = Proc::start("d1-tcp", &["serve", "--listen", "tcp://127.0.0.1:0"], None);
    let fds_before = s.fd_count();
    let mut c = s.connect();
    c.write_all(&request(ID, "1", "swp/delay", r#"{"ms":300}"#))
        .unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let (cpu0, t0) = (s.cpu_ticks(), Instant::now());
    let reply = read_frame(&mut c)
        .expect("the delayed reply arrives after the half-close")
        .expect("a reply, not the end of the stream");
    assert_eq!((reply.msg_type, &reply.msg_id[..]), (2, ID));
    assert_eq!(json(&reply)["result"], serde_json::json!({}));
    // Then the endpoint closes its side: nothing more to say.
    assert!(read_frame(&mut c).unwrap().is_none());
    // A connection that spins burns a whole core while it waits; an idle one next to
    // nothing. Lenient on purpose (a loaded machine can only make the spin look smaller):
    // at most half the wall time, in clock ticks of 10 ms.
    let (cpu, wall) = (s.cpu_ticks() - cpu0, t0.elapsed());
    assert!(
        cpu * 10 <= wall.as_millis() as u64 / 2 + 20,
        "the server used {cpu} ticks of CPU in {wall:?}"
    );
    drop(c);
    wait_until("the connection's descriptor is released", || {
        s.fd_count() <= fds_before
    });
}

#[test]
fn d1_end_of_stdin_still_gets_the_delayed_reply_then_exits() {
    let mut child = std::process::Command::new(bin())
        .args(["serve", "--listen", "stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&request(ID, "1", "swp/delay", r#"{"ms":300}"#))
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = out.read_to_end(&mut all);
        let _ = tx.send(all);
    });
    let got = rx.recv_timeout(DEADLINE);
    let _ = child.kill();
    let status = child.wait().unwrap();
    let all = got.expect("the endpoint ends its output after the delayed reply");
    let reply = read_frame(&mut &all[..])
        .unwrap()
        .expect("the delayed reply");
    assert_eq!(&reply.msg_id[..], ID);
    assert!(status.success(), "{status}");
}

mod tls {
    //! A self-signed server certificate and a client trusting it.
    use rcgen::{CertificateParams, KeyPair, SanType};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
    use std::net::TcpStream;
    use std::path::Path;
    use std::sync::Arc;

    pub fn write_cert(dir: &Path) {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::default();
        p.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().unwrap())];
        let cert = p.self_signed(&key).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    }

    pub fn connect(dir: &Path, port: u16) -> StreamOwned<ClientConnection, TcpStream> {
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(dir.join("cert.pem")).unwrap())
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let conn = ClientConnection::new(Arc::new(config), name).unwrap();
        let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
        sock.set_read_timeout(Some(super::DEADLINE)).unwrap();
        StreamOwned::new(conn, sock)
    }
}

#[test]
fn d1_a_tls_close_notify_still_gets_the_reply_and_never_wedges_the_server() {
    let certs = temp_dir("d1-tls-certs");
    tls::write_cert(&certs);
    let cert = certs.join("cert.pem");
    let key = certs.join("key.pem");
    let mut s = Proc::start(
        "d1-tls",
        &[
            "serve",
            "--listen",
            "tls://127.0.0.1:0",
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
        None,
    );
    let mut c = tls::connect(&certs, s.port);
    c.write_all(&request(ID, "1", "swp/delay", r#"{"ms":300}"#))
        .unwrap();
    c.conn.send_close_notify();
    c.flush().unwrap();
    let reply = read_frame(&mut c)
        .expect("the delayed reply arrives after close_notify")
        .expect("a reply, not the end of the stream");
    assert_eq!((reply.msg_type, &reply.msg_id[..]), (2, ID));
    // Other clients still complete handshakes and get answers.
    let mut fresh = tls::connect(&certs, s.port);
    fresh
        .write_all(&request(b"req-000000000002", "2", "ping", "{}"))
        .unwrap();
    let pong = read_frame(&mut fresh)
        .unwrap()
        .expect("a fresh client is answered");
    assert_eq!(&pong.msg_id[..], b"req-000000000002");
    // And the server still stops on SIGTERM.
    s.signal("-TERM");
    assert_eq!(s.wait_exit(), Some(0), "{}", s.stderr());
    let _ = std::fs::remove_dir_all(&certs);
}

// ---------------------------------------------------------------------------------------
// D2: running out of descriptors.

/// Opens `n` idle connections to `port`, as many as the kernel lets through.
fn flood(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect()
}

/// Under `ulimit -n 64`, with a connection cap far above it so accept() itself runs out of
/// descriptors: the server logs, backs off, keeps running, and serves once the flood is
/// gone.
fn survives_descriptor_exhaustion(p: &mut Proc, probe: impl Fn(u16) -> bool) {
    let crowd = flood(p.port, 120);
    // EMFILE, reported by accept() (or, in the relay, by the upstream connect).
    wait_until("the server runs out of descriptors", || {
        p.stderr().contains("os error 24")
    });
    assert!(p.alive(), "the server exited: {}", p.stderr());
    drop(crowd);
    wait_until("a fresh client is served again", || probe(p.port));
    assert!(p.alive(), "the server exited: {}", p.stderr());
}

fn swp_ping(port: u16) -> bool {
    let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    c.write_all(&request(ID, "1", "ping", "{}")).is_ok()
        && matches!(read_frame(&mut c), Ok(Some(f)) if &f.msg_id[..] == ID)
}

#[test]
fn d2_the_gateway_survives_running_out_of_descriptors() {
    let extra = flags(&["--max-connections", "1000"]);
    let mut g = gateway("d2-gw", &extra, Some(64));
    survives_descriptor_exhaustion(&mut g, |port| post(port, "", PING).0 == 200);
}

#[test]
fn d2_serve_survives_running_out_of_descriptors() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(flags(&["--max-connections", "1000"]));
    let mut s = Proc::start("d2-serve", &args, Some(64));
    survives_descriptor_exhaustion(&mut s, swp_ping);
}

#[test]
fn d2_the_relay_survives_running_out_of_descriptors() {
    let up = Proc::start("d2-up", &["serve", "--listen", "tcp://127.0.0.1:0"], None);
    let upstream = format!("tcp://127.0.0.1:{}", up.port);
    let mut args = vec!["relay", "--listen", "127.0.0.1:0", "--upstream", &upstream];
    args.extend(flags(&["--max-connections", "1000"]));
    let mut r = Proc::start("d2-relay", &args, Some(64));
    survives_descriptor_exhaustion(&mut r, swp_ping);
}

// ---------------------------------------------------------------------------------------
// D3: two WebSocket clients using the same JSON-RPC id.

/// A stand-in upstream SWP endpoint: answers the gateway's tools/list, and holds the
/// partials of `slow/stream` until a second request with the same id reaches it (as the
/// shared-id defect lets one) or two seconds pass (as they do once the gateway keeps such
/// requests apart), then sends three partials and the response. `seen` reports each
/// request's method as it arrives.
fn fake_upstream(seen: mpsc::Sender<String>) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut n = 0u32;
        let mut next_id = move || {
            n += 1;
            format!("up-ntf-{n:09}").into_bytes()
        };
        let respond = |s: &mut TcpStream, msg_id: &[u8], id: &serde_json::Value, result: &str| {
            let p = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            s.write_all(&frame(2, msg_id, &p)).unwrap();
        };
        let mut backlog: Vec<swp_core::Envelope> = Vec::new();
        loop {
            s.set_read_timeout(None).unwrap();
            let env = match backlog.pop() {
                Some(e) => e,
                None => match read_frame(&mut s) {
                    Ok(Some(e)) => e,
                    _ => return,
                },
            };
            let v = json(&env);
            let method = v["method"].as_str().unwrap_or_default().to_owned();
            let _ = seen.send(method.clone());
            match method.as_str() {
                "tools/list" => respond(&mut s, &env.msg_id, &v["id"], r#"{"tools":[]}"#),
                "slow/stream" => {
                    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                    if let Ok(Some(other)) = read_frame(&mut s) {
                        let _ = seen.send("second".into());
                        backlog.push(other);
                    }
                    for k in 1..=3 {
                        let p = format!(
                            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":{k}}}}}"#,
                            v["id"]
                        );
                        s.write_all(&frame(3, &next_id(), &p)).unwrap();
                    }
                    respond(&mut s, &env.msg_id, &v["id"], r#"{"done":true}"#);
                }
                _ => respond(&mut s, &env.msg_id, &v["id"], "{}"),
            }
        }
    });
    port
}

#[test]
fn d3_stream_partials_stay_with_the_websocket_connection_that_asked() {
    let (tx, rx) = mpsc::channel();
    let up = fake_upstream(tx);
    let upstream = format!("tcp://127.0.0.1:{up}");
    let g = Proc::start(
        "d3",
        &[
            "mcp-gateway",
            "--listen",
            "http://127.0.0.1:0",
            "--sessions-optional",
            "--upstream",
            &upstream,
        ],
        None,
    );
    let recv = |what: &str| {
        rx.recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("{what}"))
    };
    assert_eq!(recv("tools/list"), "tools/list");
    let mut victim = Ws::open(g.port, "").unwrap();
    let mut other = Ws::open(g.port, "").unwrap();
    victim.send(r#"{"jsonrpc":"2.0","id":"x","method":"slow/stream","params":{}}"#);
    assert_eq!(recv("the victim's request upstream"), "slow/stream");
    // Another client, same id, while the victim's stream is in flight.
    other.send(r#"{"jsonrpc":"2.0","id":"x","method":"ping","params":{}}"#);
    let (victim_notes, victim_resp) = victim.until_response("x");
    let (other_notes, other_resp) = other.until_response("x");
    assert_eq!(victim_resp["result"], serde_json::json!({"done": true}));
    assert_eq!(other_resp["result"], serde_json::json!({}));
    assert_eq!(
        victim_notes.len(),
        3,
        "the victim gets its own partials; the other client got {other_notes:?}"
    );
    assert!(other_notes.is_empty(), "leaked: {other_notes:?}");
}

// ---------------------------------------------------------------------------------------
// D4: binding and origins.

#[test]
fn d4_the_gateway_refuses_non_loopback_binds_unless_allowed() {
    for listen in ["http://0.0.0.0:0", "http://[::]:0"] {
        let bin = bin();
        let mut g = Proc::spawn(
            "d4-bind",
            &[
                "mcp-gateway",
                "--listen",
                listen,
                "--upstream-cmd",
                &bin,
                "serve",
                "--listen",
                "stdio",
            ],
            None,
        );
        let until = Instant::now() + DEADLINE;
        let code = loop {
            assert!(
                !g.has_port_file(),
                "{listen}: the gateway listens on all interfaces"
            );
            if let Some(status) = g.child.try_wait().unwrap() {
                break status.code();
            }
            assert!(
                Instant::now() < until,
                "{listen}: neither refused nor listening"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(code, Some(2), "{listen}");
        assert!(g.stderr().contains("--allow-remote"), "{}", g.stderr());
    }
    // With the explicit flag it listens.
    let bin = bin();
    let g = Proc::start(
        "d4-remote",
        &[
            "mcp-gateway",
            "--listen",
            "http://0.0.0.0:0",
            "--allow-remote",
            "--sessions-optional",
            "--upstream-cmd",
            &bin,
            "serve",
            "--listen",
            "stdio",
        ],
        None,
    );
    assert_eq!(post(g.port, "", PING).0, 200);
}

#[test]
fn d4_foreign_origins_are_refused_on_http_and_websocket() {
    let g = gateway(
        "d4-origin",
        &flags(&["--allow-origin", "https://app.example"]),
        None,
    );
    let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;
    let (status, body) = post(g.port, "Origin: http://evil.example\r\n", call);
    assert_eq!(status, 403, "{body}");
    match Ws::open(g.port, "Origin: http://evil.example\r\n") {
        Err(answer) => assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}"),
        Ok(mut ws) => {
            ws.send(call);
            panic!(
                "upgrade accepted; tools/call answered {:?}",
                ws.until_response("c").1
            );
        }
    }
    // Non-browser clients (no Origin), loopback pages and listed origins are served.
    assert_eq!(post(g.port, "", PING).0, 200);
    assert_eq!(
        post(g.port, "Origin: http://localhost:6274\r\n", PING).0,
        200
    );
    assert_eq!(post(g.port, "Origin: https://app.example\r\n", PING).0, 200);
    let mut ws = Ws::open(g.port, "Origin: http://127.0.0.1:3000\r\n").unwrap();
    ws.send(PING);
    assert_eq!(ws.until_response("p").1["result"], serde_json::json!({}));
}

// ---------------------------------------------------------------------------------------
// D5: request smuggling.

#[test]
fn d5_ambiguous_framing_is_refused_and_closes_the_connection() {
    let g = gateway("d5-cl", &[], None);
    let body = PING;
    for (headers, why) in [
        (
            format!(
                "Content-Length: {}\r\nContent-Length: {}\r\n",
                body.len(),
                body.len() + 1
            ),
            "two different lengths",
        ),
        (
            format!("Content-Length: {0}\r\nContent-Length: {0}\r\n", body.len()),
            "the same length twice",
        ),
        (
            format!("Content-Length: +{}\r\n", body.len()),
            "a signed length",
        ),
        (
            format!(
                "Content-Length: {}\r\nTransfer-Encoding: chunked\r\n",
                body.len()
            ),
            "Transfer-Encoding beside Content-Length",
        ),
    ] {
        let req = format!("POST /mcp HTTP/1.1\r\nHost: x\r\n{headers}\r\n{body}");
        let resp = http_raw(g.port, req.as_bytes());
        assert!(resp.starts_with("HTTP/1.1 400 "), "{why}: {resp:?}");
        assert_eq!(resp.matches("HTTP/1.1 ").count(), 1, "{why}: {resp:?}");
    }
}

#[test]
fn d5_a_body_sent_to_an_unserved_path_is_never_run_as_a_request() {
    let g = gateway("d5-404", &[], None);
    let smuggled = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{PING}",
        PING.len()
    );
    let req = format!(
        "POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{smuggled}",
        smuggled.len()
    );
    let resp = http_raw(g.port, req.as_bytes());
    assert!(resp.starts_with("HTTP/1.1 404 "), "{resp:?}");
    assert_eq!(
        resp.matches("HTTP/1.1 ").count(),
        1,
        "the body was answered as a request: {resp:?}"
    );
    // Without a body the connection stays usable, as before.
    let mut s = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    let req = format!("GET /health HTTP/1.1\r\nHost: x\r\n\r\n{smuggled}");
    s.write_all(req.as_bytes()).unwrap();
    let mut got = String::new();
    let mut b = [0u8; 4096];
    while got.matches("HTTP/1.1 ").count() < 2 || !got.contains(r#""result""#) {
        let n = s.read(&mut b).expect("two answers");
        assert!(n > 0, "closed early: {got:?}");
        got.push_str(&String::from_utf8_lossy(&b[..n]));
    }
    assert!(got.starts_with("HTTP/1.1 404 "), "{got:?}");
}

// ---------------------------------------------------------------------------------------
// D6: connection cap, timeouts, memory budget, keepalive.

#[test]
fn d6_serve_drops_slowloris_frames_and_idle_connections() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(flags(&[
        "--body-timeout",
        "300ms",
        "--idle-timeout",
        "500ms",
    ]));
    let s = Proc::start("d6-slow", &args, None);
    // A frame trickled one octet at a time: it must complete within the body timeout,
    // however steadily it trickles.
    let mut c = s.connect();
    let mut w = c.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let f = request(ID, "1", "ping", "{}");
        let until = Instant::now() + DEADLINE;
        for b in f.iter().cycle() {
            if w.write_all(&[*b]).is_err() || Instant::now() > until {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let err = read_frame(&mut c)
        .expect("the stalled frame is dropped")
        .expect("an error frame first");
    assert_eq!(swp_error(&err), "ERR_INVALID_FRAME");
    assert!(closed_by_peer(&mut c));
    trickle.join().unwrap();
    // A connection that says nothing is closed after the idle timeout...
    let mut idle = s.connect();
    assert!(closed_by_peer(&mut idle), "the idle connection stays open");
    // ...but not while a reply is pending.
    let mut waiting = s.connect();
    waiting
        .write_all(&request(ID, "1", "swp/delay", r#"{"ms":1200}"#))
        .unwrap();
    let reply = read_frame(&mut waiting)
        .unwrap()
        .expect("the delayed reply");
    assert_eq!(&reply.msg_id[..], ID);
}

#[test]
fn d6_serve_drops_a_peer_that_never_reads_its_replies() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(flags(&["--body-timeout", "300ms"]));
    let s = Proc::start("d6-noread", &args, None);
    let fds_before = s.fd_count();
    let mut c = s.connect();
    c.set_write_timeout(Some(DEADLINE)).unwrap();
    // 1 MiB echoes, about 2 MiB of reply each, never read: the socket buffers fill, the
    // server's write waits, and the peer is dropped once the wait passes the timeout.
    let msg = "m".repeat(1 << 20);
    let call = format!(r#"{{"name":"echo","arguments":{{"message":"{msg}"}}}}"#);
    let req = request(ID, "1", "tools/call", &call);
    let err = (0..256)
        .find_map(|_| c.write_all(&req).err())
        .expect("the server stops taking requests from a peer that never reads");
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
        ),
        "the connection was kept: {err}"
    );
    drop(c);
    wait_until("the connection's descriptor is released", || {
        s.fd_count() <= fds_before
    });
}

#[test]
fn d6_serve_caps_connections_without_disturbing_busy_ones() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(flags(&["--max-connections", "2"]));
    let s = Proc::start("d6-cap", &args, None);
    // Two busy connections: each has a delayed reply pending. The ping behind the delay
    // proves the delay was taken in (and the connection marked busy) first.
    // The second waits longer, so once both are answered the first has been idle longest.
    let mut busy: Vec<TcpStream> = [1500, 1800]
        .into_iter()
        .map(|ms| {
            let mut c = s.connect();
            let mut req = request(ID, "1", "swp/delay", &format!(r#"{{"ms":{ms}}}"#));
            req.extend(request(b"req-000000000002", "2", "ping", "{}"));
            c.write_all(&req).unwrap();
            let pong = read_frame(&mut c).unwrap().unwrap();
            assert_eq!(&pong.msg_id[..], b"req-000000000002");
            c
        })
        .collect();
    // A third is refused at once, and the two busy ones still get their replies.
    let mut third = s.connect();
    assert!(
        closed_by_peer(&mut third),
        "a connection over the cap was kept"
    );
    for c in &mut busy {
        let r = read_frame(c)
            .unwrap()
            .expect("the busy connection is answered");
        assert_eq!(&r.msg_id[..], ID);
    }
    // Now both are idle: a newcomer takes the slot of the one idle the longest.
    let mut fresh = s.connect();
    fresh.write_all(&request(ID, "1", "ping", "{}")).unwrap();
    assert_eq!(&read_frame(&mut fresh).unwrap().unwrap().msg_id[..], ID);
    assert!(
        closed_by_peer(&mut busy[0]),
        "the longest-idle connection made room"
    );
}

#[test]
fn d6_serve_keeps_buffered_frames_within_the_memory_budget() {
    let mut args = vec!["serve", "--listen", "tcp://127.0.0.1:0"];
    args.extend(flags(&["--memory-budget", "1MiB", "--conn-memory", "1MiB"]));
    let s = Proc::start("d6-mem", &args, None);
    let pad = "x".repeat(900 * 1024);
    let big = request(ID, "1", "ping", &format!(r#"{{"pad":"{pad}"}}"#));
    // A holds 800 KiB of a frame...
    let mut a = s.connect();
    a.write_all(&big[..800 * 1024]).unwrap();
    wait_consumed(s.port, &a);
    // ...so B's stalled 400 KiB would go over the budget: B is refused and closed.
    let mut b = s.connect();
    b.write_all(&big[..400 * 1024]).unwrap();
    let err = read_frame(&mut b)
        .expect("the connection over the budget is refused")
        .expect("an error frame");
    assert_eq!(swp_error(&err), "ERR_RATE_LIMIT_EXCEEDED");
    assert!(closed_by_peer(&mut b));
    // A was not disturbed: it finishes its frame and is answered.
    a.write_all(&big[800 * 1024..]).unwrap();
    let pong = read_frame(&mut a).unwrap().expect("A is answered");
    assert_eq!(&pong.msg_id[..], ID);
}

/// Waits until the server side of `client`'s connection has its keepalive timer armed.
fn keepalive_armed(server_port: u16, client: &TcpStream) {
    let cport = client.local_addr().unwrap().port();
    wait_until("the server arms TCP keepalive", || {
        server_socket(server_port, cport).is_some_and(|s| s.timer == 2)
    });
}

#[test]
fn d6_serve_and_the_gateway_turn_on_tcp_keepalive() {
    let s = Proc::start("d6-ka", &["serve", "--listen", "tcp://127.0.0.1:0"], None);
    let c = s.connect();
    keepalive_armed(s.port, &c);
    let g = gateway("d6-ka-gw", &[], None);
    let c = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    keepalive_armed(g.port, &c);
}

#[test]
fn d6_the_gateway_drops_slow_heads_stalled_bodies_and_idle_connections() {
    let g = gateway(
        "d6-gw",
        &flags(&[
            "--header-timeout",
            "300ms",
            "--body-timeout",
            "300ms",
            "--idle-timeout",
            "500ms",
        ]),
        None,
    );
    // Slowloris: a head that never ends, one header line at a time.
    let mut c = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut w = c.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let _ = w.write_all(b"POST /mcp HTTP/1.1\r\n");
        let until = Instant::now() + DEADLINE;
        while Instant::now() < until && w.write_all(b"X-a: b\r\n").is_ok() {
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut resp = String::new();
    let _ = c.read_to_string(&mut resp);
    assert!(resp.starts_with("HTTP/1.1 408 "), "{resp:?}");
    trickle.join().unwrap();
    // A body that stalls.
    let mut c = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    c.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
        .unwrap();
    let mut resp = String::new();
    let _ = c.read_to_string(&mut resp);
    assert!(resp.starts_with("HTTP/1.1 408 "), "{resp:?}");
    // An idle connection.
    let mut c = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    c.set_read_timeout(Some(DEADLINE)).unwrap();
    assert!(closed_by_peer(&mut c), "the idle connection stays open");
    // An idle WebSocket is closed with 1001...
    let mut ws = Ws::open(g.port, "").unwrap();
    let (op, payload) = ws.recv().expect("a close frame");
    assert_eq!((op, &payload[..2]), (8, &1001u16.to_be_bytes()[..]));
    // ...and one whose message stalls, with 1008.
    let mut ws = Ws::open(g.port, "").unwrap();
    ws.s.write_all(&[0x81, 0x80 | 100, 1, 2, 3, 4, b'{'])
        .unwrap();
    let (op, payload) = ws.recv().expect("a close frame");
    assert_eq!((op, &payload[..2]), (8, &1008u16.to_be_bytes()[..]));
}

/// `swp-ref relay` with `extra` flags (unless replaying an older build) in front of a fresh
/// `swp-ref serve`; the upstream goes with it.
fn relay(tag: &str, extra: &[&str]) -> (Proc, Proc) {
    let up = Proc::start(
        &format!("{tag}-up"),
        &["serve", "--listen", "tcp://127.0.0.1:0"],
        None,
    );
    let upstream = format!("tcp://127.0.0.1:{}", up.port);
    let mut args = vec!["relay", "--listen", "127.0.0.1:0", "--upstream", &upstream];
    args.extend(flags(extra));
    let r = Proc::start(tag, &args, None);
    (r, up)
}

#[test]
fn d6_the_relay_caps_connections_evicting_the_longest_idle() {
    let (r, _up) = relay(
        "d6-relay",
        &["--max-connections", "2", "--idle-timeout", "3s"],
    );
    let ping = request(ID, "1", "ping", "{}");
    let half = ping.len() / 2;
    // Two busy connections: each has part of a frame buffered in the relay.
    let mut busy: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut c = r.connect();
            c.write_all(&ping[..half]).unwrap();
            wait_consumed(r.port, &c);
            c
        })
        .collect();
    // A third is refused at once, and the busy ones are not disturbed.
    let mut third = r.connect();
    assert!(
        closed_by_peer(&mut third),
        "a connection over the cap was kept"
    );
    for c in &mut busy {
        c.write_all(&ping[half..]).unwrap();
        assert_eq!(&read_frame(c).unwrap().expect("answered").msg_id[..], ID);
    }
    // Both idle now, the first the longest: a newcomer takes its slot.
    let mut fresh = r.connect();
    fresh.write_all(&ping).unwrap();
    assert_eq!(&read_frame(&mut fresh).unwrap().unwrap().msg_id[..], ID);
    assert!(
        closed_by_peer(&mut busy[0]),
        "the longest-idle connection made room"
    );
    busy[1].write_all(&ping).unwrap();
    assert_eq!(&read_frame(&mut busy[1]).unwrap().unwrap().msg_id[..], ID);
    // An idle connection is closed after the idle timeout, and its slot is free again.
    assert!(closed_by_peer(&mut fresh), "the idle connection stays open");
    wait_until("the relay serves a new client", || swp_ping(r.port));
}

#[test]
fn d6_ten_idle_clients_do_not_lock_a_fresh_one_out_of_the_relay() {
    let (r, _up) = relay("d6-relay-ten", &["--max-connections", "10"]);
    // Issue 30, defect 6: at the cap, ten idle clients locked every newcomer out.
    let mut idle: Vec<TcpStream> = (0..10)
        .map(|_| {
            let mut c = r.connect();
            c.write_all(&request(ID, "1", "ping", "{}")).unwrap();
            assert_eq!(&read_frame(&mut c).unwrap().unwrap().msg_id[..], ID);
            c
        })
        .collect();
    assert!(swp_ping(r.port), "a fresh client was locked out");
    // The one that made room is the one idle the longest; the others are still served.
    assert!(closed_by_peer(&mut idle[0]));
    for c in &mut idle[1..] {
        c.write_all(&request(ID, "1", "ping", "{}")).unwrap();
        assert_eq!(&read_frame(c).unwrap().unwrap().msg_id[..], ID);
    }
}

#[test]
fn d6_the_relay_keeps_stalled_frames_within_the_memory_budget() {
    const MIB: usize = 1 << 20;
    const BUDGET_MIB: u64 = 24;
    let (r, _up) = relay(
        "d6-relay-mem",
        &["--memory-budget", "24MiB", "--conn-memory", "16MiB"],
    );
    let base = r.hwm_kib();
    // Issue 30, defect 6: forty clients each send all but the last octet of a default-sized
    // frame and stall. Without a budget the relay held them all (330 MiB).
    // The largest ping the upstream takes (MAX_PAYLOAD_BYTES is 8 MiB less 1 KiB).
    let pad = "x".repeat(8 * MIB - 2048);
    let big = request(ID, "1", "ping", &format!(r#"{{"pad":"{pad}"}}"#));
    let mut stalled: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut c = r.connect();
            c.set_write_timeout(Some(DEADLINE)).unwrap();
            // Refused connections are closed under the writer: an error here is expected.
            let _ = c.write_all(&big[..big.len() - 1]);
            c
        })
        .collect();
    wait_until("the relay refuses connections over the budget", || {
        r.stderr().contains("memory budget")
    });
    let held = r.hwm_kib().saturating_sub(base);
    println!(
        "relay: 40 stalled {} KiB frames under a {BUDGET_MIB} MiB budget: peak RSS {} KiB \
         over the {base} KiB it started with; VmRSS now {} KiB",
        big.len() / 1024,
        held,
        r.rss_kib()
    );
    // The budget, plus room for what connections in progress hold beyond it (at most a
    // block each way, until the read after it) and the threads' stacks; measured at
    // about 1.6 MiB over the budget.
    assert!(
        held <= (BUDGET_MIB + 8) * 1024,
        "40 stalled frames made the relay hold {held} KiB"
    );
    // Small frames arrive whole within one read and are never refused, however full the
    // budget is.
    assert!(swp_ping(r.port), "a fresh client was refused");
    // The connections the budget kept are not disturbed: they finish their frames and are
    // answered. At most as many as fit in the budget were kept.
    let mut answered = 0;
    for c in &mut stalled {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        if c.write_all(&big[big.len() - 1..]).is_ok()
            && matches!(read_frame(c), Ok(Some(f)) if &f.msg_id[..] == ID && json(&f)["result"].is_object())
        {
            answered += 1;
        }
    }
    assert!(
        (1..=3).contains(&answered),
        "{answered} stalled frames were kept"
    );
}

#[test]
fn the_relay_takes_every_flag_its_help_advertises() {
    let out = std::process::Command::new(bin())
        .args(["relay", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    // `--name <VALUE>` at the start of a help line, with a value the flag takes.
    let mut extra: Vec<String> = Vec::new();
    for line in help.lines() {
        let mut words = line.split_whitespace();
        let (Some(flag), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        if !flag.starts_with("--") || ["--listen", "--upstream", "--port-file"].contains(&flag) {
            continue;
        }
        let v = match value {
            "<N>" => "10",
            "<DURATION>" => "5s",
            "<SIZE>" => "4MiB",
            "<MAX_FRAME_BYTES>" => "65536",
            other => panic!("no test value for {flag} {other}"),
        };
        extra.extend([flag.to_owned(), v.to_owned()]);
    }
    for limit in [
        "--max-connections",
        "--idle-timeout",
        "--body-timeout",
        "--conn-memory",
        "--memory-budget",
        "--tcp-keepalive",
    ] {
        assert!(extra.iter().any(|f| f == limit), "{limit} not in the help");
    }
    // The relay has no head and no handshake: it neither advertises nor takes the flag.
    assert!(!help.contains("--header-timeout"), "{help}");
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let (r, _up) = relay("relay-flags", &extra);
    assert!(
        swp_ping(r.port),
        "the relay started with {extra:?} does not relay"
    );
    let refused = std::process::Command::new(bin())
        .args([
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:9",
        ])
        .args(["--header-timeout", "5s"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn d6_the_gateway_keeps_buffered_bodies_within_the_memory_budget() {
    let g = gateway(
        "d6-gw-mem",
        &flags(&["--memory-budget", "64KiB", "--conn-memory", "64KiB"]),
        None,
    );
    let head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n";
    let mut a = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    a.write_all(head).unwrap();
    a.write_all(&[b' '; 40_000]).unwrap();
    wait_consumed(g.port, &a);
    let mut b = TcpStream::connect(("127.0.0.1", g.port)).unwrap();
    b.set_read_timeout(Some(DEADLINE)).unwrap();
    b.write_all(head).unwrap();
    b.write_all(&[b' '; 40_000]).unwrap();
    let mut resp = String::new();
    let _ = b.read_to_string(&mut resp);
    assert!(resp.starts_with("HTTP/1.1 503 "), "{resp:?}");
    // A is not disturbed.
    a.set_read_timeout(Some(DEADLINE)).unwrap();
    let rest = 60_000 - 40_000 - PING.len();
    a.write_all(" ".repeat(rest).as_bytes()).unwrap();
    a.write_all(PING.as_bytes()).unwrap();
    let mut b = [0u8; 4096];
    let n = a.read(&mut b).unwrap();
    assert!(
        String::from_utf8_lossy(&b[..n]).starts_with("HTTP/1.1 200 "),
        "{}",
        String::from_utf8_lossy(&b[..n])
    );
}

// ---------------------------------------------------------------------------------------
// D7: amplification.

#[test]
fn d7_swp_stream_output_is_bounded_whatever_the_id() {
    let s = Proc::start("d7", &["serve", "--listen", "tcp://127.0.0.1:0"], None);
    let mut c = s.connect();
    // A 200 KiB id: every partial would echo it.
    let id = format!("\"{}\"", "i".repeat(200 * 1024));
    let req = request(ID, &id, "swp/stream", r#"{"count":16}"#);
    c.write_all(&req).unwrap();
    c.write_all(&request(b"req-000000000002", "2", "ping", "{}"))
        .unwrap();
    let mut out = 0usize;
    loop {
        let f = read_frame(&mut c).unwrap().expect("replies");
        out += f.payload.len() + f.msg_id.len();
        if &f.msg_id[..] == b"req-000000000002" {
            break;
        }
        if &f.msg_id[..] == ID {
            assert_eq!(json(&f)["error"]["code"], -32602, "refused, not streamed");
        }
    }
    assert!(
        out <= 2 * req.len(),
        "{} octets in made {out} octets out",
        req.len()
    );
    // An ordinary id still streams.
    c.write_all(&request(ID, "\"tok\"", "swp/stream", r#"{"count":16}"#))
        .unwrap();
    let mut partials = 0;
    loop {
        let f = read_frame(&mut c).unwrap().unwrap();
        if f.msg_type == 3 {
            partials += 1;
        } else {
            assert_eq!(&f.msg_id[..], ID);
            break;
        }
    }
    assert_eq!(partials, 16);
}

// ---------------------------------------------------------------------------------------
// The issue's "done when": a measurement, not a fast test (docs/performance.md).

/// The listening socket's accept queue on `port` (connections the server has not taken).
fn accept_queue(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!(":{port:04X}");
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 4 && f[1].ends_with(&local) && f[3] == "0A")
            .then(|| u64::from_str_radix(f[4].split(':').nth(1)?, 16).ok())
            .flatten()
    })
}

/// Under `ulimit -n 1024`: 1,100 idle connections, then 200 slowloris connections that
/// each send one more octet every second, then fresh clients, one at a time. Prints the
/// fresh clients' round trips and the server's RSS and descriptors.
fn flood_and_probe(name: &str, p: &Proc, slow_start: &'static [u8], probe: impl Fn(u16) -> bool) {
    let rss_start = p.rss_kib();
    let idle = flood(p.port, 1100);
    let slow = flood(p.port, 200);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = {
        let mut slow: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
        let stop = stop.clone();
        std::thread::spawn(move || {
            for s in &mut slow {
                let _ = s.write_all(slow_start);
            }
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for s in &mut slow {
                    let _ = s.write_all(b"X");
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    // First, one fresh client at once, behind whatever the burst left in the accept queue.
    let t = Instant::now();
    assert!(probe(p.port), "{name}: a fresh client was not answered");
    let burst = t.elapsed();
    wait_until("the server has taken every pending connection", || {
        accept_queue(p.port) == Some(0)
    });
    let mut trips: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            assert!(probe(p.port), "{name}: a fresh client was not answered");
            t.elapsed()
        })
        .collect();
    trips.sort();
    let (rss, fds) = (p.rss_kib(), p.fd_count());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    trickle.join().unwrap();
    println!(
        "{name}: {} idle + {} slowloris open client-side; first fresh client right after \
         the burst {burst:?}; then fresh client round trip median {:?}, p90 {:?}, max {:?} \
         (50 clients); server RSS {} KiB at start, {} KiB under the flood; {} descriptors",
        idle.len(),
        slow.len(),
        trips[25],
        trips[45],
        trips[49],
        rss_start,
        rss,
        fds
    );
    // "Within 100 ms" is the figure docs/performance.md records, measured on a quiet
    // machine; here the bound is loose so a loaded CI machine cannot fail it by being slow.
    assert!(
        trips[49] < Duration::from_secs(2),
        "{name}: {:?}",
        trips[49]
    );
}

#[test]
#[ignore = "a measurement: cargo test -p swp-ref --release --test hostile -- --ignored --nocapture"]
fn flood_1100_idle_and_200_slowloris_leave_room_for_a_fresh_client() {
    let s = Proc::start(
        "flood-serve",
        &["serve", "--listen", "tcp://127.0.0.1:0"],
        Some(1024),
    );
    flood_and_probe("serve", &s, &[0, 0, 4], swp_ping);
    drop(s);
    let g = gateway("flood-gw", &[], Some(1024));
    flood_and_probe("mcp-gateway", &g, b"POST /mcp HTTP/1.1\r\n", |port| {
        post(port, "", PING).0 == 200
    });
}
