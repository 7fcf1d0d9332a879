//! A testee process: spawned once and kept for the whole run, spoken to over its
//! stdin/stdout with the length-prefixed JSON protocol, respawned after a crash or a hang.
//! A reader thread turns the blocking pipe into a channel so every request has a deadline.

use super::driver::{Answer, CodecDriver, DriverError};
use super::process::capped_copy;
/// Re-exported where callers looked for it before it moved beside the process spawner.
pub(crate) use super::process::swp_ref_binary;
use super::reap::{self, Tag};
use crate::sut::file::Start;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;
use swp_testee_proto::{
    read_message, write_message, DecodeReply, DecodeRequest, HelloReply, HelloRequest, ReadError,
    Reply, Request, TranslateReply, TranslateRequest, PROTOCOL_VERSION,
};

/// A running testee.
struct Proc {
    child: Child,
    tag: Tag,
    stdin: BufWriter<ChildStdin>,
    replies: Receiver<Result<Vec<u8>, ReadError>>,
}

/// Drives a testee process.
pub struct TesteeDriver {
    start: Start,
    base: PathBuf,
    timeout: Duration,
    proc: Option<Proc>,
    hello: Option<HelloReply>,
    next_id: u64,
    stderr_log: PathBuf,
}

impl std::fmt::Debug for TesteeDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TesteeDriver")
            .field("start", &self.start)
            .finish()
    }
}

impl TesteeDriver {
    /// A driver for the testee started by `start`, relative to `base` (the manifest's
    /// directory), with a per-request deadline. The process starts on first use.
    pub fn new(start: Start, base: PathBuf, timeout: Duration, stderr_log: PathBuf) -> Self {
        TesteeDriver {
            start,
            base,
            timeout,
            proc: None,
            hello: None,
            next_id: 0,
            stderr_log,
        }
    }

    fn spawn(&mut self) -> Result<(), DriverError> {
        let program = if self.start.command == "${SWP_REF}" {
            swp_ref_binary()?
        } else {
            PathBuf::from(&self.start.command)
        };
        let mut cmd = Command::new(&program);
        cmd.args(&self.start.args)
            .envs(&self.start.env)
            .current_dir(
                self.start
                    .cwd
                    .as_ref()
                    .map_or(self.base.clone(), |c| self.base.join(c)),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own group and tag, so what it starts dies with it (see `process::Supervised`).
        let tag = reap::prepare(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| DriverError::Start(format!("{}: {e}", program.display())))?;
        if let Some(err) = child.stderr.take() {
            capped_copy(err, self.stderr_log.clone());
        }
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            reap::kill_tree(child.id(), &tag);
            let _ = child.kill();
            let _ = child.wait();
            return Err(DriverError::Start("testee pipes unavailable".into()));
        };
        // Requests go one at a time, so one reply waits at most: a testee that writes
        // messages nobody asked for waits on its pipe rather than filling the harness.
        let (tx, rx) = mpsc::sync_channel(1);
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_message(&mut r) {
                    Ok(Some(m)) => {
                        if tx.send(Ok(m)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        self.proc = Some(Proc {
            child,
            tag,
            stdin: BufWriter::new(stdin),
            replies: rx,
        });
        let hello: HelloReply = match self.call(
            "hello",
            &HelloRequest {
                harness: format!("swp-conform {}", env!("CARGO_PKG_VERSION")),
                protocol: PROTOCOL_VERSION,
            },
        ) {
            Ok(Answer::Ok(h)) => h,
            Ok(Answer::Unsupported(why)) => {
                self.kill();
                return Err(DriverError::Incompatible(format!(
                    "the testee answered `hello` with unsupported: {why}"
                )));
            }
            Err(DriverError::Protocol(why)) => {
                self.kill();
                return Err(DriverError::Incompatible(format!(
                    "the testee's answer to `hello`: {why}"
                )));
            }
            Err(DriverError::Timeout(ms)) => {
                self.kill();
                return Err(DriverError::Incompatible(format!(
                    "the testee did not answer `hello` within {ms} ms; every message is a JSON document preceded by its length as 4 octets, big-endian (docs/testee-protocol.md): a testee that waits for a newline never sees one"
                )));
            }
            Err(e) => return Err(e),
        };
        if hello.protocol != PROTOCOL_VERSION {
            self.kill();
            return Err(DriverError::Incompatible(format!(
                "the testee {} {} speaks testee protocol {}; this harness speaks {PROTOCOL_VERSION}",
                hello.name, hello.version, hello.protocol
            )));
        }
        self.hello = Some(hello);
        Ok(())
    }

    /// Kills and reaps the process, so the next request starts a fresh one.
    pub fn kill(&mut self) -> Option<String> {
        let mut p = self.proc.take()?;
        // Whatever the testee started dies with it.
        reap::kill_tree(p.child.id(), &p.tag);
        let status = match p.child.try_wait() {
            Ok(Some(s)) => Some(s),
            _ => {
                let _ = p.child.kill();
                p.child.wait().ok()
            }
        };
        status.map(|s| s.to_string())
    }

    fn call<A: Serialize, T: DeserializeOwned>(
        &mut self,
        op: &str,
        args: &A,
    ) -> Result<Answer<T>, DriverError> {
        self.next_id += 1;
        let id = self.next_id;
        let msg = serde_json::to_vec(&Request {
            id,
            op: op.to_owned(),
            args,
        })
        .map_err(|e| DriverError::Protocol(e.to_string()))?;
        let timeout = self.timeout;
        let Some(p) = self.proc.as_mut() else {
            return Err(DriverError::Start("testee not running".into()));
        };
        if let Err(e) = write_message(&mut p.stdin, &msg) {
            let why = self.kill().unwrap_or_else(|| e.to_string());
            return Err(DriverError::Crashed(why));
        }
        let got = p.replies.recv_timeout(timeout);
        let bytes = match got {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => {
                self.kill();
                return Err(DriverError::Protocol(unreadable(&e)));
            }
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                return Err(DriverError::Timeout(timeout.as_millis() as u64));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let why = self.kill().unwrap_or_else(|| "stdout closed".into());
                return Err(DriverError::Crashed(why));
            }
        };
        let reply: Reply<T> = serde_json::from_slice(&bytes)
            .map_err(|e| DriverError::Protocol(format!("reply is not a valid {op} reply: {e}")))?;
        if reply.id != id {
            self.kill();
            return Err(DriverError::Protocol(format!(
                "reply id {} does not match request id {id}",
                reply.id
            )));
        }
        match (reply.ok, reply.unsupported, reply.error) {
            (Some(v), None, None) => Ok(Answer::Ok(v)),
            (None, Some(u), None) => Ok(Answer::Unsupported(u)),
            (None, None, Some(e)) => Err(DriverError::Protocol(format!("testee error: {e}"))),
            _ => Err(DriverError::Protocol(
                "reply must carry exactly one of ok, unsupported, error".into(),
            )),
        }
    }

    fn ensure(&mut self) -> Result<(), DriverError> {
        if self.proc.is_none() {
            self.spawn()?;
        }
        Ok(())
    }
}

/// What a reply that could not be read tells a testee author.
fn unreadable(e: &ReadError) -> String {
    match e {
        ReadError::Text(s) => format!(
            "the testee wrote `{s}…` on stdout where a message belongs; testees log to stderr, stdout carries only length-prefixed messages"
        ),
        ReadError::UnprefixedJson(s) => format!(
            "the testee wrote `{s}…` on stdout: JSON without the 4-octet big-endian length prefix (newline-delimited JSON?); see docs/testee-protocol.md"
        ),
        other => format!("unreadable reply: {other}"),
    }
}

impl CodecDriver for TesteeDriver {
    fn open(&mut self) -> Result<(), DriverError> {
        self.ensure()
    }

    fn describe(&self) -> String {
        match &self.hello {
            Some(h) => format!("{} {} (testee, protocol {})", h.name, h.version, h.protocol),
            None => format!("testee {}", self.start.command),
        }
    }

    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        self.ensure()?;
        if let Some(h) = &self.hello {
            if !h.supports.iter().any(|s| s == "decode") {
                return Ok(Answer::Unsupported(
                    "the testee does not list `decode`".into(),
                ));
            }
            for p in &req.config.validate_profiles {
                let want = format!("validate:{p}");
                if !h.supports.contains(&want) {
                    return Ok(Answer::Unsupported(format!(
                        "the vector needs profile {p} payload validation; the testee does not list `{want}`"
                    )));
                }
            }
        }
        self.call("decode", req)
    }

    fn translate(&mut self, req: &TranslateRequest) -> Result<Answer<TranslateReply>, DriverError> {
        self.ensure()?;
        if let Some(h) = &self.hello {
            if !h.supports.iter().any(|s| s == "translate") {
                return Ok(Answer::Unsupported(
                    "the testee does not list `translate`".into(),
                ));
            }
        }
        self.call("translate", req)
    }
}

impl Drop for TesteeDriver {
    fn drop(&mut self) {
        self.kill();
    }
}
