//! The `serve` command line and its validation into [`Options`]: limits and policy default
//! to `swp_core`'s, and combinations that cannot be served are refused before anything
//! listens.

use super::listen::Listen;
use super::tls::{IdentityField, TlsOptions};
use super::{Options, ServeError};
use crate::endpoint::{Config, DEFAULT_MAX_PENDING};
use crate::limits::LimitArgs;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;
use swp_core::{Limits, Policy, RateLimit, UnknownProfilePolicy};
use swp_profiles::p1::P1Form;

/// `swp-ref serve` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where to listen: stdio (one connection on stdin/stdout), tcp://HOST:PORT (loopback
    /// only) or tls://HOST:PORT. Port 0 picks a free port.
    #[arg(long, value_name = "stdio|tcp://HOST:PORT|tls://HOST:PORT")]
    pub listen: Listen,
    /// Server certificate chain (PEM, leaf first); required for tls://.
    #[arg(long, value_name = "PEM")]
    pub cert: Option<PathBuf>,
    /// Server private key (PEM); required for tls://.
    #[arg(long, value_name = "PEM")]
    pub key: Option<PathBuf>,
    /// mTLS: require client certificates and verify them against this CA bundle (PEM).
    #[arg(long, value_name = "PEM")]
    pub client_ca: Option<PathBuf>,
    /// Refuse TLS 1.2 (fail closed).
    #[arg(long)]
    pub tls13_only: bool,
    /// mTLS: the one client-certificate field a peer's identity is read from; no other
    /// field is ever read. A verified certificate with no value, or several values, in it
    /// is refused (ERR_SECURITY_POLICY, then the close). Only with `--client-ca`
    /// [default: san-uri].
    #[arg(long, value_enum, value_name = "FIELD")]
    pub identity_field: Option<IdentityField>,
    /// Once listening, write the bound port number and a newline here (atomically).
    #[arg(long, value_name = "PATH")]
    pub port_file: Option<PathBuf>,
    /// MAX_FRAME_BYTES (default 8 MiB); MAX_PAYLOAD_BYTES defaults from it.
    #[arg(long, value_name = "N")]
    pub max_frame_bytes: Option<u32>,
    /// MIN_MSG_ID_BYTES (default 8).
    #[arg(long, value_name = "N")]
    pub min_msg_id_bytes: Option<usize>,
    /// MAX_MSG_ID_BYTES (default 64).
    #[arg(long, value_name = "N")]
    pub max_msg_id_bytes: Option<usize>,
    /// MAX_EXT_BYTES (default 4096).
    #[arg(long, value_name = "N")]
    pub max_ext_bytes: Option<usize>,
    /// MAX_PAYLOAD_BYTES (default MAX_FRAME_BYTES - 1024).
    #[arg(long, value_name = "N")]
    pub max_payload_bytes: Option<usize>,
    /// Enforce ts_unix_ms freshness (default off).
    #[arg(long)]
    pub freshness: bool,
    /// MAX_CLOCK_SKEW_MS for --freshness (default 300000).
    #[arg(long, value_name = "N")]
    pub max_clock_skew_ms: Option<u64>,
    /// Per-connection frame rate limit, e.g. 64/1000 (default none).
    #[arg(long, value_name = "FRAMES/WINDOW_MS")]
    pub rate_limit: Option<RateArg>,
    /// What to do with a frame for an unknown profile.
    #[arg(long, value_enum, default_value_t = UnknownProfileArg::ErrorReply)]
    pub unknown_profile: UnknownProfileArg,
    /// The shape of P1 payloads (A2A) read and written: the bare message of the msg_type,
    /// or the profile annex's `Payload` wrapper (the spec allows both).
    #[arg(long, value_enum, default_value_t = P1PayloadArg::Message)]
    pub p1_payload: P1PayloadArg,
    /// Refuse an MCP method or A2A task kind to one authenticated peer: `IDENTITY=NAME`
    /// (repeatable). The request is rejected with ERR_SECURITY_POLICY and not run, while
    /// other peers are served: authorization binds the channel identity and the request
    /// (mcp-mapping §8, a2a-profile §9). Only meaningful with `--client-ca`.
    #[arg(long, value_name = "IDENTITY=NAME")]
    pub authz_deny: Vec<String>,
    /// Serve the SWP-RPC method `swp.test.owner` to this authenticated peer (repeatable);
    /// every other peer is refused it with ERR_SECURITY_POLICY (swp-rpc §7). A policy gate
    /// with an allowed identity, declared as `RPC_OWNER_METHOD`. Only meaningful with
    /// `--client-ca`.
    #[arg(long, value_name = "IDENTITY")]
    pub rpc_owner: Vec<String>,
    /// The SWP-RPC idempotency replay window, in ms (swp-rpc §6 recommends 24 h, the
    /// default). A short window lets conformance vectors watch a key expire; the manifest
    /// declares it as `RPC_REPLAY_WINDOW_MS`.
    #[arg(long, value_name = "MS", default_value_t = swp_profiles::rpc::lifecycle::DEFAULT_REPLAY_WINDOW_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rpc_replay_window_ms: u64,
    /// What the SWP-POLICYHINT agent does with a constraint whose key it does not know
    /// (declared as `POLICYHINT_UNKNOWN_KEY_POLICY` 0, 1, 2).
    #[arg(long, value_enum, default_value_t = UnknownKeysArg::Ignore)]
    pub policyhint_unknown_keys: UnknownKeysArg,
    /// Which of two disagreeing constraints of one set wins (declared as
    /// `POLICYHINT_CONFLICT_POLICY` 0, 1).
    #[arg(long, value_enum, default_value_t = ConflictArg::Last)]
    pub policyhint_conflicts: ConflictArg,
    /// After each read, keep polling a connection for this many microseconds before
    /// sleeping (cooperatively: other connections and threads still run). Cuts round-trip
    /// latency where waking an idle CPU is slow, e.g. on VMs; 0 disables it.
    #[arg(long, value_name = "MICROSECONDS", default_value_t = DEFAULT_BUSY_POLL_US,
          value_parser = clap::value_parser!(u64).range(0..=MAX_BUSY_POLL_US))]
    pub busy_poll_us: u64,
    /// The MCP fixtures served on profile 1: the reference's own small tool set, or the
    /// tools, resources and prompts the official MCP conformance suite's server scenarios
    /// name (docs/mcp-gateway.md, "The official suite").
    #[arg(long, value_enum, default_value_t = FixturesArg::Reference)]
    pub fixtures: FixturesArg,
    /// Connection cap, timeouts, memory budget and keepalive (docs/reference-limits.md).
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// `--fixtures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FixturesArg {
    /// The deterministic tool set of the project's own vectors (echo, add, fail, ...).
    Reference,
    /// The official MCP conformance suite's fixtures.
    Conformance,
}

/// Default `--busy-poll-us`: about one cross-vCPU wake-up on the machines this was measured
/// on (docs/performance.md), so a peer answering within that time never finds us asleep.
pub const DEFAULT_BUSY_POLL_US: u64 = 50;
/// Largest `--busy-poll-us`: beyond a millisecond, polling costs more CPU than it saves.
pub const MAX_BUSY_POLL_US: u64 = 1_000;

/// `--unknown-profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnknownProfileArg {
    /// Reply with an ERR_UNKNOWN_PROFILE error frame and keep the connection.
    ErrorReply,
    /// Close the connection without a reply.
    Close,
}

/// `--p1-payload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum P1PayloadArg {
    /// The bare message of the msg_type.
    Message,
    /// The annex's `Payload` wrapper with the message's member set.
    Wrapper,
}

/// `--policyhint-unknown-keys`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnknownKeysArg {
    /// Drop the constraint.
    Ignore,
    /// Drop it and report a violation naming the key.
    Report,
    /// Refuse the whole set.
    Refuse,
}

/// `--policyhint-conflicts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConflictArg {
    /// The later constraint of the set wins.
    Last,
    /// The earlier one wins.
    First,
}

/// `--rate-limit FRAMES/WINDOW_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateArg(pub RateLimit);

/// A `--rate-limit` value that is not two positive integers `FRAMES/WINDOW_MS`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected FRAMES/WINDOW_MS with both positive, e.g. 64/1000")]
pub struct RateArgError;

impl FromStr for RateArg {
    type Err = RateArgError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (f, w) = s.split_once('/').ok_or(RateArgError)?;
        let frames: u32 = f.trim().parse().map_err(|_| RateArgError)?;
        let window_ms: u64 = w.trim().parse().map_err(|_| RateArgError)?;
        if frames == 0 || window_ms == 0 {
            return Err(RateArgError);
        }
        Ok(RateArg(RateLimit { frames, window_ms }))
    }
}

impl ServeArgs {
    /// Validates the arguments.
    pub fn into_options(self) -> Result<Options, ServeError> {
        let mut limits = self
            .max_frame_bytes
            .map_or_else(Limits::default, Limits::with_max_frame);
        if let Some(n) = self.min_msg_id_bytes {
            limits.min_msg_id_bytes = n;
        }
        if let Some(n) = self.max_msg_id_bytes {
            limits.max_msg_id_bytes = n;
        }
        if let Some(n) = self.max_ext_bytes {
            limits.max_ext_bytes = n;
        }
        if let Some(n) = self.max_payload_bytes {
            limits.max_payload_bytes = n;
        }
        limits.check()?;
        let mut policy = Policy {
            timestamp_freshness: self.freshness,
            rate_limit: self.rate_limit.map(|r| r.0),
            unknown_profile: match self.unknown_profile {
                UnknownProfileArg::ErrorReply => UnknownProfilePolicy::ErrorReply,
                UnknownProfileArg::Close => UnknownProfilePolicy::Close,
            },
            ..Policy::default()
        };
        if let Some(skew) = self.max_clock_skew_ms {
            if !self.freshness {
                // Accepting it would suggest a freshness window that is not enforced.
                return Err(ServeError::Usage(
                    "--max-clock-skew-ms only applies with --freshness".into(),
                ));
            }
            policy.max_clock_skew_ms = skew;
        }
        let tls = match (&self.listen, self.cert, self.key) {
            (Listen::Tls(_), Some(cert), Some(key)) => Some(TlsOptions {
                cert,
                key,
                client_ca: self.client_ca,
                tls13_only: self.tls13_only,
                identity_field: self.identity_field.unwrap_or_default(),
            }),
            (Listen::Tls(_), _, _) => {
                return Err(ServeError::Usage(
                    "tls:// needs both --cert and --key".into(),
                ))
            }
            (_, cert, key) => {
                // TLS flags without TLS would leave the operator believing they apply.
                if cert.is_some() || key.is_some() || self.client_ca.is_some() || self.tls13_only {
                    return Err(ServeError::Usage(
                        "--cert, --key, --client-ca and --tls13-only only apply to tls://".into(),
                    ));
                }
                None
            }
        };
        let client_auth = tls.as_ref().is_some_and(|t| t.client_ca.is_some());
        if self.identity_field.is_some() && !client_auth {
            // Without client certificates there is no field to read an identity from.
            return Err(ServeError::Usage(
                "--identity-field needs tls:// with --client-ca: it names a client-certificate \
                 field"
                    .into(),
            ));
        }
        if self.rpc_owner.iter().any(String::is_empty) {
            // No authenticated peer has an empty identity: the rule could only ever match
            // a peer without one.
            return Err(ServeError::Usage(
                "--rpc-owner takes a non-empty identity".into(),
            ));
        }
        let mut authz = crate::endpoint::authz::Authz::default();
        for rule in &self.authz_deny {
            authz
                .deny(rule)
                .map_err(|e| ServeError::Usage(e.to_string()))?;
        }
        if !self.rpc_owner.is_empty() && !client_auth {
            return Err(ServeError::Usage(
                "--rpc-owner needs tls:// with --client-ca: it names a client identity".into(),
            ));
        }
        if !authz.is_empty() && !client_auth {
            // Without client certificates no peer has an identity, so no rule could apply.
            return Err(ServeError::Usage(
                "--authz-deny needs tls:// with --client-ca: rules bind client identities".into(),
            ));
        }
        let server_limits = self.limits.resolve();
        Ok(Options {
            listen: self.listen,
            tls,
            port_file: self.port_file,
            config: Config {
                limits,
                policy,
                max_pending: DEFAULT_MAX_PENDING,
                max_pending_bytes: server_limits.conn_memory,
                p1_form: match self.p1_payload {
                    P1PayloadArg::Message => P1Form::Message,
                    P1PayloadArg::Wrapper => P1Form::Wrapper,
                },
                agent: crate::endpoint::agent::Config {
                    rpc_replay_window_ms: self.rpc_replay_window_ms,
                    rpc_owners: self.rpc_owner,
                    policyhint_unknown_keys: match self.policyhint_unknown_keys {
                        UnknownKeysArg::Ignore => swp_profiles::policyhint::UnknownKeys::Ignore,
                        UnknownKeysArg::Report => swp_profiles::policyhint::UnknownKeys::Violation,
                        UnknownKeysArg::Refuse => swp_profiles::policyhint::UnknownKeys::Reject,
                    },
                    policyhint_conflicts: match self.policyhint_conflicts {
                        ConflictArg::Last => swp_profiles::policyhint::ConflictPolicy::LastWins,
                        ConflictArg::First => swp_profiles::policyhint::ConflictPolicy::FirstWins,
                    },
                },
                fixtures: match self.fixtures {
                    FixturesArg::Reference => crate::endpoint::Fixtures::Reference,
                    FixturesArg::Conformance => crate::endpoint::Fixtures::Conformance,
                },
            },
            authz: std::sync::Arc::new(authz),
            busy_poll: Duration::from_micros(self.busy_poll_us),
            limits: server_limits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(argv: &[&str]) -> Result<Options, ServeError> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(argv.iter().copied()))
            .map_err(|e| ServeError::Usage(e.to_string()))?;
        cli.args.into_options()
    }

    #[test]
    fn defaults_come_from_swp_core() {
        let o = parse(&["--listen", "tcp://127.0.0.1:0"]).unwrap();
        assert_eq!(o.config.limits, Limits::default());
        assert_eq!(o.config.policy, Policy::default());
        assert!(o.tls.is_none());
        assert_eq!(o.busy_poll, Duration::from_micros(DEFAULT_BUSY_POLL_US));
        let o = parse(&["--listen", "stdio", "--busy-poll-us", "0"]).unwrap();
        assert!(o.busy_poll.is_zero());
    }

    /// A TLS listener with a server certificate and no client CA.
    const TLS: [&str; 6] = [
        "--listen",
        "tls://127.0.0.1:0",
        "--cert",
        "c.pem",
        "--key",
        "k.pem",
    ];

    #[test]
    fn authz_rules_need_client_identities() {
        let tls = TLS;
        let rule = ["--authz-deny", "spiffe://t/b=tools/list"];
        // Without --client-ca no peer has an identity a rule could bind.
        let argv: Vec<&str> = tls.iter().chain(&rule).copied().collect();
        assert!(matches!(parse(&argv), Err(ServeError::Usage(m)) if m.contains("--client-ca")));
        let argv: Vec<&str> = tls
            .iter()
            .chain(&["--client-ca", "ca.pem"])
            .chain(&rule)
            .copied()
            .collect();
        let o = parse(&argv).unwrap();
        assert!(o.authz.denies(Some("spiffe://t/b"), "tools/list"));
        let argv: Vec<&str> = tls
            .iter()
            .chain(&["--client-ca", "ca.pem", "--authz-deny", "no-name"])
            .copied()
            .collect();
        assert!(matches!(parse(&argv), Err(ServeError::Usage(m)) if m.contains("IDENTITY=NAME")));
    }

    #[test]
    fn rpc_owners_need_client_identities() {
        let tls: Vec<&str> = TLS
            .iter()
            .chain(&["--rpc-owner", "spiffe://t/a"])
            .copied()
            .collect();
        assert!(matches!(parse(&tls), Err(ServeError::Usage(m)) if m.contains("--client-ca")));
        let argv: Vec<&str> = tls
            .iter()
            .chain(&["--client-ca", "ca.pem"])
            .copied()
            .collect();
        let o = parse(&argv).unwrap();
        assert_eq!(o.config.agent.rpc_owners, vec!["spiffe://t/a".to_owned()]);
    }

    #[test]
    fn the_identity_field_is_declared_with_client_certificates_only() {
        let mtls: Vec<&str> = TLS
            .iter()
            .chain(&["--client-ca", "ca.pem"])
            .copied()
            .collect();
        let o = parse(&mtls).unwrap();
        assert_eq!(o.tls.unwrap().identity_field, IdentityField::SanUri);
        for (arg, field) in [
            ("san-uri", IdentityField::SanUri),
            ("san-dns", IdentityField::SanDns),
            ("cn", IdentityField::Cn),
        ] {
            let argv: Vec<&str> = mtls
                .iter()
                .chain(&["--identity-field", arg])
                .copied()
                .collect();
            assert_eq!(parse(&argv).unwrap().tls.unwrap().identity_field, field);
        }
        let argv: Vec<&str> = TLS
            .iter()
            .chain(&["--identity-field", "cn"])
            .copied()
            .collect();
        assert!(matches!(parse(&argv), Err(ServeError::Usage(m)) if m.contains("--client-ca")));
        let argv: Vec<&str> = mtls
            .iter()
            .chain(&["--identity-field", "subject"])
            .copied()
            .collect();
        assert!(parse(&argv).is_err());
        let argv: Vec<&str> = mtls.iter().chain(&["--rpc-owner", ""]).copied().collect();
        assert!(matches!(parse(&argv), Err(ServeError::Usage(m)) if m.contains("non-empty")));
    }

    #[test]
    fn options_map_onto_limits_and_policy() {
        let more = [
            "--tls13-only",
            "--max-frame-bytes",
            "65536",
            "--max-msg-id-bytes",
            "32",
            "--freshness",
            "--max-clock-skew-ms",
            "1000",
            "--rate-limit",
            "64/1000",
            "--unknown-profile",
            "close",
        ];
        let argv: Vec<&str> = TLS.iter().chain(&more).copied().collect();
        let o = parse(&argv).unwrap();
        assert_eq!(o.config.limits.max_frame_bytes, 65536);
        assert_eq!(o.config.limits.max_payload_bytes, 65536 - 1024);
        assert_eq!(o.config.limits.max_msg_id_bytes, 32);
        assert!(o.config.policy.timestamp_freshness);
        assert_eq!(o.config.policy.max_clock_skew_ms, 1000);
        assert_eq!(
            o.config.policy.rate_limit,
            Some(RateLimit {
                frames: 64,
                window_ms: 1000
            })
        );
        assert_eq!(o.config.policy.unknown_profile, UnknownProfilePolicy::Close);
        assert!(o.tls.unwrap().tls13_only);
    }

    #[test]
    fn unservable_combinations_are_refused() {
        for argv in [
            &["--listen", "tls://127.0.0.1:0"][..],
            &["--listen", "tls://127.0.0.1:0", "--cert", "c.pem"],
            &["--listen", "tcp://127.0.0.1:0", "--client-ca", "ca.pem"],
            &["--listen", "stdio", "--tls13-only"],
            &["--listen", "stdio", "--min-msg-id-bytes", "0"],
            &[
                "--listen",
                "stdio",
                "--min-msg-id-bytes",
                "9",
                "--max-msg-id-bytes",
                "8",
            ],
            &["--listen", "stdio", "--rate-limit", "0/1000"],
            &["--listen", "stdio", "--max-clock-skew-ms", "5"],
            &["--listen", "stdio", "--rate-limit", "64"],
            &["--listen", "udp://127.0.0.1:0"],
            &["--listen", "stdio", "--busy-poll-us", "1001"],
        ] {
            let e = parse(argv).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
        }
    }
}
