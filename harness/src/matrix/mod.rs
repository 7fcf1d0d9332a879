//! The interop matrix (`swp-conform matrix`): every SUT of a list run against one selection,
//! each in its own `run` process, and one page across them. `spec` reads the list, `model`
//! builds `matrix.json` from the reports, `html` renders `matrix.html`; the processes are
//! started by `cli::matrix`.

pub mod html;
pub mod model;
pub mod spec;

use crate::report::lite::LiteReport;
use model::{ColumnSeed, Matrix, MatrixRun};
use std::path::Path;

/// Builds the matrix from `<dir>/<label>/report.json` of each column, reading one report at
/// a time; a column whose report is missing or unreadable keeps its seed's reason (or the
/// reading error) and has no cells.
pub fn build(dir: &Path, seeds: &[ColumnSeed], run: MatrixRun) -> Matrix {
    let mut seeds = seeds.to_vec();
    let mut reports = Vec::with_capacity(seeds.len());
    for seed in &mut seeds {
        let path = dir.join(&seed.label).join("report.json");
        if path.is_file() {
            reports.push(Some(path));
        } else {
            if seed.missing.is_none() {
                seed.missing = Some(no_report(&dir.join(&seed.label)));
            }
            reports.push(None);
        }
    }
    let mut b = model::Builder::new(&seeds);
    for (i, path) in reports.iter().enumerate() {
        let Some(path) = path else { continue };
        match LiteReport::read(path) {
            Ok(r) => b.add(i, &r),
            Err(e) => b.set_missing(i, e.to_string()),
        }
    }
    b.finish(run)
}

/// Why a column has no report, in the words of the end of its run's log (`run.log`, where
/// `cli::matrix` sends the run's output).
fn no_report(col: &Path) -> String {
    let log = std::fs::read(col.join("run.log")).unwrap_or_default();
    // The last few lines are what a failed run says last; a flood of output is cut first.
    let tail = &log[log.len().saturating_sub(4096)..];
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines[lines.len().saturating_sub(3)..].join(" / ");
    if last.is_empty() {
        "no report.json, and the run said nothing".to_owned()
    } else {
        format!(
            "no report.json; the run's log ends: {}",
            crate::report::lite::clip(&last, 400)
        )
    }
}

/// Writes `matrix.json` and `matrix.html` into `dir`.
pub fn write(dir: &Path, m: &Matrix) -> std::io::Result<()> {
    std::fs::write(dir.join("matrix.json"), m.to_json())?;
    std::fs::write(dir.join("matrix.html"), html::render(m))
}
