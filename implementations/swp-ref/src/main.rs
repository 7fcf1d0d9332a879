//! `swp-ref`: the SWP reference endpoint's command line.

use clap::{Parser, Subcommand};
use std::io::{BufReader, BufWriter};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "swp-ref", version, about = "SWP reference implementation")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the codec-method testee protocol on stdin/stdout (docs/testee-protocol.md).
    Testee,
    /// Run the SWP reference endpoint on stdio, loopback TCP or TLS.
    Serve(Box<swp_ref::serve::args::ServeArgs>),
    /// Relay SWP frames byte for byte between loopback clients and an upstream endpoint.
    Relay {
        /// `tcp://127.0.0.1:PORT` (port 0 picks one).
        #[arg(long)]
        listen: String,
        /// `HOST:PORT` or `tcp://HOST:PORT` of the upstream endpoint.
        #[arg(long)]
        upstream: String,
        /// Write the bound port here once listening.
        #[arg(long)]
        port_file: Option<std::path::PathBuf>,
        /// Largest frame relayed.
        #[arg(long, default_value_t = swp_core::limits::DEFAULT_MAX_FRAME_BYTES)]
        max_frame_bytes: u32,
        /// Connection cap, timeouts, memory budget and keepalive (docs/reference-limits.md).
        #[command(flatten)]
        limits: swp_ref::limits::RelayLimitArgs,
    },
    /// Serve MCP clients (stdio, HTTP POST /mcp, WebSocket /mcp) through the validation
    /// pipeline, forwarding to an upstream SWP endpoint as profile-1 frames.
    McpGateway {
        /// `stdio`, or `http://HOST:PORT` (serves POST /mcp and WebSocket /mcp; port 0
        /// picks one). HOST must be loopback unless --allow-remote is given.
        #[arg(long, default_value = "stdio")]
        listen: String,
        /// Allow a non-loopback HTTP listen address (e.g. 0.0.0.0): the gateway is then
        /// reachable from other hosts, in plaintext.
        #[arg(long)]
        allow_remote: bool,
        /// A browser origin allowed to use /mcp beside loopback ones, exactly as browsers
        /// send it (e.g. https://app.example:8443); repeatable. Requests without Origin
        /// (non-browser clients) are always allowed.
        #[arg(long, value_name = "ORIGIN")]
        allow_origin: Vec<String>,
        /// Connection cap, timeouts, memory budget and keepalive (docs/reference-limits.md).
        #[command(flatten)]
        server_limits: swp_ref::limits::LimitArgs,
        /// `tcp://HOST:PORT` of the upstream SWP endpoint.
        #[arg(long, conflicts_with = "upstream_cmd")]
        upstream: Option<String>,
        /// Spawn the upstream and speak SWP on its stdio (e.g. `swp-ref serve --stdio`).
        #[arg(long, num_args = 1.., allow_hyphen_values = true, value_terminator = ";")]
        upstream_cmd: Vec<String>,
        /// Write the bound port here once listening (HTTP).
        #[arg(long)]
        port_file: Option<std::path::PathBuf>,
        /// Structured JSON-line log file (`-` for stderr).
        #[arg(long)]
        log: Option<std::path::PathBuf>,
        /// Redact times and durations in the log (golden files).
        #[arg(long)]
        deterministic: bool,
        /// Serve HTTP requests that carry no Mcp-Session-Id outside any session, instead of
        /// refusing them with 400 (a session is still issued at initialize and checked
        /// whenever a request names one).
        #[arg(long)]
        sessions_optional: bool,
        /// The contract client messages are held to: `mcp` (the MCP schema of the
        /// negotiated version: string or integer ids, optional params, client responses) or
        /// `seed-003` (string ids, params required, the seed's error table). See
        /// docs/mcp-gateway.md.
        #[arg(long, default_value = "mcp", value_parser = parse_envelope)]
        envelope: swp_ref::gateway::EnvelopePolicy,
    },
    /// Translate MCP between a client at one protocol version and a stdio server at
    /// whatever version it agrees to (docs/mcp-translation.md).
    McpProxy {
        /// The version presented to the client: 2024-11-05, 2025-03-26, 2025-06-18,
        /// 2025-11-25 or 2026-07-28.
        #[arg(long)]
        client_version: String,
        /// The server command and its arguments (after `--`).
        #[arg(last = true, required = true)]
        server: Vec<String>,
    },
    /// Join stdin/stdout to a TCP connection (the harness's upstream MCP server behind a
    /// stdio proxy under test).
    StdioBridge {
        /// `HOST:PORT` to connect to.
        #[arg(long)]
        connect: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Testee => {
            let stdin = std::io::stdin();
            let stdout = std::io::stdout();
            let mut input = BufReader::new(stdin.lock());
            let mut output = BufWriter::new(stdout.lock());
            match swp_ref::testee::serve::serve(&mut input, &mut output) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("swp-ref testee: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Cmd::Relay {
            listen,
            upstream,
            port_file,
            max_frame_bytes,
            limits: server_limits,
        } => {
            let listen = listen.strip_prefix("tcp://").unwrap_or(&listen);
            let upstream = upstream.strip_prefix("tcp://").unwrap_or(&upstream);
            let limits = swp_core::Limits::with_max_frame(max_frame_bytes);
            let server = server_limits.resolve();
            match swp_ref::relay::run(listen, upstream, port_file.as_deref(), limits, server) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("swp-ref relay: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Cmd::McpGateway {
            listen,
            allow_remote,
            allow_origin,
            server_limits,
            upstream,
            upstream_cmd,
            port_file,
            log,
            deterministic,
            sessions_optional,
            envelope,
        } => {
            use swp_ref::gateway::serve::{ClientTransport, Options};
            use swp_ref::gateway::upstream::UpstreamAddr;
            let transport = if listen == "stdio" {
                ClientTransport::Stdio
            } else if let Some(addr) = listen.strip_prefix("http://") {
                ClientTransport::Http(addr.trim_end_matches('/').to_owned())
            } else {
                eprintln!(
                    "swp-ref mcp-gateway: --listen takes stdio or http://HOST:PORT, not {listen:?}"
                );
                return ExitCode::from(2);
            };
            let upstream = match (upstream, upstream_cmd.is_empty()) {
                (Some(u), true) => {
                    UpstreamAddr::Tcp(u.strip_prefix("tcp://").unwrap_or(&u).to_owned())
                }
                (None, false) => UpstreamAddr::Command(upstream_cmd),
                _ => {
                    eprintln!("swp-ref mcp-gateway: give --upstream tcp://HOST:PORT or --upstream-cmd CMD...");
                    return ExitCode::from(2);
                }
            };
            let opts = Options {
                transport,
                upstream,
                port_file,
                log,
                deterministic,
                limits: swp_core::Limits::default(),
                allow_remote,
                origins: swp_ref::gateway::origin::OriginPolicy::new(allow_origin),
                server: server_limits.resolve(),
                sessions: if sessions_optional {
                    swp_ref::gateway::session::SessionMode::Optional
                } else {
                    swp_ref::gateway::session::SessionMode::Required
                },
                envelope,
            };
            match swp_ref::gateway::serve::run(opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("swp-ref mcp-gateway: {e}");
                    ExitCode::from(e.exit_code())
                }
            }
        }
        Cmd::McpProxy {
            client_version,
            server,
        } => {
            let v = match client_version.parse() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("swp-ref mcp-proxy: {e}");
                    return ExitCode::from(2);
                }
            };
            let (cmd, args) = server
                .split_first()
                .map_or(("", &[][..]), |(c, a)| (c.as_str(), a));
            match swp_ref::mcpproxy::run(v, cmd, args, std::io::stdin(), std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("swp-ref mcp-proxy: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Cmd::StdioBridge { connect } => match swp_ref::mcpproxy::bridge(&connect) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("swp-ref stdio-bridge: {e}");
                ExitCode::FAILURE
            }
        },
        Cmd::Serve(args) => match args.into_options().and_then(swp_ref::serve::run) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("swp-ref: {e}");
                ExitCode::from(e.exit_code())
            }
        },
    }
}

/// `--envelope`'s parser (clap needs a function whose error is displayable).
fn parse_envelope(s: &str) -> Result<swp_ref::gateway::EnvelopePolicy, String> {
    s.parse()
        .map_err(|e: swp_ref::gateway::policy::UnknownPolicy| e.to_string())
}
