//! How octets and codec events appear in transcripts: abbreviated, so a multi-megabyte frame
//! costs a few hundred octets of report, not its full hex.

use swp_testee_proto::Event;

/// Octets of hex shown per transcript entry before it is abbreviated.
const TRANSCRIPT_HEX_OCTETS: usize = 256;

/// Renders octets for a transcript, abbreviated past [`TRANSCRIPT_HEX_OCTETS`].
pub fn transcript_hex(b: &[u8]) -> String {
    if b.len() <= TRANSCRIPT_HEX_OCTETS {
        hex::encode(b)
    } else {
        format!(
            "{}… ({} octets)",
            hex::encode(&b[..TRANSCRIPT_HEX_OCTETS]),
            b.len()
        )
    }
}

/// Renders events for a transcript: the SUT's answer with octet strings abbreviated, so a
/// multi-megabyte payload costs a few hundred octets of report, not its full hex.
pub fn transcript_events(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| match e {
            Event::Accept {
                envelope: v,
                unknown_flags,
            } => {
                let exts: Vec<String> = v
                    .extensions
                    .iter()
                    .map(|x| format!("{}={}", x.ext_type, transcript_hex(&x.value.0)))
                    .collect();
                format!(
                    "accept version={} profile_id={} msg_type={} flags={:#x} ts_unix_ms={} msg_id={} extensions=[{}] payload={}{}",
                    v.version,
                    v.profile_id,
                    v.msg_type,
                    v.flags,
                    v.ts_unix_ms,
                    transcript_hex(&v.msg_id.0),
                    exts.join(","),
                    transcript_hex(&v.payload.0),
                    unknown_flags.map(|f| format!(" unknown_flags={f:#x}")).unwrap_or_default()
                )
            }
            Event::Reject {
                code,
                alias,
                detail,
                terminated,
            } => format!(
                "reject code={} alias={} terminated={} detail={}",
                code.as_deref().unwrap_or("-"),
                alias.as_deref().unwrap_or("-"),
                terminated.map_or("-".to_owned(), |t| t.to_string()),
                detail.as_deref().unwrap_or("-")
            ),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
