//! The contract between the run loop and a test method: the [`TestMethod`] trait, the
//! [`Outcome`] a method returns, why a vector is [`NotApplicable`], and the [`Fatal`] error
//! that stops a run. A leaf of the method stage, so a method names it without reaching the
//! run loop in `method/mod.rs`.

use crate::catalog::vector::{Method, Vector};
use crate::connect::driver::{Answer, DriverError};
use crate::method::conv::transcript::Recorded;
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{Incidental, NaCause, StepResult, TranscriptEntry, Verdict};
use crate::support::cancel::Cancel;

/// The SUT cannot be driven at all, so the run stops (a testee that speaks another protocol
/// version, say). Carries the message the user needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Fatal(pub String);

/// Why a vector does not apply to this SUT, in words for the report, and whether that is
/// the SUT's declared choice or a case the harness could not test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct NotApplicable {
    /// The SUT's choice, or untested.
    pub cause: NaCause,
    /// Why, in words.
    pub why: String,
    /// The manifest declarations whose absence left the vector untested (`params` names,
    /// `session.slow_request`), so a withheld claim can say what to declare.
    pub lacks: Vec<String>,
}

impl NotApplicable {
    /// The SUT's declared, spec-allowed choice.
    pub fn choice(why: impl Into<String>) -> Self {
        NotApplicable {
            cause: NaCause::SutChoice,
            why: why.into(),
            lacks: Vec::new(),
        }
    }

    /// A case the harness could not test.
    pub fn untested(why: impl Into<String>) -> Self {
        NotApplicable {
            cause: NaCause::Untested,
            why: why.into(),
            lacks: Vec::new(),
        }
    }

    /// Untested because the manifest does not declare `lacks`.
    pub fn undeclared(why: impl Into<String>, lacks: Vec<String>) -> Self {
        NotApplicable {
            cause: NaCause::Untested,
            why: why.into(),
            lacks,
        }
    }
}

/// A method refusing a vector (`admit`) cannot run it: untested.
impl From<&str> for NotApplicable {
    fn from(s: &str) -> Self {
        NotApplicable::untested(s)
    }
}

impl From<String> for NotApplicable {
    fn from(s: String) -> Self {
        NotApplicable::untested(s)
    }
}

impl From<MaterialiseError> for Option<NotApplicable> {
    fn from(e: MaterialiseError) -> Self {
        match e {
            MaterialiseError::NotApplicable(why) => Some(NotApplicable::choice(why)),
            MaterialiseError::HarnessBound(why) | MaterialiseError::NotBuildable(why) => {
                Some(NotApplicable::untested(why))
            }
            MaterialiseError::Undeclared { why, name } => {
                Some(NotApplicable::undeclared(why, vec![name]))
            }
            MaterialiseError::Invalid(_) => None,
        }
    }
}

/// Placeholders the manifest does not fill: a missing optional-feature trigger is the SUT
/// declaring it lacks the feature; any other missing name leaves the vector untested.
pub(crate) fn unfilled(e: crate::plan::placeholders::FillError) -> NotApplicable {
    use crate::plan::placeholders::{FillError, FEATURE_PARAMS};
    match &e {
        FillError::Missing(names) if names.iter().any(|n| FEATURE_PARAMS.contains(&n.as_str())) => {
            NotApplicable::choice(format!("{e}: it claims no such optional feature"))
        }
        FillError::Missing(names) => {
            NotApplicable::undeclared(e.to_string(), names.iter().cloned().collect())
        }
        FillError::NotScalar(..) => NotApplicable::untested(e.to_string()),
    }
}

/// What driving one vector established: its verdict and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, for anything but a plain pass.
    pub detail: Option<String>,
    /// What was expected (at the deciding step).
    pub expected: String,
    /// What was observed (at the deciding step).
    pub observed: String,
    /// Canonical code observed, if any.
    pub observed_error_code: Option<String>,
    /// Alias observed, when the SUT reported one.
    pub observed_alias: Option<String>,
    /// The vector failed only because a reject carried another code: the requirements that
    /// govern the code (empty: the vector's own) decide whether the failure is absolute.
    pub code_only: Option<Vec<String>>,
    /// The requirements a failure broke, when the method can tell (an `mcp_native` vector
    /// that sees a schema violation in any message, or fails a SHOULD-level expectation):
    /// they join the result's requirements and alone decide whether the failure is
    /// absolute.
    pub broke: Vec<String>,
    /// A not-applicable decided while driving (an MCP server's declared capabilities): whose
    /// choice it was.
    pub na_cause: Option<NaCause>,
    /// Each step's verdict and requirements (vector requirement IDs or aliases; `finish`
    /// resolves them), when the method judged steps on their own; empty when every step
    /// shares the vector's verdict.
    pub steps: Vec<StepResult>,
    /// Defects seen in passing that belong to no step of this vector
    /// ([`crate::report::result::Incidental`]; requirement IDs or aliases).
    pub incidental: Vec<Incidental>,
    /// Both directions.
    pub transcript: Vec<TranscriptEntry>,
    /// Whether anything came from the SUT while the vector ran, cut entries included.
    pub heard: bool,
    /// The SUT could not be started (a `harness-error`): the command and the OS error.
    pub sut_not_started: Option<String>,
}

impl Outcome {
    /// A verdict with its reason and nothing observed yet.
    pub fn new(verdict: Verdict, detail: Option<String>) -> Outcome {
        Outcome {
            verdict,
            detail,
            expected: String::new(),
            observed: String::new(),
            observed_error_code: None,
            observed_alias: None,
            code_only: None,
            broke: Vec::new(),
            na_cause: None,
            steps: Vec::new(),
            incidental: Vec::new(),
            transcript: Vec::new(),
            heard: false,
            sut_not_started: None,
        }
    }

    /// Every expectation held.
    pub fn pass(expected: String, observed: String) -> Outcome {
        Outcome {
            expected,
            observed,
            ..Outcome::new(Verdict::Pass, None)
        }
    }

    /// The vector stopped with `verdict` for `why`.
    pub fn stop(verdict: Verdict, why: impl Into<String>) -> Outcome {
        Outcome::new(verdict, Some(why.into()))
    }

    /// The SUT's process could not be started (`why`: the command and the OS error): no
    /// protocol was tested, so it is a harness error, not a failure of the SUT, and the
    /// class verdicts say why their vectors went untested.
    pub fn sut_not_started(why: impl std::fmt::Display) -> Outcome {
        Outcome {
            sut_not_started: Some(why.to_string()),
            ..Outcome::stop(
                Verdict::HarnessError,
                format!("the SUT could not be started: {why}"),
            )
        }
    }

    /// The same outcome with `transcript` (a whole `Vec`, or a bounded one a timeline
    /// recorded).
    pub fn with_transcript(mut self, transcript: impl Into<Recorded>) -> Outcome {
        let r = transcript.into();
        self.transcript = r.entries;
        self.heard = r.heard;
        self
    }
}

/// The answer of a connector call, or the outcome that ends the vector (`unsupported`, a
/// timeout, a crash), or the failure that ends the run.
pub fn answered<T>(a: Result<Answer<T>, DriverError>) -> Result<Result<T, Outcome>, Fatal> {
    match a {
        Ok(Answer::Ok(v)) => Ok(Ok(v)),
        Ok(Answer::Unsupported(why)) => Ok(Err(Outcome::stop(Verdict::Unsupported, why))),
        Err(DriverError::Incompatible(why)) => Err(Fatal(why)),
        Err(e) => Ok(Err(Outcome::stop(e.verdict(), e.to_string()))),
    }
}

/// What a test method does with a vector, beyond what every method shares.
pub trait TestMethod: Send {
    /// A vector made concrete for this SUT (octets, clocks, expectations).
    type Concrete;

    /// How the SUT is reached, for the report header.
    fn describe(&self) -> String;

    /// The method this SUT runs `v` by, or why it cannot run it at all.
    fn admit(&self, v: &Vector) -> Result<Method, NotApplicable>;

    /// The vector made concrete: not applicable when the SUT's parameters cannot express it,
    /// invalid when the vector itself is broken.
    fn materialise(
        &mut self,
        v: &Vector,
        method: Method,
    ) -> Result<Self::Concrete, MaterialiseError>;

    /// The recommended code the concrete vector expects, when it expects a reject.
    fn expected_code(_c: &Self::Concrete) -> Option<String> {
        None
    }

    /// Drives the SUT through the concrete vector and judges what it observes.
    fn drive(&mut self, v: &Vector, c: Self::Concrete, cancel: &Cancel) -> Result<Outcome, Fatal>;
}

/// What one concrete step showed, for the per-step roll-up of the methods that judge each
/// step on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The index of the vector step it comes from.
    pub step: usize,
    /// Its verdict; `None` when it did not run.
    pub verdict: Option<Verdict>,
    /// Why, for anything but a pass (and why it did not run).
    pub why: Option<String>,
    /// It failed only on the code of a reject: the code's requirements.
    pub code_only: Option<Vec<String>>,
}

/// How much a step verdict weighs in its vector's: failures first, then what could not be
/// decided, then a reject without a visible code, then a pass.
pub fn weight(v: Verdict) -> u8 {
    match v {
        _ if v.is_failure() => 3,
        Verdict::Inconclusive => 2,
        Verdict::RejectCodeNotObservable => 1,
        _ => 0,
    }
}

/// One result per vector step of `v`: the heaviest verdict of its repetitions (the earliest
/// of equal weight), or not run, with the requirements the step tests and those its failure
/// is charged to.
pub fn step_results(v: &Vector, judged: &[Judged]) -> Vec<StepResult> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < judged.len() {
        let j = judged[k].step;
        let group: Vec<&Judged> = judged[k..].iter().take_while(|r| r.step == j).collect();
        k += group.len();
        let ran = group.iter().filter(|r| r.verdict.is_some());
        let worst = ran.fold(None::<&&Judged>, |best, r| match best {
            Some(b)
                if weight(b.verdict.unwrap_or(Verdict::Pass))
                    >= weight(r.verdict.unwrap_or(Verdict::Pass)) =>
            {
                Some(b)
            }
            _ => Some(r),
        });
        let (verdict, detail, broke) = match worst {
            None => (None, group.first().and_then(|r| r.why.clone()), Vec::new()),
            Some(r) => (
                r.verdict,
                r.why.clone().filter(|_| r.verdict != Some(Verdict::Pass)),
                // A failure on the code alone is charged to the code's requirements.
                r.code_only.clone().unwrap_or_default(),
            ),
        };
        out.push(StepResult {
            step: j + 1,
            verdict,
            requirements: v.step_requirements(j),
            broke,
            detail,
        });
    }
    out
}
