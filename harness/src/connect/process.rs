//! Supervision of SUT processes: start with templated arguments, wait for the port they
//! bound, notice when they die, and reap every one of them with all they started
//! ([`super::reap`]): on drop, on error and on Ctrl-C (a handler kills every registered
//! child and marks the run interrupted).

use super::driver::DriverError;
use super::reap::{self, Tag};
use crate::sut::file::Start;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

static CHILDREN: Mutex<BTreeMap<u32, Tag>> = Mutex::new(BTreeMap::new());
static HANDLER: Once = Once::new();

/// Installs the Ctrl-C handler once per process: it cancels `cancel` (the run stops after
/// the vector in flight) and kills every SUT process the harness started.
pub fn install_interrupt_handler(cancel: &crate::support::cancel::Cancel) {
    let cancel = cancel.clone();
    HANDLER.call_once(move || {
        let _ = ctrlc::set_handler(move || {
            cancel.cancel();
            let suts: Vec<(u32, Tag)> = CHILDREN
                .lock()
                .map(|c| c.iter().map(|(p, t)| (*p, t.clone())).collect())
                .unwrap_or_default();
            for (pid, tag) in suts {
                // SUTs run in their own process group, so the terminal's SIGINT does not
                // reach them: kill them explicitly, with all they started.
                reap::kill_tree(pid, &tag);
            }
        });
    });
}

/// The most `sut-stderr.log` grows to, over every process of the run that writes to it.
pub(crate) const STDERR_LOG_CAP: u64 = 16 * 1024 * 1024;

/// Appends what `from` yields to `log` until the file holds [`STDERR_LOG_CAP`] octets, then
/// notes the cut once and discards the rest, on a thread of its own, until end of input.
pub(crate) fn capped_copy(mut from: impl std::io::Read + Send + 'static, log: PathBuf) {
    use std::io::Write;
    std::thread::spawn(move || {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .ok();
        let mut room =
            STDERR_LOG_CAP.saturating_sub(std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0));
        let mut noted = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let keep = (n as u64).min(room) as usize;
            if let Some(f) = file.as_mut() {
                if keep > 0 {
                    let _ = f.write_all(&buf[..keep]);
                    room -= keep as u64;
                }
                if keep < n && !noted {
                    noted = true;
                    let _ = writeln!(
                        f,
                        "\n[swp-conform: this log is capped at {STDERR_LOG_CAP} octets; the SUT's further stderr was discarded]"
                    );
                }
            }
        }
    });
}

/// Starting a SUT process, or waiting for it to listen, failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The reference binary for `${SWP_REF}` could not be found or built.
    #[error(transparent)]
    Reference(#[from] DriverError),
    /// The program could not be started (not found, not executable, ...): the SUT is not
    /// running at all, which is no behaviour of its to judge.
    #[error("cannot start `{command}` in {cwd}: {source}")]
    Spawn {
        /// The command line, as run.
        command: String,
        /// The working directory it was run in.
        cwd: String,
        /// Why (the OS error).
        source: std::io::Error,
    },
    /// It exited before it wrote its port.
    #[error("the endpoint {exit} before it wrote its port to {port_file}")]
    ExitedEarly {
        /// How it ended.
        exit: Exit,
        /// The port file.
        port_file: String,
    },
    /// It did not write its port in time.
    #[error("the endpoint did not write its port to {port_file} within {ms} ms")]
    NoPort {
        /// The port file.
        port_file: String,
        /// The wait.
        ms: u128,
    },
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// It exited with status 0.
    pub success: bool,
    /// "exited with status N" or "killed by signal N".
    pub text: String,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A running SUT process, killed and reaped on drop with everything it started.
pub struct Supervised {
    child: Child,
    pid: u32,
    tag: Tag,
}

impl std::fmt::Debug for Supervised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Supervised(pid {})", self.pid)
    }
}

/// Replaces `${NAME}` in `s` with `vars[NAME]`.
pub fn template(s: &str, vars: &BTreeMap<&str, String>) -> String {
    let mut out = s.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    out
}

/// A command line for messages: the program and its arguments, an argument quoted when it
/// is empty or holds white space or a quote, so the vendor can paste it into a shell.
fn command_line(program: &Path, args: &[String]) -> String {
    std::iter::once(program.display().to_string())
        .chain(args.iter().map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.clone()
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts `start` with `${...}` variables substituted in command, args and env. With
/// `pipes`, stdin and stdout are piped (stdio transport); stderr always goes to `log`.
pub fn spawn(
    start: &Start,
    base: &Path,
    vars: &BTreeMap<&str, String>,
    pipes: bool,
    log: &Path,
) -> Result<Supervised, ProcessError> {
    // `${SWP_REF}` (the reference binary) may appear in the command and in arguments, e.g.
    // a gateway whose upstream command is the reference endpoint.
    let mut vars = vars.clone();
    if std::iter::once(&start.command)
        .chain(&start.args)
        .any(|a| a.contains("${SWP_REF}"))
    {
        let bin = swp_ref_binary()?;
        vars.insert("SWP_REF", bin.display().to_string());
    }
    let vars = &vars;
    let program = PathBuf::from(template(&start.command, vars));
    let args: Vec<String> = start.args.iter().map(|a| template(a, vars)).collect();
    let cwd = start.cwd.as_ref().map_or(base.to_owned(), |c| base.join(c));
    let mut cmd = Command::new(&program);
    cmd.args(&args)
        .envs(
            start
                .env
                .iter()
                .map(|(k, v)| (k.clone(), template(v, vars))),
        )
        .current_dir(&cwd);
    let tag = reap::prepare(&mut cmd);
    if pipes {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::null()).stdout(Stdio::null());
    }
    // stderr goes through a pipe the harness copies, so the log has a cap (a SUT once wrote
    // 1 GB into it) and the SUT never blocks on it: past the cap the rest is drained.
    cmd.stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        command: command_line(&program, &args),
        cwd: cwd.display().to_string(),
        source,
    })?;
    if let Some(err) = child.stderr.take() {
        capped_copy(err, log.to_owned());
    }
    let pid = child.id();
    if let Ok(mut c) = CHILDREN.lock() {
        c.insert(pid, tag.clone());
    }
    Ok(Supervised { child, pid, tag })
}

impl Supervised {
    /// The pipes of a stdio endpoint.
    pub fn take_pipes(&mut self) -> Option<(ChildStdin, ChildStdout)> {
        Some((self.child.stdin.take()?, self.child.stdout.take()?))
    }

    /// `Some(exit)` once the process has exited (a crash, unless we stopped it).
    pub fn exited(&mut self) -> Option<Exit> {
        match self.child.try_wait() {
            Ok(Some(s)) => Some(Exit {
                success: s.success(),
                text: describe_status(s),
            }),
            Ok(None) => None,
            Err(e) => Some(Exit {
                success: false,
                text: format!("cannot query status: {e}"),
            }),
        }
    }

    /// Waits up to `d` for the process to exit on its own.
    pub fn wait_exit(&mut self, d: Duration) -> Option<Exit> {
        let until = Instant::now() + d;
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => s.to_string(),
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        // Before the `Child` is reaped, so its pid (and its group's id) cannot have been
        // reused by a stranger.
        reap::kill_tree(self.pid, &self.tag);
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Ok(mut c) = CHILDREN.lock() {
            c.remove(&self.pid);
        }
    }
}

/// Waits until `path` holds a port number written by the endpoint.
pub(crate) fn wait_port_file(
    path: &Path,
    proc: &mut Supervised,
    timeout: Duration,
) -> Result<u16, ProcessError> {
    let until = Instant::now() + timeout;
    loop {
        if let Ok(t) = std::fs::read_to_string(path) {
            if let Ok(p) = t.trim().parse::<u16>() {
                return Ok(p);
            }
        }
        if let Some(exit) = proc.exited() {
            return Err(ProcessError::ExitedEarly {
                exit,
                port_file: path.display().to_string(),
            });
        }
        if Instant::now() >= until {
            return Err(ProcessError::NoPort {
                port_file: path.display().to_string(),
                ms: timeout.as_millis(),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Finds the reference binary for `${SWP_REF}`: `$SWP_REF`, then beside the running
/// executable, then a `cargo build` of this workspace's `swp-ref` in the same profile.
pub(crate) fn swp_ref_binary() -> Result<PathBuf, DriverError> {
    if let Some(p) = std::env::var_os("SWP_REF") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| DriverError::Start(e.to_string()))?;
    let name = format!("swp-ref{}", std::env::consts::EXE_SUFFIX);
    for dir in exe.ancestors().skip(1).take(2) {
        let cand = dir.join(&name);
        if cand.is_file() {
            return Ok(cand);
        }
    }
    let release = exe.components().any(|c| c.as_os_str() == "release");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "-q", "-p", "swp-ref", "--bin", "swp-ref"]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| DriverError::Start(format!("cargo build of swp-ref: {e}")))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let built = target
        .join(if release { "release" } else { "debug" })
        .join(&name);
    if status.success() && built.is_file() {
        Ok(built)
    } else {
        Err(DriverError::Start(format!(
            "swp-ref binary not found (set SWP_REF or run `cargo build -p swp-ref`); looked beside {}",
            exe.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(script: &str) -> Start {
        Start {
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    }

    #[test]
    fn children_of_a_sut_that_exited_are_killed_with_it() {
        let dir = std::env::temp_dir().join(format!("swp-proc-fork-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("child.pid");
        let script = format!("sleep 300 & echo $! > {}; exit 0", pidfile.display());
        let mut p = spawn(
            &start(&script),
            &dir,
            &BTreeMap::new(),
            false,
            &dir.join("err.log"),
        )
        .unwrap();
        assert!(
            p.wait_exit(Duration::from_secs(10)).is_some(),
            "sh did not exit"
        );
        let child: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(child), "the forked child should still run");
        drop(p);
        let until = Instant::now() + Duration::from_secs(5);
        while alive(child) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(child), "the forked child {child} survived its SUT");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A SUT whose child leaves the process group with `setsid` and is orphaned (a double
    /// fork, as a daemon does): the group kill misses it, the tree kill does not.
    #[test]
    fn a_setsid_grandchild_of_a_sut_is_killed_with_it() {
        let dir = std::env::temp_dir().join(format!("swp-proc-setsid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("daemon.pid");
        let _ = std::fs::remove_file(&pidfile);
        let script = format!(
            "import os, sys, time\n\
             if os.fork() == 0:\n    \
                 os.setsid()\n    \
                 if os.fork() == 0:\n        \
                     open('{0}.tmp', 'w').write(str(os.getpid()))\n        \
                     os.rename('{0}.tmp', '{0}')\n        \
                     time.sleep(60)\n    \
                 os._exit(0)\n\
             time.sleep(300)\n",
            pidfile.display()
        );
        let start = Start {
            command: "python3".into(),
            args: vec!["-c".into(), script],
            env: BTreeMap::new(),
            cwd: None,
        };
        let p = spawn(&start, &dir, &BTreeMap::new(), false, &dir.join("err.log")).unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let daemon: u32 = loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                break pid;
            }
            assert!(Instant::now() < until, "the daemon did not write its pid");
            std::thread::sleep(Duration::from_millis(10));
        };
        let group = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(2)?
                        .parse::<u32>()
                        .ok()
                })
        };
        assert!(alive(daemon), "the daemon should run");
        assert_ne!(group(daemon), Some(p.pid()), "it left the SUT's group");
        drop(p);
        // Killed and reaped before the drop returns: no zombie either.
        assert!(
            !std::path::Path::new(&format!("/proc/{daemon}")).exists(),
            "the setsid daemon {daemon} survived its SUT"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_stderr_log_is_capped() {
        let dir = std::env::temp_dir().join(format!("swp-proc-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("err.log");
        // Twice the cap, in 1 MiB writes.
        let script = format!("head -c {} /dev/zero >&2; exit 0", 2 * STDERR_LOG_CAP);
        let mut p = spawn(&start(&script), &dir, &BTreeMap::new(), false, &log).unwrap();
        assert!(p.wait_exit(Duration::from_secs(30)).is_some());
        drop(p);
        // The copier drains until end of input; wait for the note it writes at the cut.
        let until = Instant::now() + Duration::from_secs(10);
        let len = loop {
            let len = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
            if len > STDERR_LOG_CAP || Instant::now() > until {
                break len;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(
            len > STDERR_LOG_CAP && len < STDERR_LOG_CAP + 200,
            "log is {len} octets"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
