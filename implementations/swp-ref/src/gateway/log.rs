//! The gateway's structured log (seed 003): one JSON line per client message, with the
//! timestamp, ids, transport, route, method, status, duration and error payload, and the
//! metadata `schemaVersion` and `deterministic`. In deterministic mode times and durations
//! are redacted and the SWP msg_id is the connection-local counter, so a log is a golden file.

use super::canonical::GatewayError;
use super::policy::EnvelopePolicy;
use serde::Serialize;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The version of the log line layout.
pub const SCHEMA_VERSION: &str = "1";

/// What a timestamp or duration reads in deterministic mode.
pub const REDACTED: &str = "<redacted>";

/// One exchange, as logged.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// RFC 3339 UTC time of the message's arrival, or [`REDACTED`].
    pub timestamp: String,
    /// The ids involved.
    pub ids: Ids,
    /// `stdio`, `http` or `websocket`.
    pub transport: &'static str,
    /// The route: `/mcp` for HTTP and WebSocket, `stdio` for stdio.
    pub route: &'static str,
    /// The JSON-RPC method, when the message had a string one.
    pub method: Option<String>,
    /// `ok`, `accepted` (a notification), or the canonical error code name.
    pub status: String,
    /// The HTTP status the exchange maps to (also for stdio and WebSocket, for parity).
    pub http_status: u16,
    /// Milliseconds from arrival to answer, or [`REDACTED`].
    pub duration_ms: serde_json::Value,
    /// The error payload sent, when the answer was a canonical error.
    pub error: Option<ErrorPayload>,
    /// Layout metadata.
    pub metadata: Metadata,
}

/// The ids of one exchange.
#[derive(Debug, Clone, Serialize)]
pub struct Ids {
    /// The JSON-RPC id as raw JSON text (`null` when absent or unusable).
    pub jsonrpc: String,
    /// The SWP msg_id (hex) the request travelled upstream under, when it was forwarded.
    pub msg_id: Option<String>,
}

/// The canonical error of an exchange.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorPayload {
    /// The canonical code name.
    pub canonical: &'static str,
    /// The JSON-RPC code.
    pub code: i64,
    /// The JSON-RPC message.
    pub message: &'static str,
    /// Why.
    pub detail: String,
}

impl ErrorPayload {
    /// The error as `policy` presents it to the client.
    pub fn new(e: &GatewayError, policy: EnvelopePolicy) -> Self {
        ErrorPayload {
            canonical: e.code.name(),
            code: policy.jsonrpc_code(e.code),
            message: policy.message(e.code),
            detail: e.detail.clone(),
        }
    }
}

/// Layout metadata.
#[derive(Debug, Clone, Serialize)]
pub struct Metadata {
    /// [`SCHEMA_VERSION`].
    #[serde(rename = "schemaVersion")]
    pub schema_version: &'static str,
    /// Whether times are redacted.
    pub deterministic: bool,
}

/// Where events go.
pub struct Log {
    out: Option<Mutex<Box<dyn Write + Send>>>,
    deterministic: bool,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("deterministic", &self.deterministic)
            .finish()
    }
}

impl Log {
    /// A log writing JSON lines to `out` (none: logging off).
    pub fn new(out: Option<Box<dyn Write + Send>>, deterministic: bool) -> Self {
        Log {
            out: out.map(Mutex::new),
            deterministic,
        }
    }

    /// Whether times are redacted.
    pub fn deterministic(&self) -> bool {
        self.deterministic
    }

    /// The timestamp field for an arrival at `at`.
    pub fn timestamp(&self, at: SystemTime) -> String {
        if self.deterministic {
            REDACTED.to_owned()
        } else {
            rfc3339(at)
        }
    }

    /// The duration field.
    pub fn duration(&self, d: Duration) -> serde_json::Value {
        if self.deterministic {
            REDACTED.into()
        } else {
            // Microsecond resolution is plenty for a log line.
            serde_json::json!((d.as_micros() as f64) / 1000.0)
        }
    }

    /// The metadata block.
    pub fn metadata(&self) -> Metadata {
        Metadata {
            schema_version: SCHEMA_VERSION,
            deterministic: self.deterministic,
        }
    }

    /// Writes one event as a JSON line; a log that cannot be written is dropped, not fatal
    /// (serving clients matters more than logging them).
    pub fn write(&self, event: &Event) {
        let Some(out) = &self.out else { return };
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        if let Ok(mut w) = out.lock() {
            let _ = w.write_all(&line).and_then(|()| w.flush());
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for a system time (UTC, proleptic Gregorian).
pub fn rfc3339(at: SystemTime) -> String {
    let d = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant), valid for every date after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        assert_eq!(rfc3339(t), "2026-11-18T11:06:40.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
