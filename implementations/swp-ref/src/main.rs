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
    }
}
