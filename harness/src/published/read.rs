//! Reading a published set's files: every `<id>.json` with the `.bin` (or evidence) it
//! names, each with a size bound, and the octets read with the harness's own codec under
//! the limits the fixture assumes. Problems are collected per fixture, never fatal: a
//! fixture the harness cannot read becomes a harness error, not a missing vector.

use super::format::{self, Metadata, Outcome};
use super::octets::{self, Reading};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest `.bin` read: published frames are a few KiB; the bound keeps a stray file from
/// being held in memory as a vector.
pub const MAX_BIN_BYTES: u64 = 16 * 1024 * 1024;
/// Largest `.json` read; real ones are a few hundred octets.
pub const MAX_JSON_BYTES: u64 = 1024 * 1024;

/// Reading one file with a size bound failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    /// The file could not be read.
    Io(#[from] std::io::Error),
    #[error("not a regular file")]
    /// A directory or special file.
    NotFile,
    #[error("larger than the harness bound of {0} octets")]
    /// Over the bound.
    TooLarge(u64),
}

/// Reads a regular file of at most `cap` octets; the bound holds for what is read, so a
/// file growing underneath cannot make the harness allocate more.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(ReadError::NotFile);
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(buf)
}

/// The metadata files of a directory, by id (non-recursive), and the other file names.
pub fn scan(dir: &Path) -> std::io::Result<(BTreeMap<String, PathBuf>, Vec<String>)> {
    let mut json = BTreeMap::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.strip_suffix(".json") {
            Some(stem) if !stem.is_empty() => {
                json.insert(stem.to_owned(), entry.path());
            }
            _ => others.push(name),
        }
    }
    Ok((json, others))
}

/// One fixture as read from disk, before conversion.
pub struct Raw {
    /// The id (the metadata file's stem).
    pub id: String,
    /// The metadata file.
    pub path: PathBuf,
    /// The metadata, with every problem found reading it and its octets.
    pub meta: Metadata,
    /// The `.bin` octets.
    pub octets: Option<Bytes>,
    /// The octets, read.
    pub reading: Option<Reading>,
    /// The fixture's words say its timestamp is the point (stale, future, missing).
    pub about_stamp: bool,
}

/// The namespace a fixture id starts with (`core_0001_x` is in `core`).
pub fn namespace_of(id: &str) -> String {
    id.split('_').next().unwrap_or_default().to_owned()
}

/// A file the metadata names, as a plain name inside the set's directory.
fn sibling(dir: &Path, name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.contains(['/', '\\']) || name == ".." || name == "." {
        return Err(format!(
            "{name:?} is not a file name in the set's directory"
        ));
    }
    Ok(dir.join(name))
}

/// Reads fixture `id` (its metadata at `path`) and the octets it names in `dir`.
pub fn read_raw(dir: &Path, id: String, path: PathBuf) -> Raw {
    let mut raw = Raw {
        id,
        path,
        meta: Metadata::default(),
        octets: None,
        reading: None,
        about_stamp: false,
    };
    let doc = match read_capped(&raw.path, MAX_JSON_BYTES) {
        Ok(b) => b,
        Err(e) => {
            raw.meta
                .problems
                .push(format!("cannot read the metadata: {e}"));
            return raw;
        }
    };
    raw.meta = match serde_json::from_slice(&doc) {
        Ok(v) => format::parse(&v),
        Err(e) => {
            raw.meta
                .problems
                .push(format!("the metadata is not valid JSON: {e}"));
            return raw;
        }
    };
    if let Some(named) = raw.meta.id.clone().filter(|n| *n != raw.id) {
        raw.meta.problems.push(format!(
            "the metadata names vector {named:?}, but the file is {}.json",
            raw.id
        ));
    }
    let words = [&raw.meta.description, &raw.meta.rejection_reason];
    raw.about_stamp = raw.meta.timestamp_required.is_some()
        || words.iter().filter_map(|w| w.as_deref()).any(|w| {
            let w = w.to_ascii_lowercase();
            w.contains("timestamp") || w.contains("freshness")
        });
    if raw.meta.outcome == Some(Outcome::Process) {
        return raw;
    }
    let Some(bin) = raw.meta.bin_file.clone() else {
        raw.meta
            .problems
            .push("the metadata names no .bin fixture".into());
        return raw;
    };
    let octets = match sibling(dir, &bin)
        .and_then(|p| read_capped(&p, MAX_BIN_BYTES).map_err(|e| format!("cannot read {bin}: {e}")))
    {
        Ok(b) => Bytes::from(b),
        Err(e) => {
            raw.meta.problems.push(e);
            return raw;
        }
    };
    match octets::read(&octets, &raw.meta.limits.assumed()) {
        Ok(r) => raw.reading = Some(r),
        Err(e) => raw.meta.problems.push(format!("{bin}: {e}")),
    }
    raw.octets = Some(octets);
    raw
}

/// The stamp of a fixture whose frame is whole (a receiver reaches its timestamp check).
pub fn stamp(r: &Raw) -> Option<u64> {
    r.reading
        .as_ref()
        .filter(|x| x.complete)
        .and_then(|x| x.header.ts_unix_ms)
}

/// The moment each namespace's fixtures were stamped: the median stamp of the fixtures that
/// are not about their stamp, per namespace, else over the whole set. Fixtures were made in
/// batches minutes apart, so one clock for the whole set would date some of them in the
/// future, and a stale fixture's own stamp would make it fresh.
pub fn batch_clocks(raws: &[Raw]) -> (BTreeMap<String, u64>, Option<u64>) {
    fn median(mut v: Vec<u64>) -> Option<u64> {
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    }
    let mut per: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut all = Vec::new();
    for r in raws.iter().filter(|r| !r.about_stamp) {
        if let Some(ts) = stamp(r).filter(|t| *t > 0) {
            per.entry(namespace_of(&r.id)).or_default().push(ts);
            all.push(ts);
        }
    }
    let per = per
        .into_iter()
        .filter_map(|(ns, v)| median(v).map(|m| (ns, m)))
        .collect();
    (per, median(all))
}
