//! The delegation chains one SWP-CRED channel knows, keyed by (peer identity, chain_id),
//! and the checks on every credential and delegation entry (swp-cred §4, §6):
//!
//! - a `CRED_PRESENT` must carry an accepted `cred_type` (CRED-007) and a credential of
//!   that type bound to the channel's identity (CRED-004, CRED-009); with a chain_id it
//!   opens that chain, and the same root presented again on the channel is a replay;
//! - a `CRED_DELEGATE` extends a chain of the same identity (chains of another identity
//!   are unknown to it: the binding is part of the key), by one entry whose expiry lies
//!   after the receiver's clock and within its bound (CRED-003, CRED-006), while the chain
//!   has fewer entries than the maximum (CRED-002, CRED-005) and has not itself expired
//!   (its earliest entry expiry passed) nor been revoked;
//! - a `CRED_REVOKE` (optional, CRED-010) ends a chain for good.
//!
//! Time is the receiver's clock, passed in (`now_ms`); the same inputs at the same clock
//! always give the same verdict, checked in a fixed order (documented on [`Chains::step`]).
//! A refused message changes nothing. Expired and revoked chains are forgotten first when
//! the table is full; a table full of live chains refuses.

use super::message::CredMessage;
use super::{codes, SUBJECT_TYPE};
use crate::p1::pb::cred::{CredDelegate, CredPresent};
use crate::payload::{hex, shown};
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use std::collections::HashMap;
use swp_core::ErrorCode;

/// Default maximum number of delegation entries on a chain.
pub const DEFAULT_MAX_CHAIN_LEN: usize = 4;
/// Default bound on an entry's lifetime: its expiry at most this far past the receiver's
/// clock (one hour).
pub const DEFAULT_MAX_TTL_MS: u64 = 3_600_000;
/// Default bound on chains held per channel.
pub const DEFAULT_MAX_CHAINS: usize = 1024;

/// How a credential is tied to the peer's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Binding {
    /// Credentials are opaque: only their type is judged (a harness judging a SUT whose
    /// credential format it does not know).
    #[default]
    Opaque,
    /// The reference's test scheme for [`SUBJECT_TYPE`]: the credential is the UTF-8 text
    /// `sub=<identity>`, bound to that identity. When the channel surfaces an identity (S1),
    /// it must be that one; without one there is nothing to bind to and any subject passes.
    /// Credentials of other accepted types stay opaque.
    Subject,
}

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Accepted `cred_type`s; empty accepts every type.
    pub types: Vec<String>,
    /// How credentials bind to identities.
    pub binding: Binding,
    /// Delegation entries a chain may hold (CRED-002).
    pub max_chain_len: usize,
    /// How far past the receiver's clock an entry's expiry may lie (CRED-003).
    pub max_ttl_ms: u64,
    /// Whether `CRED_REVOKE` is supported (CRED-010).
    pub revoke: bool,
    /// Chains held.
    pub max_chains: usize,
}

impl Default for Config {
    /// The reference's parameters: the subject scheme only ([`SUBJECT_TYPE`]), bound to
    /// the S1 identity, four entries, one hour, revocation supported.
    fn default() -> Self {
        Config {
            types: vec![SUBJECT_TYPE.to_owned()],
            binding: Binding::Subject,
            max_chain_len: DEFAULT_MAX_CHAIN_LEN,
            max_ttl_ms: DEFAULT_MAX_TTL_MS,
            revoke: true,
            max_chains: DEFAULT_MAX_CHAINS,
        }
    }
}

impl Config {
    /// Every type accepted and credentials opaque, with the default bounds: what a judge
    /// that does not know the peer's credential format can check.
    pub fn opaque() -> Config {
        Config {
            types: Vec::new(),
            binding: Binding::Opaque,
            ..Config::default()
        }
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A credential with no chain, accepted.
    Presented,
    /// A chain opened by its root credential.
    Opened,
    /// A chain extended; `length` entries now.
    Delegated {
        /// Delegation entries on the chain.
        length: usize,
    },
    /// A chain revoked.
    Revoked,
    /// A chain already revoked, revoked again: nothing new.
    AlreadyRevoked,
    /// A `CRED_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredError {
    /// The `cred_type` is not accepted (CRED-007).
    #[error("credential type {0} is not supported (swp-cred §6)")]
    UnsupportedType(String),
    /// The octets are not a credential of their type (CRED-009).
    #[error("the credential is not a valid {0} credential (swp-cred §6)")]
    InvalidCredential(String),
    /// The credential is bound to another identity than the channel's (CRED-004).
    #[error("the credential is bound to {bound}, the channel's identity is {scope} (swp-cred §4)")]
    WrongBinding {
        /// The identity it names.
        bound: String,
        /// The channel's identity.
        scope: String,
    },
    /// The entry's expiry has passed, or the chain's (CRED-006).
    #[error(
        "chain {chain}: expired at {expires_at} ms, the receiver's clock is {now} ms (swp-cred §6)"
    )]
    Expired {
        /// The chain, hex.
        chain: String,
        /// The expiry that passed.
        expires_at: u64,
        /// The receiver's clock.
        now: u64,
    },
    /// The entry's expiry is beyond the bound (CRED-003).
    #[error("chain {chain}: expiry {expires_at} ms is more than {max_ttl_ms} ms past the receiver's clock {now} ms (swp-cred §4)")]
    Unbounded {
        /// The chain, hex.
        chain: String,
        /// The expiry given.
        expires_at: u64,
        /// The receiver's clock.
        now: u64,
        /// The bound.
        max_ttl_ms: u64,
    },
    /// One entry more than the maximum (CRED-002, CRED-005).
    #[error("chain {chain} already holds the maximum of {max} delegation entries (swp-cred §4)")]
    TooLong {
        /// The chain, hex.
        chain: String,
        /// The maximum.
        max: usize,
    },
    /// The chain's root presented again (CRED-004).
    #[error("chain {0} was already presented on this channel: a replay (swp-cred §4)")]
    Replay(String),
    /// No chain of that id for this identity.
    #[error("no chain {0} was presented by this identity")]
    UnknownChain(String),
    /// The chain was revoked.
    #[error("chain {0} was revoked")]
    Revoked(String),
    /// `CRED_REVOKE` is not supported here (CRED-010).
    #[error("CRED_REVOKE is not supported by this receiver (swp-cred §2: optional)")]
    RevokeUnsupported,
    /// The table is full of live chains.
    #[error("too many delegation chains ({0})")]
    Full(usize),
}

impl CredError {
    /// The canonical code: a credential or delegation refused on its merits is a security
    /// policy refusal; a chain that does not exist or an unsupported optional class is a
    /// payload the profile cannot take; a full table is a quota.
    pub fn code(&self) -> ErrorCode {
        match self {
            CredError::UnknownChain(_) | CredError::RevokeUnsupported => {
                ErrorCode::InvalidProfilePayload
            }
            CredError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::SecurityPolicy,
        }
    }

    /// The `CredErr.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        match self {
            CredError::UnsupportedType(_) => codes::UNSUPPORTED_TYPE,
            CredError::InvalidCredential(_) => codes::INVALID_CREDENTIAL,
            CredError::WrongBinding { .. } => codes::WRONG_BINDING,
            CredError::Expired { .. } => codes::EXPIRED,
            CredError::Unbounded { .. } => codes::EXPIRY_UNBOUNDED,
            CredError::TooLong { .. } => codes::CHAIN_TOO_LONG,
            CredError::Replay(_) => codes::REPLAY,
            CredError::UnknownChain(_) => codes::UNKNOWN_CHAIN,
            CredError::Revoked(_) => codes::REVOKED,
            CredError::RevokeUnsupported => codes::REVOKE_UNSUPPORTED,
            CredError::Full(_) => codes::TOO_MANY,
        }
    }
}

#[derive(Debug, Clone)]
struct Chain {
    /// Expiries of the entries, in order.
    entries: Vec<u64>,
    /// The earliest entry expiry: the chain's own.
    expires_at: Option<u64>,
    revoked: bool,
}

impl Chain {
    fn dead(&self, now_ms: u64) -> bool {
        self.revoked || self.expires_at.is_some_and(|e| e <= now_ms)
    }
}

/// The chains of one channel.
#[derive(Debug, Clone)]
pub struct Chains {
    config: Config,
    chains: HashMap<(String, Bytes), Chain>,
}

impl Default for Chains {
    /// The reference's parameters.
    fn default() -> Self {
        Chains::new(Config::default())
    }
}

impl Chains {
    /// A table with these parameters (a chain cap of 0 is raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_chains = config.max_chains.max(1);
        Chains {
            config,
            chains: HashMap::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Delegation entries on `chain_id` for `scope`, if the chain is known.
    pub fn length(&self, scope: &str, chain_id: &[u8]) -> Option<usize> {
        self.chains
            .get(&(scope.to_owned(), Bytes::copy_from_slice(chain_id)))
            .map(|c| c.entries.len())
    }

    fn present(&mut self, now_ms: u64, scope: &str, p: &CredPresent) -> Result<Seen, CredError> {
        if !self.config.types.is_empty() && !self.config.types.contains(&p.cred_type) {
            return Err(CredError::UnsupportedType(shown(&p.cred_type)));
        }
        if self.config.binding == Binding::Subject && p.cred_type == SUBJECT_TYPE {
            let subject = std::str::from_utf8(&p.credential)
                .ok()
                .and_then(|s| s.strip_prefix("sub="))
                .filter(|s| !s.is_empty())
                .ok_or_else(|| CredError::InvalidCredential(shown(&p.cred_type)))?;
            if !scope.is_empty() && subject != scope {
                return Err(CredError::WrongBinding {
                    bound: shown(subject),
                    scope: shown(scope),
                });
            }
        }
        if p.chain_id.is_empty() {
            return Ok(Seen::Presented);
        }
        let key = (scope.to_owned(), p.chain_id.clone());
        if let Some(c) = self.chains.get(&key) {
            return Err(if c.revoked {
                CredError::Revoked(hex(&p.chain_id))
            } else {
                CredError::Replay(hex(&p.chain_id))
            });
        }
        if self.chains.len() >= self.config.max_chains {
            // Expired and revoked chains are forgotten first.
            self.chains.retain(|_, c| !c.dead(now_ms));
            if self.chains.len() >= self.config.max_chains {
                return Err(CredError::Full(self.config.max_chains));
            }
        }
        self.chains.insert(
            key,
            Chain {
                entries: Vec::new(),
                expires_at: None,
                revoked: false,
            },
        );
        Ok(Seen::Opened)
    }

    fn delegate(&mut self, now_ms: u64, scope: &str, d: &CredDelegate) -> Result<Seen, CredError> {
        let chain = hex(&d.chain_id);
        let c = self
            .chains
            .get_mut(&(scope.to_owned(), d.chain_id.clone()))
            .ok_or_else(|| CredError::UnknownChain(chain.clone()))?;
        if c.revoked {
            return Err(CredError::Revoked(chain));
        }
        if d.expires_at_unix_ms <= now_ms {
            return Err(CredError::Expired {
                chain,
                expires_at: d.expires_at_unix_ms,
                now: now_ms,
            });
        }
        if let Some(e) = c.expires_at.filter(|e| *e <= now_ms) {
            return Err(CredError::Expired {
                chain,
                expires_at: e,
                now: now_ms,
            });
        }
        if d.expires_at_unix_ms - now_ms > self.config.max_ttl_ms {
            return Err(CredError::Unbounded {
                chain,
                expires_at: d.expires_at_unix_ms,
                now: now_ms,
                max_ttl_ms: self.config.max_ttl_ms,
            });
        }
        if c.entries.len() >= self.config.max_chain_len {
            return Err(CredError::TooLong {
                chain,
                max: self.config.max_chain_len,
            });
        }
        c.entries.push(d.expires_at_unix_ms);
        c.expires_at = Some(
            c.expires_at
                .map_or(d.expires_at_unix_ms, |e| e.min(d.expires_at_unix_ms)),
        );
        Ok(Seen::Delegated {
            length: c.entries.len(),
        })
    }

    fn revoke(&mut self, scope: &str, chain_id: &Bytes) -> Result<Seen, CredError> {
        if !self.config.revoke {
            return Err(CredError::RevokeUnsupported);
        }
        let c = self
            .chains
            .get_mut(&(scope.to_owned(), chain_id.clone()))
            .ok_or_else(|| CredError::UnknownChain(hex(chain_id)))?;
        if c.revoked {
            return Ok(Seen::AlreadyRevoked);
        }
        c.revoked = true;
        Ok(Seen::Revoked)
    }
}

impl WireError for CredError {
    fn code(&self) -> ErrorCode {
        CredError::code(self)
    }
}

impl Profile for Chains {
    profile_codec!(CredMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = CredError;

    fn new(config: Config) -> Self {
        Chains::new(config)
    }

    /// Steps the machine with a decoded message from the peer `scope` (its S1 identity,
    /// or empty) at the receiver's clock `now_ms`. Checks run in this order, so a message
    /// breaking several rules always gets the same verdict: for a PRESENT, type, then
    /// credential, then binding, then replay or revocation of its chain; for a DELEGATE,
    /// unknown chain, revoked, the entry's expiry passed, the chain's expiry passed, the
    /// entry's expiry beyond the bound, then length.
    fn step(&mut self, ctx: Ctx<'_>, m: &CredMessage) -> Result<Seen, CredError> {
        let Ctx { now_ms, scope } = ctx;
        match m {
            CredMessage::Present(p) => self.present(now_ms, scope, p),
            CredMessage::Delegate(d) => self.delegate(now_ms, scope, d),
            CredMessage::Revoke(r) => self.revoke(scope, &r.chain_id),
            CredMessage::Err(_) => Ok(Seen::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p1::pb::cred::CredRevoke;

    const ME: &str = "spiffe://swp-conform.test/harness-client";

    fn present(t: &str, cred: &str, chain: &str) -> CredMessage {
        CredMessage::Present(CredPresent {
            cred_type: t.into(),
            credential: Bytes::copy_from_slice(cred.as_bytes()),
            chain_id: Bytes::copy_from_slice(chain.as_bytes()),
        })
    }

    fn delegate(chain: &str, exp: u64) -> CredMessage {
        CredMessage::Delegate(CredDelegate {
            chain_id: Bytes::copy_from_slice(chain.as_bytes()),
            delegation: Bytes::from_static(b"d"),
            expires_at_unix_ms: exp,
        })
    }

    fn revoke(chain: &str) -> CredMessage {
        CredMessage::Revoke(CredRevoke {
            chain_id: Bytes::copy_from_slice(chain.as_bytes()),
            reason: "r".into(),
        })
    }

    fn me() -> String {
        format!("sub={ME}")
    }

    #[test]
    fn binding_type_and_credential() {
        let mut c = Chains::default();
        assert_eq!(
            c.step(Ctx::new(0, ME), &present(SUBJECT_TYPE, &me(), "")),
            Ok(Seen::Presented)
        );
        let e = c
            .step(Ctx::new(0, ME), &present("x509", &me(), ""))
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::UNSUPPORTED_TYPE);
        let e = c
            .step(Ctx::new(0, ME), &present(SUBJECT_TYPE, "nope", ""))
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::INVALID_CREDENTIAL);
        let e = c
            .step(
                Ctx::new(0, ME),
                &present(SUBJECT_TYPE, "sub=spiffe://other", "c"),
            )
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::WRONG_BINDING);
        assert_eq!(e.code(), ErrorCode::SecurityPolicy);
        // Refused: no chain opened.
        assert_eq!(c.length(ME, b"c"), None);
        // No identity surfaced: nothing to bind to.
        assert_eq!(
            c.step(
                Ctx::new(0, ""),
                &present(SUBJECT_TYPE, "sub=spiffe://other", "")
            ),
            Ok(Seen::Presented)
        );
        // Opaque: every type, any octets.
        let mut o = Chains::new(Config::opaque());
        assert_eq!(
            o.step(Ctx::new(0, ME), &present("x509", "zz", "")),
            Ok(Seen::Presented)
        );
    }

    #[test]
    fn chain_length_expiry_and_replay() {
        let mut c = Chains::default();
        assert_eq!(
            c.step(Ctx::new(0, ME), &present(SUBJECT_TYPE, &me(), "c")),
            Ok(Seen::Opened)
        );
        let e = c
            .step(Ctx::new(1, ME), &present(SUBJECT_TYPE, &me(), "c"))
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::REPLAY);
        for n in 1..=DEFAULT_MAX_CHAIN_LEN {
            assert_eq!(
                c.step(Ctx::new(10, ME), &delegate("c", 10_000)),
                Ok(Seen::Delegated { length: n })
            );
        }
        let e = c
            .step(Ctx::new(10, ME), &delegate("c", 10_000))
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::CHAIN_TOO_LONG);
        // Expiry on the receiver's clock, deterministic at the boundary.
        let mut c = Chains::default();
        c.step(Ctx::new(0, ME), &present(SUBJECT_TYPE, &me(), "c"))
            .unwrap();
        assert_eq!(
            c.step(Ctx::new(5, ME), &delegate("c", 5))
                .unwrap_err()
                .reply_code(),
            codes::EXPIRED
        );
        assert_eq!(
            c.step(Ctx::new(5, ME), &delegate("c", 6)),
            Ok(Seen::Delegated { length: 1 })
        );
        // The chain expired with its first entry.
        assert_eq!(
            c.step(Ctx::new(6, ME), &delegate("c", 100))
                .unwrap_err()
                .reply_code(),
            codes::EXPIRED
        );
        // Bounded expiry.
        let mut c = Chains::default();
        c.step(Ctx::new(0, ME), &present(SUBJECT_TYPE, &me(), "c"))
            .unwrap();
        let e = c
            .step(Ctx::new(0, ME), &delegate("c", DEFAULT_MAX_TTL_MS + 1))
            .unwrap_err();
        assert_eq!(e.reply_code(), codes::EXPIRY_UNBOUNDED);
        assert_eq!(
            c.step(Ctx::new(0, ME), &delegate("c", DEFAULT_MAX_TTL_MS)),
            Ok(Seen::Delegated { length: 1 })
        );
    }

    #[test]
    fn chains_belong_to_their_identity_and_revocation() {
        let mut c = Chains::new(Config::opaque());
        c.step(Ctx::new(0, "a"), &present("t", "x", "c")).unwrap();
        let e = c.step(Ctx::new(0, "b"), &delegate("c", 100)).unwrap_err();
        assert_eq!(e.reply_code(), codes::UNKNOWN_CHAIN);
        assert_eq!(
            c.step(Ctx::new(0, "b"), &revoke("c"))
                .unwrap_err()
                .reply_code(),
            codes::UNKNOWN_CHAIN
        );
        assert_eq!(c.step(Ctx::new(0, "a"), &revoke("c")), Ok(Seen::Revoked));
        assert_eq!(
            c.step(Ctx::new(0, "a"), &revoke("c")),
            Ok(Seen::AlreadyRevoked)
        );
        assert_eq!(
            c.step(Ctx::new(0, "a"), &delegate("c", 100))
                .unwrap_err()
                .reply_code(),
            codes::REVOKED
        );
        assert_eq!(
            c.step(Ctx::new(0, "a"), &present("t", "x", "c"))
                .unwrap_err()
                .reply_code(),
            codes::REVOKED
        );
        let mut n = Chains::new(Config {
            revoke: false,
            ..Config::opaque()
        });
        assert_eq!(
            n.step(Ctx::new(0, "a"), &revoke("c")),
            Err(CredError::RevokeUnsupported)
        );
    }

    #[test]
    fn full_table_forgets_dead_chains_first() {
        let mut c = Chains::new(Config {
            max_chains: 2,
            ..Config::opaque()
        });
        c.step(Ctx::new(0, "a"), &present("t", "x", "1")).unwrap();
        c.step(Ctx::new(0, "a"), &delegate("1", 10)).unwrap();
        c.step(Ctx::new(0, "a"), &present("t", "x", "2")).unwrap();
        // Chain 1 is live at 5: full.
        assert_eq!(
            c.step(Ctx::new(5, "a"), &present("t", "x", "3")),
            Err(CredError::Full(2))
        );
        // At 10 it has expired and is forgotten.
        assert_eq!(
            c.step(Ctx::new(10, "a"), &present("t", "x", "3")),
            Ok(Seen::Opened)
        );
        assert_eq!(c.length("a", b"1"), None);
    }
}
