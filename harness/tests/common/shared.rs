//! Where the tests look for what is mirrored beside the checkout (the spec kit, the
//! official MCP schemas): `SWP_SHARED_DIR`, else `../shared`. Pointing it nowhere runs the
//! suite as a fresh clone would (docs/testing.md).

use std::path::{Path, PathBuf};

/// The mirror directory.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("SWP_SHARED_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}
