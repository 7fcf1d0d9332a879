//! SWP-RPC, -EVENTS, -OBS, -ARTIFACT and -STATE (classes C3, C4): P1 decoding in both
//! payload forms and each profile's channel machine, fed raw and synthesised payloads.
//! The body is `swp_profiles::fuzzing::run`, shared with the stable soak test
//! (`implementations/swp-profiles/tests/profiles/fuzz_soak.rs`); its doc describes the input layout
//! and the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| swp_profiles::fuzzing::run(data));
