//! Supervision of SUT processes: start with templated arguments, wait for the port they
//! bound, notice when they die, and reap every one of them: on drop, on error and on
//! Ctrl-C (a handler kills every registered child and marks the run interrupted).

use crate::sut::Start;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

static CHILDREN: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());
static HANDLER: Once = Once::new();

/// Installs the Ctrl-C handler once per process: it cancels `cancel` (the run stops after
/// the vector in flight) and kills every SUT process the harness started.
pub fn install_interrupt_handler(cancel: &crate::cancel::Cancel) {
    let cancel = cancel.clone();
    HANDLER.call_once(move || {
        let _ = ctrlc::set_handler(move || {
            cancel.cancel();
            let pids: Vec<u32> = CHILDREN
                .lock()
                .map(|c| c.iter().copied().collect())
                .unwrap_or_default();
            for pid in pids {
                // SUTs run in their own process group, so the terminal's SIGINT does not
                // reach them: kill the group explicitly.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .status();
            }
        });
    });
}

/// Starting a SUT process, or waiting for it to listen, failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The reference binary for `${SWP_REF}` could not be found or built.
    #[error(transparent)]
    Reference(#[from] crate::connect::driver::DriverError),
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
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

/// A running SUT process, killed and reaped on drop.
pub struct Supervised {
    child: Child,
    pid: u32,
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
        let bin = crate::connect::testee::swp_ref_binary()?;
        vars.insert("SWP_REF", bin.display().to_string());
    }
    let vars = &vars;
    let program = PathBuf::from(template(&start.command, vars));
    let mut cmd = Command::new(&program);
    cmd.args(start.args.iter().map(|a| template(a, vars)))
        .envs(
            start
                .env
                .iter()
                .map(|(k, v)| (k.clone(), template(v, vars))),
        )
        .current_dir(start.cwd.as_ref().map_or(base.to_owned(), |c| base.join(c)))
        .process_group(0);
    if pipes {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::null()).stdout(Stdio::null());
    }
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    cmd.stderr(err);
    let child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: program.display().to_string(),
        source,
    })?;
    let pid = child.id();
    if let Ok(mut c) = CHILDREN.lock() {
        c.insert(pid);
    }
    Ok(Supervised { child, pid })
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
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.pid)])
                .status();
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if let Ok(mut c) = CHILDREN.lock() {
            c.remove(&self.pid);
        }
    }
}

/// Waits until `path` holds a port number written by the endpoint.
pub fn wait_port_file(
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
