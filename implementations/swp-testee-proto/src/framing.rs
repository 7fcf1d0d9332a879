//! Length-prefixed framing of testee messages, with errors that say what went wrong in terms
//! a testee author can act on (stray logging on stdout, newline-delimited JSON, a truncated
//! message) rather than as a bare length.

use crate::MAX_MESSAGE_BYTES;
use std::io::{self, Read, Write};

/// Reading a message failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The stream failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The length prefix names more than [`MAX_MESSAGE_BYTES`] octets.
    #[error("a message of {0} octets exceeds the {MAX_MESSAGE_BYTES}-octet bound")]
    TooLarge(usize),
    /// The stream ended inside a message.
    #[error("input ended after {got} of {want} message octets")]
    Truncated {
        /// Octets that arrived.
        got: usize,
        /// Octets the prefix announced.
        want: usize,
    },
    /// The four octets where a length prefix belongs are JSON: the peer writes JSON without
    /// the prefix (newline-delimited JSON, say).
    #[error("the peer wrote `{0}…` where a 4-octet big-endian length prefix belongs: this looks like JSON without the prefix (newline-delimited JSON?); every message is its length as 4 octets, then the JSON")]
    UnprefixedJson(String),
    /// The four octets where a length prefix belongs are text: the peer writes something
    /// other than the protocol on this stream (logging on stdout, say).
    #[error("the peer wrote `{0}…` where a 4-octet big-endian length prefix belongs: this is text, not the protocol (testees log to stderr, never to stdout)")]
    Text(String),
}

/// What four octets that cannot be a length prefix look like, if they look like anything.
/// A real prefix of a message within the bound starts with 0x00-0x03, so any printable
/// first octet means the peer is not speaking the protocol.
fn misread_prefix(prefix: [u8; 4]) -> Option<ReadError> {
    let printable = |b: u8| b.is_ascii_graphic() || b == b' ' || b.is_ascii_whitespace();
    if !prefix.iter().all(|&b| printable(b)) {
        return None;
    }
    let shown: String = prefix.iter().map(|&b| char::from(b)).collect();
    let shown = shown.escape_debug().to_string();
    let first = prefix.iter().find(|b| !b.is_ascii_whitespace());
    Some(match first {
        Some(b'{' | b'[') => ReadError::UnprefixedJson(shown),
        _ => ReadError::Text(shown),
    })
}

/// Reads one length-prefixed message; `Ok(None)` on a clean end of input before a prefix.
pub fn read_message(r: &mut impl Read) -> Result<Option<Vec<u8>>, ReadError> {
    let mut prefix = [0u8; 4];
    let mut got = 0;
    while got < prefix.len() {
        match r.read(&mut prefix[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => {
                return Err(ReadError::Truncated {
                    got,
                    want: prefix.len(),
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let len = u32::from_be_bytes(prefix) as usize;
    if len > MAX_MESSAGE_BYTES {
        return Err(misread_prefix(prefix).unwrap_or(ReadError::TooLarge(len)));
    }
    // Read through `take` so memory grows only as octets arrive.
    let mut buf = Vec::new();
    r.take(len as u64).read_to_end(&mut buf)?;
    if buf.len() != len {
        return Err(ReadError::Truncated {
            got: buf.len(),
            want: len,
        });
    }
    Ok(Some(buf))
}

/// Writes one length-prefixed message and flushes.
pub fn write_message(w: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .ok()
        .filter(|&l| l as usize <= MAX_MESSAGE_BYTES)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a message of {} octets exceeds the {MAX_MESSAGE_BYTES}-octet bound",
                    body.len()
                ),
            )
        })?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ends_cleanly() {
        let mut buf = Vec::new();
        write_message(&mut buf, b"{\"id\":1}").unwrap();
        write_message(&mut buf, b"").unwrap();
        let mut r = &buf[..];
        assert_eq!(read_message(&mut r).unwrap().unwrap(), b"{\"id\":1}");
        assert_eq!(read_message(&mut r).unwrap().unwrap(), b"");
        assert!(read_message(&mut r).unwrap().is_none());
    }

    #[test]
    fn names_logging_on_stdout() {
        let e = read_message(&mut &b"acme testee starting\n"[..]).unwrap_err();
        assert!(matches!(&e, ReadError::Text(s) if s == "acme"), "{e:?}");
        assert!(e.to_string().contains("testees log to stderr"), "{e}");
    }

    #[test]
    fn names_json_without_a_prefix() {
        let e = read_message(&mut &b"{\"id\":1,\"ok\":{}}\n"[..]).unwrap_err();
        assert!(matches!(e, ReadError::UnprefixedJson(_)), "{e:?}");
        let e = read_message(&mut &b"\n{\"i"[..]).unwrap_err();
        assert!(matches!(e, ReadError::UnprefixedJson(_)), "{e:?}");
    }

    #[test]
    fn bounds_and_truncation() {
        let e = read_message(&mut &[0x05, 0, 0, 0][..]).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(0x0500_0000)), "{e:?}");
        let e = read_message(&mut &[0, 0, 0, 9, b'{'][..]).unwrap_err();
        assert!(
            matches!(e, ReadError::Truncated { got: 1, want: 9 }),
            "{e:?}"
        );
        let e = read_message(&mut &[0, 0][..]).unwrap_err();
        assert!(
            matches!(e, ReadError::Truncated { got: 2, want: 4 }),
            "{e:?}"
        );
    }
}
