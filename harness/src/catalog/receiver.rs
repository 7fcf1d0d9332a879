//! What a vector assumes of the receiver beyond the SUT's manifest, in catalog terms: the
//! receiver clock, the limits it states, which profiles to validate, the frame's sizes, and
//! whether it can run at all. The published-set front-end (`crate::published`) fills it in
//! for each spec kit fixture; the engine (`crate::method::receiver`) holds it against a SUT
//! without knowing where it came from.

use crate::frames::Limits;
use crate::p1::P1Form;

/// Receiver limits a vector states (each `None` leaves the SUT's own, or the spec's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatedLimits {
    /// `max_frame_bytes`.
    pub max_frame_bytes: Option<u64>,
    /// `min_msg_id_bytes`.
    pub min_msg_id_bytes: Option<u64>,
    /// `max_msg_id_bytes`.
    pub max_msg_id_bytes: Option<u64>,
    /// `max_ext_bytes`.
    pub max_ext_bytes: Option<u64>,
    /// `max_payload_bytes`.
    pub max_payload_bytes: Option<u64>,
}

/// The five receiver bounds as a manifest declares them (`crate::sut::Limits` in catalog
/// terms, so the catalog need not know the manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// `MAX_FRAME_BYTES`.
    pub max_frame_bytes: u32,
    /// `MIN_MSG_ID_BYTES`.
    pub min_msg_id_bytes: u64,
    /// `MAX_MSG_ID_BYTES`.
    pub max_msg_id_bytes: u64,
    /// `MAX_EXT_BYTES`.
    pub max_ext_bytes: u64,
    /// `MAX_PAYLOAD_BYTES`.
    pub max_payload_bytes: u64,
}

/// Octets of the uvarint encoding of `v`.
fn uvarint_len(v: u64) -> u64 {
    u64::from((64 - v.leading_zeros()).max(1).div_ceil(7))
}

impl StatedLimits {
    /// `base` with these limits in place, kept coherent: a frame bound that is lowered
    /// lowers the payload bound with it (core-spec §3.2: the payload bound is the frame
    /// bound minus the header).
    pub fn over(&self, base: Bounds) -> Bounds {
        let s = self;
        let mut l = Bounds {
            max_frame_bytes: s.max_frame_bytes.map_or(base.max_frame_bytes, |n| {
                u32::try_from(n).unwrap_or(u32::MAX)
            }),
            min_msg_id_bytes: s.min_msg_id_bytes.unwrap_or(base.min_msg_id_bytes),
            max_msg_id_bytes: s.max_msg_id_bytes.unwrap_or(base.max_msg_id_bytes),
            max_ext_bytes: s.max_ext_bytes.unwrap_or(base.max_ext_bytes),
            max_payload_bytes: s.max_payload_bytes.unwrap_or(base.max_payload_bytes),
        };
        if s.max_payload_bytes.is_none() {
            let frame = u64::from(l.max_frame_bytes);
            let header = 5 + 1 + l.min_msg_id_bytes + 1 + uvarint_len(frame);
            l.max_payload_bytes = l.max_payload_bytes.min(frame.saturating_sub(header));
        }
        l
    }

    /// The limits assumed: these, and the spec's defaults for the rest.
    pub fn assumed(&self) -> Limits {
        let d = Limits::default();
        let u = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let base = Bounds {
            max_frame_bytes: d.max_frame_bytes,
            min_msg_id_bytes: u(d.min_msg_id_bytes),
            max_msg_id_bytes: u(d.max_msg_id_bytes),
            max_ext_bytes: u(d.max_ext_bytes),
            max_payload_bytes: u(d.max_payload_bytes),
        };
        let l = self.over(base);
        let us = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Limits {
            max_frame_bytes: l.max_frame_bytes,
            min_msg_id_bytes: us(l.min_msg_id_bytes),
            max_msg_id_bytes: us(l.max_msg_id_bytes),
            max_ext_bytes: us(l.max_ext_bytes),
            max_payload_bytes: us(l.max_payload_bytes),
        }
    }
}

/// Header values and sizes of a frame's body, as far as its fields decode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    /// N of the length prefix.
    pub frame: Option<u64>,
    /// `version`.
    pub version: Option<u64>,
    /// `profile_id`.
    pub profile_id: Option<u64>,
    /// `msg_type`.
    pub msg_type: Option<u64>,
    /// `ts_unix_ms`.
    pub ts_unix_ms: Option<u64>,
    /// Declared msg_id length.
    pub msg_id: Option<u64>,
    /// Declared extensions block length.
    pub ext: Option<u64>,
    /// Declared payload length.
    pub payload: Option<u64>,
}

/// A frame whose P1 payload decodes in one form only and which the harness sends in the
/// form the SUT declares (SI-040): in its own form its octets are as given; in the other,
/// the same message re-wrapped into the annex's `Payload` (or unwrapped from it), so the
/// frame's sizes differ by the wrapper's few octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// The form the given payload is in.
    pub kit: P1Form,
    /// Header values and sizes of the frame in the other form.
    pub other: Header,
}

/// A profile whose policy may refuse a frame judged on decoding only: an endpoint always
/// runs its profile, so there the refusal cannot show the core dispatched the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRefusal {
    /// The profile.
    pub profile: u64,
    /// The clause that lets it refuse with `ERR_SECURITY_POLICY`.
    pub clause: &'static str,
}

/// What a vector assumes of the receiver beyond the SUT's manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Receiver {
    /// The receiver clock (ms since the epoch). `None` when the octets never reach a
    /// timestamp check.
    pub now_ms: Option<u64>,
    /// Limits stated; applied where the SUT takes per-vector configuration.
    pub limits: StatedLimits,
    /// Header values and sizes of the frame.
    pub header: Header,
    /// How far the stamp lies from the clock, for a vector whose stamp is the point.
    pub stamp_offset: Option<u64>,
    /// The profile the vector treats as unknown.
    pub unknown_profile: Option<u64>,
    /// Profiles whose payloads the receiver validates for this vector.
    pub validate_profiles: Vec<u64>,
    /// A P1 payload that decodes in one form only, carried in the form the SUT declares.
    pub carried: Option<Carried>,
    /// Set when the vector is judged on decoding only and its profile may refuse it by
    /// policy.
    pub policy_refusal: Option<PolicyRefusal>,
    /// Why it cannot run anywhere (a process check, a single frame of multi-frame
    /// behaviour): untested everywhere.
    pub not_runnable: Option<String>,
    /// Why the harness cannot read it: every run of it is a harness error.
    pub unreadable: Option<String>,
}

impl Receiver {
    /// The header of the frame a SUT declaring `form` is sent.
    pub fn header_in(&self, form: P1Form) -> &Header {
        match &self.carried {
            Some(c) if c.kit != form => &c.other,
            _ => &self.header,
        }
    }
}
