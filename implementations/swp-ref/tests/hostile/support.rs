//! What the hostile-client tests share: starting the real binaries on loopback with port
//! files (optionally under a lowered descriptor limit), SWP frames, a minimal WebSocket
//! client, and what /proc says about a server (CPU time, descriptors, RSS, socket queues
//! and timers).

use bytes::Bytes;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use swp_core::{e1, Envelope, Limits};

/// How long any one wait may take: generous, for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The binary under test: `SWP_REF_BIN` when set (to replay the tests against an older
/// build), else the one cargo built.
pub fn bin() -> String {
    std::env::var("SWP_REF_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_swp-ref").to_owned())
}

/// Whether the binary is an older build without the limit flags (`SWP_REF_OLD=1`): the
/// tests then run with default settings, to show the defect.
pub fn old() -> bool {
    std::env::var_os("SWP_REF_OLD").is_some()
}

/// `flags`, unless replaying against an older build that does not know them.
pub fn flags<'a>(f: &[&'a str]) -> Vec<&'a str> {
    if old() {
        Vec::new()
    } else {
        f.to_vec()
    }
}

/// Waits until `cond` holds, panicking with `what` after [`DEADLINE`].
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A fresh directory for one test's files.
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "swp-ref-hostile-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running server process, killed and cleaned up when dropped.
pub struct Proc {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Proc {
    /// Starts `swp-ref ARGS --port-file P` (under `ulimit -n NOFILE` when given) and waits
    /// for its port.
    pub fn start(tag: &str, args: &[&str], nofile: Option<u32>) -> Proc {
        let p = Proc::spawn(tag, args, nofile);
        p.wait_port()
    }

    /// Starts without waiting for the port.
    pub fn spawn(tag: &str, args: &[&str], nofile: Option<u32>) -> Proc {
        let dir = temp_dir(tag);
        let port_file = dir.join("port");
        let stderr = std::fs::File::create(dir.join("stderr.log")).unwrap();
        let bin = bin();
        let mut cmd = match nofile {
            Some(n) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        // The port file goes first: the gateway's --upstream-cmd swallows what follows it.
        let (sub, rest) = args.split_first().expect("a subcommand");
        cmd.arg(sub).arg("--port-file").arg(&port_file).args(rest);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        Proc {
            child,
            port: 0,
            dir,
        }
    }

    /// Waits for the port file.
    pub fn wait_port(mut self) -> Proc {
        let port_file = self.dir.join("port");
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                self.port = p;
                return self;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("server exited early ({status}): {}", self.stderr());
            }
            assert!(Instant::now() < until, "no port file: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether the port file exists yet.
    pub fn has_port_file(&self) -> bool {
        self.dir.join("port").exists()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }

    /// A loopback connection with a read timeout.
    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(DEADLINE)).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// User plus system CPU time, in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the parenthesised command name; utime and stime are 14 and 15.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
    }

    /// Open descriptors.
    pub fn fd_count(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// Resident set size in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }

    /// The peak resident set size so far (VmHWM) in KiB.
    pub fn hwm_kib(&self) -> u64 {
        status_kib(self.pid(), "VmHWM:")
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }

    /// Waits for the process to exit; its status code.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < until, "did not exit: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Resident set size of a process in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A size line of `/proc/PID/status` (`VmRSS:`, `VmHWM:`) in KiB; 0 if unreadable.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The kernel's view of the server side of a loopback connection (IPv4): the socket whose
/// local port is `server_port` and remote port `client_port`.
#[derive(Debug, Clone, Copy)]
pub struct SockInfo {
    /// Octets received and not yet read by the server.
    pub rx_queue: u64,
    /// The active timer: 2 is the keepalive timer.
    pub timer: u32,
}

pub fn server_socket(server_port: u16, client_port: u16) -> Option<SockInfo> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{server_port:04X}");
    let remote = format!("0100007F:{client_port:04X}");
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 6 || f[1] != local || f[2] != remote {
            return None;
        }
        let rx = u64::from_str_radix(f[4].split(':').nth(1)?, 16).ok()?;
        let timer = u32::from_str_radix(f[5].split(':').next()?, 16).ok()?;
        Some(SockInfo {
            rx_queue: rx,
            timer,
        })
    })
}

/// Waits until the server has read everything `client` sent it.
pub fn wait_consumed(server_port: u16, client: &TcpStream) {
    let cport = client.local_addr().unwrap().port();
    wait_until("the server read all it was sent", || {
        server_socket(server_port, cport).is_some_and(|s| s.rx_queue == 0)
    });
}

/// One SWP frame.
pub fn frame(msg_type: u64, msg_id: &[u8], payload: &str) -> Vec<u8> {
    let env = Envelope {
        version: 1,
        profile_id: 1,
        msg_type,
        msg_id: Bytes::copy_from_slice(msg_id),
        payload: Bytes::copy_from_slice(payload.as_bytes()),
        ..Envelope::default()
    };
    e1::frame_bytes(&env).unwrap().to_vec()
}

/// A profile-1 request frame; `id` is raw JSON.
pub fn request(msg_id: &[u8], id: &str, method: &str, params: &str) -> Vec<u8> {
    frame(
        1,
        msg_id,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#),
    )
}

/// Reads one frame; `Ok(None)` at the end of the stream (or a reset after it).
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Envelope>> {
    let mut prefix = [0u8; 4];
    match r.read_exact(&mut prefix) {
        Ok(()) => {}
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    }
    let n = u32::from_be_bytes(prefix) as usize;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    Ok(Some(
        e1::decode(&Bytes::from(body), &Limits::default()).expect("replies are valid E1"),
    ))
}

pub fn json(env: &Envelope) -> serde_json::Value {
    serde_json::from_slice(&env.payload).unwrap()
}

/// The `swp_error` code of an error frame.
pub fn swp_error(env: &Envelope) -> String {
    json(env)["error"]["data"]["swp_error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Whether the peer has closed: a read gives end of stream or a reset (not a timeout).
pub fn closed_by_peer(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => {
                return matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                )
            }
        }
    }
}

/// Starts `swp-ref mcp-gateway` on loopback HTTP in front of `swp-ref serve --listen stdio`,
/// serving requests outside a session (these tests send no initialize first).
pub fn gateway(tag: &str, extra: &[&str], nofile: Option<u32>) -> Proc {
    let bin = bin();
    let mut args = vec![
        "mcp-gateway",
        "--listen",
        "http://127.0.0.1:0",
        "--sessions-optional",
    ];
    args.extend_from_slice(extra);
    args.extend(["--upstream-cmd", &bin, "serve", "--listen", "stdio"]);
    Proc::start(tag, &args, nofile)
}

/// Sends raw octets and reads until the server closes (or the deadline).
pub fn http_raw(port: u16, req: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.write_all(req).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A POST of one JSON-RPC message, with extra header lines; the status and body.
pub fn post(port: u16, headers: &str, body: &str) -> (u16, String) {
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let resp = http_raw(port, req.as_bytes());
    let status = resp.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = resp.split_once("\r\n\r\n").map_or("", |x| x.1).to_owned();
    (status, body)
}

pub const PING: &str = r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":{}}"#;

/// A minimal WebSocket client.
pub struct Ws {
    pub s: TcpStream,
    buf: Vec<u8>,
}

impl Ws {
    /// Opens a WebSocket on /mcp with extra header lines; `Err` holds the non-101 answer.
    pub fn open(port: u16, headers: &str) -> Result<Ws, String> {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(DEADLINE)).unwrap();
        write!(
            s,
            "GET /mcp HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{headers}\r\n"
        )
        .unwrap();
        let mut buf = Vec::new();
        let mut b = [0u8; 4096];
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match s.read(&mut b) {
                Ok(0) | Err(_) => return Err(String::from_utf8_lossy(&buf).into_owned()),
                Ok(n) => buf.extend_from_slice(&b[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        if !head.starts_with("HTTP/1.1 101 ") {
            return Err(head);
        }
        buf.drain(..end);
        Ok(Ws { s, buf })
    }

    /// Sends one masked text message.
    pub fn send(&mut self, text: &str) {
        let mask = [7u8, 1, 9, 3];
        let p = text.as_bytes();
        let mut f = vec![0x81u8];
        match p.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(p.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.s.write_all(&f).unwrap();
    }

    /// Reads one server message (opcode, payload); `None` when the stream ends.
    pub fn recv(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut b = [0u8; 16384];
        loop {
            if self.buf.len() >= 2 {
                let len = (self.buf[1] & 0x7f) as usize;
                let (len, at) = match len {
                    126 if self.buf.len() >= 4 => {
                        (u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize, 4)
                    }
                    127 if self.buf.len() >= 10 => {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(&self.buf[2..10]);
                        (u64::from_be_bytes(a) as usize, 10)
                    }
                    126 | 127 => (usize::MAX, 0),
                    n => (n, 2),
                };
                if len != usize::MAX && self.buf.len() >= at + len {
                    let op = self.buf[0] & 0x0f;
                    let payload = self.buf[at..at + len].to_vec();
                    self.buf.drain(..at + len);
                    return Some((op, payload));
                }
            }
            match self.s.read(&mut b) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&b[..n]),
            }
        }
    }

    /// Reads text messages until the response to `id`: (notifications before it, response).
    pub fn until_response(&mut self, id: &str) -> (Vec<serde_json::Value>, serde_json::Value) {
        let mut notes = Vec::new();
        loop {
            let (op, p) = self.recv().expect("the gateway answers");
            assert_eq!(op, 1, "a text message");
            let v: serde_json::Value = serde_json::from_slice(&p).unwrap();
            if v.get("id").is_some_and(|i| i == id) {
                return (notes, v);
            }
            notes.push(v);
        }
    }
}
