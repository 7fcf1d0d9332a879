//! The catalog built into the binary (issue 31): the files of `vectors/` as they were at
//! build time, written once into the user's cache directory and loaded from there like any
//! catalog directory, so a binary copied out of the checkout runs the same vectors and
//! reports the same paths (`vectors/<namespace>/<file>`).

use std::path::{Path, PathBuf};

mod files {
    include!(concat!(env!("OUT_DIR"), "/catalog_files.rs"));
}

pub use files::{FILES, KEY};

/// Why the built-in catalog could not be written out.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// No cache directory is known and `SWP_CONFORM_CACHE` is unset.
    #[error(
        "no cache directory for the built-in catalog: set SWP_CONFORM_CACHE, or pass --vectors DIR"
    )]
    NoCache,
    /// A file could not be written or read back.
    #[error("the built-in catalog could not be written to {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// The cache directory of this harness: `SWP_CONFORM_CACHE`, else the platform's user cache
/// (`$XDG_CACHE_HOME/swp-conform`, `~/.cache/swp-conform`, …).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SWP_CONFORM_CACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    directories::ProjectDirs::from("", "", "swp-conform").map(|p| p.cache_dir().to_owned())
}

/// The built-in catalog as a directory: `<cache>/catalog/<KEY prefix>/vectors`, written
/// the first time and checked octet for octet every time (a file changed in the cache is
/// written again, never trusted).
pub fn dir() -> Result<PathBuf, EmbeddedError> {
    let base = cache_dir().ok_or(EmbeddedError::NoCache)?;
    let dir = base.join("catalog").join(&KEY[..16]).join("vectors");
    if !matches(&dir) {
        write(&base, &dir)?;
    }
    Ok(dir)
}

/// Whether `dir` holds exactly the embedded files' octets (extra files are ignored: the
/// loader reads only what the catalog lists by directory, and nothing writes there).
fn matches(dir: &Path) -> bool {
    FILES
        .iter()
        .all(|(rel, body)| std::fs::read(dir.join(rel)).is_ok_and(|b| b == *body))
}

/// Writes the files into a fresh directory beside `dir`, then renames it into place, so
/// that two runs starting at once never load a half-written catalog.
fn write(base: &Path, dir: &Path) -> Result<(), EmbeddedError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| EmbeddedError::Io { path, source }
    };
    let parent = dir.parent().unwrap_or(base);
    let tmp = parent.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (rel, body) in FILES {
        let p = tmp.join("vectors").join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        std::fs::write(&p, body).map_err(io(&p))?;
    }
    // Another run may have put a good copy in place meanwhile; a bad one is replaced.
    if matches(dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(parent);
    if let Some(d) = parent.parent() {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    std::fs::rename(&tmp, parent).map_err(io(parent))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_is_the_source_trees_and_is_rewritten_when_changed() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
        for (rel, body) in FILES {
            assert_eq!(std::fs::read(src.join(rel)).unwrap(), *body, "{rel}");
        }
        assert!(FILES.len() > 500, "{}", FILES.len());
        let base = std::env::temp_dir().join(format!("swp-embedded-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("catalog").join(&KEY[..16]).join("vectors");
        write(&base, &dir).unwrap();
        assert!(matches(&dir));
        let (rel, _) = FILES[0];
        std::fs::write(dir.join(rel), b"tampered").unwrap();
        assert!(!matches(&dir));
        write(&base, &dir).unwrap();
        assert!(matches(&dir));
        let _ = std::fs::remove_dir_all(&base);
    }
}
