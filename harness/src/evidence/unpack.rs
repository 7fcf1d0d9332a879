//! Reading a bundle nobody vouches for yet: a `tar.gz` from anyone. Everything is capped
//! before it is held (unpacked octets, entries, the length of every entry whatever its
//! header says), nothing is written to disk, and a name that could point outside the bundle
//! (`..`, an absolute path) or an entry that is not a plain file is refused, not skipped.

use super::Bundle;
use std::io::Read;
use std::path::{Component, Path};

/// The most octets a bundle may unpack to (tar headers included). A C5 bundle over TLS
/// with every report is a few MiB; this leaves room for large failure transcripts.
pub const MAX_UNPACKED: u64 = 256 * 1024 * 1024;
/// The most entries a bundle may hold: a bundle has one file per report, per failure
/// transcript and a few more.
pub const MAX_ENTRIES: usize = 20_000;

/// Why a bundle could not be read; nothing in it was checked.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The bundle.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not a gzip-compressed tar archive, or cut short.
    #[error("not a readable tar.gz: {0}")]
    Format(String),
    /// It unpacks to more than [`MAX_UNPACKED`] octets.
    #[error("unpacks to more than {MAX_UNPACKED} octets; refused")]
    TooLarge,
    /// It has more than [`MAX_ENTRIES`] entries.
    #[error("has more than {MAX_ENTRIES} entries; refused")]
    TooManyEntries,
    /// An entry's name is absolute, climbs out with `..`, is not UTF-8 or holds a control
    /// character.
    #[error(
        "entry {0:?}: unsafe name (absolute, `..`, not UTF-8, or a control character); refused"
    )]
    UnsafeName(String),
    /// An entry is a link, a device or anything else but a file or a directory.
    #[error("entry {name:?}: a {kind}, not a plain file; refused")]
    NotAFile {
        /// Its name.
        name: String,
        /// Its tar type.
        kind: String,
    },
    /// Files are not all under one top directory.
    #[error("entry {name:?} is outside the bundle's directory {root:?}")]
    OutsideRoot {
        /// Its name.
        name: String,
        /// The first entry's top directory.
        root: String,
    },
    /// Two entries have the same name: which one counts would depend on the reader.
    #[error("entry {0:?} appears twice")]
    Duplicate(String),
    /// No file at all.
    #[error("holds no file")]
    Empty,
}

/// Counts what the decompressor hands out and fails the read past the cap, so a small
/// gzip bomb stops after [`MAX_UNPACKED`] octets instead of filling memory.
struct Capped<R> {
    inner: R,
    read: u64,
    max: u64,
    over: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read = self.read.saturating_add(n as u64);
        if self.read > self.max {
            self.over = true;
            return Err(std::io::Error::other("bundle over its size cap"));
        }
        Ok(n)
    }
}

/// Reads the bundle at `path`.
pub fn read_file(path: &Path) -> Result<Bundle, BundleError> {
    let f = std::fs::File::open(path).map_err(|source| BundleError::Io {
        path: path.display().to_string(),
        source,
    })?;
    read(std::io::BufReader::new(f))
}

/// Reads a bundle from `src` (gzip-compressed tar).
pub fn read(src: impl Read) -> Result<Bundle, BundleError> {
    read_capped(src, MAX_UNPACKED)
}

/// [`read`] with a lower cap, so a test need not inflate 256 MiB.
fn read_capped(src: impl Read, max: u64) -> Result<Bundle, BundleError> {
    let mut capped = Capped {
        inner: flate2::read::GzDecoder::new(src),
        read: 0,
        max,
        over: false,
    };
    let res = entries(&mut capped);
    if capped.over {
        return Err(BundleError::TooLarge);
    }
    res
}

fn entries<R: Read>(src: &mut Capped<R>) -> Result<Bundle, BundleError> {
    let fmt = |e: std::io::Error| BundleError::Format(e.to_string());
    let max = src.max;
    let mut ar = tar::Archive::new(&mut *src);
    let mut root: Option<String> = None;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut held: u64 = 0;
    for (n, e) in ar.entries().map_err(fmt)?.enumerate() {
        if n >= MAX_ENTRIES {
            return Err(BundleError::TooManyEntries);
        }
        let mut e = e.map_err(fmt)?;
        let raw = e.path().map_err(fmt)?.into_owned();
        let parts = safe_parts(&raw)?;
        let name = parts.join("/");
        let kind = e.header().entry_type();
        if kind.is_dir() || kind.is_pax_global_extensions() {
            continue;
        }
        if !kind.is_file() {
            return Err(BundleError::NotAFile {
                name,
                kind: format!("{kind:?}").to_lowercase(),
            });
        }
        let [top, rest @ ..] = parts.as_slice() else {
            return Err(BundleError::UnsafeName(name));
        };
        if rest.is_empty() {
            return Err(BundleError::OutsideRoot {
                name,
                root: root.unwrap_or_default(),
            });
        }
        match &root {
            None => root = Some(top.clone()),
            Some(r) if r != top => {
                return Err(BundleError::OutsideRoot {
                    name,
                    root: r.clone(),
                })
            }
            Some(_) => {}
        }
        let rel = rest.join("/");
        if !seen.insert(rel.clone()) {
            return Err(BundleError::Duplicate(name));
        }
        // The header's size is not trusted to size a buffer: the body is read through a
        // cap of what the bundle may still hold, and grows only as octets arrive.
        let mut body = Vec::new();
        let budget = max.saturating_sub(held);
        (&mut e)
            .take(budget.saturating_add(1))
            .read_to_end(&mut body)
            .map_err(fmt)?;
        held = held.saturating_add(body.len() as u64);
        if held > max {
            return Err(BundleError::TooLarge);
        }
        files.push((rel, body));
    }
    let root = root.ok_or(BundleError::Empty)?;
    Ok(Bundle { root, files })
}

/// The name's parts, or a refusal: only plain names (a leading `./` is allowed), UTF-8,
/// no control characters (a newline would forge a `MANIFEST` line).
fn safe_parts(p: &Path) -> Result<Vec<String>, BundleError> {
    let unsafe_name = || BundleError::UnsafeName(p.to_string_lossy().into_owned());
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => {
                let s = s.to_str().ok_or_else(unsafe_name)?;
                if s.chars().any(|c| c.is_control() || c == '\\') {
                    return Err(unsafe_name());
                }
                parts.push(s.to_owned());
            }
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(unsafe_name())
            }
        }
    }
    if parts.is_empty() {
        return Err(unsafe_name());
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar.gz with raw header names, bypassing the tar crate's own name checks.
    fn raw(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut t = tar::Builder::new(enc);
        for (name, kind, body) in entries {
            let mut h = tar::Header::new_gnu();
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_entry_type(*kind);
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            t.append(&h, *body).unwrap();
        }
        t.into_inner().unwrap().finish().unwrap()
    }

    fn err(b: Vec<u8>) -> String {
        match read(b.as_slice()) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_plain_bundle_reads_relative_to_its_root() {
        let f = tar::EntryType::Regular;
        let b = read(raw(&[("./r/a.json", f, b"{}"), ("r/m/x.yaml", f, b"x")]).as_slice()).unwrap();
        assert_eq!(b.root, "r");
        assert_eq!(b.files[0], ("a.json".to_owned(), b"{}".to_vec()));
        assert_eq!(b.files[1].0, "m/x.yaml");
    }

    #[test]
    fn unsafe_names_links_and_strays_are_refused() {
        let f = tar::EntryType::Regular;
        assert!(err(raw(&[("r/../../etc/x", f, b"")])).contains("unsafe name"));
        assert!(err(raw(&[("/etc/passwd", f, b"")])).contains("unsafe name"));
        assert!(err(raw(&[("r/a\nb", f, b"")])).contains("unsafe name"));
        assert!(err(raw(&[("r/l", tar::EntryType::Symlink, b"")])).contains("not a plain file"));
        assert!(err(raw(&[("r/a", f, b""), ("s/a", f, b"")])).contains("outside"));
        assert!(err(raw(&[("a", f, b"")])).contains("outside"));
        assert!(err(raw(&[("r/a", f, b"1"), ("r/./a", f, b"2")])).contains("twice"));
        assert!(err(raw(&[])).contains("no file"));
        assert!(err(b"not gzip at all".to_vec()).contains("not a readable tar.gz"));
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_cap_whatever_the_header_says() {
        // A header that announces 8 MiB, then zeros: refused once 1 MiB has unpacked.
        let mut h = tar::Header::new_gnu();
        h.set_path("r/big").unwrap();
        h.set_size(8 << 20);
        h.set_mode(0o644);
        h.set_cksum();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, h.as_bytes()).unwrap();
        std::io::Write::write_all(&mut enc, &vec![0u8; 8 << 20]).unwrap();
        let b = enc.finish().unwrap();
        let e = read_capped(b.as_slice(), 1 << 20)
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("more than")),
            "{e:?}"
        );
        assert!(read(b.as_slice()).is_ok(), "under the real cap it reads");
    }
}
