//! Every SWP-* profile (classes C3 to C5: AGDISC 10, TOOLDISC 11, RPC 12, EVENTS 13, ARTIFACT
//! 14, CRED 15, POLICYHINT 16, STATE 17, OBS 18, RELAY 19): P1 decoding in both payload forms
//! and each profile's channel machine, fed raw and synthesised payloads. (The name predates
//! C5; renaming it would orphan the corpora people keep under it.)
//! The body is `swp_profiles::fuzzing::run`, shared with the stable soak test
//! (`implementations/swp-profiles/tests/profiles/fuzz_soak.rs`); its doc describes the input layout
//! and the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| swp_profiles::fuzzing::run(data));
