//! The spec kit's published vector set as a catalog front-end: a flat directory of
//! `<id>.json` metadata beside `<id>.bin` frames (or `<id>.evidence.md` for process checks),
//! read into ordinary catalog [`Vector`]s, so selection, baselines, shards, claims, reports
//! and diffs work on it unchanged (`docs/vector-format.md`, "Published sets").
//!
//! Each fixture becomes one step sending its octets (and, when they end inside a frame, the
//! end of the stream), with the metadata's expectation graded as the catalog grades codes
//! (`docs/spec-issues.md` SI-004 to SI-011). A profile payload valid in one P1 form only is
//! sent in the form the SUT declares: the kit's octets in the kit's form, the same message
//! re-wrapped (or unwrapped) by the harness in the other (SI-040). What the fixture assumes
//! of the receiver, which the catalog format has no words for (its own clock, its limits,
//! profile validation), rides along as a [`Fixture`] whose `catalog::receiver::Receiver` the
//! engine applies to the SUT or says why it cannot. Where the project's reading departs from the published expectation,
//! a [`rulings`] entry says so and its effect is what runs (another expectation, a judgment
//! on decoding only, the receiver's choice), and the report's published-set analysis
//! (`report::analysis::published`) reports every such case with what the SUT did.

pub mod convert;
pub mod format;
pub mod octets;
pub mod read;
pub mod rulings;

use crate::catalog::{Catalog, LoadedVector};
use crate::frames::Limits;
use read::{batch_clocks, namespace_of, read_raw, scan, Raw};
use std::path::Path;

pub use crate::catalog::fixture::{Fixture, Published};
pub use crate::catalog::receiver::{Carried, Receiver};
pub use convert::SAME_CASE;
pub use read::{MAX_BIN_BYTES, MAX_JSON_BYTES};

/// Reading a published set failed as a whole (per-fixture problems become results).
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// The directory could not be listed.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Whether `dir` holds a published set: some `<id>.json` has an `<id>.bin` or
/// `<id>.evidence.md` beside it, and there is no `requirements/` directory (a YAML catalog
/// has one).
pub fn is_published_dir(dir: &Path) -> bool {
    if dir.join("requirements").is_dir() {
        return false;
    }
    scan(dir).is_ok_and(|(json, others)| {
        json.keys().any(|id| {
            others.contains(&format!("{id}.bin")) || others.contains(&format!("{id}.evidence.md"))
        })
    })
}

/// The limits a fixture assumes: the ones it states, the spec's defaults for the rest.
pub fn assumed_limits(s: &format::StatedLimits) -> Limits {
    s.assumed()
}

/// Loads the published set in `dir` as catalog vectors. `reference` is the project's
/// catalog: its vectors of the same ids give the fixtures their requirements.
pub fn load(dir: &Path, reference: &Catalog) -> Result<Vec<LoadedVector>, PublishedError> {
    let (json, _) = scan(dir).map_err(|source| PublishedError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let raws: Vec<Raw> = json
        .into_iter()
        .map(|(id, path)| read_raw(dir, id, path))
        .collect();
    let (per, all) = batch_clocks(&raws);
    Ok(raws
        .into_iter()
        .map(|r| {
            let clock = per.get(&namespace_of(&r.id)).copied().or(all);
            let vector = convert::convert(&r, clock, reference);
            LoadedVector {
                vector,
                path: r.path,
            }
        })
        .collect())
}
