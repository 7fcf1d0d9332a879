//! The `--listen` address: its syntax, name resolution, and the S1 rule that plaintext is
//! only ever served on loopback.

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;

/// Where the endpoint listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// One connection on stdin/stdout.
    Stdio,
    /// Plaintext TCP (loopback only).
    Tcp(HostPort),
    /// TLS over TCP.
    Tls(HostPort),
}

/// A host (name or IP literal, brackets removed) and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// The host as written, without IPv6 brackets.
    pub host: String,
    /// The port; 0 asks the system for a free one.
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A `--listen` value that is not `stdio`, `tcp://HOST:PORT` or `tls://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid listen address {value:?}: {why} (expected stdio, tcp://HOST:PORT or tls://HOST:PORT)"
)]
pub struct ListenParseError {
    value: String,
    why: &'static str,
}

impl FromStr for Listen {
    type Err = ListenParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| ListenParseError {
            value: s.to_owned(),
            why,
        };
        if s == "stdio" {
            return Ok(Listen::Stdio);
        }
        let (tls, rest) = if let Some(r) = s.strip_prefix("tcp://") {
            (false, r)
        } else if let Some(r) = s.strip_prefix("tls://") {
            (true, r)
        } else {
            return Err(err("unknown scheme"));
        };
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| err("missing :PORT"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| err("port is not a number in 0..=65535"))?;
        let host = match host.strip_prefix('[') {
            Some(h) => h.strip_suffix(']').ok_or_else(|| err("unclosed ["))?,
            None if host.contains(':') => return Err(err("IPv6 hosts need brackets")),
            None => host,
        };
        if host.is_empty() {
            return Err(err("empty host"));
        }
        let hp = HostPort {
            host: host.to_owned(),
            port,
        };
        Ok(if tls {
            Listen::Tls(hp)
        } else {
            Listen::Tcp(hp)
        })
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Listen::Stdio => f.write_str("stdio"),
            Listen::Tcp(hp) => write!(f, "tcp://{hp}"),
            Listen::Tls(hp) => write!(f, "tls://{hp}"),
        }
    }
}

/// Whether `ip` is a loopback address: 127.0.0.0/8, ::1, or an IPv4-mapped 127/8.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Resolves `hp` to the addresses to try, in resolver order.
pub fn resolve(hp: &HostPort) -> std::io::Result<Vec<SocketAddr>> {
    if let Ok(ip) = hp.host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, hp.port)]);
    }
    Ok((hp.host.as_str(), hp.port).to_socket_addrs()?.collect())
}

/// The first resolved address that is not loopback, if any: plaintext may only be served
/// when every address the name stands for is loopback.
pub fn first_non_loopback(addrs: &[SocketAddr]) -> Option<IpAddr> {
    addrs
        .iter()
        .map(SocketAddr::ip)
        .find(|ip| !is_loopback(*ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!("stdio".parse::<Listen>(), Ok(Listen::Stdio));
        let l: Listen = "tcp://127.0.0.1:0".parse().unwrap();
        assert_eq!(l.to_string(), "tcp://127.0.0.1:0");
        let l: Listen = "tls://[::1]:8443".parse().unwrap();
        assert_eq!(
            l,
            Listen::Tls(HostPort {
                host: "::1".into(),
                port: 8443
            })
        );
        assert_eq!(l.to_string(), "tls://[::1]:8443");
        for bad in [
            "",
            "udp://x:1",
            "tcp://x",
            "tcp://:1",
            "tcp://x:70000",
            "tcp://::1:5",
            "tls://[::1:5",
        ] {
            assert!(bad.parse::<Listen>().is_err(), "{bad}");
        }
    }

    #[test]
    fn loopback_rule() {
        for ip in ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "0.0.0.0",
            "::",
            "10.0.0.1",
            "192.168.1.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
        let hp = HostPort {
            host: "localhost".into(),
            port: 0,
        };
        let addrs = resolve(&hp).unwrap();
        assert!(!addrs.is_empty());
        assert_eq!(first_non_loopback(&addrs), None);
    }
}
