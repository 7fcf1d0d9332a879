//! Verdict history across runs (`swp-conform history`): finds the reports in directories of
//! successive runs (a run's `report.json`, or a matrix directory's `<label>/report.json`),
//! keys each by its SUT label and run time, and says when each verdict last changed and
//! which changes were flaky. `model` builds `history.json`, `html` renders `history.html`.
//! It reads only reports, so it works on a CI artifact store.

pub mod html;
pub mod model;

use crate::report::lite::{LiteError, LiteReport};
use std::path::{Path, PathBuf};

/// A report found in a run directory, with the label its SUT goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The SUT's label: the matrix column's, or the report's SUT name for a plain run.
    pub label: String,
    /// The report file.
    pub path: PathBuf,
}

/// Why a run directory gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A directory has no report at all.
    #[error("{0}: no report.json in it or in any directory directly below it")]
    NoReports(String),
    /// A directory could not be listed.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A report could not be read.
    #[error(transparent)]
    Report(#[from] LiteError),
}

/// The reports of one run directory: `DIR/report.json` (labelled by its SUT's name), else
/// `DIR/<label>/report.json` for each directory below (labelled by the directory, as
/// `matrix` writes them), in label order.
pub fn find(dir: &Path) -> Result<Vec<Found>, HistoryError> {
    let one = dir.join("report.json");
    if one.is_file() {
        let r = LiteReport::read(&one)?;
        return Ok(vec![Found {
            label: r.sut.name,
            path: one,
        }]);
    }
    let io = |source| HistoryError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io)? {
        let p = e.map_err(io)?.path();
        let r = p.join("report.json");
        if p.is_dir() && r.is_file() {
            let label = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(Found { label, path: r });
        }
    }
    if out.is_empty() {
        return Err(HistoryError::NoReports(dir.display().to_string()));
    }
    out.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(out)
}

/// Builds the history of every report in `dirs`, reading one report at a time.
pub fn build(dirs: &[PathBuf]) -> Result<model::History, HistoryError> {
    let mut b = model::Builder::default();
    for d in dirs {
        for f in find(d)? {
            let r = LiteReport::read(&f.path)?;
            b.add(&f.label, &f.path.display().to_string(), &r);
        }
    }
    Ok(b.finish())
}
