//! The streaming discipline of profile 1 (§7), checked from the receiving side: partial
//! results arrive as notifications, then exactly one terminal response ends the request;
//! nothing for that request may follow it.

use std::collections::HashSet;

/// A breach of the streaming discipline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// A second terminal response (or a partial) for a request already ended.
    #[error("request {0} already received its terminal response")]
    AfterTerminal(String),
    /// A partial or terminal for a request that was never sent.
    #[error("request {0} is not open")]
    NotOpen(String),
}

/// Tracks open streamed requests by a caller-chosen key (e.g. the JSON-RPC id text or the
/// progress token).
#[derive(Debug, Default, Clone)]
pub struct StreamTracker {
    open: HashSet<String>,
    ended: HashSet<String>,
    partials: usize,
}

impl StreamTracker {
    /// Opens a request.
    pub fn open(&mut self, key: &str) {
        self.ended.remove(key);
        self.open.insert(key.to_owned());
    }

    /// A partial result for `key`.
    pub fn partial(&mut self, key: &str) -> Result<(), StreamError> {
        self.check(key)?;
        self.partials += 1;
        Ok(())
    }

    /// The terminal response for `key`; the request is closed afterwards.
    pub fn terminal(&mut self, key: &str) -> Result<(), StreamError> {
        self.check(key)?;
        self.open.remove(key);
        self.ended.insert(key.to_owned());
        Ok(())
    }

    /// Partial results seen so far.
    pub fn partials(&self) -> usize {
        self.partials
    }

    /// Whether every opened request got its terminal response.
    pub fn all_terminated(&self) -> bool {
        self.open.is_empty()
    }

    fn check(&self, key: &str) -> Result<(), StreamError> {
        if self.ended.contains(key) {
            Err(StreamError::AfterTerminal(key.to_owned()))
        } else if !self.open.contains(key) {
            Err(StreamError::NotOpen(key.to_owned()))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_then_one_terminal() {
        let mut s = StreamTracker::default();
        s.open("1");
        s.partial("1").unwrap();
        s.partial("1").unwrap();
        assert!(!s.all_terminated());
        s.terminal("1").unwrap();
        assert!(s.all_terminated());
        assert_eq!(s.partials(), 2);
        assert_eq!(s.terminal("1"), Err(StreamError::AfterTerminal("1".into())));
        assert_eq!(s.partial("1"), Err(StreamError::AfterTerminal("1".into())));
        assert_eq!(s.partial("2"), Err(StreamError::NotOpen("2".into())));
    }
}
