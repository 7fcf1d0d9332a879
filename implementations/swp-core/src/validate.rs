//! Receiver policy checks on a decoded envelope (core-spec §4.3-4.4): timestamp freshness
//! and unknown flag bits. Size and version rules were already enforced by [`crate::e1`].

use crate::envelope::Envelope;
use crate::limits::Policy;
use crate::reject::CoreError;

/// What validation learned about an accepted envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Validated {
    /// Flag bits no profile has defined: ignored, but surfaced for observability (§4.3).
    pub unknown_flags: u64,
}

/// Checks `env` against the receiver `policy` at receiver time `now_ms`.
///
/// Unknown flag bits never cause a reject and never change another field: they are only
/// reported back.
#[inline]
pub fn validate(env: &Envelope, policy: &Policy, now_ms: u64) -> Result<Validated, CoreError> {
    if policy.timestamp_freshness {
        check_freshness(env.ts_unix_ms, policy.max_clock_skew_ms, now_ms)?;
    }
    Ok(Validated {
        unknown_flags: env.flags & !policy.known_flags,
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
    fn unknown_flags_are_surfaced_not_rejected() {
        let p = Policy {
            known_flags: 0b1,
            ..Policy::default()
        };
        let v = validate(&env(0, 0b1011), &p, 0).unwrap();
        assert_eq!(v.unknown_flags, 0b1010);
    }
}
