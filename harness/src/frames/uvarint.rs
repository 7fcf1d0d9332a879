//! E1 `uvarint` (encoding-binding-e1 §2.1): unsigned LEB128, seven payload bits per octet,
//! least-significant group first, the high bit of an octet saying another octet follows.
//!
//! Decoding rejects exactly what §2.1 names: more than 10 octets, a value past 64 bits, and
//! an encoding that ends before its terminating octet. **Non-minimal encodings are accepted**
//! (`0x81 0x00` decodes to 1): §2.1 lists those three rejects and a padded encoding is none
//! of them, and error-codes.md §2 defines "overlong" for `ERR_INVALID_UVARINT` as `>10`
//! octets, not as longer than necessary. The encoder always writes the minimal form.

use thiserror::Error;

/// Most octets a valid `uvarint` may take (E1 §2.1): ten groups of seven bits cover 64.
pub const MAX_LEN: usize = 10;

/// Why octets are not a `uvarint`. Every variant is `ERR_INVALID_UVARINT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum UvarintError {
    /// The input ended while the last octet read still announced a continuation (or was
    /// empty).
    #[error("uvarint truncated after {read} octet(s)")]
    Truncated {
        /// Octets read before the input ended.
        read: usize,
    },
    /// The tenth octet announces an eleventh: the encoding exceeds 10 octets.
    #[error("uvarint longer than 10 octets")]
    TooLong,
    /// The tenth octet carries bits above bit 63.
    #[error("uvarint overflows 64 bits (tenth octet {octet:#04x})")]
    Overflow {
        /// The offending tenth octet.
        octet: u8,
    },
}

/// Appends the minimal encoding of `v`.
pub fn encode(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Octets the minimal encoding of `v` takes (1..=10).
pub const fn encoded_len(v: u64) -> usize {
    // One octet per started group of seven significant bits; zero still takes one octet.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Decodes one `uvarint` from the start of `b`: the value and the octets it took. Octets
/// after the terminating one are not looked at.
pub fn decode(b: &[u8]) -> Result<(u64, usize), UvarintError> {
    let mut v: u64 = 0;
    for (i, &octet) in b.iter().enumerate().take(MAX_LEN) {
        if i == MAX_LEN - 1 {
            // The tenth octet holds bit 63 only. A larger group value overflows; a set
            // continuation bit makes the encoding longer than 10 octets. Both are decided
            // here, without waiting for an eleventh octet that may never come.
            if octet & 0x7e != 0 {
                return Err(UvarintError::Overflow { octet });
            }
            if octet & 0x80 != 0 {
                return Err(UvarintError::TooLong);
            }
        }
        v |= u64::from(octet & 0x7f) << (7 * i);
        if octet & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    // Reached only with fewer than ten octets: the tenth always returns above.
    Err(UvarintError::Truncated { read: b.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &mut out);
        out
    }

    #[test]
    fn every_group_boundary_round_trips_with_the_minimal_length() {
        for k in 0..=9u32 {
            // Largest value of k+1 groups and the first value needing k+2.
            let top = if k == 9 {
                u64::MAX
            } else {
                (1u64 << (7 * (k + 1))) - 1
            };
            let b = enc(top);
            assert_eq!(b.len(), k as usize + 1, "{top:#x}");
            assert_eq!(encoded_len(top), b.len());
            assert_eq!(decode(&b), Ok((top, b.len())));
            if k < 9 {
                let next = top + 1;
                let b = enc(next);
                assert_eq!(b.len(), k as usize + 2, "{next:#x}");
                assert_eq!(encoded_len(next), b.len());
                assert_eq!(decode(&b), Ok((next, b.len())));
            }
        }
        assert_eq!(enc(0), [0x00]);
        assert_eq!(encoded_len(0), 1);
    }

    #[test]
    fn least_significant_group_comes_first() {
        // 300 = 0b10_0101100: low group 0x2c with continuation, then 0x02.
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(decode(&[0xac, 0x02]), Ok((300, 2)));
        assert_eq!(
            enc(u64::MAX),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn non_minimal_encodings_are_accepted() {
        assert_eq!(decode(&[0x81, 0x00]), Ok((1, 2)));
        let mut ten = [0x80u8; 10];
        ten[9] = 0x00;
        assert_eq!(decode(&ten), Ok((0, 10)));
        ten[9] = 0x01;
        assert_eq!(decode(&ten), Ok((1 << 63, 10)));
    }

    #[test]
    fn octets_after_the_terminator_are_left_alone() {
        assert_eq!(decode(&[0x05, 0xff, 0xff]), Ok((5, 1)));
    }

    #[test]
    fn overflow_is_rejected_even_with_valid_octets_after_it() {
        let mut b = vec![0xff; 9];
        b.push(0x02);
        b.extend_from_slice(&[0x00, 0x01, 0x02]);
        assert_eq!(decode(&b), Err(UvarintError::Overflow { octet: 0x02 }));
        // The spec kit's e1_0003 shape: ten 0xff octets then 0x02.
        let mut b = vec![0xff; 10];
        b.push(0x02);
        assert_eq!(decode(&b), Err(UvarintError::Overflow { octet: 0xff }));
    }

    #[test]
    fn eleven_octets_are_too_long_even_when_the_value_would_fit() {
        let mut b = vec![0x80; 10];
        b.push(0x00);
        assert_eq!(decode(&b), Err(UvarintError::TooLong));
        // Decided at the tenth octet: no eleventh is needed.
        assert_eq!(decode(&[0x80; 10]), Err(UvarintError::TooLong));
        let mut b = vec![0x80; 9];
        b.push(0x81);
        assert_eq!(decode(&b), Err(UvarintError::TooLong));
    }

    #[test]
    fn truncation_at_every_position_is_rejected() {
        assert_eq!(decode(&[]), Err(UvarintError::Truncated { read: 0 }));
        let full = enc(u64::MAX);
        for cut in 1..full.len() {
            assert_eq!(
                decode(&full[..cut]),
                Err(UvarintError::Truncated { read: cut }),
                "cut at {cut}"
            );
        }
    }
}
