//! The stable-toolchain counterpart of the `swp_profiles_c34` fuzz target: random inputs,
//! from a fixed seed, through the same `swp_profiles::fuzzing::run`. A short run is part of
//! the suite; the long one (2,000,000 inputs) runs on request:
//!
//! ```sh
//! cargo test -p swp-profiles --release --test profiles -- --ignored --nocapture soak
//! ```

use swp_profiles::fuzzing::run;

/// xorshift64*: a dependency-free, reproducible source of inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Runs `n` inputs of 1..=256 octets; returns how many octets were fed.
fn soak(n: u64, seed: u64) -> u64 {
    soak_of(n, seed, &[])
}

/// [`soak`], every input steered to one of `profiles` (all when empty) by its first octet,
/// which `run` reads as an index into `channel::PROFILES` (its high bit picks the form).
fn soak_of(n: u64, seed: u64, profiles: &[u64]) -> u64 {
    use swp_profiles::channel::PROFILES;
    let idx: Vec<u8> = profiles
        .iter()
        .filter_map(|p| PROFILES.iter().position(|x| x == p))
        .filter_map(|i| u8::try_from(i).ok())
        .collect();
    let mut rng = Rng(seed | 1);
    let mut buf = Vec::with_capacity(256);
    let mut octets = 0;
    for _ in 0..n {
        buf.clear();
        let len = 1 + rng.next() % 256;
        while (buf.len() as u64) < len {
            buf.extend_from_slice(&rng.next().to_le_bytes());
        }
        buf.truncate(len as usize);
        if !idx.is_empty() {
            let pick = idx[usize::from(buf[0] & 0x7f) % idx.len()];
            buf[0] = (buf[0] & 0x80) | pick;
        }
        // Short records make more messages per input than uniform octets would.
        for rec in buf[1..].chunks_mut(9) {
            if let Some(l) = rec.get_mut(3) {
                *l %= 12;
            }
        }
        octets += len;
        run(&buf);
    }
    octets
}

#[test]
fn soak_short() {
    assert!(soak(20_000, 0x5eed) > 20_000);
}

#[test]
#[ignore = "2 million inputs: run on request, in release (see the module doc)"]
fn soak_two_million() {
    let start = std::time::Instant::now();
    let octets = soak(2_000_000, 0xc34_c34);
    println!(
        "soak: 2000000 inputs, {octets} octets, {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// The discovery profiles alone (SWP-AGDISC 10, SWP-TOOLDISC 11), 2 million inputs:
///
/// ```sh
/// cargo test -p swp-profiles --test profiles -- --ignored --nocapture soak_discovery
/// ```
#[test]
#[ignore = "2 million inputs: run on request (see the doc)"]
fn soak_discovery_two_million() {
    let start = std::time::Instant::now();
    let octets = soak_of(2_000_000, 0xd15c, &[10, 11]);
    println!(
        "soak (profiles 10, 11): 2000000 inputs, {octets} octets, {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn soak_discovery_short() {
    assert!(soak_of(20_000, 0xd15c, &[10, 11]) > 20_000);
}
