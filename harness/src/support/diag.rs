//! Problems found while loading a user's file (the catalog, a manifest), each named with
//! its file, line and column and what was expected, and collected rather than stopping at
//! the first.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem found while loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// Loading failed; every problem found is listed, not just the first.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what} has {} problem(s):\n{}", .problems.len(), .problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
pub struct LoadError {
    /// What was loaded: "the catalog", "the manifest".
    pub what: &'static str,
    /// Every problem.
    pub problems: Vec<Problem>,
}

/// Reading one of the user's files failed: it is unreadable, or every problem in it.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Read, but wrong: every problem, with its position.
    #[error(transparent)]
    Invalid(#[from] LoadError),
}

impl FileError {
    /// The error of reading `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
        move |source| FileError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Finds `needle` in `text` and returns its 1-based line and column, so semantic errors
/// point at the offending token even though serde has already discarded positions.
pub fn locate(text: &str, needle: &str) -> (Option<u64>, Option<u64>) {
    match text.find(needle) {
        Some(off) => {
            let before = &text[..off];
            let line = before.matches('\n').count() as u64 + 1;
            let col = (off - before.rfind('\n').map_or(0, |i| i + 1)) as u64 + 1;
            (Some(line), Some(col))
        }
        None => (None, None),
    }
}

/// Collects problems.
#[derive(Debug, Default)]
pub struct Sink {
    /// What was found so far.
    pub problems: Vec<Problem>,
}

impl Sink {
    /// A problem at the first occurrence of `needle` in `text`.
    pub fn at(&mut self, path: &Path, text: &str, needle: &str, message: String) {
        let (line, column) = locate(text, needle);
        self.problems.push(Problem {
            path: path.to_owned(),
            line,
            column,
            message,
        });
    }

    /// Parses YAML, recording a parse error with its position.
    pub fn parse<T: serde::de::DeserializeOwned>(&mut self, path: &Path, text: &str) -> Option<T> {
        match serde_saphyr::from_str::<T>(text) {
            Ok(v) => Some(v),
            Err(e) => {
                let loc = e.location();
                self.problems.push(Problem {
                    path: path.to_owned(),
                    line: loc.map(|l| l.line()),
                    column: loc.map(|l| l.column()),
                    message: first_line(&e.to_string()),
                });
                None
            }
        }
    }
}

/// serde-saphyr renders a snippet after the message; the report keeps the message line and
/// the position, which we print ourselves.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn locate_reports_line_and_column() {
        assert_eq!(locate("a\nbc X", "X"), (Some(2), Some(4)));
        assert_eq!(locate("abc", "zz"), (None, None));
    }
}
