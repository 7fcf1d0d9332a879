//! SWP profiles as sans-IO libraries: message classification, payload validation,
//! correlation, lifecycle and stream bookkeeping for each profile, with no sockets and no
//! clocks (time is passed in), so the reference endpoint, the codec testee, the harness and
//! tests share one implementation of the rules. P1 (protobuf) payload schemas are compiled
//! in and reflectable ([`p1`]); the SWP-* profiles of classes C3 and C4 ([`rpc`],
//! [`events`], [`obs`], [`artifact`], [`state`]) decode either P1 form ([`P1Form`]) and are
//! reachable behind one call in [`channel`] (docs/profiles.md). Every SWP-* machine has
//! the one shape of [`Profile`] (one `step` with its [`Ctx`]); the profiles are listed once,
//! in [`for_each_profile`], and their machines keep bounded memory in [`bounded::Bounded`].

#![forbid(unsafe_code)]

pub mod a2a;
pub mod agdisc;
pub mod artifact;
pub mod bounded;
pub mod channel;
pub mod cred;
pub mod events;
#[doc(hidden)]
pub mod fuzzing;
pub mod mcp;
pub mod obs;
pub mod p1;
pub mod payload;
pub mod policyhint;
pub mod profile;
pub mod relay;
pub mod rpc;
pub mod scan;
pub mod state;
pub mod tooldisc;

pub use p1::P1Form;
pub use profile::{Ctx, Profile, WireError};

/// The SWP-* profiles behind [`channel`], listed once: hands `$callback!` one
/// `(module, Variant, machine, "name")` tuple per profile, in the order of
/// [`channel::PROFILES`], the machine being the module's [`Profile`]. The channel's types
/// and dispatch are generated from it, and so is the reference endpoint's agent (swp-ref):
/// adding a profile is its own folder (with its `impl Profile`), its `pub mod` and one line
/// here.
#[macro_export]
macro_rules! for_each_profile {
    ($callback:ident) => {
        $callback! {
            (agdisc, Agdisc, $crate::agdisc::Cache, "SWP-AGDISC"),
            (tooldisc, Tooldisc, $crate::tooldisc::Catalog, "SWP-TOOLDISC"),
            (rpc, Rpc, $crate::rpc::Lifecycle, "SWP-RPC"),
            (events, Events, $crate::events::Stream, "SWP-EVENTS"),
            (artifact, Artifact, $crate::artifact::Transfers, "SWP-ARTIFACT"),
            (state, State, $crate::state::Store, "SWP-STATE"),
            (obs, Obs, $crate::obs::Contexts, "SWP-OBS"),
            (cred, Cred, $crate::cred::Chains, "SWP-CRED"),
            (policyhint, Policyhint, $crate::policyhint::Policy, "SWP-POLICYHINT"),
            (relay, Relay, $crate::relay::Deliveries, "SWP-RELAY"),
        }
    };
}
