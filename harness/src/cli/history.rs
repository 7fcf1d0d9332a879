//! `swp-conform history`'s edge: reads the run directories, writes `history.json` and
//! `history.html`, prints the regressions and flaky rows.

use crate::cli::{io_error, CliError};
use std::path::PathBuf;

/// `swp-conform history`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    /// Report directories of successive runs (any order: runs are keyed by their reports'
    /// start times): a run's `--out`, or a matrix directory.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Write history.json and history.html here.
    #[arg(long, default_value = "history")]
    pub out: PathBuf,
}

/// The command; `Ok(false)` (exit 1) when some SUT's newest run regressed.
pub fn history_cli(a: &HistoryArgs) -> Result<bool, CliError> {
    let h = crate::history::build(&a.dirs).map_err(|e| CliError::Usage(e.to_string()))?;
    std::fs::create_dir_all(&a.out).map_err(io_error(&a.out))?;
    let json = a.out.join("history.json");
    let mut text = serde_json::to_string_pretty(&h).unwrap_or_default();
    text.push('\n');
    std::fs::write(&json, text).map_err(io_error(&json))?;
    let page = a.out.join("history.html");
    std::fs::write(&page, crate::history::html::render(&h)).map_err(io_error(&page))?;
    for s in &h.suts {
        let flaky = s.changes.iter().filter(|c| c.flaky).count();
        println!(
            "{}: {} run(s), {} vector(s) changed ({} flaky), {} stable",
            s.label,
            s.runs.len(),
            s.changes.len(),
            flaky,
            s.stable
        );
        for c in &s.changes {
            if c.trend == crate::history::model::Trend::Regression {
                println!(
                    "  REGRESSION {} now {} (failing since {}; last change {} → {})",
                    c.vector_id,
                    c.now.as_str(),
                    c.failing_since.as_deref().unwrap_or("?"),
                    c.last_change.from_run,
                    c.last_change.to_run
                );
            }
        }
        for c in s.changes.iter().filter(|c| c.flaky) {
            println!(
                "  FLAKY {} (changed with no change of SUT, harness or catalog at {})",
                c.vector_id,
                c.flaky_at.join(", ")
            );
        }
    }
    println!("wrote {}", page.display());
    Ok(h.newest_regressions.is_empty())
}
