//! Parsing limits and receiver policy: every bound the codec and validator enforce, with the
//! defaults and where each default comes from.

use crate::uvarint;

/// Recommended `MAX_FRAME_BYTES` (core-spec §3.2): 8 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 8 * 1024 * 1024;
/// Recommended `MIN_MSG_ID_BYTES` (core-spec §3.2).
pub const DEFAULT_MIN_MSG_ID_BYTES: usize = 8;
/// Recommended `MAX_MSG_ID_BYTES` of core-spec §3.2.
pub const CORE_RECOMMENDED_MAX_MSG_ID_BYTES: usize = 64;
/// Recommended `MAX_MSG_ID_BYTES` of encoding-binding-e1 §4.
pub const E1_RECOMMENDED_MAX_MSG_ID_BYTES: usize = 32;
/// Recommended `MAX_EXT_BYTES` (encoding-binding-e1 §4).
pub const DEFAULT_MAX_EXT_BYTES: usize = 4096;
/// Octets of every frame reserved for the envelope header when deriving the default
/// `MAX_PAYLOAD_BYTES` from `MAX_FRAME_BYTES` (see `docs/core-limits.md`).
pub const DEFAULT_HEADER_RESERVE: usize = 1024;
/// Recommended `MAX_CLOCK_SKEW_MS` (core-spec §3.2): five minutes.
pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 300_000;

/// The size bounds a receiver enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted frame body `N`, decided from the length prefix alone.
    pub max_frame_bytes: u32,
    /// Shortest accepted `msg_id`.
    pub min_msg_id_bytes: usize,
    /// Longest accepted `msg_id`.
    pub max_msg_id_bytes: usize,
    /// Largest accepted extensions block.
    pub max_ext_bytes: usize,
    /// Largest accepted payload.
    pub max_payload_bytes: usize,
}

/// A `Limits` value that cannot describe a working receiver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// `MIN_MSG_ID_BYTES` must be at least 1 (E1 rejects an empty msg_id).
    #[error("MIN_MSG_ID_BYTES must be at least 1 (E1 §4 rejects an empty msg_id)")]
    EmptyMsgIdAllowed,
    /// The msg_id range is empty.
    #[error("MIN_MSG_ID_BYTES ({min}) exceeds MAX_MSG_ID_BYTES ({max})")]
    MsgIdRange {
        /// The minimum.
        min: usize,
        /// The maximum.
        max: usize,
    },
    /// `MAX_PAYLOAD_BYTES` must leave room for the smallest header inside `MAX_FRAME_BYTES`.
    #[error("MAX_PAYLOAD_BYTES ({payload}) exceeds MAX_FRAME_BYTES ({frame}) minus the smallest envelope header ({overhead})")]
    PayloadAboveFrame {
        /// The payload bound.
        payload: usize,
        /// The frame bound.
        frame: u32,
        /// The smallest header overhead for these limits.
        overhead: usize,
    },
    /// A zero frame bound accepts nothing.
    #[error("MAX_FRAME_BYTES must be at least 1")]
    ZeroFrame,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::with_max_frame(DEFAULT_MAX_FRAME_BYTES)
    }
}

impl Limits {
    /// Defaults for a given frame bound: `MAX_PAYLOAD_BYTES` is the frame bound less
    /// [`DEFAULT_HEADER_RESERVE`] (or less the smallest header, for tiny frames).
    pub fn with_max_frame(max_frame_bytes: u32) -> Self {
        let mut l = Limits {
            max_frame_bytes,
            min_msg_id_bytes: DEFAULT_MIN_MSG_ID_BYTES,
            max_msg_id_bytes: CORE_RECOMMENDED_MAX_MSG_ID_BYTES,
            max_ext_bytes: DEFAULT_MAX_EXT_BYTES,
            max_payload_bytes: 0,
        };
        let frame = max_frame_bytes as usize;
        l.max_payload_bytes = if frame > 2 * DEFAULT_HEADER_RESERVE {
            frame - DEFAULT_HEADER_RESERVE
        } else {
            frame.saturating_sub(l.min_overhead())
        };
        l
    }

    /// The E1-strict variant: `MAX_MSG_ID_BYTES` = 32 as E1 §4 recommends.
    pub fn e1_strict() -> Self {
        Limits {
            max_msg_id_bytes: E1_RECOMMENDED_MAX_MSG_ID_BYTES,
            ..Limits::default()
        }
    }

    /// The smallest E1 header a frame with a payload of `max_payload_bytes` can have:
    /// five one-octet uvarints, the shortest msg_id, an empty extensions block and the
    /// payload length prefix.
    pub fn min_overhead(&self) -> usize {
        5 + 1
            + self.min_msg_id_bytes
            + 1
            + uvarint::encoded_len(self.max_payload_bytes.max(self.max_frame_bytes as usize) as u64)
    }

    /// Checks that the limits are coherent.
    pub fn check(&self) -> Result<(), LimitsError> {
        if self.max_frame_bytes == 0 {
            return Err(LimitsError::ZeroFrame);
        }
        if self.min_msg_id_bytes == 0 {
            return Err(LimitsError::EmptyMsgIdAllowed);
        }
        if self.min_msg_id_bytes > self.max_msg_id_bytes {
            return Err(LimitsError::MsgIdRange {
                min: self.min_msg_id_bytes,
                max: self.max_msg_id_bytes,
            });
        }
        let overhead = self.min_overhead();
        if self.max_payload_bytes + overhead > self.max_frame_bytes as usize {
            return Err(LimitsError::PayloadAboveFrame {
                payload: self.max_payload_bytes,
                frame: self.max_frame_bytes,
                overhead,
            });
        }
        Ok(())
    }
}

/// Frame-rate limit: at most `frames` frames in any window of `window_ms` milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Frames allowed per window.
    pub frames: u32,
    /// Window length in milliseconds.
    pub window_ms: u64,
}

/// What to do with a frame whose `profile_id` no registered profile handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownProfilePolicy {
    /// Reply with `ERR_UNKNOWN_PROFILE` where a response path exists, keep the stream.
    #[default]
    ErrorReply,
    /// Close the stream without a reply.
    Close,
}

/// Receiver policy beyond size limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Enforce `ts_unix_ms` freshness (core-spec §4.4 item 4, S1 §2.4).
    pub timestamp_freshness: bool,
    /// Accepted distance between `ts_unix_ms` and the receiver clock, both directions.
    pub max_clock_skew_ms: u64,
    /// Flag bits a profile has defined; every other bit is surfaced as unknown.
    pub known_flags: u64,
    /// Optional frame-rate limit (core-spec §3.1 SHOULD).
    pub rate_limit: Option<RateLimit>,
    /// Unknown-profile handling (core-spec §6).
    pub unknown_profile: UnknownProfilePolicy,
}

impl Default for Policy {
    /// Freshness off (a core receiver cannot assume synchronised clocks; S1 deployments turn
    /// it on and say so in their manifest), recommended skew, no flags defined by core v1,
    /// no rate limit, error reply on unknown profile.
    fn default() -> Self {
        Policy {
            timestamp_freshness: false,
            max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
            known_flags: 0,
            rate_limit: None,
            unknown_profile: UnknownProfilePolicy::ErrorReply,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_coherent_and_documented_values() {
        let l = Limits::default();
        l.check().unwrap();
        assert_eq!(l.max_frame_bytes, 8 * 1024 * 1024);
        assert_eq!(l.max_payload_bytes, 8 * 1024 * 1024 - 1024);
        Limits::e1_strict().check().unwrap();
        for f in [1u32, 20, 64, 100, 4096, 65536] {
            let l = Limits::with_max_frame(f);
            if f as usize >= l.min_overhead() {
                l.check().unwrap();
            }
        }
    }

    #[test]
    fn incoherent_limits_are_rejected() {
        let l = Limits {
            min_msg_id_bytes: 0,
            ..Limits::default()
        };
        assert_eq!(l.check(), Err(LimitsError::EmptyMsgIdAllowed));
        let l = Limits {
            min_msg_id_bytes: 65,
            ..Limits::default()
        };
        assert!(matches!(l.check(), Err(LimitsError::MsgIdRange { .. })));
        let l = Limits {
            max_payload_bytes: 8 * 1024 * 1024,
            ..Limits::default()
        };
        assert!(matches!(
            l.check(),
            Err(LimitsError::PayloadAboveFrame { .. })
        ));
    }
}
