//! Progress while a plan runs: a bar (indicatif) when stderr is a terminal, one plain line
//! per vector otherwise, so CI logs show where a run is without control characters.

use crate::report::result::VectorResult;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};

/// Reports progress on stderr.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    quiet: bool,
}

impl Progress {
    /// Progress over `total` vectors; `quiet` prints nothing.
    pub fn new(total: usize, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(total as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {wide_msg}")
            {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            quiet,
        }
    }

    /// One vector finished.
    pub fn tick(&mut self, r: &VectorResult) {
        self.done += 1;
        if let Some(b) = &self.bar {
            b.set_message(format!("{} {}", r.verdict.as_str(), r.vector_id));
            b.inc(1);
        } else if !self.quiet {
            let w = self.total.to_string().len();
            let _ = writeln!(
                std::io::stderr(),
                "[{:>w$}/{}] {} {}",
                self.done,
                self.total,
                r.verdict.as_str(),
                r.vector_id
            );
        }
    }

    /// The plan finished (or was interrupted).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
