//! The SSE event ids a server gave within one session (sans-IO), for MCPN-076: an id, where
//! given, is unique across every stream of the session (Streamable HTTP, "Resumability and
//! Redelivery"). The same id on the same data is one event delivered again (a replay),
//! which is the redelivery rule's matter (MCPN-075, MCPN-021), not a second event under the
//! id. The ledger is bounded, so a server handing out ids without end cannot grow it.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Event ids are unique within the session.
pub const UNIQUE_EVENT_IDS: &str = "MCPN-076";

/// Octets of ids kept; ids past this bound are not checked.
const MAX_OCTETS: usize = 1 << 20;

/// The ids seen in one session, with a digest of the data each named.
#[derive(Debug, Default)]
pub struct EventIds {
    seen: BTreeMap<String, u64>,
    octets: usize,
}

fn digest(data: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

impl EventIds {
    /// The server sent an event with `id` carrying `data`: whether the id already named
    /// another event of the session (a violation of MCPN-076).
    pub fn reused(&mut self, id: &str, data: &[u8]) -> bool {
        let d = digest(data);
        match self.seen.get(id) {
            Some(before) => *before != d,
            None => {
                if self.octets + id.len() <= MAX_OCTETS {
                    self.octets += id.len();
                    self.seen.insert(id.to_owned(), d);
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_one_event_and_a_replay_of_it_is_no_second_event() {
        let mut ids = EventIds::default();
        assert!(!ids.reused("a", b""));
        assert!(!ids.reused("b", b"{\"id\":1}"));
        // The same event again (a replay): redelivery, judged elsewhere.
        assert!(!ids.reused("b", b"{\"id\":1}"));
        assert!(ids.reused("a", b"{\"id\":2}"));
    }

    #[test]
    fn the_ledger_is_bounded() {
        let mut ids = EventIds::default();
        let big = "x".repeat(MAX_OCTETS);
        assert!(!ids.reused(&big, b"1"));
        // Past the bound, ids are no longer kept (nor checked).
        assert!(!ids.reused("y", b"1"));
        assert!(!ids.reused("y", b"2"));
    }
}
