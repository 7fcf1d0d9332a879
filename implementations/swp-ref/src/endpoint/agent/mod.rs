//! The reference endpoint as the SWP-* test agent of classes C3 and C4: SWP-RPC (12),
//! SWP-EVENTS (13), SWP-ARTIFACT (14), SWP-STATE (17) and SWP-OBS (18), and of C5:
//! SWP-AGDISC (10), SWP-TOOLDISC (11), SWP-CRED (15), SWP-POLICYHINT (16) and SWP-RELAY (19)
//! (docs/profiles.md, one section per profile), each with deterministic behaviour a vector
//! can state exactly (the test-agent convention of docs/profiles.md): RPC methods, event
//! streams, artifacts and states.
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
//!
//! That shared path (decode, hand the message to the profile's agent, send a refusal as an
//! error frame) is written once, in [`ProfileAgent::handle`]; each profile's module only says
//! what its agent does with a decoded message. The agents are the profiles of
//! `swp_profiles::for_each_profile!`, the list the channel is generated from: one module here
//! per entry, named as the profile's module.

pub mod agdisc;
pub mod artifact;
pub mod cred;
pub mod events;
pub mod ids;
pub mod obs;
pub mod policyhint;
pub mod relay;
pub mod rpc;
pub mod state;
pub mod tooldisc;

use super::reply::Reject;
use bytes::Bytes;
use swp_core::ErrorCode;
use swp_profiles::p1::P1Form;
use swp_profiles::{Ctx, Profile, WireError};

/// The profiles the agent serves: the channel's, from the same list.
pub use swp_profiles::channel::PROFILES;

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

impl Out {
    /// `m` of profile `P`, encoded in `form`.
    fn of<P: Profile>(form: P1Form, m: &P::Message, reply_to: Option<Bytes>) -> Out {
        Out {
            profile_id: P::ID,
            msg_type: P::msg_type(m),
            payload: P::encode(form, m),
            reply_to,
        }
    }
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
fn refusal(code: ErrorCode, detail: impl std::fmt::Display) -> Reject {
    Reject::profile(code, detail.to_string())
}

/// The envelope a decoded message came in, as far as an agent needs it.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// Its msg_id, which a direct answer reuses.
    pub msg_id: &'a Bytes,
    /// The peer's scope: its S1 identity, or empty.
    pub scope: &'a str,
    /// The connection's clock.
    pub now_ms: u64,
}

impl<'a> Incoming<'a> {
    /// The context the profile's machine steps the peer's message in.
    pub fn ctx(&self) -> Ctx<'a> {
        Ctx::new(self.now_ms, self.scope)
    }
}

/// The message type of `A`'s profile.
type Msg<A> = <<A as ProfileAgent>::Profile as Profile>::Message;
/// What a step of `A`'s profile saw.
type Seen<A> = <<A as ProfileAgent>::Profile as Profile>::Seen;
/// A refusal by `A`'s profile's machine.
type Refused<A> = <<A as ProfileAgent>::Profile as Profile>::Error;

/// One profile's part of the agent: its state on one connection and what it does with a
/// message of its profile from the peer.
pub trait ProfileAgent: Sized {
    /// The profile, whose machine judges what the peer and the agent send.
    type Profile: Profile;

    /// The state of a new connection.
    fn for_connection(config: &Config, form: P1Form) -> Self;

    /// The P1 form it speaks.
    fn form(&self) -> P1Form;

    /// A message from the peer that its profile decoded; `Err` is sent as an error frame.
    fn on_message(&mut self, m: Msg<Self>, at: Incoming<'_>) -> Result<Action, Reject>;

    /// A refusal decided before the payload is decoded, from a cheap look at its octets
    /// (`swp_profiles::scan`): for a message whose decoding alone would cost more than a
    /// cap allows.
    fn before_decode(&self, _msg_type: u64, _payload: &[u8]) -> Option<Reject> {
        None
    }

    /// The detail of the error frame for a refusal by the profile's machine.
    fn refusal(e: &Refused<Self>) -> String {
        e.to_string()
    }

    /// When [`ProfileAgent::on_timer`] should next run, if anything waits.
    fn next_deadline(&self) -> Option<u64> {
        None
    }

    /// Octets of the peer's this profile keeps on the connection beyond a small constant
    /// (stored states, outcomes kept for replay): the connection charges them to
    /// `--conn-memory` and `--memory-budget` with its buffered input. Must be O(1).
    fn held_bytes(&self) -> usize {
        0
    }

    /// Time passed: what became due.
    fn on_timer(&mut self, _now_ms: u64) -> Vec<Out> {
        Vec::new()
    }

    /// One envelope from the peer `scope` (its S1 identity, or empty) at `now_ms`: a payload
    /// its profile does not decode (a missing required field, an unassigned msg_type) is
    /// rejected with the payload's canonical code, and a decoded one goes to
    /// [`ProfileAgent::on_message`].
    fn handle(
        &mut self,
        msg_type: u64,
        msg_id: &Bytes,
        payload: &[u8],
        scope: &str,
        now_ms: u64,
    ) -> Action {
        let id = <Self::Profile as Profile>::ID;
        // The profile's own look first: it refuses what is too big to scan further.
        if let Some(r) = self
            .before_decode(msg_type, payload)
            .or_else(|| ids::too_long(id, self.form(), msg_type, payload))
        {
            return Action::Reject(r);
        }
        let m = match Self::Profile::decode(self.form(), msg_type, payload) {
            Ok(m) => m,
            Err(e) => return Action::Reject(refusal(WireError::code(&e), e)),
        };
        // A msg_id cut from the frame's buffer would pin the whole frame (up to 8 MiB) for
        // as long as an agent keeps it (a slow call, a pending reply): the agent gets its
        // own copy of the few octets.
        let msg_id = Bytes::copy_from_slice(msg_id);
        let at = Incoming {
            msg_id: &msg_id,
            scope,
            now_ms,
        };
        self.on_message(m, at).unwrap_or_else(Action::Reject)
    }
}

/// The error frame for a refusal by `A`'s profile's machine.
fn refuse<A: ProfileAgent>(e: &Refused<A>) -> Reject {
    refusal(e.code(), A::refusal(e))
}

/// Steps `machine` (of `A`'s profile) with a message from the peer; a refusal is `A`'s
/// error frame.
fn step<A: ProfileAgent>(
    machine: &mut A::Profile,
    ctx: Ctx<'_>,
    m: &Msg<A>,
) -> Result<Seen<A>, Reject> {
    machine.step(ctx, m).map_err(|e| refuse::<A>(&e))
}

/// One connection's agent: every profile's state, one field per entry of the profile list.
macro_rules! agent {
    ($(($module:ident, $Variant:ident, $Machine:ty, $name:literal)),* $(,)?) => {
        /// One connection's agent: every profile's state.
        #[derive(Debug)]
        pub struct Agent {
            $($module: $module::Agent,)*
        }

        impl Agent {
            /// An agent speaking P1 payloads in `form`.
            pub fn new(config: Config, form: P1Form) -> Self {
                Agent {
                    $($module: ProfileAgent::for_connection(&config, form),)*
                }
            }

            /// Handles one accepted envelope of an agent profile from the peer `scope` (its
            /// S1 identity, or empty), at `now_ms`.
            pub fn handle(
                &mut self,
                profile_id: u64,
                msg_type: u64,
                msg_id: &Bytes,
                payload: &[u8],
                scope: &str,
                now_ms: u64,
            ) -> Action {
                $(
                    if profile_id == <<$module::Agent as ProfileAgent>::Profile as Profile>::ID {
                        return self.$module.handle(msg_type, msg_id, payload, scope, now_ms);
                    }
                )*
                Action::Nothing
            }

            /// Octets of the peer's every profile keeps ([`ProfileAgent::held_bytes`]).
            pub fn held_bytes(&self) -> usize {
                [$(self.$module.held_bytes()),*]
                    .into_iter()
                    .fold(0usize, usize::saturating_add)
            }

            /// When [`Agent::on_timer`] should next run, if anything waits.
            pub fn next_deadline(&self) -> Option<u64> {
                [$(self.$module.next_deadline()),*].into_iter().flatten().min()
            }

            /// Time passed: what became due, profile by profile in the list's order.
            pub fn on_timer(&mut self, now_ms: u64) -> Vec<Out> {
                let mut outs = Vec::new();
                $(outs.extend(self.$module.on_timer(now_ms));)*
                outs
            }
        }
    };
}

swp_profiles::for_each_profile!(agent);

impl Agent {
    /// Whether anything waits for a deadline.
    pub fn has_timers(&self) -> bool {
        self.next_deadline().is_some()
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
