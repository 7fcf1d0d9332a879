//! Integration tests of `swp-ref serve` as a process: listen rules, TCP and stdio round
//! trips, mTLS identity and refusals, error frames, the unknown-profile close policy and
//! signal handling. Every server listens on 127.0.0.1 with port 0.

use bytes::Bytes;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{
    ClientConfig, ClientConnection, RootCertStore, StreamOwned, SupportedProtocolVersion,
};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swp_core::{e1, Envelope, Limits};

const BIN: &str = env!("CARGO_BIN_EXE_swp-ref");
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A fresh directory for one test's files.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "swp-ref-serve-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running `swp-ref serve`, killed (if still running) and cleaned up when dropped.
struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start(tag: &str, args: &[&str]) -> Server {
        let dir = temp_dir(tag);
        let port_file = dir.join("port");
        let stderr = std::fs::File::create(dir.join("stderr.log")).unwrap();
        let child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut s = Server {
            child,
            port: 0,
            dir,
        };
        let deadline = Instant::now() + IO_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                // Written atomically: the whole number and its newline, or nothing.
                assert!(text.ends_with('\n'), "port file {text:?}");
                s.port = text.trim().parse().unwrap();
                assert_ne!(s.port, 0);
                return s;
            }
            if let Some(status) = s.child.try_wait().unwrap() {
                panic!("server exited early ({status}): {}", s.stderr());
            }
            assert!(Instant::now() < deadline, "no port file: {}", s.stderr());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }

    /// Waits until stderr contains `needle` (log lines are written as events happen).
    fn stderr_eventually_contains(&self, needle: &str) -> bool {
        let deadline = Instant::now() + IO_TIMEOUT;
        while Instant::now() < deadline {
            if self.stderr().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + IO_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn frame(profile_id: u64, msg_type: u64, msg_id: &[u8], payload: &str) -> Vec<u8> {
    let env = Envelope {
        version: 1,
        profile_id,
        msg_type,
        msg_id: Bytes::copy_from_slice(msg_id),
        payload: Bytes::copy_from_slice(payload.as_bytes()),
        ..Envelope::default()
    };
    e1::frame_bytes(&env).unwrap().to_vec()
}

fn request(msg_id: &[u8], id: u64, method: &str, params: &str) -> Vec<u8> {
    frame(
        1,
        1,
        msg_id,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#),
    )
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
fn read_frame(r: &mut impl Read) -> io::Result<Option<Envelope>> {
    let mut prefix = [0u8; 4];
    match r.read_exact(&mut prefix) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let n = u32::from_be_bytes(prefix) as usize;
    assert!(n <= 1 << 20, "reply of {n} octets");
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    let limits = Limits::default();
    Ok(Some(
        e1::decode(&Bytes::from(body), &limits).expect("replies are valid E1"),
    ))
}

fn json(env: &Envelope) -> serde_json::Value {
    serde_json::from_slice(&env.payload).unwrap()
}

fn swp_error(env: &Envelope) -> String {
    assert_eq!((env.profile_id, env.msg_type), (1, 2));
    let v = json(env);
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], serde_json::Value::Null);
    v["error"]["data"]["swp_error"].as_str().unwrap().to_owned()
}

#[test]
fn plaintext_on_a_non_loopback_address_is_refused() {
    for listen in ["tcp://0.0.0.0:0", "tcp://[::]:0"] {
        let out = Command::new(BIN)
            .args(["serve", "--listen", listen])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{listen}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing to serve plaintext"), "{err}");
        assert!(err.contains("non-loopback"), "{err}");
    }
}

#[test]
fn ping_round_trip_over_tcp() {
    let server = Server::start("ping", &["--listen", "tcp://127.0.0.1:0"]);
    // The port file is written before the banner: wait for the banner, do not race it.
    assert!(server.stderr_eventually_contains(&format!(
        "swp-ref: listening on tcp://127.0.0.1:{}",
        server.port
    )));
    let mut s = server.connect();
    s.write_all(&request(b"ping-00000000001", 42, "ping", "{}"))
        .unwrap();
    let r = read_frame(&mut s).unwrap().unwrap();
    assert_eq!((r.version, r.profile_id, r.msg_type), (1, 1, 2));
    assert_eq!(&r.msg_id[..], b"ping-00000000001");
    assert_eq!(&r.payload[..], br#"{"jsonrpc":"2.0","id":42,"result":{}}"#);
    assert!(r.ts_unix_ms > 0);
}

#[test]
fn stdio_serves_one_connection_and_exits_at_end_of_input() {
    let mut input = request(b"stdio-0000000001", 1, "ping", "{}");
    input.extend(request(b"stdio-0000000002", 2, "swp/whoami", "{}"));
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let mut rd = &out.stdout[..];
    let a = read_frame(&mut rd).unwrap().unwrap();
    let b = read_frame(&mut rd).unwrap().unwrap();
    assert_eq!(&a.payload[..], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert_eq!(
        &b.payload[..],
        br#"{"jsonrpc":"2.0","id":2,"result":{"identity":null}}"#
    );
    assert!(read_frame(&mut rd).unwrap().is_none());
}

#[test]
fn duplicate_in_flight_msg_id_is_rejected_while_the_first_completes() {
    let server = Server::start("dup", &["--listen", "tcp://127.0.0.1:0"]);
    let mut s = server.connect();
    let id = b"dup-000000000001";
    let sent = Instant::now();
    // The first request stays in flight for 2 s: long enough that the duplicate, written
    // right after it, reaches the server while it is in flight even on a loaded machine.
    s.write_all(&request(id, 1, "swp/delay", r#"{"ms":2000}"#))
        .unwrap();
    s.write_all(&request(id, 2, "ping", "{}")).unwrap();
    // Judged by content, not by arrival order.
    let (a, b) = (
        read_frame(&mut s).unwrap().unwrap(),
        read_frame(&mut s).unwrap().unwrap(),
    );
    let (dup, late) = if a
        .payload
        .starts_with(br#"{"jsonrpc":"2.0","id":1,"result""#)
    {
        (b, a)
    } else {
        (a, b)
    };
    assert_eq!(&dup.msg_id[..], id);
    assert_eq!(swp_error(&dup), "ERR_DUPLICATE_MSG_ID");
    assert!(sent.elapsed() >= Duration::from_millis(1990));
    assert_eq!(&late.msg_id[..], id);
    assert_eq!(
        &late.payload[..],
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    // Answered, so the msg_id is free again.
    s.write_all(&request(id, 3, "ping", "{}")).unwrap();
    let again = read_frame(&mut s).unwrap().unwrap();
    assert_eq!(
        &again.payload[..],
        br#"{"jsonrpc":"2.0","id":3,"result":{}}"#
    );
}

#[test]
fn oversized_prefix_gets_an_error_frame_then_end_of_stream() {
    let server = Server::start(
        "big",
        &["--listen", "tcp://127.0.0.1:0", "--max-frame-bytes", "4096"],
    );
    let mut s = server.connect();
    s.write_all(&[0x00, 0x00, 0x10, 0x01]).unwrap();
    let r = read_frame(&mut s).unwrap().unwrap();
    assert_eq!(swp_error(&r), "ERR_FRAME_TOO_LARGE");
    assert_eq!(json(&r)["error"]["code"], -32700);
    assert_eq!(&r.msg_id[..], b"swp-err-00000001");
    assert!(read_frame(&mut s).unwrap().is_none());

    // With unread input behind the bad prefix, the error frame still arrives, then the end
    // of the stream (the server drains input it will not process rather than reset).
    let mut s = server.connect();
    let mut input = vec![0x00, 0x00, 0x10, 0x01];
    input.resize(256 * 1024, 0xab);
    s.write_all(&input).unwrap();
    let r = read_frame(&mut s).unwrap().unwrap();
    assert_eq!(swp_error(&r), "ERR_FRAME_TOO_LARGE");
    assert!(read_frame(&mut s).unwrap().is_none());
}

#[test]
fn unknown_profile_under_close_policy_ends_the_stream_with_zero_bytes() {
    let server = Server::start(
        "close",
        &[
            "--listen",
            "tcp://127.0.0.1:0",
            "--unknown-profile",
            "close",
        ],
    );
    let mut s = server.connect();
    s.write_all(&frame(4242, 1, b"unknown-00000001", "{}"))
        .unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{rest:?}");

    // The default policy answers instead.
    let server = Server::start("reply", &["--listen", "tcp://127.0.0.1:0"]);
    let mut s = server.connect();
    s.write_all(&frame(4242, 1, b"unknown-00000001", "{}"))
        .unwrap();
    let r = read_frame(&mut s).unwrap().unwrap();
    assert_eq!(swp_error(&r), "ERR_UNKNOWN_PROFILE");
    assert_eq!(&r.msg_id[..], b"unknown-00000001");
}

#[test]
fn sigterm_and_sigint_stop_the_server_with_status_zero() {
    for sig in ["-TERM", "-INT"] {
        let mut server = Server::start("signal", &["--listen", "tcp://127.0.0.1:0"]);
        let mut s = server.connect();
        s.write_all(&request(b"sig-000000000001", 1, "ping", "{}"))
            .unwrap();
        assert!(read_frame(&mut s).unwrap().is_some());
        server.signal(sig);
        let status = server.wait_exit();
        assert!(status.success(), "{sig}: {status}");
        // Its connection was closed, not left hanging.
        assert!(read_frame(&mut s).map_or(true, |f| f.is_none()));
    }
}

/// Test PKI: a CA, a server certificate for 127.0.0.1/localhost, a client certificate with
/// a SAN URI (`client`), and the client certificates of issue 30's defect 4, all from the
/// same CA and written as PEM files: `dns-only` (its one SAN is `DNS:spiffe://t/alice`),
/// `no-san` (a common name and no SAN) and `two-uris` (two URI SANs).
struct Pki {
    dir: PathBuf,
}

const CLIENT_URI: &str = "spiffe://example.test/client-1";
/// The name the defect's certificates carry, in a field that is not a URI SAN.
const ALICE: &str = "spiffe://t/alice";

impl Pki {
    fn new() -> Pki {
        let dir = temp_dir("pki");
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::default();
        ca.distinguished_name
            .push(DnType::CommonName, "swp-ref test CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);

        let server_key = KeyPair::generate().unwrap();
        let mut server =
            CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_cert = server.signed_by(&server_key, &issuer).unwrap();

        let client_key = KeyPair::generate().unwrap();
        let mut client = CertificateParams::default();
        client.subject_alt_names = vec![
            SanType::URI(CLIENT_URI.try_into().unwrap()),
            SanType::DnsName("client-1.example.test".try_into().unwrap()),
        ];
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_cert = client.signed_by(&client_key, &issuer).unwrap();

        let write = |name: &str, pem: String| std::fs::write(dir.join(name), pem).unwrap();
        write("ca.pem", ca_cert.pem());
        write("server.pem", server_cert.pem());
        write("server.key", server_key.serialize_pem());
        write("client.pem", client_cert.pem());
        write("client.key", client_key.serialize_pem());
        let odd_clients = [
            (
                "dns-only",
                "dns-only",
                vec![SanType::DnsName(ALICE.try_into().unwrap())],
            ),
            ("no-san", "alice", vec![]),
            (
                "two-uris",
                "two-uris",
                vec![
                    SanType::URI(ALICE.try_into().unwrap()),
                    SanType::URI("spiffe://t/bob".try_into().unwrap()),
                ],
            ),
        ];
        for (name, cn, sans) in odd_clients {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::default();
            p.distinguished_name = rcgen::DistinguishedName::new();
            p.distinguished_name.push(DnType::CommonName, cn);
            p.subject_alt_names = sans;
            p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            let cert = p.signed_by(&key, &issuer).unwrap();
            write(&format!("{name}.pem"), cert.pem());
            write(&format!("{name}.key"), key.serialize_pem());
        }
        Pki { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_owned()
    }

    fn server_args(&self, mtls: bool, tls13_only: bool) -> Vec<String> {
        let mut a = vec![
            "--listen".to_owned(),
            "tls://127.0.0.1:0".to_owned(),
            "--cert".to_owned(),
            self.path("server.pem"),
            "--key".to_owned(),
            self.path("server.key"),
        ];
        if mtls {
            a.extend(["--client-ca".to_owned(), self.path("ca.pem")]);
        }
        if tls13_only {
            a.push("--tls13-only".to_owned());
        }
        a
    }

    /// A client trusting the test CA, with or without its certificate.
    fn client(
        &self,
        with_cert: bool,
        versions: &[&'static SupportedProtocolVersion],
    ) -> Arc<ClientConfig> {
        self.client_as(with_cert.then_some("client"), versions)
    }

    /// A client trusting the test CA, presenting the certificate `cert` (`NAME.pem` and
    /// `NAME.key`) if any.
    fn client_as(
        &self,
        cert: Option<&str>,
        versions: &[&'static SupportedProtocolVersion],
    ) -> Arc<ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(self.dir.join("ca.pem")).unwrap())
            .unwrap();
        let b = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots);
        let config = if let Some(name) = cert {
            let pem = self.dir.join(format!("{name}.pem"));
            let chain = vec![CertificateDer::from_pem_file(pem).unwrap()];
            let key = PrivateKeyDer::from_pem_file(self.dir.join(format!("{name}.key"))).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        } else {
            b.with_no_client_auth()
        };
        Arc::new(config)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tls_connect(
    server: &Server,
    config: Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = ClientConnection::new(config, name).unwrap();
    StreamOwned::new(conn, server.connect())
}

/// Sends a whoami and returns the reply, or the error that prevented one.
fn whoami(s: &mut (impl Read + Write)) -> io::Result<Option<Envelope>> {
    s.write_all(&request(b"whoami-000000001", 7, "swp/whoami", "{}"))?;
    s.flush()?;
    read_frame(s)
}

const TLS13: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];
const TLS12: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];

#[test]
fn whoami_over_mtls_returns_the_client_san_uri() {
    let pki = Pki::new();
    let args = pki.server_args(true, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start("mtls", &args);
    assert!(server.stderr_eventually_contains("listening on tls://127.0.0.1:"));
    for versions in [TLS13, TLS12] {
        let mut s = tls_connect(&server, pki.client(true, versions));
        let r = whoami(&mut s).unwrap().unwrap();
        assert_eq!(&r.msg_id[..], b"whoami-000000001");
        assert_eq!(
            String::from_utf8(r.payload.to_vec()).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"identity":"{CLIENT_URI}"}}}}"#)
        );
    }
}

#[test]
fn tls_without_client_ca_has_no_identity() {
    let pki = Pki::new();
    let args = pki.server_args(false, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start("tls", &args);
    let mut s = tls_connect(&server, pki.client(false, TLS13));
    let r = whoami(&mut s).unwrap().unwrap();
    assert_eq!(
        &r.payload[..],
        br#"{"jsonrpc":"2.0","id":7,"result":{"identity":null}}"#
    );
}

#[test]
fn client_without_certificate_is_refused_under_client_ca() {
    let pki = Pki::new();
    let args = pki.server_args(true, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start("nocert", &args);
    for versions in [TLS13, TLS12] {
        let mut s = tls_connect(&server, pki.client(false, versions));
        // No frame is ever processed: the handshake (1.2) or the first read (1.3, where the
        // client learns of the rejection by alert) fails, or the stream just ends.
        if let Ok(Some(f)) = whoami(&mut s) {
            panic!("frame from an unauthenticated client answered: {f:?}");
        }
    }
    assert!(server.stderr_eventually_contains("swp-ref: security event: TLS handshake"));
}

/// An mTLS server started with `extra` flags.
fn mtls_server(pki: &Pki, tag: &str, extra: &[&str]) -> Server {
    let mut args = pki.server_args(true, false);
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(tag, &args)
}

/// The identity `swp/whoami` reports to the client presenting `cert`, or the refusal code:
/// `Err(code)` when the server's first frame is an error frame and the stream then ends.
fn identity_or_refusal(server: &Server, pki: &Pki, cert: &str) -> Result<String, String> {
    let mut s = tls_connect(server, pki.client_as(Some(cert), TLS13));
    let first = whoami(&mut s)
        .expect("the handshake succeeds: the certificate chains to the CA")
        .expect("a frame before the end of the stream");
    if first.msg_id[..] == b"whoami-000000001"[..] {
        let v = json(&first);
        return Ok(v["result"]["identity"].as_str().unwrap().to_owned());
    }
    let code = swp_error(&first);
    // Refused: the stream ends, and nothing the client sent is ever answered.
    match read_frame(&mut s) {
        Ok(None) | Err(_) => Err(code),
        Ok(Some(f)) => panic!("a refused peer was answered: {f:?}"),
    }
}

#[test]
fn a_dns_san_is_never_read_as_a_uri_identity() {
    let pki = Pki::new();
    // Issue 30, defect 4: the DNS SAN `spiffe://t/alice` passed the owner gate as the URI
    // identity `spiffe://t/alice`. Under the default field (the URI SAN) the certificate
    // names no one and is refused before any frame is read.
    let server = mtls_server(&pki, "dns-only", &["--rpc-owner", ALICE]);
    assert_eq!(
        identity_or_refusal(&server, &pki, "dns-only"),
        Err("ERR_SECURITY_POLICY".to_owned())
    );
    assert!(server.stderr_eventually_contains("has no URI SAN"));
    // The well-formed client on the same server is unaffected.
    assert_eq!(
        identity_or_refusal(&server, &pki, "client").as_deref(),
        Ok(CLIENT_URI)
    );
    // Declaring the DNS SAN as the identity field makes it the identity, and only it.
    let server = mtls_server(&pki, "dns-field", &["--identity-field", "san-dns"]);
    assert_eq!(
        identity_or_refusal(&server, &pki, "dns-only").as_deref(),
        Ok(ALICE)
    );
    assert_eq!(
        identity_or_refusal(&server, &pki, "client").as_deref(),
        Ok("client-1.example.test")
    );
}

#[test]
fn a_certificate_without_the_declared_field_or_with_two_values_is_refused() {
    let pki = Pki::new();
    let server = mtls_server(&pki, "no-san", &[]);
    // No SAN at all: no identity, so no connection (CRED and authz never see such a peer).
    assert_eq!(
        identity_or_refusal(&server, &pki, "no-san"),
        Err("ERR_SECURITY_POLICY".to_owned())
    );
    // Two URI SANs: which one names the peer would be a guess (S1 annex: no ambiguous
    // precedence), so neither is taken.
    assert_eq!(
        identity_or_refusal(&server, &pki, "two-uris"),
        Err("ERR_SECURITY_POLICY".to_owned())
    );
    assert!(server.stderr_eventually_contains("2 values of the URI SAN"));
    // The server is still serving.
    assert_eq!(
        identity_or_refusal(&server, &pki, "client").as_deref(),
        Ok(CLIENT_URI)
    );
    // With the common name declared, the certificate without SANs is named by it.
    let server = mtls_server(&pki, "cn-field", &["--identity-field", "cn"]);
    assert_eq!(
        identity_or_refusal(&server, &pki, "no-san").as_deref(),
        Ok("alice")
    );
}

#[test]
fn tls12_only_client_fails_against_tls13_only() {
    let pki = Pki::new();
    let args = pki.server_args(true, true);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start("tls13", &args);
    let mut s = tls_connect(&server, pki.client(true, TLS12));
    assert!(whoami(&mut s).is_err(), "TLS 1.2 handshake should fail");
    assert!(server.stderr_eventually_contains("swp-ref: security event: TLS handshake"));
    // TLS 1.3 with the same certificate works.
    let mut s = tls_connect(&server, pki.client(true, TLS13));
    assert!(whoami(&mut s).unwrap().is_some());
}

#[test]
fn tls_needs_a_certificate_and_key() {
    let out = Command::new(BIN)
        .args(["serve", "--listen", "tls://127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let pki = Pki::new();
    let out = Command::new(BIN)
        .args(["serve", "--listen", "tls://127.0.0.1:0", "--cert"])
        .arg(Path::new(&pki.path("server.pem")))
        .arg("--key")
        .arg(pki.path("missing.key"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.key"));
}
