//! The limit flags every server takes (`serve`, `relay`, `mcp-gateway`), their defaults,
//! and the parsing of durations (`500ms`, `30s`, `2m`) and sizes (`64KiB`, `16MiB`).

use std::fmt;
use std::time::Duration;

/// Default `--max-connections` ceiling; lowered further to fit the descriptor limit.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Descriptors kept back from `--max-connections` for the listener, stdio, logs, the
/// upstream link, and connections accepted while an evicted one is still closing.
pub const RESERVED_DESCRIPTORS: u64 = 64;
/// Default `--idle-timeout`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default `--header-timeout`.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default `--body-timeout`.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default `--conn-memory`: two default-sized frames (one arriving, replies pending).
pub const DEFAULT_CONN_MEMORY: usize = 16 * 1024 * 1024;
/// Default `--memory-budget`.
pub const DEFAULT_MEMORY_BUDGET: usize = 128 * 1024 * 1024;
/// Default `--tcp-keepalive`.
pub const DEFAULT_TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The limit flags (docs/reference-limits.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LimitArgs {
    /// Most connections at once; a newcomer over the cap takes the slot of the connection
    /// idle the longest, or is closed when all are busy [default: 1024, or the descriptor
    /// limit minus 64 if lower].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// Close a connection with nothing in progress after this long without input; 0 never
    /// [default: 120s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Longest time for a request head (HTTP) or the TLS handshake (serve) [default: 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_nonzero_duration)]
    pub header_timeout: Option<Duration>,
    /// Longest time for one frame, HTTP body or WebSocket message to arrive once it has
    /// begun [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = parse_nonzero_duration)]
    pub body_timeout: Option<Duration>,
    /// Most octets one connection may hold buffered: a partial frame, body or message, and
    /// delayed replies [default: 16MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub conn_memory: Option<usize>,
    /// Most octets all connections together may hold buffered; a connection that would go
    /// over is refused with an error and closed [default: 128MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_budget: Option<usize>,
    /// Send TCP keepalive probes after this much silence; 0 disables them [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub tcp_keepalive: Option<Duration>,
}

/// The limit flags of `relay`: those of [`LimitArgs`] but `--header-timeout`, since a relay
/// connection has no head and no handshake before its first frame. Each one says what it
/// bounds in the relay.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RelayLimitArgs {
    /// Most connections at once; a newcomer over the cap takes the slot of the connection
    /// idle the longest (no partial frame either way), or is closed when all are busy
    /// [default: 1024, or the descriptor limit minus 64 if lower].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// Close a connection after this long without input from its client while no frame is
    /// partly buffered; 0 never [default: 120s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Longest time for one frame from the client to arrive once it has begun, and for one
    /// write to the client [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = parse_nonzero_duration)]
    pub body_timeout: Option<Duration>,
    /// Most octets one connection may hold buffered: the partial frame each way; a
    /// connection that would go over is closed [default: 16MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub conn_memory: Option<usize>,
    /// Most octets all connections together may hold buffered; a connection that would go
    /// over is closed [default: 128MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_budget: Option<usize>,
    /// Send TCP keepalive probes to clients after this much silence; 0 disables them
    /// [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub tcp_keepalive: Option<Duration>,
}

impl RelayLimitArgs {
    /// The limits, with defaults for what was not given (the header timeout, which the
    /// relay does not use, at its default).
    pub fn resolve(&self) -> ServerLimits {
        LimitArgs {
            max_connections: self.max_connections,
            idle_timeout: self.idle_timeout,
            header_timeout: None,
            body_timeout: self.body_timeout,
            conn_memory: self.conn_memory,
            memory_budget: self.memory_budget,
            tcp_keepalive: self.tcp_keepalive,
        }
        .resolve()
    }
}

/// The limits in force, defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Connection cap.
    pub max_connections: usize,
    /// Idle timeout; `None` never closes idle connections.
    pub idle_timeout: Option<Duration>,
    /// Request head / TLS handshake timeout.
    pub header_timeout: Duration,
    /// Frame / body / message timeout.
    pub body_timeout: Duration,
    /// Per-connection buffered octets.
    pub conn_memory: usize,
    /// Global buffered octets.
    pub memory_budget: usize,
    /// Keepalive idle time; zero disables.
    pub tcp_keepalive: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        LimitArgs::default().resolve()
    }
}

impl LimitArgs {
    /// The limits, with defaults for what was not given.
    pub fn resolve(&self) -> ServerLimits {
        let max_connections = match self.max_connections {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => default_max_connections(descriptor_limit()),
        };
        let idle = self.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT);
        ServerLimits {
            max_connections,
            idle_timeout: (!idle.is_zero()).then_some(idle),
            header_timeout: self.header_timeout.unwrap_or(DEFAULT_HEADER_TIMEOUT),
            body_timeout: self.body_timeout.unwrap_or(DEFAULT_BODY_TIMEOUT),
            conn_memory: self.conn_memory.unwrap_or(DEFAULT_CONN_MEMORY),
            memory_budget: self.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET),
            tcp_keepalive: self.tcp_keepalive.unwrap_or(DEFAULT_TCP_KEEPALIVE),
        }
    }
}

/// The process's soft descriptor limit, if it has one.
pub fn descriptor_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// The default cap for a descriptor limit: [`DEFAULT_MAX_CONNECTIONS`], lowered so that
/// connections plus [`RESERVED_DESCRIPTORS`] fit under the limit (so the cap, not EMFILE,
/// is what a flood runs into).
pub fn default_max_connections(nofile: Option<u64>) -> usize {
    let fit = nofile.map_or(u64::MAX, |n| n.saturating_sub(RESERVED_DESCRIPTORS).max(1));
    usize::try_from(fit.min(DEFAULT_MAX_CONNECTIONS as u64)).unwrap_or(DEFAULT_MAX_CONNECTIONS)
}

/// A duration that is not `N`, `Nms`, `Ns` or `Nm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue(&'static str);

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BadValue {}

fn split_number(s: &str) -> Option<(u64, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n = s[..end].parse().ok()?;
    Some((n, s[end..].trim()))
}

/// Parses `500ms`, `30s`, `2m` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    const WHAT: &str = "expected a duration such as 500ms, 30s or 2m";
    let (n, unit) = split_number(s).ok_or(BadValue(WHAT))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => n
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or(BadValue(WHAT)),
        _ => Err(BadValue(WHAT)),
    }
}

fn parse_nonzero_duration(s: &str) -> Result<Duration, BadValue> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(BadValue("must be longer than zero"));
    }
    Ok(d)
}

/// Parses `4096`, `64KiB`, `16MiB`, `1GiB`.
pub fn parse_size(s: &str) -> Result<usize, BadValue> {
    const WHAT: &str = "expected a size such as 65536, 64KiB, 16MiB or 1GiB";
    let (n, unit) = split_number(s).ok_or(BadValue(WHAT))?;
    let shift = match unit {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return Err(BadValue(WHAT)),
    };
    n.checked_mul(1 << shift)
        .and_then(|v| usize::try_from(v).ok())
        .ok_or(BadValue(WHAT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1h").is_err());
        assert!(parse_nonzero_duration("0s").is_err());
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4 KB").is_err());
        assert!(parse_size("99999999999GiB").is_err());
    }

    #[test]
    fn the_default_cap_fits_the_descriptor_limit() {
        assert_eq!(default_max_connections(None), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(
            default_max_connections(Some(1 << 20)),
            DEFAULT_MAX_CONNECTIONS
        );
        assert_eq!(default_max_connections(Some(1024)), 960);
        assert_eq!(default_max_connections(Some(10)), 1);
        let l = LimitArgs {
            idle_timeout: Some(Duration::ZERO),
            ..LimitArgs::default()
        }
        .resolve();
        assert_eq!(l.idle_timeout, None);
        assert_eq!(l.body_timeout, DEFAULT_BODY_TIMEOUT);
    }
}
