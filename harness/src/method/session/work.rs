//! What every step judge of the session method shares: the inputs a vector's steps draw on
//! and how a step fails (its verdict and the evidence at the deciding step).

use super::confirm::Requests;
use super::profiles;
use crate::plan::expr::Params;
use crate::report::result::Verdict;
use crate::sut::IdentityProbe;

/// Why a session vector stopped: its verdict and the evidence at the deciding step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFailure {
    /// The verdict (`fail`, `timeout`, `harness-error`, ...).
    pub verdict: Verdict,
    /// Why, with the step's label.
    pub why: String,
    /// What the step expected.
    pub expected: String,
    /// What it observed.
    pub observed: String,
    /// The canonical code observed, if a reject was judged.
    pub code: Option<String>,
    /// The step failed only because a reject carried another code (see [`crate::method::Outcome`]).
    pub code_only: Option<Vec<String>>,
    /// The concrete step the failure belongs to, when it is not the step being run (an
    /// accept confirmed later, a refusal that arrived late).
    pub at: Option<usize>,
    /// The requirement of the profile rule the endpoint's message broke, when that is the
    /// failure: the step is charged to it, at its level, not to the step's requirements.
    pub broke: Vec<String>,
}

impl StepFailure {
    /// A failure with nothing but its verdict, reason and evidence (boxed: failures are
    /// rare and the `Ok` paths stay small).
    pub fn new(
        verdict: Verdict,
        why: impl Into<String>,
        expected: &str,
        observed: impl Into<String>,
    ) -> Box<Self> {
        Box::new(StepFailure {
            verdict,
            why: why.into(),
            expected: expected.to_owned(),
            observed: observed.into(),
            code: None,
            code_only: None,
            at: None,
            broke: Vec::new(),
        })
    }
}

/// What a vector's steps draw on beyond the conversation: its parameters, the run's request
/// numbering, and the identity surface the manifest declares.
pub struct Inputs<'p> {
    /// The SUT's parameters for this vector.
    pub params: &'p Params,
    /// Numbers the probes and identity probes.
    pub requests: &'p mut Requests,
    /// The identity the harness presents, when known.
    pub identity: Option<&'p str>,
    /// The manifest's identity probe.
    pub identity_probe: Option<&'p IdentityProbe>,
    /// How the endpoint shapes P1 payloads.
    pub p1_form: crate::p1::P1Form,
    /// The manifest declares no error path for unknown profiles (CORE-049: close), so an
    /// unknown-profile reject may be a close even where other rejects are error frames.
    pub unknown_profile_closes: bool,
    /// The SWP-* profiles' machines for this vector's connection.
    pub profiles: profiles::Judge,
}
