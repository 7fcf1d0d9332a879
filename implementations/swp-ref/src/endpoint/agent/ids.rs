//! The length cap on every identifier and key a peer chooses in an SWP-* message (issue 30,
//! defect 2): what a profile remembers per connection is keyed by these, so without a cap a
//! peer could make each remembered entry as large as a frame. The cap is checked from a scan
//! of the payload's octets (`swp_profiles::scan`), before it is decoded, for every message
//! of every profile the agent serves, in whichever direction the spec gives it.

use super::Reject;
use swp_core::ErrorCode;
use swp_profiles::p1::P1Form;
use swp_profiles::scan;

/// The longest identifier or key the reference takes, in octets. Identifiers in the spec
/// kit's vectors and examples are at most a few dozen octets (a UUID is 36, a W3C
/// traceparent 55, a SHA-256 in hex 64); 256 leaves room for URIs and composite keys.
pub const MAX_ID_BYTES: usize = 256;

/// Each identifier or key: (profile_id, msg_type, path of field numbers in the bare P1
/// message, its name). The field numbers are those of `proto/swp_*.proto`.
const IDS: &[(u64, u64, &[u64], &str)] = &[
    // SWP-AGDISC (10)
    (10, 1, &[1], "agent_id"),
    (10, 1, &[2], "if_none_match"),
    (10, 2, &[1], "agent_id"),
    (10, 2, &[2], "schema_revision"),
    (10, 2, &[4], "etag"),
    (10, 3, &[1], "agent_id"),
    (10, 3, &[2], "etag"),
    (10, 4, &[1], "code"),
    // SWP-TOOLDISC (11)
    (11, 1, &[2], "page_token"),
    (11, 1, &[3], "filter"),
    (11, 2, &[1, 1], "tools.tool_id"),
    (11, 2, &[1, 2], "tools.name"),
    (11, 2, &[1, 3], "tools.version"),
    (11, 2, &[1, 4], "tools.schema_ref"),
    (11, 2, &[2], "next_page_token"),
    (11, 3, &[1], "tool_id"),
    (11, 3, &[2], "version"),
    (11, 4, &[1, 1], "tool.tool_id"),
    (11, 4, &[1, 2], "tool.name"),
    (11, 4, &[1, 3], "tool.version"),
    (11, 4, &[1, 4], "tool.schema_ref"),
    (11, 5, &[1], "code"),
    // SWP-RPC (12)
    (12, 1, &[1], "rpc_id"),
    (12, 1, &[2], "method"),
    (12, 1, &[4], "idempotency_key"),
    (12, 2, &[1], "rpc_id"),
    (12, 3, &[1], "rpc_id"),
    (12, 3, &[2], "error_code"),
    (12, 4, &[1], "rpc_id"),
    (12, 5, &[1], "rpc_id"),
    // SWP-EVENTS (13): an EventRecord is field 1 of EvtPublish and of EvtBatch.
    (13, 1, &[1, 1], "event.event_id"),
    (13, 1, &[1, 2], "event.event_type"),
    (13, 1, &[1, 3], "event.severity"),
    (13, 1, &[1, 5], "event.msg_id"),
    (13, 1, &[1, 6], "event.task_id"),
    (13, 1, &[1, 7], "event.rpc_id"),
    (13, 2, &[1], "filter"),
    (13, 3, &[1], "subscription_id"),
    (13, 4, &[1, 1], "events.event_id"),
    (13, 4, &[1, 2], "events.event_type"),
    (13, 4, &[1, 3], "events.severity"),
    (13, 4, &[1, 5], "events.msg_id"),
    (13, 4, &[1, 6], "events.task_id"),
    (13, 4, &[1, 7], "events.rpc_id"),
    (13, 5, &[1], "code"),
    // SWP-ARTIFACT (14)
    (14, 1, &[1], "artifact_id"),
    (14, 1, &[3], "hash_alg"),
    (14, 2, &[1], "artifact_id"),
    (14, 2, &[4], "resume_token"),
    (14, 3, &[1], "artifact_id"),
    (14, 3, &[6], "resume_token"),
    (14, 4, &[1], "artifact_id"),
    (14, 5, &[1], "code"),
    // SWP-CRED (15)
    (15, 1, &[1], "cred_type"),
    (15, 1, &[3], "chain_id"),
    (15, 2, &[1], "chain_id"),
    (15, 3, &[1], "chain_id"),
    (15, 4, &[1], "code"),
    // SWP-POLICYHINT (16): a constraint's value is kept in the table with its key.
    (16, 1, &[1, 1], "constraints.key"),
    (16, 1, &[1, 2], "constraints.value"),
    (16, 1, &[1, 3], "constraints.mode"),
    (16, 1, &[1, 4], "constraints.scope_ref"),
    (16, 2, &[1], "ack_id"),
    (16, 3, &[1], "key"),
    (16, 3, &[2], "scope_ref"),
    (16, 3, &[3], "reason_code"),
    (16, 4, &[1], "code"),
    // SWP-STATE (17)
    (17, 1, &[1], "state_id"),
    (17, 1, &[3], "parent_ids"),
    (17, 2, &[1], "state_id"),
    (17, 3, &[1], "state_id"),
    (17, 3, &[3], "parent_ids"),
    (17, 4, &[1], "code"),
    // SWP-OBS (18): the tracestate has a cap of its own (8 KiB, W3C's).
    (18, 1, &[1], "traceparent"),
    (18, 1, &[3], "msg_id"),
    (18, 1, &[4], "task_id"),
    (18, 1, &[5], "rpc_id"),
    (18, 3, &[1], "traceparent"),
    (18, 3, &[3], "msg_id"),
    (18, 3, &[4], "task_id"),
    (18, 3, &[5], "rpc_id"),
    (18, 4, &[1], "code"),
    // SWP-RELAY (19)
    (19, 1, &[1], "delivery_id"),
    (19, 1, &[2], "topic"),
    (19, 2, &[1], "delivery_id"),
    (19, 3, &[1], "delivery_id"),
    (19, 3, &[3], "reason_code"),
    (19, 4, &[1], "delivery_id"),
    (19, 4, &[2], "state"),
    (19, 5, &[1], "code"),
];

/// The refusal of a message of `profile_id` whose identifiers or keys include one longer
/// than [`MAX_ID_BYTES`]: a quota (`ERR_RATE_LIMIT_EXCEEDED`), naming the field and its
/// length. A payload the scan cannot read is left to the decoder, which says why.
pub fn too_long(profile_id: u64, form: P1Form, msg_type: u64, payload: &[u8]) -> Option<Reject> {
    IDS.iter()
        .filter(|(p, t, _, _)| *p == profile_id && *t == msg_type)
        .find_map(|(_, _, path, name)| {
            let n = scan::longest(form, msg_type, payload, path)?;
            (n > MAX_ID_BYTES).then(|| {
                super::refusal(
                    ErrorCode::RateLimitExceeded,
                    format!("{name} of {n} octets: the reference takes identifiers and keys of at most {MAX_ID_BYTES}"),
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use swp_profiles::p1::pb::events::{EventRecord, EvtBatch};

    #[test]
    fn every_profile_has_its_ids_listed() {
        for p in super::super::PROFILES {
            assert!(
                IDS.iter().any(|(q, ..)| *q == p),
                "profile {p} lists no identifier"
            );
        }
    }

    #[test]
    fn a_long_nested_id_is_refused_and_a_short_one_passes() {
        let batch = |id: String| {
            EvtBatch {
                events: vec![
                    EventRecord {
                        event_id: "e1".into(),
                        ..EventRecord::default()
                    },
                    EventRecord {
                        event_id: id,
                        ..EventRecord::default()
                    },
                ],
            }
            .encode_to_vec()
        };
        let ok = batch("e".repeat(MAX_ID_BYTES));
        assert!(too_long(13, P1Form::Message, 4, &ok).is_none());
        let long = batch("e".repeat(MAX_ID_BYTES + 1));
        let r = too_long(13, P1Form::Message, 4, &long).expect("refused");
        assert_eq!(r.code(), ErrorCode::RateLimitExceeded);
        assert!(
            r.to_string().contains("events.event_id of 257 octets"),
            "{r}"
        );
        let wrapped = P1Form::Wrapper.frame(4, long);
        assert!(too_long(13, P1Form::Wrapper, 4, &wrapped).is_some());
    }
}
