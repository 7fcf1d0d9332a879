//! That no process a SUT starts outlives it, not even one that left the SUT's process group
//! with `setsid`. On Linux the harness makes itself a child subreaper
//! (`prctl(PR_SET_CHILD_SUBREAPER)`), so what a SUT's processes orphan re-parents to the
//! harness instead of init, and every SUT process carries a tag in its environment that its
//! descendants inherit. Stopping a SUT kills its process group, then every process below
//! it by parent links or carrying its tag, scanning `/proc` again until none is left, and
//! reaps those that became the harness's children. Elsewhere the process group is all there
//! is: a child that calls `setsid` there escapes.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks a SUT's processes: `<harness pid>-<n>`, one `n` per
/// process the harness starts, inherited by everything that process starts.
pub const TAG_VAR: &str = "SWP_CONFORM_SUT";

/// Which SUT a process belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag(String);

impl Tag {
    /// The `TAG_VAR=value` entry the SUT's processes carry.
    fn entry(&self) -> String {
        format!("{TAG_VAR}={}", self.0)
    }
}

/// Makes `cmd` a SUT the harness can take down whole: its own process group (so the
/// terminal's Ctrl-C reaches the harness alone, which stops it), and a fresh tag. Makes the
/// harness a subreaper first, once.
pub fn prepare(cmd: &mut Command) -> Tag {
    use std::os::unix::process::CommandExt;
    static NEXT: AtomicU64 = AtomicU64::new(1);
    imp::become_subreaper();
    let tag = Tag(format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    cmd.process_group(0).env(TAG_VAR, &tag.0);
    tag
}

/// Kills the SUT `pid` was started as (with `tag`) and everything it started, wherever that
/// went. `pid` itself is killed but not reaped: its `Child` reaps it.
pub fn kill_tree(pid: u32, tag: &Tag) {
    imp::kill_tree(pid, tag);
}

/// Kills every process still below the harness, and reaps it: the orphans a SUT left that
/// shed their tag. For the end of a command, once every SUT was stopped and the harness
/// waits for nothing it started itself (it would kill that too).
pub fn sweep() {
    imp::sweep();
}

#[cfg(target_os = "linux")]
mod imp {
    use super::Tag;
    use rustix::process::{self, Pid, Signal, WaitOptions};
    use std::collections::{BTreeMap, BTreeSet};
    use std::time::{Duration, Instant};

    /// Scans of `/proc` before giving up on a SUT that forks as fast as it is killed.
    const MAX_ROUNDS: usize = 100;
    /// How long the processes killed are waited for to become reapable.
    const REAP_WAIT: Duration = Duration::from_secs(2);

    pub fn become_subreaper() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // Without it (an old kernel) orphans go to init, which reaps them; the tag still
        // finds them to kill.
        ONCE.call_once(|| {
            let _ = process::set_child_subreaper(Some(process::getpid()));
        });
    }

    /// One process as `/proc/<pid>/stat` shows it.
    #[derive(Debug, Clone, Copy)]
    struct Stat {
        ppid: u32,
        zombie: bool,
    }

    fn stat(pid: u32) -> Option<Stat> {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may hold anything: read after the last.
        let mut rest = s.rsplit_once(')')?.1.split_whitespace();
        let state = rest.next()?;
        let ppid = rest.next()?.parse().ok()?;
        Some(Stat {
            ppid,
            zombie: state == "Z" || state == "X",
        })
    }

    fn all() -> BTreeMap<u32, Stat> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return BTreeMap::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| Some((pid, stat(pid)?)))
            .collect()
    }

    /// Whether `pid`'s environment holds `entry` (a zombie's has none left).
    fn carries(pid: u32, entry: &[u8]) -> bool {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == entry))
    }

    /// The processes that belong to the SUT: `roots` and those carrying `entry`, and all
    /// below them by parent links. Never the harness.
    fn members(procs: &BTreeMap<u32, Stat>, roots: &[u32], entry: Option<&[u8]>) -> Vec<u32> {
        let me = std::process::id();
        let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (pid, s) in procs {
            children.entry(s.ppid).or_default().push(*pid);
        }
        let mut todo: Vec<u32> = roots
            .iter()
            .copied()
            .filter(|p| procs.contains_key(p))
            .collect();
        if let Some(entry) = entry {
            todo.extend(
                procs
                    .iter()
                    .filter(|(p, s)| !s.zombie && carries(**p, entry))
                    .map(|(p, _)| *p),
            );
        }
        let mut seen = BTreeSet::new();
        while let Some(p) = todo.pop() {
            if p == me || !seen.insert(p) {
                continue;
            }
            todo.extend(children.get(&p).into_iter().flatten());
        }
        seen.into_iter().collect()
    }

    fn kill(pid: u32) {
        if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = process::kill_process(p, Signal::KILL);
        }
    }

    /// Kills what `roots` and `entry` name until a scan finds none alive; the pids killed.
    fn kill_all(roots: &[u32], entry: Option<&[u8]>) -> BTreeSet<u32> {
        let mut killed = BTreeSet::new();
        for _ in 0..MAX_ROUNDS {
            let procs = all();
            let live: Vec<u32> = members(&procs, roots, entry)
                .into_iter()
                .filter(|p| procs.get(p).is_some_and(|s| !s.zombie))
                .collect();
            if live.is_empty() {
                break;
            }
            for p in live {
                kill(p);
                killed.insert(p);
            }
            // A process killed is gone a moment later; its children are found by the next
            // scan, under the harness.
            std::thread::sleep(Duration::from_millis(1));
        }
        killed
    }

    /// Reaps the processes of `killed` that became the harness's children, waiting up to
    /// [`REAP_WAIT`] for them to die and re-parent. Only pids the harness killed, never one
    /// a `Child` owns, so no exit status is taken from the code that waits for it.
    fn reap(mut killed: BTreeSet<u32>, owned: Option<u32>) {
        let me = std::process::id();
        if let Some(o) = owned {
            killed.remove(&o);
        }
        let until = Instant::now() + REAP_WAIT;
        while !killed.is_empty() && Instant::now() < until {
            killed.retain(|pid| match stat(*pid) {
                None => false,
                Some(s) if s.zombie && s.ppid == me => {
                    if let Some(p) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
                        let _ = process::waitpid(Some(p), WaitOptions::NOHANG);
                    }
                    stat(*pid).is_some()
                }
                // Still dying, or a zombie of a parent that is dying: it comes back to the
                // harness, or its parent reaps it.
                Some(_) => true,
            });
            if !killed.is_empty() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    pub fn kill_tree(pid: u32, tag: &Tag) {
        if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            // The group first: one signal for everything that stayed in it.
            let _ = process::kill_process_group(p, Signal::KILL);
        }
        let entry = tag.entry();
        let killed = kill_all(&[pid], Some(entry.as_bytes()));
        reap(killed, Some(pid));
    }

    pub fn sweep() {
        let me = std::process::id();
        let procs = all();
        let orphans: Vec<u32> = procs
            .iter()
            .filter(|(_, s)| s.ppid == me)
            .map(|(p, _)| *p)
            .collect();
        let mut killed = kill_all(&orphans, None);
        // Those that had died already are reaped too.
        killed.extend(orphans);
        reap(killed, None);
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Tag;
    use std::process::{Command, Stdio};

    pub fn become_subreaper() {}

    pub fn kill_tree(pid: u32, _tag: &Tag) {
        // The whole process group, whether or not its leader is still alive: a SUT that
        // forks and exits leaves its children in the group. The group's id cannot be
        // reused while any member lives, so this reaches no stranger.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
    }

    pub fn sweep() {}
}
