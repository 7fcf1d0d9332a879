//! W3C Trace Context, the format the doc's `traceparent` and `tracestate` names refer to
//! (swp-obs §4): validating a traceparent and splitting a tracestate into its entries, so
//! that "unknown entries are not mutated" can be judged entry by entry. Nothing here
//! re-formats a value: preservation means passing the received string on unchanged.

/// Why a traceparent is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceparentError {
    /// Shorter than the 55 characters of version 00, or longer for version 00.
    #[error("length {0}: version 00 is exactly 55 characters, later versions at least 55")]
    Length(usize),
    /// The version is not two lower-case hex digits, or is the forbidden `ff`.
    #[error("version is not two lower-case hex digits other than ff")]
    Version,
    /// A `-` missing between fields.
    #[error("a '-' is missing at character {0}")]
    Separator(usize),
    /// A field is not lower-case hex.
    #[error("{0} is not lower-case hex of its length")]
    NotHex(&'static str),
    /// trace-id or parent-id is all zeros.
    #[error("{0} is all zeros")]
    AllZero(&'static str),
}

/// The fields of a valid traceparent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traceparent<'a> {
    /// Version, two hex digits.
    pub version: &'a str,
    /// 32 hex digits.
    pub trace_id: &'a str,
    /// 16 hex digits.
    pub parent_id: &'a str,
    /// Two hex digits.
    pub flags: &'a str,
}

fn lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses a traceparent: `version-traceid-parentid-flags`, lower-case hex, 2-32-16-2
/// digits; version 00 is exactly that, a later version may append `-` and more, which a
/// version-00 reader skips; `ff`, all-zero trace-id and all-zero parent-id are invalid.
pub fn parse_traceparent(s: &str) -> Result<Traceparent<'_>, TraceparentError> {
    let b = s.as_bytes();
    if b.len() < 55 {
        return Err(TraceparentError::Length(b.len()));
    }
    let version = s.get(0..2).ok_or(TraceparentError::Version)?;
    if !lower_hex(version) || version == "ff" {
        return Err(TraceparentError::Version);
    }
    if (version == "00" && b.len() != 55) || (b.len() > 55 && b[55] != b'-') {
        return Err(TraceparentError::Length(b.len()));
    }
    for at in [2, 35, 52] {
        if b[at] != b'-' {
            return Err(TraceparentError::Separator(at));
        }
    }
    let field = |from: usize, to: usize, name: &'static str| {
        s.get(from..to)
            .filter(|f| lower_hex(f))
            .ok_or(TraceparentError::NotHex(name))
    };
    let trace_id = field(3, 35, "trace-id")?;
    let parent_id = field(36, 52, "parent-id")?;
    let flags = field(53, 55, "trace-flags")?;
    if trace_id.bytes().all(|c| c == b'0') {
        return Err(TraceparentError::AllZero("trace-id"));
    }
    if parent_id.bytes().all(|c| c == b'0') {
        return Err(TraceparentError::AllZero("parent-id"));
    }
    Ok(Traceparent {
        version,
        trace_id,
        parent_id,
        flags,
    })
}

/// The list members of a tracestate in order, each trimmed of the optional white space
/// around it, empty members skipped. Each member is `(key, member)`, the key being what
/// precedes the first `=`. No member is validated: the doc asks only that unknown ones be
/// left alone.
pub fn tracestate_entries(s: &str) -> Vec<(&str, &str)> {
    s.split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .map(|m| (m.split('=').next().unwrap_or(m), m))
        .collect()
}
