//! Lines from a reader (the proxy's stdout, the upstream socket), through a thread, so
//! reads have deadlines; a line past [`MAX_LINE_BYTES`] ends the stream.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

/// Longest line accepted from the proxy on either side.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Lines read and not yet taken: at most 16 MiB waiting. A side that writes faster than the
/// harness judges then waits on its pipe or socket, instead of the harness holding all of it.
const QUEUED_LINES: usize = 4;

/// One line read, or why reading ended.
pub type LineResult = Result<Vec<u8>, String>;

/// Lines from a reader, through a thread, so reads have deadlines.
pub struct Lines {
    rx: Receiver<LineResult>,
    queued: VecDeque<LineResult>,
}

impl Lines {
    pub fn spawn(r: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::sync_channel(QUEUED_LINES);
        std::thread::spawn(move || {
            let mut r = BufReader::new(r);
            loop {
                let mut buf = Vec::new();
                let got = r
                    .by_ref()
                    .take(MAX_LINE_BYTES as u64 + 1)
                    .read_until(b'\n', &mut buf);
                let item = match got {
                    Ok(0) => Err("closed".to_owned()),
                    Ok(_) if buf.len() > MAX_LINE_BYTES => {
                        Err(format!("a line longer than {MAX_LINE_BYTES} octets"))
                    }
                    Ok(_) => {
                        while matches!(buf.last(), Some(b'\n' | b'\r')) {
                            buf.pop();
                        }
                        Ok(buf)
                    }
                    Err(e) => Err(e.to_string()),
                };
                let end = item.is_err();
                if tx.send(item).is_err() || end {
                    return;
                }
            }
        });
        Lines {
            rx,
            queued: VecDeque::new(),
        }
    }

    pub fn next(&mut self, deadline: Instant) -> Option<LineResult> {
        if let Some(l) = self.queued.pop_front() {
            return Some(l);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err("closed".into())),
        }
    }

    /// A line that already arrived and was not expected, if any.
    pub fn unexpected(&mut self) -> Option<LineResult> {
        if let Some(l) = self.queued.pop_front() {
            return Some(l);
        }
        match self.rx.try_recv() {
            Ok(Ok(l)) => Some(Ok(l)),
            _ => None,
        }
    }
}
