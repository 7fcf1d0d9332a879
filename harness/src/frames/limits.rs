//! The parsing limits a receiver enforces (core-spec §3.1, §4.4; encoding-binding-e1 §4) and
//! the defaults the spec recommends, with the arithmetic behind the one it leaves open.

use super::uvarint;

/// Core version this codec speaks (core-spec §7).
pub const CORE_VERSION: u64 = 1;

/// Octets of the frame length prefix (core-spec §3: a 32-bit big-endian N).
pub const FRAME_PREFIX_BYTES: usize = 4;

/// `MAX_FRAME_BYTES` recommended by core-spec §3.2: 8 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 8 * 1024 * 1024;

/// `MIN_MSG_ID_BYTES` recommended by core-spec §3.2.
pub const DEFAULT_MIN_MSG_ID_BYTES: usize = 8;

/// `MAX_MSG_ID_BYTES` recommended by core-spec §3.2. E1 §4 recommends 32 instead
/// ([`E1_RECOMMENDED_MAX_MSG_ID_BYTES`]); the larger value is the default because a receiver
/// at 32 would reject msg_ids a sender following the core spec may send.
pub const DEFAULT_MAX_MSG_ID_BYTES: usize = 64;

/// `MAX_MSG_ID_BYTES` recommended by encoding-binding-e1 §4.
pub const E1_RECOMMENDED_MAX_MSG_ID_BYTES: usize = 32;

/// msg_id length core-spec §4.4 recommends senders use.
pub const RECOMMENDED_MSG_ID_BYTES: usize = 16;

/// `MAX_EXT_BYTES` recommended by encoding-binding-e1 §4.
pub const DEFAULT_MAX_EXT_BYTES: usize = 4096;

/// `MAX_CLOCK_SKEW_MS` recommended by core-spec §3.2: five minutes.
pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 300_000;

/// Highest extension type reserved for core and bindings (E1 §3.1: 0-15); 16 and above are
/// profile-defined.
pub const MAX_RESERVED_EXT_TYPE: u64 = 15;

/// The widest E1 header an envelope within the default limits can have: version (1 octet,
/// it must be 1), four uvarints at 10 octets each, a msg_id and an extensions block at their
/// default maxima with their length prefixes, and the payload length prefix of a payload
/// as large as a frame can be.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 1
    + 4 * uvarint::MAX_LEN
    + uvarint::encoded_len(DEFAULT_MAX_MSG_ID_BYTES as u64)
    + DEFAULT_MAX_MSG_ID_BYTES
    + uvarint::encoded_len(DEFAULT_MAX_EXT_BYTES as u64)
    + DEFAULT_MAX_EXT_BYTES
    + uvarint::encoded_len(DEFAULT_MAX_FRAME_BYTES as u64);

/// `MAX_PAYLOAD_BYTES` default: core-spec §3.2 says "MAX_FRAME_BYTES minus envelope
/// overhead" without a number. The overhead taken is the widest header
/// ([`DEFAULT_MAX_HEADER_BYTES`]), so every payload within the limit fits a frame whatever
/// legal header it travels with, and a payload one octet over it still fits a frame with a
/// small header, so `ERR_PAYLOAD_TOO_LARGE` is observable on its own.
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize =
    DEFAULT_MAX_FRAME_BYTES as usize - DEFAULT_MAX_HEADER_BYTES;

/// What a receiver accepts. Lengths are in octets; every bound is inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `MAX_FRAME_BYTES`: the largest frame body (N of the prefix).
    pub max_frame_bytes: u32,
    /// `MIN_MSG_ID_BYTES`. An empty msg_id is rejected whatever this says (E1 §4).
    pub min_msg_id_bytes: usize,
    /// `MAX_MSG_ID_BYTES`.
    pub max_msg_id_bytes: usize,
    /// `MAX_EXT_BYTES`: the largest extensions block.
    pub max_ext_bytes: usize,
    /// `MAX_PAYLOAD_BYTES`.
    pub max_payload_bytes: usize,
}

impl Default for Limits {
    /// The spec's recommended values.
    fn default() -> Self {
        Limits {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            min_msg_id_bytes: DEFAULT_MIN_MSG_ID_BYTES,
            max_msg_id_bytes: DEFAULT_MAX_MSG_ID_BYTES,
            max_ext_bytes: DEFAULT_MAX_EXT_BYTES,
            max_payload_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
        }
    }
}

impl Limits {
    /// No limit beyond what the wire format itself imposes: a reader that must decode
    /// whatever a peer sends (and judge it elsewhere) uses this.
    pub const fn unbounded() -> Self {
        Limits {
            max_frame_bytes: u32::MAX,
            min_msg_id_bytes: 1,
            max_msg_id_bytes: usize::MAX,
            max_ext_bytes: usize::MAX,
            max_payload_bytes: usize::MAX,
        }
    }
}

/// Whether an extension type is reserved for core and bindings (E1 §3.1).
pub const fn is_reserved_ext_type(ext_type: u64) -> bool {
    ext_type <= MAX_RESERVED_EXT_TYPE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_default_leaves_room_for_the_widest_header() {
        assert_eq!(DEFAULT_MAX_HEADER_BYTES, 1 + 40 + 1 + 64 + 2 + 4096 + 4);
        assert_eq!(DEFAULT_MAX_PAYLOAD_BYTES, 8_388_608 - 4208);
        let d = Limits::default();
        assert!(d.min_msg_id_bytes <= d.max_msg_id_bytes);
        assert!(d.max_payload_bytes < d.max_frame_bytes as usize);
    }

    #[test]
    fn reserved_extension_types_end_at_fifteen() {
        assert!(is_reserved_ext_type(0));
        assert!(is_reserved_ext_type(15));
        assert!(!is_reserved_ext_type(16));
    }
}
