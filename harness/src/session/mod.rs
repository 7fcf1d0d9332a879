//! The session method (`DESIGN.md` §3-4): connectors, process supervision, test PKI and the
//! engine that judges an endpoint only by what it observes on the wire.

pub mod pki;
pub mod process;
pub mod run;
pub mod wire;
