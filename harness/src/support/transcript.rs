//! How octets and codec events appear in transcripts: abbreviated, so a multi-megabyte frame
//! costs a few hundred octets of report, not its full hex.

use swp_testee_proto::Event;

/// Octets of hex shown per transcript entry before it is abbreviated.
const TRANSCRIPT_HEX_OCTETS: usize = 256;

/// Text (JSON, a line of a stream) for a transcript: its first `max_chars` characters, then
/// `… (N octets)` giving the whole length, when it is longer. Every method that shows text
/// clips it here, each with its own budget.
pub fn clip_text(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}… ({} octets)", &s[..i], s.len()),
        None => s.to_owned(),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_clipped_at_its_budget_in_characters_and_keeps_its_length() {
        assert_eq!(clip_text("abc", 3), "abc");
        assert_eq!(clip_text("abcd", 3), "abc… (4 octets)");
        // Characters, not octets: a multi-octet character is never cut in half.
        assert_eq!(clip_text("ééé", 2), "éé… (6 octets)");
        assert_eq!(clip_text("", 0), "");
        assert_eq!(clip_text("x", 0), "… (1 octets)");
    }
}
