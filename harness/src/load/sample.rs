//! The SUT's resident memory and open descriptors over the run, for a SUT the harness
//! started: read from `/proc/<pid>/status` (`VmRSS`) and `/proc/<pid>/fd` on Linux, on a
//! thread of its own at a fixed interval. Elsewhere nothing is sampled and the report says
//! so. The parsing is pure; only [`Sampler`] touches `/proc`.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The most samples one run keeps: past it the sampler stops (a 1 s interval covers more
/// than a day), so a long run cannot grow the report without bound.
pub const MAX_SAMPLES: usize = 100_000;

/// One reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Sample {
    /// Milliseconds since the measuring window opened (negative readings do not happen:
    /// the first is taken as it opens).
    pub t_ms: u64,
    /// Resident set size, KiB (`VmRSS`).
    pub rss_kib: Option<u64>,
    /// Open descriptors (entries of `/proc/<pid>/fd`).
    pub fds: Option<u64>,
}

/// The `VmRSS` line of a `/proc/<pid>/status` text, in KiB.
pub fn vm_rss_kib(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            let mut words = rest.split_whitespace();
            let n = words.next()?.parse::<u64>().ok()?;
            match words.next() {
                Some("kB") | None => Some(n),
                _ => None,
            }
        })
}

/// Whether this platform has the `/proc` files the sampler reads.
pub const SUPPORTED: bool = cfg!(target_os = "linux");

/// Reads one sample of process `pid`; `None` fields when a file is gone (the process died)
/// or unreadable.
pub fn read(pid: u32, t_ms: u64) -> Sample {
    let rss_kib = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| vm_rss_kib(&s));
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count() as u64);
    Sample { t_ms, rss_kib, fds }
}

/// A thread sampling one process until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    wake: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Vec<Sample>>,
}

impl Sampler {
    /// Starts sampling `pid` every `every`, counting time from `t0`; `None` where the
    /// platform has no `/proc`.
    pub fn start(pid: u32, every: Duration, t0: Instant) -> Option<Sampler> {
        if !SUPPORTED {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, woken) = mpsc::channel::<()>();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut next = Instant::now();
            loop {
                let t_ms = u64::try_from(Instant::now().saturating_duration_since(t0).as_millis())
                    .unwrap_or(u64::MAX);
                out.push(read(pid, t_ms));
                if flag.load(Ordering::SeqCst) || out.len() >= MAX_SAMPLES {
                    return out;
                }
                next += every;
                // Woken early by `stop`, which then takes the final reading.
                let _ = woken.recv_timeout(next.saturating_duration_since(Instant::now()));
            }
        });
        Some(Sampler { stop, wake, thread })
    }

    /// Takes a last reading and returns them all.
    pub fn stop(self) -> Vec<Sample> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.wake.send(());
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_in_kib() {
        let status = "Name:\tswp-ref\nVmPeak:\t  20000 kB\nVmRSS:\t    5940 kB\nThreads:\t3\n";
        assert_eq!(vm_rss_kib(status), Some(5940));
    }

    #[test]
    fn a_status_without_vm_rss_has_none() {
        // A kernel thread, or a zombie, has no VmRSS line.
        assert_eq!(vm_rss_kib("Name:\tkthreadd\nState:\tS\n"), None);
        assert_eq!(vm_rss_kib("VmRSS:\tlots kB\n"), None);
        assert_eq!(vm_rss_kib("VmRSS:\t12 MB\n"), None);
    }

    #[test]
    fn a_live_process_has_memory_and_descriptors() {
        if !SUPPORTED {
            return;
        }
        let s = read(std::process::id(), 0);
        assert!(s.rss_kib.is_some_and(|k| k > 0));
        // stdin, stdout, stderr at least, or the fd directory itself.
        assert!(s.fds.is_some_and(|n| n >= 1));
    }
}
