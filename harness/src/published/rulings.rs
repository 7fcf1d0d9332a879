//! Where the project's reading of the spec departs from, or qualifies, a published fixture's
//! expectation: one ruling per case, with the clause and the `docs/spec-issues.md` entry
//! (SI-034 keeps the same table in words). A ruling either only explains (the fixture runs
//! as published), or changes how the fixture runs: not applicable because one frame cannot
//! show the behaviour, the SUT's unknown-profile path, or another expectation.
//!
//! Two rulings are found in the data rather than listed, so they cover fixtures of the full
//! published set this table does not name: a profile payload that decodes in neither P1
//! form, and a placeholder payload (the profile's name, then the vector's).

use crate::catalog::vector::UnknownProfile;
use crate::frames::ErrorCode;

/// How a ruling changes the way a fixture runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It runs as published.
    Explains,
    /// Not applicable: one frame cannot show this behaviour (what it needs, in words).
    SingleFrame(&'static str),
    /// It applies to SUTs with this unknown-profile path only.
    UnknownProfilePath(UnknownProfile),
    /// It runs with this expectation instead.
    Expect(Ruled),
}

/// The expectation a ruling puts in place of the published one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ruled {
    /// Reject with the first code; the others pass too.
    pub codes: &'static [ErrorCode],
    /// Requirements of the ruled case (registry IDs).
    pub requirements: &'static [&'static str],
    /// Where the code is graded: a profile-level reject's code is a SHOULD (ERR-004,
    /// SI-012), so another code warns and never fails.
    pub code_requirements: &'static [&'static str],
    /// Ask the SUT to validate the addressed profile's payloads (the fault is the profile's).
    pub validate: bool,
}

/// One ruling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ruling {
    /// The spec kit's ids of the fixtures it covers.
    pub fixtures: &'static [&'static str],
    /// The project's reading, in words.
    pub reading: &'static str,
    /// The clause it rests on.
    pub clause: &'static str,
    /// The spec-issues entries.
    pub si: &'static str,
    /// What it does to the run.
    pub effect: Effect,
}

const NOT_P1: Ruled = Ruled {
    codes: &[ErrorCode::InvalidProfilePayload],
    requirements: &["P1-001"],
    code_requirements: &["ERR-004"],
    validate: true,
};

/// The rulings on named fixtures.
pub const RULINGS: &[Ruling] = &[
    Ruling {
        fixtures: &["core_0016_burst_limit_exceeded"],
        reading: "a rate limit is exceeded by a sequence of frames; one valid frame must be accepted, so the fixture cannot show the reject it expects (the catalog's core_0016 sends the burst)",
        clause: "core §3.1",
        si: "SI-020",
        effect: Effect::SingleFrame("a rate limit is exceeded by a burst of frames, not by one"),
    },
    Ruling {
        fixtures: &["core_0027_duplicate_inflight_msg_id"],
        reading: "a duplicate needs an earlier request with the same msg_id still in flight, and only senders are obliged to keep msg_ids unique; the catalog's core_0027 runs where a receiver declares the policy",
        clause: "core §4.4, MCP-map §5",
        si: "SI-021",
        effect: Effect::SingleFrame("a duplicate msg_id needs an earlier frame still in flight"),
    },
    Ruling {
        fixtures: &[
            "s1_0001_unauthenticated_peer_rejected",
            "s1_0002_authentication_failure_terminates",
            "s1_0003_downgrade_policy_failure",
            "s1_0004_integrity_failure_terminates",
        ],
        reading: "authentication, downgrade and integrity are properties of the TLS channel, not of a frame's octets; the catalog's s1 vectors test them on a TLS connection",
        clause: "S1 §2.1-2.3, S1-annex",
        si: "SI-035",
        effect: Effect::SingleFrame("channel security is a property of the TLS connection, not of a frame"),
    },
    Ruling {
        fixtures: &["core_0023_missing_required_field_msg_type"],
        reading: "msg_type 0 is no envelope fault: msg_type values are the profile's, and the profile must reject one it does not define; run with profile validation, the reject required and its code graded at ERR-004 (SHOULD): ERR_UNSUPPORTED_MSG_TYPE passes, the published ERR_INVALID_ENVELOPE warns",
        clause: "core §4.1, VER §3, MCP-map §3, ERR §2",
        si: "SI-025, SI-012",
        effect: Effect::Expect(Ruled {
            codes: &[ErrorCode::UnsupportedMsgType],
            requirements: &["VER-009", "CORE-024"],
            code_requirements: &["ERR-004"],
            validate: true,
        }),
    },
    Ruling {
        fixtures: &["a2a_0003_task_result_failure"],
        reading: "not a valid Result in either P1 form: field 2 `ok` is written length-delimited, not as a bool; and a Result for a task no Task opened must be rejected; a validating receiver refuses it",
        clause: "P1 §2, A2A §4, §8",
        si: "SI-022, SI-024",
        effect: Effect::Expect(NOT_P1),
    },
    Ruling {
        fixtures: &["core_0017_unknown_profile_with_error_path"],
        reading: "the same octets as core_0009 and core_0018: which of the two applies is the SUT's declared unknown-profile path (one binding shows one of them)",
        clause: "core §6, CHECKLIST §1",
        si: "SI-001",
        effect: Effect::UnknownProfilePath(UnknownProfile::ErrorReply),
    },
    Ruling {
        fixtures: &["core_0018_unknown_profile_no_error_path"],
        reading: "the same octets as core_0009 and core_0017: applies where the SUT declares it closes on an unknown profile, and the reject must end the stream",
        clause: "core §6, CHECKLIST §1",
        si: "SI-001",
        effect: Effect::UnknownProfilePath(UnknownProfile::Close),
    },
    Ruling {
        fixtures: &["core_0009_unknown_profile"],
        reading: "profile 9999 lies in the private-use range, so a SUT may serve it; the fixture then does not apply (the catalog uses the unallocated 999)",
        clause: "REG §2, core §6",
        si: "SI-001",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &[
            "core_0005_invalid_oversized_length",
            "core_0011_invalid_msg_id_long",
            "e1_0007_extensions_too_large",
        ],
        reading: "assumes the spec's default limits (8 MiB frames, 64-octet msg_ids, 4096-octet extensions) without stating them; runs only where the SUT's limits make the frame invalid",
        clause: "core §3.2, E1 §4",
        si: "SI-016, SI-017",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &[
            "core_0001_valid_min_frame",
            "core_0002_valid_typical_frame",
            "core_0013_unknown_flags_set",
            "core_0019_boundary_max_frame_exact",
            "core_0020_boundary_max_payload_exact",
            "core_0026_unknown_flags_no_reinterpretation",
            "core_0031_optional_fields_no_semantic_override",
            "core_0032_profile_dispatch_known_profile",
            "e1_0001_valid_min_envelope",
            "e1_0006_unknown_extension_ignored",
        ],
        reading: "the payload is no valid profile-1 message (empty, `{\"k\":\"v\"}` as a request, or filler): a core accept only, run without profile validation; a profile-level reject also shows the core accepted",
        clause: "core §4.1, MCP-map §2",
        si: "SI-003",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &[
            "core_0014_stale_timestamp",
            "core_0015_future_timestamp",
            "s1_0005_timestamp_freshness_enforced",
        ],
        reading: "the same stale or future timestamp carries the envelope code in core and the security code in S1: both codes pass in all three; the receiver clock is the moment the set was stamped",
        clause: "core §4.4, §5, ERR §2, S1 §2.4",
        si: "SI-011, SI-018",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &["e1_0003_varint_overflow_invalid"],
        reading: "the octets are ten 0xff and 0x02: the tenth octet already carries bits past 64 (an overflow) and still continues (too long), so the fixture has both faults; either is a malformed uvarint and the code agrees (the catalog's e1_0109-0115 isolate overflow)",
        clause: "E1 §2.1",
        si: "SI-005",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &["poc_0006_invalid_varint_overflow"],
        reading: "the octets are eleven 0x80 (too long, value 0), not an overflow; the code agrees",
        clause: "E1 §2.1",
        si: "SI-005",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &["poc_0002_valid_swprpc_request"],
        reading: "carries a P1 `Payload` wrapper where rpc_0001 carries the bare message for the same profile and msg_type: the kit contradicts itself; each runs only for SUTs declaring its form",
        clause: "P1 §2",
        si: "SI-022",
        effect: Effect::Explains,
    },
];

/// The data-found ruling for a profile payload that decodes in neither P1 form.
pub const INVALID_P1: Ruling = Ruling {
    fixtures: &[],
    reading: "the payload decodes as the msg_type's message in neither P1 form, so a receiver validating the profile must refuse it",
    clause: "P1 §2",
    si: "SI-022",
    effect: Effect::Expect(NOT_P1),
};

/// The data-found ruling for a placeholder payload.
pub const PLACEHOLDER: Ruling = Ruling {
    fixtures: &[],
    reading: "a placeholder payload (field 1 the profile's name, field 2 the vector's): it exercises decoding only, not the profile's semantics, and runs only for SUTs declaring the P1 form it decodes in",
    clause: "P1 §2",
    si: "SI-022",
    effect: Effect::Explains,
};

/// The named ruling on fixture `id`, if any.
pub fn named(id: &str) -> Option<&'static Ruling> {
    RULINGS.iter().find(|r| r.fixtures.contains(&id))
}
