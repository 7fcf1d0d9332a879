//! The matrix file: the SUTs of an interop matrix, each under a label, and the intermediary
//! pairs (an intermediary in front of an upstream stack). Labels name report directories,
//! so they are checked here to be safe path components and unique.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One column of the matrix: a SUT manifest under a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The column's label and the name of its report directory.
    pub label: String,
    /// The SUT manifest (`None`: the built-in reference implementation).
    pub manifest: Option<PathBuf>,
    /// For an intermediary pair: which intermediary in front of which upstream.
    pub pair: Option<Pair>,
}

/// An intermediary (relay, gateway, MCP proxy) in front of an upstream stack: the pairs view
/// crosses them as the QUIC interop runner crosses clients with servers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// The intermediary's name (a row of the pairs view).
    pub intermediary: String,
    /// The upstream stack's name (a column of the pairs view).
    pub upstream: String,
}

/// What is wrong with a matrix file or a `--sut` list.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a matrix file.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message (with the line and column).
        message: String,
    },
    /// A label is not usable as a directory name, or is used twice.
    #[error("{0}")]
    Label(String),
    /// The matrix names no SUT.
    #[error("the matrix names no SUT: give --sut or a matrix file with `suts:`")]
    Empty,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    suts: Vec<FileSut>,
    #[serde(default)]
    pairs: Vec<FilePair>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSut {
    label: String,
    manifest: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePair {
    label: String,
    manifest: PathBuf,
    intermediary: String,
    upstream: String,
}

/// Reads a matrix file; manifest paths in it are relative to the file.
pub fn load(path: &Path) -> Result<Vec<Entry>, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text, path)
}

/// Parses matrix-file text; `path` names it in errors and anchors relative manifests.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Entry>, SpecError> {
    let f: File = serde_saphyr::from_str(text).map_err(|e| SpecError::Parse {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    let mut out: Vec<Entry> = f
        .suts
        .into_iter()
        .map(|s| Entry {
            label: s.label,
            manifest: s.manifest.map(|m| base.join(m)),
            pair: None,
        })
        .collect();
    out.extend(f.pairs.into_iter().map(|p| Entry {
        label: p.label,
        manifest: Some(base.join(p.manifest)),
        pair: Some(Pair {
            intermediary: p.intermediary,
            upstream: p.upstream,
        }),
    }));
    check(&out, &path.display().to_string())?;
    Ok(out)
}

/// Entries from `--sut [LABEL=]MANIFEST` arguments: the label defaults to the manifest's file
/// stem.
pub fn from_args(args: &[String]) -> Result<Vec<Entry>, SpecError> {
    let out: Vec<Entry> = args
        .iter()
        .map(|a| {
            let (label, path) = match a.split_once('=') {
                Some((l, p)) => (l.to_owned(), PathBuf::from(p)),
                None => {
                    let p = PathBuf::from(a);
                    let stem = p
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    (stem, p)
                }
            };
            Entry {
                label,
                manifest: Some(path),
                pair: None,
            }
        })
        .collect();
    check(&out, "--sut")?;
    Ok(out)
}

/// Labels become directory names and page columns: 1-64 characters of `[A-Za-z0-9._+-]`,
/// not starting with `.`, each used once.
fn check(entries: &[Entry], whence: &str) -> Result<(), SpecError> {
    if entries.is_empty() {
        return Err(SpecError::Empty);
    }
    let mut seen = std::collections::BTreeSet::new();
    for e in entries {
        let ok = !e.label.is_empty()
            && e.label.len() <= 64
            && !e.label.starts_with('.')
            && e.label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'));
        if !ok {
            return Err(SpecError::Label(format!(
                "{whence}: label {:?}: expected 1-64 characters of A-Z a-z 0-9 . _ + - not starting with '.' (it names a report directory)",
                e.label
            )));
        }
        if !seen.insert(e.label.as_str()) {
            return Err(SpecError::Label(format!(
                "{whence}: label {:?} is used twice",
                e.label
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_file_resolves_manifests_beside_it() {
        let e = parse(
            "suts:\n  - {label: ref, manifest: m/ref.yaml}\n  - {label: builtin}\npairs:\n  - {label: relay+ref, manifest: p.yaml, intermediary: relay, upstream: ref}\n",
            Path::new("/x/matrix.yaml"),
        )
        .unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].manifest.as_deref(), Some(Path::new("/x/m/ref.yaml")));
        assert_eq!(e[1].manifest, None);
        assert_eq!(e[2].pair.as_ref().map(|p| p.upstream.as_str()), Some("ref"));
    }

    #[test]
    fn bad_labels_and_fields_are_named() {
        let dup = parse("suts: [{label: a}, {label: a}]\n", Path::new("m.yaml"))
            .unwrap_err()
            .to_string();
        assert!(dup.contains("\"a\" is used twice"), "{dup}");
        let slash = from_args(&["../x=y.yaml".into()]).unwrap_err().to_string();
        assert!(slash.contains("names a report directory"), "{slash}");
        let unknown = parse("suts: [{label: a, manfest: x}]\n", Path::new("m.yaml"))
            .unwrap_err()
            .to_string();
        assert!(unknown.starts_with("m.yaml: "), "{unknown}");
        assert!(unknown.contains("manfest"), "{unknown}");
        assert!(matches!(from_args(&[]), Err(SpecError::Empty)));
    }

    #[test]
    fn a_bare_manifest_is_labelled_by_its_stem() {
        let e = from_args(&["impl/foreign-py.yaml".into(), "tls=ref.yaml".into()]).unwrap();
        assert_eq!(e[0].label, "foreign-py");
        assert_eq!(e[1].label, "tls");
    }
}
