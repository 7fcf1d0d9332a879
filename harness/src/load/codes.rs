//! Error frames counted by code, in bounded memory whatever codes the SUT makes up: a code
//! is cut to [`MAX_CODE_CHARS`] before it is a key, one connection counts at most
//! [`TRACKED_CODES`] distinct codes (a code first seen after them is counted as one of the
//! others), and the report keeps the [`REPORTED_CODES`] most frequent, the rest summed.

use std::collections::BTreeMap;

/// Characters of a code kept as its key. The spec's codes (`ERR_RATE_LIMIT_EXCEEDED`)
/// are under 32; a longer code is cut, and codes that differ only past this are one.
pub const MAX_CODE_CHARS: usize = 64;

/// Distinct codes one connection counts one by one. The spec names 18 `ERR_*` codes; a
/// SUT with more than 64 is making them up, and the 65th and later count as others.
pub const TRACKED_CODES: usize = 64;

/// Distinct codes a report names: the most frequent, the rest summed as others.
pub const REPORTED_CODES: usize = 32;

/// Error frames by code, and those counted as other codes.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Tally {
    /// Frames per code, at most [`TRACKED_CODES`] codes (after [`Tally::keep_top`], at most
    /// [`REPORTED_CODES`]).
    pub by_code: BTreeMap<String, u64>,
    /// Frames whose code is not among them (first seen once a connection counted
    /// [`TRACKED_CODES`] codes, or not among the report's [`REPORTED_CODES`]).
    pub other: u64,
}

impl Tally {
    /// Counts one frame with `code`.
    pub fn count(&mut self, code: &str) {
        let key = key(code);
        if let Some(n) = self.by_code.get_mut(&key) {
            *n += 1;
        } else if self.by_code.len() < TRACKED_CODES {
            self.by_code.insert(key, 1);
        } else {
            self.other += 1;
        }
    }

    /// Frames counted, under any code.
    pub fn total(&self) -> u64 {
        self.by_code.values().sum::<u64>() + self.other
    }

    /// Adds `o` (another connection's tally): every code of both is kept, so the sum of
    /// bounded tallies is bounded by their number; [`Tally::keep_top`] cuts it for a report.
    pub fn add(&mut self, o: &Tally) {
        for (k, v) in &o.by_code {
            *self.by_code.entry(k.clone()).or_default() += v;
        }
        self.other += o.other;
    }

    /// Keeps the `n` most frequent codes (ties by code, so the report is deterministic) and
    /// adds the rest to the others.
    pub fn keep_top(&mut self, n: usize) {
        if self.by_code.len() <= n {
            return;
        }
        let mut all: Vec<(String, u64)> = std::mem::take(&mut self.by_code).into_iter().collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (i, (k, v)) in all.into_iter().enumerate() {
            if i < n {
                self.by_code.insert(k, v);
            } else {
                self.other += v;
            }
        }
    }
}

/// `code` as a key: its first [`MAX_CODE_CHARS`] characters, then `…` when it is longer.
fn key(code: &str) -> String {
    match code.char_indices().nth(MAX_CODE_CHARS) {
        Some((i, _)) => format!("{}…", &code[..i]),
        None => code.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_cut_to_a_key() {
        assert_eq!(key("ERR_X"), "ERR_X");
        let long = "E".repeat(1000);
        assert_eq!(key(&long).chars().count(), MAX_CODE_CHARS + 1);
        // Characters, never half of one.
        assert!(key(&"é".repeat(100)).ends_with("é…"));
    }

    #[test]
    fn a_new_code_each_time_stays_bounded_and_counted() {
        let mut t = Tally::default();
        for _ in 0..5 {
            t.count("ERR_RATE_LIMIT_EXCEEDED");
        }
        for i in 0..100_000 {
            t.count(&format!("ERR_MADE_UP_{i}_{}", "x".repeat(200)));
        }
        assert_eq!(t.by_code.len(), TRACKED_CODES);
        assert!(t
            .by_code
            .keys()
            .all(|k| k.chars().count() <= MAX_CODE_CHARS + 1));
        assert_eq!(t.by_code["ERR_RATE_LIMIT_EXCEEDED"], 5);
        assert_eq!(t.total(), 100_005);
        t.keep_top(REPORTED_CODES);
        assert_eq!(t.by_code.len(), REPORTED_CODES);
        assert_eq!(
            t.by_code["ERR_RATE_LIMIT_EXCEEDED"], 5,
            "the frequent code stays"
        );
        assert_eq!(t.total(), 100_005, "nothing is lost, only summed");
    }

    #[test]
    fn connections_add_up_and_the_top_is_by_count_then_code() {
        let mut a = Tally::default();
        let mut b = Tally::default();
        a.count("A");
        a.count("B");
        b.count("B");
        b.count("C");
        b.other = 2;
        a.add(&b);
        assert_eq!(a.total(), 6);
        a.keep_top(1);
        assert_eq!(a.by_code.into_iter().collect::<Vec<_>>(), [("B".into(), 2)]);
        assert_eq!(a.other, 4);
    }
}
