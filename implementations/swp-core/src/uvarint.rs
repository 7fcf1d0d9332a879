//! E1 `uvarint` (unsigned LEB128): decoding with the three mandatory rejects, and encoding.

/// The longest legal uvarint: ten octets carry 64 bits (9 × 7 + 1).
pub const MAX_UVARINT_LEN: usize = 10;

/// Why a uvarint was rejected (all map to `ERR_INVALID_UVARINT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UvarintError {
    /// The input ended while the continuation bit was still set (or before any octet).
    #[error("truncated before its terminating octet")]
    Truncated,
    /// The tenth octet still had its continuation bit set: more than ten octets.
    #[error("longer than 10 octets")]
    TooLong,
    /// Ten octets whose value does not fit in 64 bits.
    #[error("overflows 64 bits")]
    Overflow,
}

/// Decodes one uvarint from the start of `buf`, returning the value and the octets consumed.
///
/// Non-minimal encodings (`0x80 0x00` for zero) are accepted: E1 does not forbid them, and a
/// receiver that rejected them would reject frames the spec calls valid.
#[inline]
pub fn decode(buf: &[u8]) -> Result<(u64, usize), UvarintError> {
    // Fast path: the common one-octet value.
    if let Some(&b) = buf.first() {
        if b < 0x80 {
            return Ok((u64::from(b), 1));
        }
    }
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().take(MAX_UVARINT_LEN).enumerate() {
        let low = u64::from(b & 0x7f);
        if i == MAX_UVARINT_LEN - 1 {
            // The tenth octet holds bit 63 only; a continuation bit here means an eleventh.
            if b & 0x80 != 0 {
                return Err(UvarintError::TooLong);
            }
            if low > 1 {
                return Err(UvarintError::Overflow);
            }
        }
        value |= low << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(UvarintError::Truncated)
}

/// The number of octets the canonical (minimal) encoding of `v` takes.
#[inline]
pub const fn encoded_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends the canonical encoding of `v`.
#[inline]
pub fn encode(mut v: u64, out: &mut impl bytes::BufMut) {
    while v >= 0x80 {
        out.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
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
    fn boundaries_round_trip() {
        for v in [
            0,
            1,
            127,
            128,
            16383,
            16384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let b = enc(v);
            assert_eq!(b.len(), encoded_len(v));
            assert_eq!(decode(&b), Ok((v, b.len())));
        }
    }

    #[test]
    fn ten_octet_max_is_valid_but_one_more_bit_overflows() {
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(decode(&max), Ok((u64::MAX, 10)));
        let over = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(decode(&over), Err(UvarintError::Overflow));
        let over = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f];
        assert_eq!(decode(&over), Err(UvarintError::Overflow));
    }

    #[test]
    fn eleven_octets_are_too_long_even_when_the_value_is_small() {
        let mut b = vec![0x80; 10];
        b.push(0x00);
        assert_eq!(decode(&b), Err(UvarintError::TooLong));
        // Decided at the tenth octet, without needing the eleventh.
        assert_eq!(decode(&b[..10]), Err(UvarintError::TooLong));
    }

    #[test]
    fn truncation_is_reported() {
        assert_eq!(decode(&[]), Err(UvarintError::Truncated));
        assert_eq!(decode(&[0x80]), Err(UvarintError::Truncated));
        assert_eq!(decode(&[0xff; 9]), Err(UvarintError::Truncated));
    }

    #[test]
    fn non_minimal_encodings_are_accepted() {
        assert_eq!(decode(&[0x80, 0x00]), Ok((0, 2)));
    }
}
