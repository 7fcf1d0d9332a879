//! The reference endpoint as the SWP-* test agent of classes C3 and C4: SWP-RPC (12),
//! SWP-EVENTS (13), SWP-ARTIFACT (14), SWP-STATE (17) and SWP-OBS (18), and of C5's
//! SWP-CRED (15) and SWP-POLICYHINT (16) (docs/profiles.md), each with
//! deterministic behaviour a vector can state exactly (the test-agent convention of
//! docs/profiles.md): RPC methods, event streams, artifacts and states.
//!
//! Every profile keeps its `swp_profiles` machine for the channel and feeds it what the
//! peer sends *and* what the agent sends, as the A2A agent does: a peer's breach is
//! rejected, and a bug that would make the agent emit a breach is caught before it leaves.
//!
//! What the peer sends that its profile refuses (a payload that does not decode, a missing
//! required field, an unassigned msg_type, a lifecycle breach) is rejected with an error
//! frame carrying the canonical code. A valid request the agent cannot serve (an unknown
//! method, filter, artifact or state) is answered with the profile's own message
//! (`RPC_ERR`, `EVT_ERR`, `ART_ERR`, `STATE_ERR`).

pub mod agdisc;
pub mod artifact;
pub mod cred;
pub mod events;
pub mod obs;
pub mod policyhint;
pub mod relay;
pub mod rpc;
pub mod state;
pub mod tooldisc;

use super::reply::Reject;
use bytes::Bytes;
use swp_profiles::p1::P1Form;

/// The profiles the agent serves.
pub const PROFILES: [u64; 10] = [
    swp_profiles::agdisc::PROFILE_ID,
    swp_profiles::tooldisc::PROFILE_ID,
    swp_profiles::rpc::PROFILE_ID,
    swp_profiles::events::PROFILE_ID,
    swp_profiles::artifact::PROFILE_ID,
    swp_profiles::state::PROFILE_ID,
    swp_profiles::obs::PROFILE_ID,
    swp_profiles::cred::PROFILE_ID,
    swp_profiles::policyhint::PROFILE_ID,
    swp_profiles::relay::PROFILE_ID,
];

/// Whether the agent serves `profile_id`.
pub fn serves(profile_id: u64) -> bool {
    PROFILES.contains(&profile_id)
}

/// The agent's implementation-defined parameters (declared in a SUT manifest as
/// `RPC_REPLAY_WINDOW_MS`, `POLICYHINT_UNKNOWN_KEY_POLICY`, `POLICYHINT_CONFLICT_POLICY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The SWP-RPC idempotency replay window (swp-rpc §6; 24 h by default, as recommended).
    pub rpc_replay_window_ms: u64,
    /// The peer identities allowed to call `swp.test.owner` (`--rpc-owner`); none by default,
    /// so the method is then refused to everyone like `swp.test.admin`.
    pub rpc_owners: Vec<String>,
    /// The SWP-POLICYHINT unknown-key policy (ignore by default).
    pub policyhint_unknown_keys: swp_profiles::policyhint::UnknownKeys,
    /// The SWP-POLICYHINT conflict rule (the later wins by default).
    pub policyhint_conflicts: swp_profiles::policyhint::ConflictPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rpc_replay_window_ms: swp_profiles::rpc::lifecycle::DEFAULT_REPLAY_WINDOW_MS,
            rpc_owners: Vec::new(),
            policyhint_unknown_keys: swp_profiles::policyhint::UnknownKeys::default(),
            policyhint_conflicts: swp_profiles::policyhint::ConflictPolicy::default(),
        }
    }
}

/// One message the agent sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    /// Its profile.
    pub profile_id: u64,
    /// Its msg_type.
    pub msg_type: u64,
    /// Its payload, in the agent's P1 form.
    pub payload: Vec<u8>,
    /// `Some(id)`: the direct answer to the request that came with this msg_id, which it
    /// reuses (core-level request/response correlation, swp-rpc §5); `None`: a message the
    /// agent originates (stream items, published events, chunks), under a fresh msg_id.
    pub reply_to: Option<Bytes>,
}

/// What the connection should do with one envelope of an agent profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send these, in order.
    Send(Vec<Out>),
    /// Nothing to send.
    Nothing,
    /// Reject the frame with an error frame.
    Reject(Reject),
}

impl Action {
    fn from_outs(outs: Vec<Out>) -> Action {
        if outs.is_empty() {
            Action::Nothing
        } else {
            Action::Send(outs)
        }
    }
}

/// A refusal with its canonical code.
fn reject(code: swp_core::ErrorCode, detail: impl std::fmt::Display) -> Action {
    Action::Reject(Reject::profile(code, detail.to_string()))
}

/// One connection's agent: the five profiles' state.
#[derive(Debug)]
pub struct Agent {
    rpc: rpc::Agent,
    events: events::Agent,
    obs: obs::Agent,
    artifact: artifact::Agent,
    state: state::Agent,
    cred: cred::Agent,
    policyhint: policyhint::Agent,
    agdisc: agdisc::Agent,
    tooldisc: tooldisc::Agent,
    relay: relay::Agent,
}

impl Agent {
    /// An agent speaking P1 payloads in `form`.
    pub fn new(config: Config, form: P1Form) -> Self {
        Agent {
            rpc: rpc::Agent::new(config.clone(), form),
            events: events::Agent::new(form),
            obs: obs::Agent::new(form),
            artifact: artifact::Agent::new(form),
            state: state::Agent::new(form),
            cred: cred::Agent::new(form),
            policyhint: policyhint::Agent::new(
                swp_profiles::policyhint::Config {
                    unknown_keys: config.policyhint_unknown_keys,
                    conflicts: config.policyhint_conflicts,
                    ..swp_profiles::policyhint::Config::default()
                },
                form,
            ),
            agdisc: agdisc::Agent::new(form),
            tooldisc: tooldisc::Agent::new(form),
            relay: relay::Agent::new(form),
        }
    }

    /// Handles one accepted envelope of an agent profile from the peer `scope` (its S1
    /// identity, or empty), at `now_ms`.
    pub fn handle(
        &mut self,
        profile_id: u64,
        msg_type: u64,
        msg_id: &Bytes,
        payload: &[u8],
        scope: &str,
        now_ms: u64,
    ) -> Action {
        match profile_id {
            swp_profiles::rpc::PROFILE_ID => {
                self.rpc.handle(msg_type, msg_id, payload, scope, now_ms)
            }
            swp_profiles::events::PROFILE_ID => {
                self.events.handle(msg_type, msg_id, payload, scope, now_ms)
            }
            swp_profiles::obs::PROFILE_ID => self.obs.handle(msg_type, msg_id, payload, scope),
            swp_profiles::artifact::PROFILE_ID => {
                self.artifact.handle(msg_type, msg_id, payload, scope)
            }
            swp_profiles::state::PROFILE_ID => self.state.handle(msg_type, msg_id, payload),
            swp_profiles::cred::PROFILE_ID => {
                self.cred.handle(msg_type, msg_id, payload, scope, now_ms)
            }
            swp_profiles::policyhint::PROFILE_ID => {
                self.policyhint.handle(msg_type, msg_id, payload)
            }
            swp_profiles::agdisc::PROFILE_ID => {
                self.agdisc.handle(msg_type, msg_id, payload, scope, now_ms)
            }
            swp_profiles::tooldisc::PROFILE_ID => {
                self.tooldisc.handle(msg_type, msg_id, payload, scope)
            }
            swp_profiles::relay::PROFILE_ID => self.relay.handle(msg_type, payload, scope, now_ms),
            _ => Action::Nothing,
        }
    }

    /// When [`Agent::on_timer`] should next run, if anything waits.
    pub fn next_deadline(&self) -> Option<u64> {
        match (self.rpc.next_deadline(), self.relay.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether anything waits for a deadline.
    pub fn has_timers(&self) -> bool {
        self.next_deadline().is_some()
    }

    /// Time passed: what became due.
    pub fn on_timer(&mut self, now_ms: u64) -> Vec<Out> {
        let mut outs = self.rpc.on_timer(now_ms);
        outs.extend(self.relay.on_timer(now_ms));
        outs
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers shared by the profile agents' tests.
    use super::{Action, Out};
    use swp_core::ErrorCode;

    /// The messages an action sends.
    pub fn outs(a: Action) -> Vec<Out> {
        match a {
            Action::Send(v) => v,
            Action::Nothing => Vec::new(),
            Action::Reject(r) => panic!("expected messages, got a reject: {r}"),
        }
    }

    /// The code of a reject.
    pub fn code(a: Action) -> ErrorCode {
        match a {
            Action::Reject(r) => r.code(),
            other => panic!("expected a reject, got {other:?}"),
        }
    }
}
