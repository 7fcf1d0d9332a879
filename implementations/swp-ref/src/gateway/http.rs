//! A minimal sans-IO HTTP/1.1 server codec for the gateway's `/mcp` route: request heads
//! with bounded size and header count, strict field syntax, bodies by one unambiguous
//! `Content-Length` only (no chunked encoding: a JSON-RPC message always has a known
//! length), and response serialisation.

/// Largest request head accepted.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Most header lines accepted.
pub const MAX_HEADERS: usize = 64;

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The method (`POST`, `GET`, ...).
    pub method: String,
    /// The request target's path.
    pub path: String,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// Length of the head including the blank line.
    pub head_len: usize,
}

impl Head {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of the header `name` (lower case), in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether a header's comma-separated value list contains `token` (case-insensitive).
    pub fn header_has(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .any(|(_, v)| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    }

    /// The body length the head announces: `Ok(0)` without `Content-Length`.
    ///
    /// Framing that two parsers could read differently is refused, since a proxy in front
    /// that picks the other reading would let a second request hide in the body (request
    /// smuggling, RFC 9112 §6.3 and §11.2): more than one `Content-Length` (even with equal
    /// values), a value that is not plain decimal digits (`+55`, `-1`, `1,1`, ` 5 5`), and
    /// `Transfer-Encoding` alongside `Content-Length`. Chunked bodies are not served at all.
    pub fn content_length(&self, max: usize) -> Result<usize, HttpError> {
        let te = self.headers.iter().any(|(n, _)| n == "transfer-encoding");
        let mut lengths = self
            .headers
            .iter()
            .filter(|(n, _)| n == "content-length")
            .map(|(_, v)| v.as_str());
        let first = lengths.next();
        if lengths.next().is_some() {
            return Err(HttpError::new(400, "more than one Content-Length"));
        }
        match (te, first) {
            (true, Some(_)) => Err(HttpError::new(
                400,
                "Transfer-Encoding and Content-Length together",
            )),
            (true, None) => Err(HttpError::new(
                411,
                "Transfer-Encoding is not supported; send Content-Length",
            )),
            (false, None) => Ok(0),
            (false, Some(v)) => {
                // At most 19 digits always fits a u64; longer is no length we would take.
                if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(HttpError::new(400, "Content-Length is not a number"));
                }
                let n: u64 = v
                    .parse()
                    .map_err(|_| HttpError::new(400, "Content-Length is not a number"))?;
                if n > max as u64 {
                    return Err(HttpError::new(
                        413,
                        format!("body of {n} octets exceeds {max}"),
                    ));
                }
                Ok(n as usize)
            }
        }
    }

    /// Whether the request carries a body, or framing that says it might: a
    /// `Content-Length` other than a plain 0, or any `Transfer-Encoding`.
    pub fn may_have_body(&self) -> bool {
        !matches!(self.content_length(usize::MAX), Ok(0))
    }
}

/// A request that cannot be served, with the status to answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HTTP {status}: {reason}")]
pub struct HttpError {
    /// The status.
    pub status: u16,
    /// Why.
    pub reason: String,
}

impl HttpError {
    /// An error with a status and reason.
    pub fn new(status: u16, reason: impl Into<String>) -> Self {
        HttpError {
            status,
            reason: reason.into(),
        }
    }
}

/// Parses a request head from the start of `buf`: `Ok(None)` when more octets are needed.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, HttpError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD_BYTES {
            Err(HttpError::new(431, "request head too large"))
        } else {
            Ok(None)
        };
    };
    if end > MAX_HEAD_BYTES {
        return Err(HttpError::new(431, "request head too large"));
    }
    let text = std::str::from_utf8(&buf[..end])
        .map_err(|_| HttpError::new(400, "request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::new(400, "malformed request line"));
    };
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HttpError::new(505, format!("{version} is not supported")));
    }
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == MAX_HEADERS {
            return Err(HttpError::new(431, "too many headers"));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(HttpError::new(400, "malformed header line"));
        };
        // A field name is a token: no whitespace before the colon, no folded line (RFC
        // 9112 §5.1 and §5.2), since another parser could attach it to a different field.
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(HttpError::new(400, "malformed header name"));
        }
        // No control characters in values (a bare CR or LF would end the line for a
        // lenient parser and start a header we never saw).
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(HttpError::new(400, "control character in a header value"));
        }
        headers.push((
            name.to_ascii_lowercase(),
            value.trim_matches([' ', '\t']).to_owned(),
        ));
    }
    let path = target.split('?').next().unwrap_or_default().to_owned();
    Ok(Some(Head {
        method: method.to_owned(),
        path,
        headers,
        head_len: end + 4,
    }))
}

/// RFC 9110 §5.6.2 token characters.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The reason phrase of a status the gateway uses.
pub fn reason(status: u16) -> &'static str {
    match status {
        101 => "Switching Protocols",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

/// A whole response with a body.
pub fn response(status: u16, content_type: &str, body: &[u8], extra: &[(&str, &str)]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if !body.is_empty() {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let req = b"POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: keep-alive, Upgrade\r\n\r\nhello";
        let h = parse_head(req).unwrap().unwrap();
        assert_eq!((h.method.as_str(), h.path.as_str()), ("POST", "/mcp"));
        assert_eq!(h.content_length(10), Ok(5));
        assert_eq!(&req[h.head_len..], b"hello");
        assert!(h.header_has("connection", "upgrade"));
        assert_eq!(parse_head(b"POST /mcp HTTP/1.1\r\n"), Ok(None));
        assert_eq!(h.content_length(4).unwrap_err().status, 413);
        for bad in [
            &b"POST /mcp\r\n\r\n"[..],
            b"POST /mcp HTTP/1.1\r\nNoColon\r\n\r\n",
        ] {
            assert_eq!(parse_head(bad).unwrap_err().status, 400);
        }
        assert_eq!(
            parse_head(&[b'a'; MAX_HEAD_BYTES + 1]).unwrap_err().status,
            431
        );
        let te = parse_head(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(te.content_length(10).unwrap_err().status, 411);
        let big =
            parse_head(b"POST /mcp HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")
                .unwrap()
                .unwrap();
        assert_eq!(big.content_length(10).unwrap_err().status, 400);
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let status = |extra: &str| {
            let req = format!("POST /mcp HTTP/1.1\r\nHost: a\r\n{extra}\r\n");
            match parse_head(req.as_bytes()) {
                Err(e) => e.status,
                Ok(h) => h
                    .unwrap()
                    .content_length(1000)
                    .map_or_else(|e| e.status, |_| 200),
            }
        };
        assert_eq!(status("Content-Length: 5\r\n"), 200);
        assert_eq!(status("Content-Length: 007\r\n"), 200);
        for bad in [
            "Content-Length: 5\r\nContent-Length: 6\r\n",
            "Content-Length: 5\r\nContent-Length: 5\r\n",
            "Content-Length: +55\r\n",
            "Content-Length: -1\r\n",
            "Content-Length: 5, 5\r\n",
            "Content-Length: 5 5\r\n",
            "Content-Length: \r\n",
            "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
            "Content-Length : 5\r\n",
            " Content-Length: 5\r\n",
            "Content-Length: 5\rX: y\r\n",
        ] {
            assert_eq!(status(bad), 400, "{bad:?}");
        }
        assert_eq!(status("Transfer-Encoding: chunked\r\n"), 411);
        let h = |extra: &str| {
            let req = format!("POST /x HTTP/1.1\r\n{extra}\r\n");
            parse_head(req.as_bytes()).unwrap().unwrap()
        };
        assert!(!h("").may_have_body());
        assert!(!h("Content-Length: 0\r\n").may_have_body());
        assert!(h("Content-Length: 1\r\n").may_have_body());
        assert!(h("Content-Length: x\r\n").may_have_body());
        assert!(h("Transfer-Encoding: chunked\r\n").may_have_body());
    }
}
