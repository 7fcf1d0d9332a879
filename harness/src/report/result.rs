//! The one result model every reporter reads: per-vector verdicts with their evidence,
//! per-requirement verdicts, and the run's identity.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The verdict for one vector (docs/vector-format.md, Verdicts and levels).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every expectation held.
    Pass,
    /// An expectation did not hold.
    Fail,
    /// A reject was observed but its code cannot be observed on this SUT's wire.
    RejectCodeNotObservable,
    /// What the SUT showed cannot decide the vector on this wire (a close after a frame the
    /// core must accept and the profile must refuse): neither a pass nor a failure.
    Inconclusive,
    /// The manifest does not claim what the vector needs.
    NotApplicable,
    /// The SUT said it does not support what the vector needs.
    Unsupported,
    /// The SUT did not answer in time.
    Timeout,
    /// The SUT process died.
    Crash,
    /// The harness could not run the vector (a vector or harness bug).
    HarnessError,
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP) while the vector ran, and the
    /// harness stopped the SUT: no verdict on the SUT.
    Interrupted,
    /// The run stopped before the vector ran, because the SUT had answered nothing for as
    /// many vectors in a row as `--stop-after-silent` allows: no verdict on the SUT.
    NotRun,
}

impl Verdict {
    /// Whether the vector was executed against the SUT (v1 `results[]` membership).
    pub fn executed(self) -> bool {
        !matches!(self, Verdict::NotApplicable | Verdict::NotRun)
    }

    /// Whether it counts as a failure of the SUT when the vector's requirement is absolute.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Verdict::Fail | Verdict::Timeout | Verdict::Crash | Verdict::HarnessError
        )
    }

    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::RejectCodeNotObservable => "reject-code-not-observable",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotApplicable => "not-applicable",
            Verdict::Unsupported => "unsupported",
            Verdict::Timeout => "timeout",
            Verdict::Crash => "crash",
            Verdict::HarnessError => "harness-error",
            Verdict::Interrupted => "interrupted",
            Verdict::NotRun => "not-run",
        }
    }
}

/// Why a vector did not apply, as the class verdicts need it (`docs/spec-issues.md` SI-035).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NaCause {
    /// A choice the spec leaves to the SUT, declared in its manifest: a profile it does not
    /// claim, a policy (freshness off, no rate limit, its unknown-profile path, its P1
    /// form), limits that make the case impossible, an optional feature it does not
    /// declare. Complete for a class claim.
    SutChoice,
    /// Not tested: the test method cannot run the vector, the manifest lacks the section
    /// or the trigger it needs, or the case exceeds a harness bound. A class whose
    /// required vector was not tested is `incomplete`.
    #[default]
    Untested,
}

impl NaCause {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            NaCause::SutChoice => "sut-choice",
            NaCause::Untested => "untested",
        }
    }
}

/// Direction of a transcript entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    /// Harness to SUT.
    Sent,
    /// SUT to harness.
    Received,
    /// A note from the harness.
    Note,
}

/// One transcript line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptEntry {
    /// Milliseconds since the vector started (0 for the codec method, whose clock is virtual).
    pub t_ms: u64,
    /// Direction.
    pub dir: Dir,
    /// Hex octets (abbreviated past 256 octets) or text.
    pub data: String,
}

/// The outcome of one vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VectorResult {
    /// Vector id.
    pub vector_id: String,
    /// What the vector checks, in one line (its `title`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Namespace.
    pub namespace: String,
    /// Vector file, relative to the catalog's parent.
    pub path: String,
    /// Method used, absent when not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::catalog::vector::Method>,
    /// Verdict.
    pub verdict: Verdict,
    /// `verdict == pass` (runner output schema v1).
    pub pass: bool,
    /// Canonical requirement IDs exercised.
    pub requirements: Vec<String>,
    /// Whether a failure fails the run: some requirement is absolute (MUST/SHALL/REQUIRED).
    pub absolute: bool,
    /// What was expected (at the deciding step).
    pub expected: String,
    /// What was observed (at the deciding step).
    pub observed: String,
    /// Recommended canonical code expected, if a reject was expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_error_code: Option<String>,
    /// Canonical code observed, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_error_code: Option<String>,
    /// Alias observed, when the SUT reported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_code: Option<String>,
    /// v1: fallback evaluation is never used by this runner.
    pub used_fallback: bool,
    /// Why, for anything but a plain pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For not-applicable: whether that was the SUT's declared choice or untested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub na_cause: Option<NaCause>,
    /// For a vector left untested because the manifest lacks a declaration: the names it
    /// lacks (`params` names, manifest sections), so a withheld claim says what to declare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
    /// Each step's own verdict and the requirements it tests, for a vector with more than
    /// one step that did not pass: what the requirement roll-up reads, so a failing step
    /// fails only its own requirements. Empty otherwise (every step had the vector's
    /// verdict).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepResult>,
    /// Defects seen while this vector ran that belong to no step of it (a message the SUT
    /// sent about something else): each counts once per run under its own requirement,
    /// never as this vector's failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidental: Vec<Incidental>,
    /// Both directions, kept for every vector and printed for failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<TranscriptEntry>,
    /// Whether anything came from the SUT while the vector ran (entries the transcript's
    /// bound cut included): what the early stop reads (`method::silence`). Known only to
    /// the run that drove the vector, so never written; a result read back says `false`.
    #[serde(skip)]
    #[schemars(skip)]
    pub heard: bool,
    /// Why the SUT could not be started for this vector (its verdict is `harness-error`):
    /// the command and the OS error. Class verdicts name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut_not_started: Option<String>,
}

/// One step of a vector, judged on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepResult {
    /// 1-based, in the vector's order (a repeated step counts once).
    pub step: usize,
    /// Its verdict; absent when the step did not run (an earlier close ended the vector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The canonical requirements the step tests: its own, or the vector's.
    pub requirements: Vec<String>,
    /// The requirements its failure is charged to, when narrower than `requirements` (a
    /// reject that carried another code fails only the code's requirements).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broke: Vec<String>,
    /// Why, for anything but a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A defect observed in passing: counted once per run under `requirement`, whichever
/// vectors saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Incidental {
    /// The requirement it breaks (canonical ID).
    pub requirement: String,
    /// What makes two observations the same defect (e.g. the rule and the message kind);
    /// observations with equal requirement and key are one.
    pub key: String,
    /// What was seen, in the protocol's terms.
    pub detail: String,
}

/// `path` relative to `root`, with `/` separators, as reports show file paths.
pub(crate) fn display_path(root: &std::path::Path, path: &std::path::Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

impl VectorResult {
    /// A result not yet run: `harness-error` until a verdict is set, nothing observed.
    pub fn new(
        vector_id: String,
        namespace: String,
        path: String,
        requirements: Vec<String>,
        absolute: bool,
    ) -> Self {
        VectorResult {
            vector_id,
            title: String::new(),
            namespace,
            path,
            method: None,
            verdict: Verdict::HarnessError,
            pass: false,
            requirements,
            absolute,
            expected: String::new(),
            observed: String::new(),
            expected_error_code: None,
            observed_error_code: None,
            observed_code: None,
            used_fallback: false,
            detail: None,
            na_cause: None,
            lacks: Vec::new(),
            steps: Vec::new(),
            incidental: Vec::new(),
            transcript: Vec::new(),
            heard: false,
            sut_not_started: None,
        }
    }
}

/// Whether a result fails the run.
pub(crate) fn fails_run(r: &VectorResult, strict: bool) -> bool {
    (r.verdict.is_failure() && (r.absolute || strict))
        || (r.verdict == Verdict::RejectCodeNotObservable && strict)
}
