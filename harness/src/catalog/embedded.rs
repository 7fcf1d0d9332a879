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
    if matches(&dir) {
        return Ok(dir);
    }
    std::fs::create_dir_all(base.join("catalog")).map_err(|source| EmbeddedError::Io {
        path: base.join("catalog").display().to_string(),
        source,
    })?;
    write(&base, &dir)
}

/// Whether `dir` holds exactly the embedded files' octets (extra files are ignored: the
/// loader reads only what the catalog lists by directory, and nothing writes there).
fn matches(dir: &Path) -> bool {
    FILES
        .iter()
        .all(|(rel, body)| std::fs::read(dir.join(rel)).is_ok_and(|b| b == *body))
}

/// Writes the files into a fresh directory beside `dir`'s parent, then renames it into
/// place, so that a run never loads a half-written catalog, and never deletes one another
/// run may be reading: a copy that does not match is first renamed aside (runs only read a
/// copy after checking it). Returns the catalog directory to use: `dir`, or the fresh copy
/// itself when another run's copy went into place meanwhile and does not match either.
fn write(base: &Path, dir: &Path) -> Result<PathBuf, EmbeddedError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| EmbeddedError::Io { path, source }
    };
    let parent = dir.parent().unwrap_or(base);
    let tag = format!("{}-{:?}", std::process::id(), std::thread::current().id());
    let tag: String = tag.chars().filter(char::is_ascii_alphanumeric).collect();
    let tmp = parent.with_extension(format!("tmp-{tag}"));
    let _ = std::fs::remove_dir_all(&tmp);
    for (rel, body) in FILES {
        let p = tmp.join("vectors").join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        std::fs::write(&p, body).map_err(io(&p))?;
    }
    if matches(dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Ok(dir.to_owned());
    }
    if parent.exists() {
        let aside = parent.with_extension(format!("bad-{tag}"));
        if std::fs::rename(parent, &aside).is_ok() {
            let _ = std::fs::remove_dir_all(&aside);
        }
    }
    if std::fs::rename(&tmp, parent).is_ok() {
        return Ok(dir.to_owned());
    }
    if matches(dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Ok(dir.to_owned());
    }
    Ok(tmp.join("vectors"))
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
        std::fs::create_dir_all(base.join("catalog")).unwrap();
        assert_eq!(write(&base, &dir).unwrap(), dir);
        assert!(matches(&dir));
        let (rel, _) = FILES[0];
        std::fs::write(dir.join(rel), b"tampered").unwrap();
        assert!(!matches(&dir));
        assert_eq!(write(&base, &dir).unwrap(), dir);
        assert!(matches(&dir));
        // Nothing is left beside it.
        assert_eq!(std::fs::read_dir(base.join("catalog")).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&base);
    }
}
