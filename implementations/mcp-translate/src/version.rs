//! The MCP protocol versions this crate knows, their order, and how they are written.

use std::fmt;
use std::str::FromStr;

/// An MCP protocol version; ordered by date, so `a < b` means `a` is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// 2024-11-05, the first published revision.
    V2024_11_05,
    /// 2025-03-26: audio content, tool annotations, completions capability, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: titles, structured tool output, resource links, elicitation, `_meta`
    /// everywhere; batches removed.
    V2025_06_18,
    /// 2025-11-25: tasks, icons, URL elicitation, sampling with tools.
    V2025_11_25,
    /// 2026-07-28: stateless. No `initialize`: `server/discover`, and the protocol version
    /// and client capabilities in every request's `_meta`; server requests travel inside
    /// `input_required` results; tasks, ping and `logging/setLevel` removed.
    V2026_07_28,
}

impl Version {
    /// Every known version, oldest first.
    pub const ALL: [Version; 5] = [
        Version::V2024_11_05,
        Version::V2025_03_26,
        Version::V2025_06_18,
        Version::V2025_11_25,
        Version::V2026_07_28,
    ];

    /// The newest known version.
    pub const LATEST: Version = Version::V2026_07_28;

    /// The newest version with a session (`initialize`): what an intermediary offers a
    /// server on behalf of a stateless client, and how it reads a session server's lines.
    pub const LATEST_SESSION: Version = Version::V2025_11_25;

    /// The version string as it appears in `protocolVersion`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether this version is stateless: no `initialize`, per-request `_meta`
    /// (2026-07-28 on).
    pub const fn is_stateless(self) -> bool {
        matches!(self, Version::V2026_07_28)
    }

    /// Whether JSON-RPC batches are part of this version (2025-03-26 only: added there,
    /// removed in 2025-06-18).
    pub const fn has_batches(self) -> bool {
        matches!(self, Version::V2025_03_26)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string this crate does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown MCP protocol version {0:?} (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
)]
pub struct UnknownVersion(pub String);

impl FromStr for Version {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Which way a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the client to the server: client requests and notifications, and the client's
    /// responses to server requests.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    /// The opposite direction (where answers given on a peer's behalf go).
    pub const fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_print_and_order() {
        for v in Version::ALL {
            assert_eq!(v.as_str().parse::<Version>(), Ok(v));
        }
        assert!(Version::V2024_11_05 < Version::V2025_11_25);
        assert!(Version::LATEST_SESSION < Version::LATEST && Version::LATEST.is_stateless());
        assert!(!Version::LATEST_SESSION.is_stateless());
        assert!("2027-01-01".parse::<Version>().is_err());
        assert!(Version::V2025_03_26.has_batches() && !Version::V2025_06_18.has_batches());
    }
}
