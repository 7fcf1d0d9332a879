//! msg_id correlation for profile 1 (§5): a requester gives each in-flight request a fresh
//! msg_id and matches the response by it; a responder detects duplicate in-flight msg_ids.
//! The JSON-RPC `id` is never touched here: correlation lives in the envelope.

use std::collections::{HashMap, HashSet};

/// A correlation failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorrelationError {
    /// A request reused a msg_id that is still in flight.
    #[error("msg_id {0} is already in flight")]
    DuplicateInFlight(String),
    /// A response carried a msg_id no request is waiting on.
    #[error("response msg_id {0} matches no request in flight")]
    Unmatched(String),
    /// More requests in flight than the configured bound.
    #[error("more than {0} requests in flight")]
    TooMany(usize),
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The responder's view: msg_ids of requests received and not yet answered.
#[derive(Debug, Default, Clone)]
pub struct InFlight {
    ids: HashSet<Vec<u8>>,
}

impl InFlight {
    /// Records a request's msg_id; a duplicate of one still in flight is an error.
    pub fn begin(&mut self, msg_id: &[u8]) -> Result<(), CorrelationError> {
        if self.ids.contains(msg_id) {
            return Err(CorrelationError::DuplicateInFlight(hex(msg_id)));
        }
        self.ids.insert(msg_id.to_vec());
        Ok(())
    }

    /// Whether a msg_id is in flight.
    pub fn contains(&self, msg_id: &[u8]) -> bool {
        self.ids.contains(msg_id)
    }

    /// Marks a request answered (its terminal response was sent).
    pub fn end(&mut self, msg_id: &[u8]) -> bool {
        self.ids.remove(msg_id)
    }

    /// Forgets everything (the connection closed).
    pub fn clear(&mut self) {
        self.ids.clear();
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no request is in flight.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The requester's view: a fresh msg_id per request and the caller's token per msg_id.
///
/// msg_ids are 16 octets: an 8-octet connection prefix (chosen by the caller, e.g. random
/// or fixed for deterministic runs) and an 8-octet big-endian counter, so ids never repeat
/// within a connection and stay within every receiver's `MIN_MSG_ID_BYTES` bound.
#[derive(Debug, Clone)]
pub struct Correlator<T> {
    prefix: [u8; 8],
    next: u64,
    max_in_flight: usize,
    waiting: HashMap<[u8; 16], T>,
}

impl<T> Correlator<T> {
    /// A correlator whose msg_ids start with `prefix`.
    pub fn new(prefix: [u8; 8], max_in_flight: usize) -> Self {
        Correlator {
            prefix,
            next: 0,
            max_in_flight,
            waiting: HashMap::new(),
        }
    }

    /// Allocates a fresh msg_id for a request and remembers `token` for its response.
    pub fn begin(&mut self, token: T) -> Result<[u8; 16], CorrelationError> {
        if self.waiting.len() >= self.max_in_flight {
            return Err(CorrelationError::TooMany(self.max_in_flight));
        }
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&self.prefix);
        id[8..].copy_from_slice(&self.next.to_be_bytes());
        self.next = self.next.wrapping_add(1);
        self.waiting.insert(id, token);
        Ok(id)
    }

    /// The token of the request a terminal response answers; the request is no longer in
    /// flight afterwards.
    pub fn finish(&mut self, msg_id: &[u8]) -> Result<T, CorrelationError> {
        let key: Option<[u8; 16]> = msg_id.try_into().ok();
        key.and_then(|k| self.waiting.remove(&k))
            .ok_or_else(|| CorrelationError::Unmatched(hex(msg_id)))
    }

    /// Drops every in-flight request, returning their tokens (the upstream went away).
    pub fn drain(&mut self) -> Vec<T> {
        self.waiting.drain().map(|(_, t)| t).collect()
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no request is in flight.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_and_matching() {
        let mut c = Correlator::new(*b"gatewayX", 2);
        let a = c.begin("a").unwrap();
        let b = c.begin("b").unwrap();
        assert_ne!(a, b);
        assert_eq!(c.begin("c"), Err(CorrelationError::TooMany(2)));
        assert_eq!(c.finish(&b), Ok("b"));
        assert!(matches!(c.finish(&b), Err(CorrelationError::Unmatched(_))));
        assert!(matches!(
            c.finish(b"short"),
            Err(CorrelationError::Unmatched(_))
        ));
        assert_eq!(c.drain(), vec!["a"]);
    }

    #[test]
    fn duplicates_in_flight_are_detected() {
        let mut f = InFlight::default();
        f.begin(b"12345678").unwrap();
        assert!(matches!(
            f.begin(b"12345678"),
            Err(CorrelationError::DuplicateInFlight(h)) if h == "3132333435363738"
        ));
        assert!(f.end(b"12345678"));
        f.begin(b"12345678").unwrap();
    }
}
