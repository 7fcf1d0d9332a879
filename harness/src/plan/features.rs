//! The optional-feature triggers: parameter names a manifest gives only when its SUT has
//! the feature. A leaf of the plan stage, so parameter expressions (`expr`) and the
//! manifest (`sut`) can name them without reaching the placeholder filler.

/// Triggers of optional features: a manifest without one declares that the SUT lacks the
/// feature, which the spec allows (MCP mapping §7: "if incremental output is supported";
/// the "(optional)" message classes of SWP-RPC and SWP-EVENTS, SWP-RPC's policy gate, and
/// SWP-ARTIFACT's resume tokens, an alternative to the range restart rule, §4, and
/// SWP-STATE's optional STATE_DELTA, §2; SWP-CRED's optional CRED_REVOKE, §2; SWP-RELAY's
/// optional RELAY_NACK, §2, as the dead letter's signal to a publisher and as a consumer's
/// answer, and its policy gate;
/// docs/spec-issues.md SI-026).
pub const FEATURE_PARAMS: &[&str] = &[
    // A2A defines no task kinds (a2a-profile §4: `kind` is the agent's own), so the kinds
    // the a2a vectors need are the SUT's to name; an agent without one runs none of them.
    "A2A_ECHO_KIND",
    "A2A_EVENTS_KIND",
    "A2A_FAIL_KIND",
    "A2A_MALFORMED_KIND",
    "A2A_MALFORMED_INPUT",
    // 1: the agent keeps one lifecycle per task_id for the channel, so a peer's Event or
    // Result for a Task the agent received is taken (SI-031(a); SI-P-A2A-V3).
    "A2A_CHANNEL_LIFECYCLE",
    "STREAM_METHOD",
    "STREAM_PARAMS",
    "STREAM_FAIL_PARAMS",
    "RPC_STREAM_METHOD",
    "RPC_STREAM_PARAMS",
    "RPC_SLOW_METHOD",
    "RPC_SLOW_PARAMS",
    "RPC_CANCEL_CODE",
    "RPC_GATED_METHOD",
    // A method gated to the first identity only: needs a policy with an allowed identity.
    "RPC_OWNER_METHOD",
    // 1: the SUT takes a peer's RPC_STREAM_ITEM, an optional class (swp-rpc §2; SI-P-RPC-V2).
    "RPC_TAKES_STREAM_ITEMS",
    // 1: the SUT refuses a callee's replay outcome other than the original (SI-P-RPC-V4).
    "RPC_CHECKS_REPLAY_OUTCOMES",
    // 1: past RPC_REPLAY_WINDOW_MS the SUT has forgotten the key (swp-rpc §6 says nothing past
    // the window; SI-P-RPC-V6).
    "RPC_KEY_FREED_AFTER_WINDOW",
    // A method failing with retryable true: §7 obliges no SUT to have one (SI-P-RPC-V8).
    "RPC_RETRY_METHOD",
    "EVENTS_ECHO_FILTER",
    "EVENTS_TICKS_FILTER",
    "EVENTS_BATCH_FILTER",
    // 1: the SUT takes a peer's EVT_BATCH, an optional class (swp-events §2; SI-P-EVENTS-V1).
    "EVENTS_TAKES_BATCH",
    // How the echo stream delivers a published EVT_BATCH: 1 as one EVT_BATCH, 0 as one
    // EVT_PUBLISH per event, in order (SI-P-EVENTS-V2).
    "EVENTS_ECHO_BATCH",
    // A filter the SUT refuses with EVT_ERR: filter syntax is its own (SI-P-EVENTS-V3).
    "EVENTS_REFUSED_FILTER",
    // 1: the SUT refuses a peer's event reusing an event_id for other content (SI-P-EVENTS-V4).
    "EVENTS_REJECTS_ID_REUSE",
    // 1: the SUT refuses a peer's event whose severity is outside its enumeration (SI-P-EVENTS-V5).
    "EVENTS_REJECTS_UNKNOWN_SEVERITY",
    "ARTIFACT_RESUME_TOKEN",
    // Tokens on range transfers too are the sender's choice (§4 token or range restart).
    "ARTIFACT_RANGE_RESUME_TOKEN",
    // 1: the SUT answers an offer with a GET; no clause obliges it (swp-artifact §5; SI-P-ARTIFACT-V6).
    "ARTIFACT_FETCHES_OFFERS",
    // 1: chunk i covers [i*C, (i+1)*C) of the artifact, whatever the range (§4; SI-P-ARTIFACT-V5).
    "ARTIFACT_GLOBAL_CHUNKS",
    // 1: the SUT resumes from a token its peer put on a chunk; range restart only: none (§4).
    "ARTIFACT_PEER_TOKENS",
    // 1: the SUT takes a peer's ART_ACK, an optional class (§2; SI-P-ARTIFACT-V7).
    "ARTIFACT_TAKES_ACK",
    // The hash_alg name under which the SUT verifies SHA-256; none named by §4 (SI-P-ARTIFACT-V8).
    "ARTIFACT_SHA256_NAME",
    // 1: a traceparent of a later version is parsed, as W3C says it SHOULD be (SI-P-OBS-V3).
    "OBS_LATER_VERSIONS",
    // 1: the SUT refuses a peer's OBS_DOC that does not return the context it set (SI-P-OBS-V4).
    "OBS_CHECKS_DOCS",
    // 1: the intermediary forwards SWP-OBS payloads octet for octet (P1 §4; SI-P-OBS-V5).
    "OBS_FORWARDS_OCTETS",
    "STATE_DELTA_ID",
    // An id the SUT's scheme refuses in form: a SUT whose ids take any octets has none.
    "STATE_MALFORMED_ID",
    // Deltas are optional (swp-state §2): the result ids of state_0106 and state_0108.
    "STATE_DELTA_SHORT_ID",
    "STATE_DELTA_LONG_ID",
    // Content-addressed state ids are a SHOULD (swp-state §4): an id that does not fit a blob.
    "STATE_WRONG_ID",
    "CRED_REVOKE_REASON",
    // SWP-AGDISC (docs/profiles.md): validators and explicit freshness are SHOULDs
    // (§5), AGDISC_NOT_MODIFIED an optional class (§2), and an invalid stored card, a
    // refused peer or an internal failure a state a SUT may have no way to be put in.
    "AGDISC_ETAG",
    "AGDISC_NOT_MODIFIED_ETAG",
    "AGDISC_MAX_AGE_MS",
    "AGDISC_INVALID_AGENT_ID",
    "AGDISC_INVALID_CARD_CODE",
    "AGDISC_UNAUTHORIZED_AGENT_ID",
    "AGDISC_UNAUTHORIZED_CODE",
    "AGDISC_INTERNAL_AGENT_ID",
    "AGDISC_INTERNAL_CODE",
    // SWP-TOOLDISC: paging and filtering are a SHOULD (§5).
    "TOOLDISC_PAGE_TOKEN",
    "TOOLDISC_FILTER",
    "RELAY_EXHAUSTED_REASON",
    "RELAY_NACK_REASON",
    "RELAY_GATED_TOPIC",
    // SWP-POLICYHINT: a second scope the SUT keeps apart from POLICYHINT_SCOPE_A.
    "POLICYHINT_SCOPE_B",
    // SWP-AGDISC: the receiver implements the optional AGDISC_NOT_MODIFIED (codec vectors).
    "AGDISC_TAKES_NOT_MODIFIED",
    // SWP-TOOLDISC: sha256:/sha384:/sha512: schema refs read as content hashes, not URIs.
    "TOOLDISC_CONTENT_HASH_FORMS",
    // SWP-CRED: credentials bound to the presenting identity (bearer stacks have none).
    "CRED_OTHER_CREDENTIAL",
    // SWP-CRED: as CRED_OTHER_CREDENTIAL, for the harness's second identity.
    "CRED_SECOND_CREDENTIAL",
    // SWP-CRED: a type the SUT's policy refuses (a carrier taking every type has none).
    "CRED_UNSUPPORTED_TYPE",
    // SWP-CRED: octets that are no credential (a carrier of opaque octets has none).
    "CRED_INVALID_CREDENTIAL",
    // SWP-CRED: entry lifetimes capped at CRED_MAX_TTL_MS.
    "CRED_TTL_CAPPED",
    // SWP-CRED: a chain takes no entry once one of its entries has expired.
    "CRED_CHAIN_EXPIRES_WITH_ENTRY",
    // SWP-CRED: expiry and its bound compared to the millisecond, no leeway.
    "CRED_EXPIRY_EXACT",
    // SWP-CRED: an open chain's root presented again is refused as a replay.
    "CRED_ROOT_REPLAY_REFUSED",
    // SWP-CRED: chains keyed by (identity, chain_id), not by chain_id alone.
    "CRED_CHAIN_IDS_PER_IDENTITY",
    // SWP-RELAY: a duplicate publish gets no answer at all (SI-P19-5).
    "RELAY_DUPLICATE_UNANSWERED",
    // SWP-RELAY: a consumer's retryable NACK uses up one of RELAY_MAX_ATTEMPTS.
    "RELAY_NACK_COUNTS_AS_ATTEMPT",
];
