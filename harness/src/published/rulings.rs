//! Where the project's reading of the spec departs from, or qualifies, a published fixture's
//! expectation: one ruling per case, with the clause and the `docs/spec-issues.md` entry
//! (SI-034 keeps the same table in words). A ruling either only explains (the fixture runs
//! as published), or changes how the fixture runs: not applicable because one frame cannot
//! show the behaviour, the SUT's unknown-profile path, another expectation, a judgment on
//! decoding only, or a choice the spec leaves to the receiver. An effect is always real: the
//! vector runs what the ruling says, never the published expectation with a note beside it.
//!
//! Two rulings are found in the data rather than listed, so they cover fixtures of the full
//! published set this table does not name: a profile payload that decodes in neither P1
//! form, and a placeholder payload (the profile's name, then the vector's).

use crate::catalog::vector::UnknownProfile;
use crate::frames::ErrorCode;

pub use crate::catalog::fixture::{Effect, Ruled, Ruling};

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
        reading: "carries a P1 `Payload` wrapper where rpc_0001 carries the bare message for the same profile and msg_type: the kit contradicts itself; poc_0002 is a core-level fixture (no profile validation, any SUT), and rpc_0001 is carried in the form the SUT declares",
        clause: "P1 §2",
        si: "SI-022",
        effect: Effect::Explains,
    },
    Ruling {
        fixtures: &[
            "mcp_0002_response_roundtrip",
            "mcp_0004_error_mapping_internal",
            "mcp_0005_error_mapping_unknown_profile",
            "mcp_0006_response_msg_id_reuse",
        ],
        reading: "a JSON-RPC response (msg_type 2) to no request: what the fixture is named for (the octets a relay preserves, a gateway's error mapping, a response's msg_id) is what a relay or gateway emits, which a frame sent to the SUT cannot show (the catalog's vectors of these ids test it); received, it is an unsolicited response, and MCP-map §5 binds only its sender and JSON-RPC 2.0 gives its receiver no duty: ignoring it and refusing it (an error frame with any code, or a close) both pass",
        clause: "MCP-map §4, §5, §6",
        si: "SI-039",
        effect: Effect::EitherWay(&[]),
    },
];

/// Profiles whose texts make `ERR_SECURITY_POLICY` a refusal of their own, with the clause:
/// a policy-gated rejection is one of the profile-rejection outcomes of SWP-RPC and
/// SWP-RELAY, and SWP-CRED refuses unsupported credential types per policy (SI-P-CRED-6).
/// On an endpoint, a placeholder of these profiles may meet that refusal, which the session
/// judge counts against the core; so there they are not judged on decoding (SI-040).
pub const POLICY_REFUSALS: &[(u64, &str)] = &[
    (12, "swp-rpc §7"),
    (15, "swp-cred §6"),
    (19, "swp-relay §6"),
];

/// What a fixture judged on decoding only tests: its profile is known (the SUT claims it)
/// and the frame is routed to it (core §4.4, §6), as the catalog's core_0032 does.
pub const DECODING_REQUIREMENTS: &[&str] = &["CORE-035", "CORE-048"];

/// The data-found ruling for a profile payload that decodes in neither P1 form.
pub const INVALID_P1: Ruling = Ruling {
    fixtures: &[],
    reading: "the payload decodes as the msg_type's message in neither P1 form, so a receiver validating the profile must refuse it",
    clause: "P1 §2",
    si: "SI-022",
    effect: Effect::Expect(NOT_P1),
};

/// The data-found ruling for a placeholder payload. The kit gives the same placeholder
/// shape opposite expectations (a2a_0002 accepts a lone Event, a2a_0006 rejects one; obs_0001
/// rejects the ObsSet obs_0002 accepts), so what it expects is about a scenario the one frame
/// does not carry, and only decoding is left to judge.
pub const PLACEHOLDER: Ruling = Ruling {
    fixtures: &[],
    reading: "a placeholder payload (field 1 the profile's name, field 2 the vector's), which the kit expects accepted or rejected by a scenario the one frame does not carry: judged on decoding only, the core's acceptance and dispatch to the profile (CORE-035, CORE-048) without the profile's validation or lifecycle; a refusal by the profile also shows the dispatch, a close cannot show which layer refused (inconclusive); carried in the P1 form the SUT declares",
    clause: "P1 §2, §4, core §4.4, §6",
    si: "SI-022, SI-003, SI-040",
    effect: Effect::DecodingOnly,
};

/// The named ruling on fixture `id`, if any.
pub fn named(id: &str) -> Option<&'static Ruling> {
    RULINGS.iter().find(|r| r.fixtures.contains(&id))
}
