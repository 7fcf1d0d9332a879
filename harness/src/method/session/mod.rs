//! The session method: the harness is the endpoint's peer on a real
//! connection and judges only what it observes (reply frames, error frames, the connection
//! closing, silence within a deadline). One fresh connection per vector; a stdio endpoint
//! is one process per vector, a TCP/TLS endpoint is started once and restarted after a
//! crash.
//!
//! Its rooms: [`endpoint`] (reaching the endpoint), [`conv`] (one vector's observations),
//! [`actions`] (what a step does), [`confirm`] (telling an accept from silence), [`judge`]
//! (one function per expectation kind), [`a2a`] (profile-specific reply decoding),
//! [`profiles`] (the SWP-* machines judging what the endpoint emits) and [`steps`] (the
//! step loop).

pub mod a2a;
pub mod actions;
pub mod confirm;
pub mod conv;
pub mod endpoint;
pub mod judge;
pub mod judge_reply;
pub mod ledger;
pub mod obs;
pub mod outcome;
pub mod profiles;
pub mod refusal;
pub mod relayack;
pub mod steps;
#[cfg(test)]
mod tests;
pub mod work;

use super::contract::{Fatal, NotApplicable, Outcome, TestMethod};
use crate::catalog::vector::{Body, ClientCert, FrameExpect, FrameStep, Method, Vector};
use crate::connect::process::Exit;
use crate::method::conv::clock::SYSTEM;
use crate::method::conv::timeline::INTERRUPTED;
use crate::plan::expr::Params;
use crate::plan::materialize::{self, ConcreteStep, MaterialiseError};
use crate::report::result::Verdict;
use crate::support::cancel::Cancel;
use crate::sut::{Sut, Transport};
use confirm::Requests;
use conv::Conv;
use endpoint::{Endpoint, SetupError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
pub use work::{Inputs, StepFailure};

/// A vector made concrete for the session method: its steps, against the wall clock.
pub struct SessionWork {
    steps: Vec<ConcreteStep>,
    params: Params,
    now_ms: u64,
}

/// The session method against one endpoint.
pub struct SessionMethod<'a> {
    sut: &'a Sut,
    endpoint: Endpoint,
    requests: Requests,
}

impl<'a> SessionMethod<'a> {
    /// Prepares the method for an endpoint manifest; `work` holds logs, port files and the
    /// PKI.
    pub fn new(
        sut: &'a Sut,
        spec: crate::sut::SessionSpec,
        reach: crate::sut::Reach,
        work: &std::path::Path,
    ) -> Result<Self, SetupError> {
        let endpoint = Endpoint::new(spec, reach, sut.base_dir(), work)?;
        Ok(SessionMethod {
            sut,
            endpoint,
            requests: Requests::default(),
        })
    }
}

impl TestMethod for SessionMethod<'_> {
    type Concrete = SessionWork;

    fn describe(&self) -> String {
        format!(
            "{} {} ({} endpoint, session method)",
            self.sut.manifest.name,
            self.sut.manifest.version,
            self.endpoint.transport()
        )
    }

    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable> {
        let spec = &self.endpoint.spec;
        let codec_only = "codec method only; this run uses the session method";
        let Body::Frames(b) = &v.body else {
            return Err(codec_only.into());
        };
        if !v.header.methods.contains(&Method::Session) {
            return Err(codec_only.into());
        }
        let want = b.topology.unwrap_or_default();
        if want != spec.topology {
            // What the SUT is (a relay or an endpoint) is its own, declared choice.
            return Err(NotApplicable::choice(format!(
                "written for a SUT in the {} topology; this SUT is declared {}",
                want.as_str(),
                spec.topology.as_str()
            )));
        }
        let connect = b.connect.clone().unwrap_or_default();
        if b.connect.is_some() && spec.transport != Transport::Tls {
            return Err("needs a TLS endpoint (the vector sets connection options)".into());
        }
        let tls = spec.tls.as_ref();
        if connect.tls12_only && !tls.is_some_and(|t| t.tls13_only) {
            return Err("needs an endpoint that requires TLS 1.3 (tls.tls13_only)".into());
        }
        if matches!(
            connect.client_cert,
            Some(ClientCert::None | ClientCert::Expired | ClientCert::Untrusted)
        ) && !tls.is_some_and(|t| t.client_auth)
        {
            return Err(
                "needs an endpoint that requires client certificates (tls.client_auth)".into(),
            );
        }
        if (connect.client_cert == Some(ClientCert::Second)
            || b.steps.iter().any(|s| s.second_connection))
            && (!tls.is_some_and(|t| t.client_auth) || self.endpoint.second_identity().is_none())
        {
            return Err(NotApplicable::choice(
                "needs a second client identity the endpoint authorizes differently (tls.second_identity, with client_auth); the SUT declares none",
            ));
        }
        if spec.reject_signal.after == Some(crate::sut::AfterReject::Close)
            && rejects_midway(&b.steps)
        {
            return Err(NotApplicable::choice(
                "the vector goes on after a reject; the SUT declares it ends the stream after one (reject_signal.after: close; CORE-039 allows both)",
            ));
        }
        let sends = |f: fn(&crate::catalog::vector::Send) -> bool| {
            b.steps.iter().any(|s| s.send.as_ref().is_some_and(f))
        };
        if sends(|x| x.slow_request.is_some()) && spec.slow_request.is_none() {
            return Err(NotApplicable::undeclared(
                "needs a slow request in the manifest (session.slow_request)",
                vec!["session.slow_request".into()],
            ));
        }
        if sends(|x| x.identity_probe)
            && (spec.identity_probe.is_none() || self.endpoint.identity().is_none())
        {
            let why = "needs an identity probe and a known client identity in the manifest";
            return Err(match spec.identity_probe {
                None => NotApplicable::undeclared(why, vec!["session.identity_probe".into()]),
                Some(_) => NotApplicable::untested(why),
            });
        }
        Ok(Method::Session)
    }

    fn materialise(&mut self, v: &Vector, _m: Method) -> Result<SessionWork, MaterialiseError> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let params = self.sut.params(now_ms);
        let steps = materialize::materialise(v, &params)?;
        Ok(SessionWork {
            steps,
            params,
            now_ms,
        })
    }

    fn expected_code(c: &SessionWork) -> Option<String> {
        materialize::first_reject_code(&c.steps)
    }

    fn drive(&mut self, v: &Vector, c: SessionWork, cancel: &Cancel) -> Result<Outcome, Fatal> {
        let Body::Frames(b) = &v.body else {
            return Ok(Outcome::stop(
                Verdict::HarnessError,
                "admitted a vector that is not a codec or session one",
            ));
        };
        let restart_note = match self.endpoint.ensure_server() {
            Ok(n) => n,
            Err(e) if e.not_started() => return Ok(Outcome::sut_not_started(e)),
            Err(e) => {
                return Ok(Outcome::stop(
                    Verdict::Crash,
                    format!("the endpoint could not be started: {e}"),
                ))
            }
        };
        let connect = b.connect.clone().unwrap_or_default();
        let (wire, stdio_proc) = match self.endpoint.open(&connect) {
            Ok(w) => w,
            Err(e) if e.not_started() => return Ok(Outcome::sut_not_started(e)),
            Err(e) => {
                return Ok(Outcome::stop(
                    Verdict::HarnessError,
                    format!("cannot connect: {e}"),
                ))
            }
        };
        let upstream = match self.endpoint.accept_upstream() {
            Ok(u) => u,
            Err(e) => {
                return Ok(Outcome::stop(
                    Verdict::Fail,
                    format!("the intermediary did not connect upstream: {e}"),
                ))
            }
        };
        let spec = self.endpoint.spec.clone();
        let mut conv = Conv::new(
            wire,
            &spec,
            &SYSTEM,
            cancel.clone(),
            self.sut.manifest.limits.max_frame_bytes,
            matches!(v.header.namespace.as_str(), "core" | "e1" | "s1"),
        );
        conv.upstream = upstream;
        conv.form = self.sut.manifest.p1_payload;
        if v.header.namespace == "relay" {
            // A relay may or may not acknowledge its publisher (SI-P19-2): set those ACKs
            // aside and hold the manifest's declaration, if any, at the end.
            let declared = self
                .sut
                .manifest
                .params
                .get("RELAY_PUBLISHER_ACK")
                .and_then(|v| v.as_u64().or_else(|| v.as_bool().map(u64::from)))
                .map(|n| n != 0);
            conv.publisher_acks = Some(relayack::PublisherAcks::new(
                declared,
                self.sut.manifest.p1_payload,
            ));
        }
        if b.steps.iter().any(|s| s.second_connection) {
            let second = crate::catalog::vector::ConnectSpec {
                client_cert: Some(ClientCert::Second),
                ..crate::catalog::vector::ConnectSpec::default()
            };
            match self.endpoint.open(&second) {
                Ok((w, _)) => {
                    conv.other = Some(conv::Peer::new(w, self.sut.manifest.limits.max_frame_bytes));
                    conv.note("second connection open (second client identity)");
                }
                Err(e) => {
                    return Ok(Outcome::stop(
                        Verdict::HarnessError,
                        format!("cannot open the second connection: {e}"),
                    ))
                }
            }
        }
        if let Some(n) = restart_note {
            conv.note(n);
        }
        conv.note(format!("connected over {}", conv.wire.describe()));
        // The identity this vector's connection presents: the second one where it asks.
        let identity = match connect.client_cert {
            Some(ClientCert::Second) => self.endpoint.second_identity(),
            _ => self.endpoint.identity(),
        };
        let mut inputs = Inputs {
            params: &c.params,
            requests: &mut self.requests,
            identity: identity.as_deref(),
            identity_probe: spec.identity_probe.as_ref(),
            p1_form: self.sut.manifest.p1_payload,
            unknown_profile_closes: self.sut.manifest.policy.unknown_profile
                == crate::catalog::vector::UnknownProfile::Close,
            profiles: profiles::Judge::new(
                &self.sut.manifest.params,
                self.sut.manifest.p1_payload,
                Some(c.now_ms),
            ),
        };
        let result = steps::run_steps(&mut conv, &c.steps, &mut inputs, c.now_ms);
        let transcript = conv.tl.take_transcript();
        drop(conv);
        // Did the endpoint die during the vector?
        let crashed = match stdio_proc {
            Some(mut p) => p
                .wait_exit(Duration::from_millis(20))
                .filter(|s| !s.success),
            None => self.endpoint.server_exited(),
        };
        let mut o = outcome::of(v, result).with_transcript(transcript);
        if let Some(status) = crashed {
            crash(&mut o, &status, spec.transport);
        }
        if cancel.is_cancelled() {
            // Waits cut short by the cancel prove nothing, not even a pass.
            o = Outcome::stop(Verdict::HarnessError, INTERRUPTED).with_transcript(o.transcript);
        }
        Ok(o)
    }
}

/// A stdio endpoint exits when its input ends, so its exit after a passing vector is no
/// crash; a failed vector or a long-running endpoint that died is one.
/// Whether a step before the vector's last expects a reject, so later steps need the
/// stream to go on after it.
fn rejects_midway(steps: &[FrameStep]) -> bool {
    let n = steps.len();
    steps.iter().take(n.saturating_sub(1)).any(|s| {
        s.expect
            .iter()
            .any(|e| matches!(e, FrameExpect::Reject(_) | FrameExpect::Denied(_)))
    })
}

fn crash(o: &mut Outcome, status: &Exit, transport: Transport) {
    if o.verdict != Verdict::Pass || transport != Transport::Stdio {
        o.verdict = Verdict::Crash;
        o.detail = Some(format!(
            "the endpoint {status} during the vector; {}",
            o.detail.take().unwrap_or_default()
        ));
    }
}
