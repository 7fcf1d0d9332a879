//! A sans-IO parser of Server-Sent Events (the WHATWG `text/event-stream` format), as MCP
//! Streamable HTTP carries JSON-RPC messages in it: octets in, complete events out, lines
//! ending in CRLF, LF or CR, `data:` lines joined with newlines, comments and unknown
//! fields skipped, and a bound on how large one event may grow.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:` (empty means `message`).
    pub event: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// `id:`, when given.
    pub id: Option<String>,
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
    id: Option<String>,
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
                id: self.id.clone(),
            };
            // An event without data is not dispatched (WHATWG 9.2.6).
            return std::mem::take(&mut self.has_data).then_some(e);
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
            }
            "event" => self.event = value,
            "id" if !value.contains('\0') => self.id = Some(value),
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
        assert_eq!(got[2].data, "");
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_size_is_bounded() {
        let mut p = Parser::new(16);
        assert!(p.feed(b"id: 1\n\n").unwrap().is_empty());
        assert_eq!(p.feed(&[b'a'; 40]), Err(TooLarge(16)));
    }
}
