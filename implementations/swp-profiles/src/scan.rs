//! Cheap looks into an encoded P1 payload before it is decoded: how many times a field
//! occurs, and how long its longest value is, read from the wire format's tags and lengths
//! alone, allocating nothing. A
//! receiver whose cap a message would pass can so refuse it for the cost of a scan instead
//! of a decode (120k constraints of a POLICY_HINT_SET are 480k allocations to decode).

use crate::p1::P1Form;
use prost::encoding::decode_varint;

/// Calls `visit` with each top-level field of the encoded message `buf`: its number and
/// its octets (the value of a length-delimited field, empty for the others). `None` when
/// `buf` is not well-formed protobuf (groups included), which the decoder then reports.
fn each_field<'a>(
    mut buf: &'a [u8],
    mut visit: impl FnMut(u64, &'a [u8]) -> Option<()>,
) -> Option<()> {
    while !buf.is_empty() {
        let tag = decode_varint(&mut buf).ok()?;
        let (field, wire) = (tag >> 3, tag & 7);
        let value: &[u8] = match wire {
            0 => {
                decode_varint(&mut buf).ok()?;
                &[]
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                buf = buf.get(n..)?;
                &[]
            }
            2 => {
                let len = usize::try_from(decode_varint(&mut buf).ok()?).ok()?;
                let v = buf.get(..len)?;
                buf = buf.get(len..)?;
                v
            }
            _ => return None,
        };
        visit(field, value)?;
    }
    Some(())
}

/// How many times field `field` occurs at the top level of the bare message in `payload`
/// (of `form`; a wrapper's member is field `msg_type`, and repeated members merge, so their
/// occurrences add up). `None`: not well-formed.
pub fn count_field(form: P1Form, msg_type: u64, payload: &[u8], field: u64) -> Option<usize> {
    let count = |bare: &[u8]| -> Option<usize> {
        let mut n = 0usize;
        each_field(bare, |f, _| {
            n += usize::from(f == field);
            Some(())
        })?;
        Some(n)
    };
    match form {
        P1Form::Message => count(payload),
        P1Form::Wrapper => {
            let mut n = 0usize;
            each_field(payload, |f, bare| {
                if f == msg_type {
                    n += count(bare)?;
                }
                Some(())
            })?;
            Some(n)
        }
    }
}

/// The length of the longest value found at `path` (field numbers, outermost first; every
/// field but the last a length-delimited message) in the bare message in `payload` (of
/// `form`), over every occurrence of each field on the way (repeated fields, merged
/// members). `Some(0)` when nothing is there; `None`: not well-formed.
pub fn longest(form: P1Form, msg_type: u64, payload: &[u8], path: &[u64]) -> Option<usize> {
    fn walk(buf: &[u8], path: &[u64]) -> Option<usize> {
        let Some((first, rest)) = path.split_first() else {
            return Some(buf.len());
        };
        let mut most = 0usize;
        each_field(buf, |f, v| {
            if f == *first {
                most = most.max(walk(v, rest)?);
            }
            Some(())
        })?;
        Some(most)
    }
    match form {
        P1Form::Message => walk(payload, path),
        P1Form::Wrapper => {
            let mut wrapped = Vec::with_capacity(path.len() + 1);
            wrapped.push(msg_type);
            wrapped.extend_from_slice(path);
            walk(payload, &wrapped)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p1::pb::policyhint::{Constraint, PolicyHintSet};
    use prost::Message;

    fn set(n: usize) -> Vec<u8> {
        PolicyHintSet {
            constraints: (0..n)
                .map(|i| Constraint {
                    key: format!("k{i}"),
                    value: "v".into(),
                    mode: "MAY".into(),
                    scope_ref: String::new(),
                })
                .collect(),
        }
        .encode_to_vec()
    }

    #[test]
    fn counts_a_repeated_field_in_both_forms() {
        let bare = set(300);
        assert_eq!(count_field(P1Form::Message, 1, &bare, 1), Some(300));
        let wrapped = P1Form::Wrapper.frame(1, bare.clone());
        assert_eq!(count_field(P1Form::Wrapper, 1, &wrapped, 1), Some(300));
        // Two wrapper members merge: their constraints add up.
        let mut twice = wrapped.clone();
        twice.extend_from_slice(&wrapped);
        assert_eq!(count_field(P1Form::Wrapper, 1, &twice, 1), Some(600));
        assert_eq!(count_field(P1Form::Message, 1, &[], 1), Some(0));
    }

    #[test]
    fn the_longest_value_at_a_nested_path_in_both_forms() {
        let mut bare = set(3);
        bare.extend_from_slice(
            &PolicyHintSet {
                constraints: vec![Constraint {
                    key: "k".repeat(700),
                    value: "v".into(),
                    mode: "MAY".into(),
                    scope_ref: "s".repeat(9),
                }],
            }
            .encode_to_vec(),
        );
        assert_eq!(longest(P1Form::Message, 1, &bare, &[1, 1]), Some(700));
        assert_eq!(longest(P1Form::Message, 1, &bare, &[1, 4]), Some(9));
        assert_eq!(longest(P1Form::Message, 1, &bare, &[7]), Some(0));
        let wrapped = P1Form::Wrapper.frame(1, bare);
        assert_eq!(longest(P1Form::Wrapper, 1, &wrapped, &[1, 1]), Some(700));
        assert_eq!(
            longest(P1Form::Message, 1, &[0x0a, 0x05, 0x0a], &[1, 1]),
            None
        );
    }

    #[test]
    fn malformed_input_is_none_and_never_panics() {
        let bare = set(3);
        for cut in 0..bare.len() {
            let _ = count_field(P1Form::Message, 1, &bare[..cut], 1);
        }
        assert_eq!(count_field(P1Form::Message, 1, &[0x0a, 0xff], 1), None);
        assert_eq!(count_field(P1Form::Message, 1, &[0x0b], 1), None, "a group");
        assert_eq!(
            count_field(
                P1Form::Message,
                1,
                &[0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                1
            ),
            None
        );
    }
}
