//! The official MCP schemas the harness judges with, pinned (issue 31): each supported
//! version's `schema.json` by its URL in the MCP specification's repository and its SHA-256.
//! `swp-conform schemas fetch` downloads them (or copies them from a mirror), refuses any
//! whose digest differs, and caches them in the user's cache directory, where the
//! MCP-native method finds them when `MCP_SCHEMA_DIR` is unset.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One pinned schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    /// The protocol version.
    pub version: &'static str,
    /// Where the MCP specification publishes it.
    pub url: &'static str,
    /// SHA-256 of its octets, lowercase hex.
    pub sha256: &'static str,
}

/// The schemas of every version in [`super::schema::KNOWN`]. The digests are of the files as
/// the specification's repository publishes them under `schema/<version>/schema.json`; a
/// file changed upstream is refused until this table is reviewed and updated.
pub const PINS: [Pin; 5] = [
    Pin {
        version: "2024-11-05",
        url: "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2024-11-05/schema.json",
        sha256: "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce",
    },
    Pin {
        version: "2025-03-26",
        url: "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2025-03-26/schema.json",
        sha256: "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131",
    },
    Pin {
        version: "2025-06-18",
        url: "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2025-06-18/schema.json",
        sha256: "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01",
    },
    Pin {
        version: "2025-11-25",
        url: "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2025-11-25/schema.json",
        sha256: "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
    },
    Pin {
        version: "2026-07-28",
        url: "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema/2026-07-28/schema.json",
        sha256: "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
    },
];

/// The largest schema file taken (the biggest published is about 200 KB).
const MAX_SCHEMA_BYTES: u64 = 8 << 20;

/// Why a schema could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No cache directory is known.
    #[error("no cache directory for the MCP schemas: set SWP_CONFORM_CACHE, or set MCP_SCHEMA_DIR to a directory of <version>/schema.json")]
    NoCache,
    /// The source could not be read.
    #[error("MCP schema {version}: cannot read {from}: {why}")]
    Read {
        /// The protocol version.
        version: String,
        /// The URL or file.
        from: String,
        /// Why.
        why: String,
    },
    /// The octets are not the pinned ones.
    #[error("MCP schema {version} from {from} has SHA-256 {got}, not the pinned {want}: refused (a tampered or changed file; nothing was cached)")]
    Digest {
        /// The protocol version.
        version: String,
        /// The URL or file.
        from: String,
        /// What it hashed to.
        got: String,
        /// The pin.
        want: String,
    },
    /// The cache could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Where the fetched schemas are kept: `<cache>/mcp-schema/<version>/schema.json`.
pub fn cache_dir() -> Option<PathBuf> {
    crate::catalog::embedded::cache_dir().map(|d| d.join("mcp-schema"))
}

/// The cache, when it holds at least one pinned schema and every schema it holds matches
/// its pin; `None` otherwise (a changed file is never judged with).
pub fn cached() -> Option<PathBuf> {
    let dir = cache_dir()?;
    let mut any = false;
    for p in &PINS {
        match std::fs::read(dir.join(p.version).join("schema.json")) {
            Ok(b) if sha256_hex(&b) == p.sha256 => any = true,
            Ok(_) => return None,
            Err(_) => {}
        }
    }
    any.then_some(dir)
}

fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Where `pin` is read from: the official URL, or `<from>/<version>/schema.json` of a
/// mirror given as a directory or an `http(s)://` base.
pub fn source(pin: &Pin, from: Option<&str>) -> String {
    match from {
        None => pin.url.to_owned(),
        Some(base) => format!("{}/{}/schema.json", base.trim_end_matches('/'), pin.version),
    }
}

fn read(pin: &Pin, src: &str) -> Result<Vec<u8>, FetchError> {
    let err = |why: String| FetchError::Read {
        version: pin.version.to_owned(),
        from: src.to_owned(),
        why,
    };
    if src.starts_with("http://") || src.starts_with("https://") {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(std::time::Duration::from_secs(60)))
            .build()
            .into();
        let mut resp = agent.get(src).call().map_err(|e| err(e.to_string()))?;
        resp.body_mut()
            .with_config()
            .limit(MAX_SCHEMA_BYTES)
            .read_to_vec()
            .map_err(|e| err(e.to_string()))
    } else {
        let p = Path::new(src);
        let len = std::fs::metadata(p).map_err(|e| err(e.to_string()))?.len();
        if len > MAX_SCHEMA_BYTES {
            return Err(err(format!("{len} octets, more than a schema can be")));
        }
        std::fs::read(p).map_err(|e| err(e.to_string()))
    }
}

/// Fetches every pinned schema from `from` (the official URLs when `None`) into `into`,
/// each checked against its pin before it is written (then renamed into place). Returns
/// the versions written; the first refusal stops it, leaving what was cached before.
pub fn fetch(from: Option<&str>, into: &Path) -> Result<Vec<&'static str>, FetchError> {
    let mut done = Vec::new();
    for pin in &PINS {
        let src = source(pin, from);
        let body = read(pin, &src)?;
        let got = sha256_hex(&body);
        if got != pin.sha256 {
            return Err(FetchError::Digest {
                version: pin.version.to_owned(),
                from: src,
                got,
                want: pin.sha256.to_owned(),
            });
        }
        let dir = into.join(pin.version);
        let write = |p: &Path| {
            let path = p.display().to_string();
            move |source| FetchError::Write { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(write(&dir))?;
        let tmp = dir.join(format!("schema.json.tmp-{}", std::process::id()));
        std::fs::write(&tmp, &body).map_err(write(&tmp))?;
        let dest = dir.join("schema.json");
        std::fs::rename(&tmp, &dest).map_err(write(&dest))?;
        done.push(pin.version);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_version_is_pinned_once() {
        let pinned: Vec<&str> = PINS.iter().map(|p| p.version).collect();
        assert_eq!(pinned, super::super::schema::KNOWN);
        for p in &PINS {
            assert!(
                p.url.ends_with(&format!("/{}/schema.json", p.version)),
                "{}",
                p.url
            );
            assert_eq!(p.sha256.len(), 64);
        }
    }
}
