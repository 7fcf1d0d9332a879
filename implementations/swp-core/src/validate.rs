//! Receiver policy checks on a decoded envelope (core-spec §4.3-4.4): timestamp freshness
//! and unknown flag bits. Size and version rules were already enforced by [`crate::e1`].
//!
//! The rules only read two scalars, so [`validate_parts`] holds them once and the owned
//! ([`validate`]) and borrowed ([`validate_ref`]) envelopes both go through it.

use crate::envelope::{Envelope, EnvelopeRef};
use crate::limits::Policy;
use crate::reject::CoreError;

/// What validation learned about an accepted envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Validated {
    /// Flag bits no profile has defined: ignored, but surfaced for observability (§4.3).
    pub unknown_flags: u64,
}

/// Checks `env` against the receiver `policy` at receiver time `now_ms`; see
/// [`validate_parts`].
#[inline]
pub fn validate(env: &Envelope, policy: &Policy, now_ms: u64) -> Result<Validated, CoreError> {
    validate_parts(env.ts_unix_ms, env.flags, policy, now_ms)
}

/// [`validate`] for a borrowed envelope from [`crate::e1::decode_ref`].
#[inline]
pub fn validate_ref(
    env: &EnvelopeRef<'_>,
    policy: &Policy,
    now_ms: u64,
) -> Result<Validated, CoreError> {
    validate_parts(env.ts_unix_ms, env.flags, policy, now_ms)
}

/// Checks an envelope's `ts_unix_ms` and `flags` against the receiver `policy` at receiver
/// time `now_ms`: the receiver policy rules, whatever form the envelope is held in.
///
/// Unknown flag bits never cause a reject and never change another field: they are only
/// reported back.
#[inline]
pub fn validate_parts(
    ts_unix_ms: u64,
    flags: u64,
    policy: &Policy,
    now_ms: u64,
) -> Result<Validated, CoreError> {
    if policy.timestamp_freshness {
        check_freshness(ts_unix_ms, policy.max_clock_skew_ms, now_ms)?;
    }
    Ok(Validated {
        unknown_flags: flags & !policy.known_flags,
    })
}

fn check_freshness(ts: u64, skew: u64, now_ms: u64) -> Result<(), CoreError> {
    if ts == 0 {
        // E1 lets a sender write 0 when it has no clock; a receiver that requires
        // freshness cannot verify such a frame, so it cannot accept it.
        return Err(CoreError::MissingTimestamp);
    }
    if ts < now_ms && now_ms - ts > skew {
        return Err(CoreError::StaleTimestamp {
            ts,
            age_ms: now_ms - ts,
            skew,
        });
    }
    if ts > now_ms && ts - now_ms > skew {
        return Err(CoreError::FutureTimestamp {
            ts,
            ahead_ms: ts - now_ms,
            skew,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(ts: u64, flags: u64) -> Envelope {
        Envelope {
            version: 1,
            ts_unix_ms: ts,
            flags,
            ..Envelope::default()
        }
    }

    #[test]
    fn freshness_window_is_inclusive_both_ways() {
        let p = Policy {
            timestamp_freshness: true,
            max_clock_skew_ms: 1000,
            ..Policy::default()
        };
        let now = 1_000_000;
        assert!(validate(&env(now - 1000, 0), &p, now).is_ok());
        assert!(validate(&env(now + 1000, 0), &p, now).is_ok());
        assert!(matches!(
            validate(&env(now - 1001, 0), &p, now),
            Err(CoreError::StaleTimestamp { .. })
        ));
        assert!(matches!(
            validate(&env(now + 1001, 0), &p, now),
            Err(CoreError::FutureTimestamp { .. })
        ));
        assert_eq!(
            validate(&env(0, 0), &p, now),
            Err(CoreError::MissingTimestamp)
        );
    }

    #[test]
    fn freshness_off_accepts_any_timestamp() {
        let p = Policy::default();
        assert!(validate(&env(0, 0), &p, 5).is_ok());
        assert!(validate(&env(u64::MAX, 0), &p, 5).is_ok());
    }

    #[test]
    fn owned_and_borrowed_envelopes_validate_alike() {
        let p = Policy {
            timestamp_freshness: true,
            max_clock_skew_ms: 10,
            known_flags: 0b1,
            ..Policy::default()
        };
        for (ts, flags) in [(0, 0), (95, 0b11), (100, 0b10), (111, 0), (u64::MAX, 1)] {
            let e = env(ts, flags);
            let want = validate_parts(ts, flags, &p, 100);
            assert_eq!(validate(&e, &p, 100), want);
            assert_eq!(validate_ref(&e.view(), &p, 100), want);
        }
    }

    #[test]
    fn unknown_flags_are_surfaced_not_rejected() {
        let p = Policy {
            known_flags: 0b1,
            ..Policy::default()
        };
        let v = validate(&env(0, 0b1011), &p, 0).unwrap();
        assert_eq!(v.unknown_flags, 0b1010);
    }
}
