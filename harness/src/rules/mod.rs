//! The P1 profile rules: what one side of an SWP connection may send in A2A (profile 2) and
//! the SWP-* profiles 10-19, judged from the specification text alone (the profile docs of the
//! spec kit, the project's `.proto` annexes and the readings recorded in
//! `docs/spec-issues-profiles.md` / `docs/spec-issues.md`). Each rule is a named check citing
//! a requirement ID of `vectors/requirements/*.yaml`; `docs/profile-rules.md` lists them.
//!
//! [`check_message`] judges one message alone (it decodes as its msg_type's message and
//! carries its class's required fields). A [`Connection`] judges a message against
//! everything seen before on the connection, from both sides: open calls, lifecycles,
//! subscriptions' event ids, transfers, chains, deliveries. A refused message changes
//! nothing, because the harness sends invalid messages on purpose and a receiver must refuse
//! them without effect.
//!
//! Every per-connection table is bounded ([`MAX_ENTRIES`] entries, ids up to [`MAX_ID_BYTES`]):
//! past a bound the rules that would need the forgotten entry judge leniently (they accept),
//! so a long or hostile connection cannot make the judge grow or give a false verdict.

use std::time::{SystemTime, UNIX_EPOCH};

mod a2a;
mod agdisc;
mod artifact;
mod common;
mod config;
mod cred;
mod events;
mod obs;
mod policyhint;
mod relay;
mod rpc;
mod state;
mod tooldisc;
mod verdict;

pub use common::{MAX_ENTRIES, MAX_ID_BYTES};
pub use config::{Config, ConflictPolicy, IdScheme, DEFAULT_RELAY_TOLERANCE_MS, EDGE_SLACK_MS};
pub use verdict::{Level, Rule, Side, Violation};

use config::Ctx;
use verdict::P1_DECODE;

/// Every rule of every profile, in profile order.
pub fn rules() -> Vec<&'static Rule> {
    let mut all: Vec<&'static Rule> = vec![&P1_DECODE];
    for set in [
        a2a::RULES,
        agdisc::RULES,
        tooldisc::RULES,
        rpc::RULES,
        events::RULES,
        artifact::RULES,
        cred::RULES,
        policyhint::RULES,
        state::RULES,
        obs::RULES,
        relay::RULES,
    ] {
        all.extend_from_slice(set);
    }
    all
}

/// One connection's state for every P1 profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    config: Config,
    unix_ms_at_open: Option<u64>,
    a2a: a2a::State,
    agdisc: agdisc::State,
    tooldisc: tooldisc::State,
    rpc: rpc::State,
    events: events::State,
    artifact: artifact::State,
    cred: cred::State,
    policyhint: policyhint::State,
    state: state::State,
    obs: obs::State,
    relay: relay::State,
}

impl Connection {
    /// A connection that has seen nothing yet; its wall clock (used only for SWP-CRED
    /// expiries, which are Unix times) starts at the system clock now.
    pub fn new(config: &Config) -> Self {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_millis()).ok());
        Connection {
            config: config.clone(),
            unix_ms_at_open: unix,
            a2a: a2a::State::default(),
            agdisc: agdisc::State::default(),
            tooldisc: tooldisc::State::default(),
            rpc: rpc::State::default(),
            events: events::State::default(),
            artifact: artifact::State::default(),
            cred: cred::State::default(),
            policyhint: policyhint::State::default(),
            state: state::State::default(),
            obs: obs::State::default(),
            relay: relay::State::default(),
        }
    }

    /// Sets the Unix time (ms) at which the connection opened, for deterministic replays of
    /// a transcript; `None` turns the wall-clock rules (credential expiry) off.
    pub fn with_unix_ms_at_open(mut self, unix_ms: Option<u64>) -> Self {
        self.unix_ms_at_open = unix_ms;
        self
    }

    /// A message `side` sent at `now_ms` (milliseconds since the connection opened): the bare
    /// P1 message octets. `Ok`: valid given everything seen so far, and the state moves on.
    /// `Err`: it breaks a rule, and the state does not change. A profile that is not P1 is
    /// `Ok` and ignored.
    pub fn observe(
        &mut self,
        now_ms: u64,
        side: Side,
        profile_id: u64,
        msg_type: u64,
        bare: &[u8],
    ) -> Result<(), Violation> {
        let ctx = Ctx {
            now_ms,
            side,
            config: &self.config,
            unix_now_ms: self.unix_ms_at_open.map(|t| t.saturating_add(now_ms)),
        };
        match profile_id {
            a2a::PROFILE_ID => self.a2a.observe(&ctx, a2a::check(msg_type, bare)?),
            agdisc::PROFILE_ID => self.agdisc.observe(&ctx, agdisc::check(msg_type, bare)?),
            tooldisc::PROFILE_ID => self
                .tooldisc
                .observe(&ctx, tooldisc::check(msg_type, bare)?),
            rpc::PROFILE_ID => self.rpc.observe(&ctx, rpc::check(msg_type, bare)?),
            events::PROFILE_ID => self.events.observe(&ctx, events::check(msg_type, bare)?),
            artifact::PROFILE_ID => self
                .artifact
                .observe(&ctx, artifact::check(msg_type, bare)?),
            cred::PROFILE_ID => self.cred.observe(&ctx, cred::check(msg_type, bare)?),
            policyhint::PROFILE_ID => self
                .policyhint
                .observe(&ctx, policyhint::check(msg_type, bare)?),
            state::PROFILE_ID => self.state.observe(&ctx, state::check(msg_type, bare)?),
            obs::PROFILE_ID => self.obs.observe(&ctx, obs::check(msg_type, bare)?),
            relay::PROFILE_ID => self.relay.observe(&ctx, relay::check(msg_type, bare)?),
            _ => Ok(()),
        }
    }
}

/// Stateless checks of one message: it decodes as the message its msg_type carries and
/// carries the fields its class requires. A profile that is not P1 is `Ok`.
pub(crate) fn check_message(profile_id: u64, msg_type: u64, bare: &[u8]) -> Result<(), Violation> {
    match profile_id {
        a2a::PROFILE_ID => a2a::check(msg_type, bare).map(drop),
        agdisc::PROFILE_ID => agdisc::check(msg_type, bare).map(drop),
        tooldisc::PROFILE_ID => tooldisc::check(msg_type, bare).map(drop),
        rpc::PROFILE_ID => rpc::check(msg_type, bare).map(drop),
        events::PROFILE_ID => events::check(msg_type, bare).map(drop),
        artifact::PROFILE_ID => artifact::check(msg_type, bare).map(drop),
        cred::PROFILE_ID => cred::check(msg_type, bare).map(drop),
        policyhint::PROFILE_ID => policyhint::check(msg_type, bare).map(drop),
        state::PROFILE_ID => state::check(msg_type, bare).map(drop),
        obs::PROFILE_ID => obs::check(msg_type, bare).map(drop),
        relay::PROFILE_ID => relay::check(msg_type, bare).map(drop),
        _ => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    //! Test helpers shared by the profile files: a connection driver that checks every
    //! refusal leaves the state unchanged, and the sequence property of the proptests.
    use super::*;

    /// Encodes a prost message.
    pub fn enc<M: prost::Message>(m: &M) -> Vec<u8> {
        m.encode_to_vec()
    }

    /// A connection under test with a fixed wall clock, so expiry rules are deterministic.
    pub struct Run {
        pub conn: Connection,
        pub now: u64,
        pub profile: u64,
    }

    /// Unix ms the test connections open at.
    pub const OPEN_UNIX_MS: u64 = 1_800_000_000_000;

    impl Run {
        pub fn new(profile: u64) -> Run {
            Run::with(profile, Config::default())
        }

        pub fn with(profile: u64, config: Config) -> Run {
            Run {
                conn: Connection::new(&config).with_unix_ms_at_open(Some(OPEN_UNIX_MS)),
                now: 0,
                profile,
            }
        }

        /// Moves the clock to `t` ms since the connection opened.
        pub fn at(&mut self, t: u64) -> &mut Self {
            self.now = t;
            self
        }

        /// Observes and returns the verdict; a refusal must leave the state unchanged.
        pub fn send<M: prost::Message>(
            &mut self,
            side: Side,
            msg_type: u64,
            m: &M,
        ) -> Result<(), Violation> {
            let before = self.conn.clone();
            let r = self
                .conn
                .observe(self.now, side, self.profile, msg_type, &enc(m));
            if r.is_err() {
                assert_eq!(before, self.conn, "a refused message changed the state");
            }
            r
        }

        /// The message must be accepted (no state snapshot: bulk loops stay linear).
        #[track_caller]
        pub fn ok<M: prost::Message>(&mut self, side: Side, msg_type: u64, m: &M) {
            let r = self
                .conn
                .observe(self.now, side, self.profile, msg_type, &enc(m));
            if let Err(v) = r {
                panic!("expected accept, got {v}");
            }
        }

        /// The message must be refused by `rule`.
        #[track_caller]
        pub fn err<M: prost::Message>(&mut self, side: Side, msg_type: u64, m: &M, rule: &str) {
            match self.send(side, msg_type, m) {
                Ok(()) => panic!("expected {rule}, got accept"),
                Err(v) => assert_eq!(v.rule, rule, "wrong rule: {v}"),
            }
        }
    }

    /// One step of a generated sequence.
    pub type Step = (u64, Side, u64, Vec<u8>);

    /// The sequence property every profile's proptest asserts: no panic; a refusal leaves
    /// the state unchanged; and dropping the refused steps changes no other verdict.
    pub fn sequence_property(profile: u64, config: &Config, steps: &[Step]) {
        let mut conn = Connection::new(config).with_unix_ms_at_open(Some(OPEN_UNIX_MS));
        let mut verdicts = Vec::with_capacity(steps.len());
        for (now, side, msg_type, bare) in steps {
            let before = conn.clone();
            let r = conn.observe(*now, *side, profile, *msg_type, bare);
            if r.is_err() {
                assert_eq!(before, conn, "a refused message changed the state");
            }
            verdicts.push(r.is_ok());
        }
        let mut again = Connection::new(config).with_unix_ms_at_open(Some(OPEN_UNIX_MS));
        for ((now, side, msg_type, bare), accepted) in steps.iter().zip(&verdicts) {
            if *accepted {
                let r = again.observe(*now, *side, profile, *msg_type, bare);
                assert!(
                    r.is_ok(),
                    "without the refused steps, a step was judged otherwise: {r:?}"
                );
            }
        }
        assert_eq!(conn, again, "the refused steps left a trace");
    }

    /// A declared-everything config for the proptests.
    pub fn full_config() -> Config {
        Config {
            rpc_replay_window_ms: Some(5_000),
            events_id_retention_ms: Some(10_000),
            events_severities: Some(vec!["info".into(), "warn".into(), "error".into()]),
            artifact_chunk_bytes: Some(4),
            state_id_scheme: Some(IdScheme::Sha256),
            obs_own_tracestate_keys: Some(vec!["own".into()]),
            cred_max_chain_length: Some(2),
            cred_max_ttl_ms: Some(60_000),
            policyhint_conflict_policy: Some(ConflictPolicy::LaterWins),
            relay_dedupe_window_ms: Some(10_000),
            relay_dead_letter_reasons: Some(vec!["retry_exhausted".into()]),
            relay_retry_delays_ms: Some(vec![100, 200]),
            relay_retry_backoff_ms: None,
            relay_max_attempts: None,
            relay_dead_letter_after_ms: Some(100),
            relay_retry_tolerance_ms: 50,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn profiles_that_are_not_p1_are_ignored() {
        let mut c = Connection::new(&Config::default());
        for p in [0, 1, 3, 9, 20, 99, u64::MAX] {
            assert_eq!(c.observe(0, Side::Endpoint, p, 7, b"\xff\xff"), Ok(()));
            assert_eq!(check_message(p, 0, b"\xff"), Ok(()));
        }
        assert_eq!(
            c,
            Connection::new(&Config::default()).with_unix_ms_at_open(c.unix_ms_at_open)
        );
    }

    #[test]
    fn every_p1_profile_has_a_rule_set_and_every_msg_type_0_is_refused() {
        for (p, _, _) in crate::p1::pb::PACKAGES {
            let v = check_message(p, 0, b"").expect_err("msg_type 0 is unassigned");
            assert!(v.rule.ends_with(".msg-type-assigned"), "{v}");
            // The next msg_type after the last assigned one is unassigned too.
            let last = (1..=9)
                .take_while(|t| crate::p1::pb::message_for(p, *t).is_some())
                .count();
            let v = check_message(p, last as u64 + 1, b"").expect_err("past the last");
            assert!(v.rule.ends_with(".msg-type-assigned"), "{v}");
        }
    }

    #[test]
    fn rule_names_are_unique_and_cite_registered_requirements() {
        let registry: String = [
            include_str!("../../../vectors/requirements/a2a-profile.yaml"),
            include_str!("../../../vectors/requirements/swp-agdisc.yaml"),
            include_str!("../../../vectors/requirements/swp-tooldisc.yaml"),
            include_str!("../../../vectors/requirements/swp-rpc.yaml"),
            include_str!("../../../vectors/requirements/swp-events.yaml"),
            include_str!("../../../vectors/requirements/swp-artifact.yaml"),
            include_str!("../../../vectors/requirements/swp-cred.yaml"),
            include_str!("../../../vectors/requirements/swp-policyhint.yaml"),
            include_str!("../../../vectors/requirements/swp-state.yaml"),
            include_str!("../../../vectors/requirements/swp-obs.yaml"),
            include_str!("../../../vectors/requirements/swp-relay.yaml"),
            include_str!("../../../vectors/requirements/profile-payload-encoding-p1.yaml"),
        ]
        .concat();
        let docs = include_str!("../../../docs/profile-rules.md");
        let mut seen = std::collections::BTreeSet::new();
        for r in rules() {
            assert!(seen.insert(r.name), "duplicate rule name {}", r.name);
            let entry = format!("- id: {}\n", r.requirement);
            let at = registry
                .find(&entry)
                .unwrap_or_else(|| panic!("{} cites unregistered {}", r.name, r.requirement));
            // The level of the rule is the level of the registry entry it cites.
            let level_line = registry[at + entry.len()..].lines().next().unwrap_or("");
            let level = level_line
                .trim()
                .strip_prefix("level:")
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .unwrap_or("");
            assert_eq!(
                level,
                r.level.as_str(),
                "{} cites {}",
                r.name,
                r.requirement
            );
            assert!(
                docs.contains(&format!("`{}`", r.name)),
                "docs/profile-rules.md does not list {}",
                r.name
            );
        }
    }

    proptest! {
        #[test]
        fn random_octets_never_panic_and_check_message_agrees_with_a_fresh_connection(
            profile in prop::sample::select(vec![1u64, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
            msg_type in 0u64..8,
            bare in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let stateless = check_message(profile, msg_type, &bare);
            let mut c = Connection::new(&Config::default());
            let before = c.clone();
            let stateful = c.observe(0, Side::Endpoint, profile, msg_type, &bare);
            if stateless.is_err() {
                prop_assert_eq!(&stateful, &stateless);
            }
            if stateful.is_err() {
                prop_assert_eq!(before, c);
            }
        }

        #[test]
        fn random_octet_sequences_at_any_time_keep_the_state_on_refusal(
            steps in prop::collection::vec(
                (
                    any::<u64>(),
                    prop::sample::select(vec![Side::Harness, Side::Endpoint]),
                    prop::sample::select(vec![2u64, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]),
                    0u64..6,
                    prop::collection::vec(any::<u8>(), 0..48),
                ),
                0..40,
            ),
        ) {
            let mut c = Connection::new(&testkit::full_config());
            for (now, side, profile, msg_type, bare) in steps {
                let before = c.clone();
                if c.observe(now, side, profile, msg_type, &bare).is_err() {
                    prop_assert_eq!(&before, &c);
                }
            }
        }
    }
}
