//! Legacy vector sets (spec kit `conformance.md`): `<id>.json` expected-metadata files
//! beside `<id>.bin` fixtures. Placeholder until the importer lands.

use std::path::{Path, PathBuf};

/// Whether `dir` holds a legacy JSON+bin vector set rather than a YAML catalog.
pub fn is_legacy_dir(_dir: &Path) -> bool {
    false
}

/// Runs a legacy set (not yet implemented).
pub fn run_cli(
    _dir: &Path,
    _sut: &Option<PathBuf>,
    _out: &Option<PathBuf>,
    _timeout_ms: u64,
) -> Result<bool, String> {
    Err("legacy vector sets are not supported yet".into())
}
