//! Which browser origins may use the gateway's HTTP and WebSocket route: the defence
//! against DNS rebinding the MCP HTTP transport asks servers to apply. A page on
//! `http://evil.example` whose name is made to resolve to 127.0.0.1 can reach a loopback
//! gateway, but its browser still sends `Origin: http://evil.example`; refusing origins
//! that are neither loopback nor on the allow-list stops it. A request without `Origin`
//! comes from a non-browser client (curl, an SDK, the harness), which DNS rebinding cannot
//! drive, so it is served.

/// The allow-list, beside the loopback origins always allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    allowed: Vec<String>,
}

impl OriginPolicy {
    /// A policy allowing loopback origins and `allowed` (exact origins such as
    /// `https://app.example:8443`; compared case-insensitively, trailing `/` ignored).
    pub fn new(allowed: impl IntoIterator<Item = String>) -> Self {
        OriginPolicy {
            allowed: allowed.into_iter().map(|o| normalise(&o)).collect(),
        }
    }

    /// Checks the `Origin` header values of one request (normally none or one). `Err`
    /// says why the request is refused (answer 403).
    pub fn check<'a>(&self, origins: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
        let mut origins = origins.into_iter();
        let Some(origin) = origins.next() else {
            return Ok(());
        };
        if origins.next().is_some() {
            return Err("more than one Origin header".into());
        }
        let o = normalise(origin);
        if is_loopback_origin(&o) || self.allowed.contains(&o) {
            return Ok(());
        }
        Err(format!(
            "origin {origin} is not allowed (loopback origins and --allow-origin only)"
        ))
    }
}

fn normalise(o: &str) -> String {
    o.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `http(s)://localhost`, `127.x.y.z` or `[::1]`, with any port.
fn is_loopback_origin(o: &str) -> bool {
    let Some(rest) = o
        .strip_prefix("http://")
        .or_else(|| o.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, port)) if port.is_empty() || valid_port(port) => h,
            _ => return false,
        },
        None => match rest.split_once(':') {
            Some((h, port)) if valid_port(port) => h,
            Some(_) => return false,
            None => rest,
        },
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(crate::serve::listen::is_loopback)
}

fn valid_port(p: &str) -> bool {
    let p = p.strip_prefix(':').unwrap_or(p);
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_listed_origins_pass_others_fail() {
        let p = OriginPolicy::new(["https://App.example:8443/".to_owned()]);
        for ok in [
            &[][..],
            &["http://localhost:6274"],
            &["http://127.0.0.1"],
            &["https://[::1]:9"],
            &["https://app.example:8443"],
        ] {
            assert!(p.check(ok.iter().copied()).is_ok(), "{ok:?}");
        }
        for bad in [
            &["http://evil.example"][..],
            &["evil.example"],
            &["null"],
            &["http://localhost.evil.example"],
            &["http://127.0.0.1.evil.example"],
            &["http://localhost:80@evil.example"],
            &["https://app.example"],
            &["http://localhost", "http://localhost"],
        ] {
            assert!(p.check(bad.iter().copied()).is_err(), "{bad:?}");
        }
    }
}
