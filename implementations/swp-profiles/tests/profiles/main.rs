//! The SWP-* profiles of classes C3 and C4 through their public API: one module per
//! profile, each test naming the requirement IDs it covers
//! (`vectors/requirements/swp-*.yaml`), then the round trips in both P1 forms, decoding that
//! never panics, and the stable-toolchain counterpart of the fuzz target.

mod agdisc;
mod artifact;
mod events;
mod forms;
mod fuzz_soak;
mod obs;
mod relay;
mod rpc;
mod state;
mod tooldisc;

use swp_profiles::P1Form;

/// Both payload forms, for tests that must hold in each.
pub const FORMS: [P1Form; 2] = [P1Form::Message, P1Form::Wrapper];
