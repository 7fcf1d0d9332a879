//! A sans-IO parser of Server-Sent Events (the WHATWG `text/event-stream` format), as MCP
//! Streamable HTTP carries JSON-RPC messages in it: octets in, complete events out, lines
//! ending in CRLF, LF or CR, `data:` lines joined with newlines, comments and unknown
//! fields skipped, and a bound on how large one event may grow. Each event keeps the `id`
//! and `retry` fields it carried itself, and a block of only `id:` or `retry:` (which a
//! browser does not dispatch but still takes the id and reconnection time from) comes out
//! too, without data: resuming a stream (`Last-Event-ID`) needs exactly those.

/// One block of fields ended by a blank line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:` (empty means `message`).
    pub event: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// The block had a `data:` field (an event a browser dispatches, even with empty data).
    pub has_data: bool,
    /// The `id:` this block carried itself (not one inherited from an earlier event), when
    /// not empty: an empty `id:` only resets the last event id.
    pub id: Option<String>,
    /// The `retry:` this block carried (milliseconds), when it is a valid one.
    pub retry: Option<u64>,
}

/// An event grew past the bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a server-sent event over {0} octets")]
pub struct TooLarge(pub usize);

/// The parser's state between chunks of octets.
#[derive(Debug, Default)]
pub struct Parser {
    line: Vec<u8>,
    /// The previous chunk ended on CR: an LF starting the next one belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    /// The block being read has a field (so a blank line ends an event, not nothing).
    fields: bool,
    id: Option<String>,
    retry: Option<u64>,
    /// The last event id (WHATWG's buffer, which a block without `id:` keeps).
    last_id: String,
    max: usize,
}

impl Parser {
    /// A parser refusing events (and lines) larger than `max` octets.
    pub fn new(max: usize) -> Parser {
        Parser {
            max,
            ..Parser::default()
        }
    }

    /// The last event id the stream set (empty: none), what a client resumes from.
    pub fn last_id(&self) -> &str {
        &self.last_id
    }

    /// Feeds octets; returns the events they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>, TooLarge> {
        let mut out = Vec::new();
        for &b in bytes {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(e) = self.line_done(&line) {
                        out.push(e);
                    }
                }
                _ => {
                    self.line.push(b);
                    if self.line.len() + self.data.len() > self.max {
                        return Err(TooLarge(self.max));
                    }
                }
            }
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &[u8]) -> Option<Event> {
        if line.is_empty() {
            let e = Event {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
                has_data: std::mem::take(&mut self.has_data),
                id: self.id.take(),
                retry: self.retry.take(),
            };
            return std::mem::take(&mut self.fields).then_some(e);
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
            None => (text.into_owned(), String::new()),
        };
        match field.as_str() {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
                self.fields = true;
            }
            "event" => self.event = value,
            // WHATWG: an id with NUL is ignored; an empty one resets the last id.
            "id" if !value.contains('\0') => {
                self.fields = true;
                self.last_id = value.clone();
                self.id = (!value.is_empty()).then_some(value);
            }
            // Only ASCII digits make a reconnection time; anything else is ignored.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                    self.fields = true;
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let mut p = Parser::new(1 << 20);
        let mut got = p
            .feed(b": comment\r\nid: 7\r\nevent: message\r\ndata: {\"a\":")
            .unwrap();
        assert!(got.is_empty());
        got.extend(p.feed(b"1}\r").unwrap());
        got.extend(p.feed(b"\n\r\ndata: x\ndata: y\n\ndata\n\n").unwrap());
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].data, "{\"a\":1}");
        assert_eq!(got[0].id.as_deref(), Some("7"));
        assert_eq!(got[1].data, "x\ny");
        // The id is the block's own; the stream's last id stays.
        assert_eq!(got[1].id, None);
        assert_eq!(p.last_id(), "7");
        assert_eq!(got[2].data, "");
        assert!(got[2].has_data);
    }

    #[test]
    fn a_priming_event_and_a_bare_id_carry_their_id_and_retry() {
        let mut p = Parser::new(1 << 10);
        let got = p
            .feed(b"id: p1\nretry: 500\ndata: \n\nid: p2\n\nretry: x1\n\n: only a comment\n\n")
            .unwrap();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            (got[0].id.as_deref(), got[0].retry, got[0].has_data),
            (Some("p1"), Some(500), true)
        );
        assert_eq!((got[1].id.as_deref(), got[1].has_data), (Some("p2"), false));
        assert_eq!(p.last_id(), "p2");
        // An empty id resets the last id and carries none.
        let got = p.feed(b"id:\ndata: m\n\n").unwrap();
        assert_eq!((got[0].id.as_deref(), p.last_id()), (None, ""));
    }

    #[test]
    fn hostile_fields_are_bounded_and_never_panic() {
        let mut p = Parser::new(16);
        assert!(p.feed(b"\n\n\r\r\n").unwrap().is_empty());
        assert_eq!(p.feed(&[b'a'; 40]), Err(TooLarge(16)));
        let mut p = Parser::new(64);
        // A retry too large for u64, an id with NUL: ignored.
        let got = p
            .feed(b"retry: 99999999999999999999999\nid: a\0b\n\n")
            .unwrap();
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(p.feed(b"id: \xff\xfe\n\n").unwrap().len(), 1);
    }
}
