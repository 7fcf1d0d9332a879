//! Test methods: the one shape every method runs a vector in, and the
//! plan loop. `run_vector` does the shared work (result scaffold, applicability,
//! materialisation, finishing the verdict); a method implements only what differs: which
//! of its methods a vector admits, what the vector becomes for this SUT, and how it is
//! driven and judged.

pub mod applicable;
pub mod codec;
pub mod conv;
pub mod evaluate;
pub mod mcpnative;
pub mod mcpproxy;
pub mod session;
pub mod translate;

use crate::catalog::vector::{Method, Vector};
use crate::catalog::{Catalog, LoadedVector};
use crate::connect::driver::{Answer, DriverError};
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{
    Incidental, NaCause, StepResult, TranscriptEntry, VectorResult, Verdict,
};
use crate::sut::Sut;

pub use crate::support::cancel::Cancel;
pub use applicable::applicability;

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
}

impl NotApplicable {
    /// The SUT's declared, spec-allowed choice.
    pub fn choice(why: impl Into<String>) -> Self {
        NotApplicable {
            cause: NaCause::SutChoice,
            why: why.into(),
        }
    }

    /// A case the harness could not test.
    pub fn untested(why: impl Into<String>) -> Self {
        NotApplicable {
            cause: NaCause::Untested,
            why: why.into(),
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
            MaterialiseError::HarnessBound(why) | MaterialiseError::Undeclared(why) => {
                Some(NotApplicable::untested(why))
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
        _ => NotApplicable::untested(e.to_string()),
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

    /// The same outcome with `transcript`.
    pub fn with_transcript(mut self, transcript: Vec<TranscriptEntry>) -> Outcome {
        self.transcript = transcript;
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

/// A method bound to its catalog and SUT: what the plan loop runs, whatever the method.
pub trait Runner: Send {
    /// How the SUT is reached, for the report header.
    fn describe(&self) -> String;
    /// Runs one vector.
    fn run_vector(&mut self, lv: &LoadedVector, cancel: &Cancel) -> Result<VectorResult, Fatal>;
    /// Why the vector would not be run against this SUT, decided without touching it
    /// (applicability, admission, materialisation); `None` when it would run.
    fn not_applicable(&mut self, lv: &LoadedVector) -> Option<NotApplicable>;
}

/// A [`TestMethod`] with the catalog and SUT it runs against.
pub struct Bound<'a, M> {
    /// The method.
    pub method: M,
    /// The catalog (requirement levels).
    pub catalog: &'a Catalog,
    /// The SUT (applicability).
    pub sut: &'a Sut,
}

impl<M: TestMethod> Runner for Bound<'_, M> {
    fn describe(&self) -> String {
        self.method.describe()
    }

    fn run_vector(&mut self, lv: &LoadedVector, cancel: &Cancel) -> Result<VectorResult, Fatal> {
        run_vector(&mut self.method, self.catalog, self.sut, lv, cancel)
    }

    fn not_applicable(&mut self, lv: &LoadedVector) -> Option<NotApplicable> {
        if let Some(na) = applicability(&lv.vector, self.sut) {
            return Some(na);
        }
        let v = match crate::plan::placeholders::fill(&lv.vector, &self.sut.manifest.params) {
            Ok(v) => v,
            Err(e) => return Some(unfilled(e)),
        };
        let v = v.as_ref();
        let method = match self.method.admit(v) {
            Ok(m) => m,
            Err(na) => return Some(na),
        };
        self.method
            .materialise(v, method)
            .err()
            .and_then(Into::into)
    }
}

/// Runs one vector by `m`: result scaffold → applicability → admission → materialisation →
/// drive and judge → finish.
pub fn run_vector<M: TestMethod>(
    m: &mut M,
    catalog: &Catalog,
    sut: &Sut,
    lv: &LoadedVector,
    cancel: &Cancel,
) -> Result<VectorResult, Fatal> {
    let mut r = result_base(catalog, lv);
    let skip = |r: &mut VectorResult, na: NotApplicable| {
        r.detail = Some(na.why);
        r.na_cause = Some(na.cause);
    };
    if let Some(na) = applicability(&lv.vector, sut) {
        skip(&mut r, na);
        return Ok(r);
    }
    let v = match crate::plan::placeholders::fill(&lv.vector, &sut.manifest.params) {
        Ok(v) => v,
        Err(e) => {
            skip(&mut r, unfilled(e));
            return Ok(r);
        }
    };
    let v = v.as_ref();
    let method = match m.admit(v) {
        Ok(x) => x,
        Err(na) => {
            skip(&mut r, na);
            return Ok(r);
        }
    };
    let concrete = match m.materialise(v, method) {
        Ok(c) => c,
        Err(MaterialiseError::Invalid(why)) => {
            r.method = Some(method);
            r.verdict = Verdict::HarnessError;
            r.detail = Some(format!("vector cannot be materialised: {why}"));
            return Ok(r);
        }
        Err(e) => {
            if let Some(na) = Option::<NotApplicable>::from(e) {
                skip(&mut r, na);
            }
            return Ok(r);
        }
    };
    r.method = Some(method);
    r.expected_error_code = M::expected_code(&concrete);
    let o = m.drive(v, concrete, cancel)?;
    finish(&mut r, o, catalog);
    Ok(r)
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

/// Moves an outcome into its result. The one place a verdict becomes `pass`.
fn finish(r: &mut VectorResult, o: Outcome, catalog: &Catalog) {
    if let Some(code_reqs) = o.code_only.as_ref().filter(|c| !c.is_empty()) {
        // The reject itself happened; only the code differs. Its requirements (typically a
        // SHOULD) decide whether the run fails.
        let reg = &catalog.requirements;
        r.absolute = code_reqs
            .iter()
            .flat_map(|c| reg.resolve(c).unwrap_or_default())
            .any(|id| reg.level(&id).is_some_and(|l| l.is_absolute()));
    }
    if !o.broke.is_empty() && o.verdict != Verdict::Pass {
        let reg = &catalog.requirements;
        let ids: Vec<String> = o
            .broke
            .iter()
            .flat_map(|c| reg.resolve(c).unwrap_or_default())
            .collect();
        r.absolute = ids
            .iter()
            .any(|id| reg.level(id).is_some_and(|l| l.is_absolute()));
        r.requirements.extend(ids);
        r.requirements.sort();
        r.requirements.dedup();
    }
    if o.verdict == Verdict::NotApplicable {
        r.na_cause = o.na_cause;
    }
    r.verdict = o.verdict;
    r.pass = o.verdict == Verdict::Pass;
    r.detail = o.detail;
    r.expected = o.expected;
    r.observed = o.observed;
    r.observed_error_code = o.observed_error_code;
    r.observed_code = o.observed_alias;
    r.transcript = o.transcript;
    let reg = &catalog.requirements;
    let canonical = |ids: &[String]| -> Vec<String> {
        let mut out: Vec<String> = ids
            .iter()
            .flat_map(|c| reg.resolve(c).unwrap_or_else(|| vec![c.clone()]))
            .collect();
        out.sort();
        out.dedup();
        out
    };
    r.steps = o
        .steps
        .into_iter()
        .map(|mut s| {
            s.requirements = canonical(&s.requirements);
            s.broke = canonical(&s.broke);
            s
        })
        .collect();
    r.incidental = o
        .incidental
        .into_iter()
        .flat_map(|i| {
            canonical(std::slice::from_ref(&i.requirement))
                .into_iter()
                .map(move |requirement| Incidental {
                    requirement,
                    ..i.clone()
                })
        })
        .collect();
    r.incidental.sort();
    r.incidental.dedup();
    if r.steps.is_empty() && r.verdict.is_failure() {
        if let Some(code_reqs) = o.code_only.as_ref().filter(|c| !c.is_empty()) {
            // One step, failed on its code alone: charged to the code's requirements.
            r.steps = vec![StepResult {
                step: 1,
                verdict: Some(r.verdict),
                requirements: r.requirements.clone(),
                broke: canonical(code_reqs),
                detail: r.detail.clone(),
            }];
        }
    }
    if !r.steps.is_empty() && r.verdict.is_failure() {
        // The run fails on a step only for the requirements that step's failure is charged to.
        r.absolute = r.steps.iter().any(|s| {
            s.verdict.is_some_and(Verdict::is_failure)
                && if s.broke.is_empty() {
                    &s.requirements
                } else {
                    &s.broke
                }
                .iter()
                .any(|id| reg.level(id).is_some_and(|l| l.is_absolute()))
        });
    }
}

/// The result scaffolding of a vector, shared by every method: ids, canonical requirements,
/// whether a failure is absolute, the path; verdict not-applicable until it runs.
pub fn result_base(catalog: &Catalog, lv: &LoadedVector) -> VectorResult {
    let reg = &catalog.requirements;
    let resolve = |r: &str| reg.resolve(r).unwrap_or_default();
    // Code requirements are exercised too, but they do not decide whether the vector is
    // absolute: a code mapping is typically a SHOULD beside a MUST reject.
    let absolute = lv
        .vector
        .requirements
        .iter()
        .flat_map(|r| resolve(r))
        .any(|id| reg.level(&id).is_some_and(|l| l.is_absolute()))
        // A published fixture the harness cannot read must fail the run, not warn.
        || crate::published::receiver::unreadable(&lv.vector);
    let mut reqs: Vec<String> = lv
        .vector
        .all_requirements()
        .into_iter()
        .flat_map(resolve)
        .collect();
    reqs.sort();
    reqs.dedup();
    let path = catalog.display_path(&lv.path);
    let mut r = VectorResult::new(
        lv.vector.id.clone(),
        lv.vector.namespace.clone(),
        path,
        reqs,
        absolute,
    );
    r.title.clone_from(&lv.vector.title);
    r.verdict = Verdict::NotApplicable;
    r
}

/// Runs one vector; an interrupt during it makes a non-pass `interrupted`.
fn run_one(
    runner: &mut dyn Runner,
    lv: &LoadedVector,
    cancel: &Cancel,
) -> Result<VectorResult, Fatal> {
    let mut r = runner.run_vector(lv, cancel)?;
    // An interrupt stops the SUT under the vector in flight; what it showed after that
    // (a crash, a timeout) is the harness's doing, not a verdict on the SUT.
    if cancel.is_cancelled() && r.verdict != Verdict::Pass && r.verdict.executed() {
        r.detail = Some(format!(
            "the run was interrupted while this vector ran (it showed {}: {})",
            r.verdict.as_str(),
            r.detail.as_deref().unwrap_or("")
        ));
        r.verdict = Verdict::Interrupted;
        r.pass = false;
    }
    Ok(r)
}

/// Runs the plan in order, reporting each result; stops early, keeping the results so far,
/// when `cancel` is set, and stops the run on a [`Fatal`] failure.
pub fn run_plan(
    runner: &mut dyn Runner,
    plan: &[&LoadedVector],
    cancel: &Cancel,
    progress: &mut dyn FnMut(&VectorResult),
) -> Result<Vec<VectorResult>, Fatal> {
    let mut out = Vec::with_capacity(plan.len());
    for lv in plan {
        if cancel.is_cancelled() {
            break;
        }
        let r = run_one(runner, lv, cancel)?;
        progress(&r);
        out.push(r);
    }
    Ok(out)
}

/// Runs the plan on `runner` and `helpers` at once (`run --jobs N`): each worker takes the
/// next vector not yet taken, so a slow vector holds up only its own worker. Vectors marked
/// `exclusive` then run one by one on `runner`, with no other traffic to the SUT. Results
/// come back in plan order, so reports do not depend on scheduling. Without helpers this is
/// [`run_plan`].
pub fn run_plan_jobs<'r>(
    runner: &mut (dyn Runner + 'r),
    helpers: &mut [Box<dyn Runner + 'r>],
    plan: &[&LoadedVector],
    cancel: &Cancel,
    progress: &mut dyn FnMut(&VectorResult),
) -> Result<Vec<VectorResult>, Fatal> {
    if helpers.is_empty() {
        return run_plan(runner, plan, cancel, progress);
    }
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (shared, alone): (Vec<_>, Vec<_>) =
        plan.iter().copied().partition(|lv| !lv.vector.exclusive);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut slots: Vec<Option<VectorResult>> = (0..shared.len()).map(|_| None).collect();
    let mut fatal = None;
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<VectorResult, Fatal>)>();
        let workers = std::iter::once(&mut *runner).chain(helpers.iter_mut().map(|h| h.as_mut()));
        for w in workers {
            let (tx, next, failed, shared) = (tx.clone(), &next, &failed, &shared);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(lv) = shared.get(i) else { break };
                if cancel.is_cancelled() || failed.load(Ordering::SeqCst) {
                    break;
                }
                let r = run_one(w, lv, cancel);
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                if tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            match r {
                Ok(r) => {
                    progress(&r);
                    if let Some(slot) = slots.get_mut(i) {
                        *slot = Some(r);
                    }
                }
                Err(e) => {
                    fatal.get_or_insert(e);
                }
            }
        }
    });
    if let Some(e) = fatal {
        return Err(e);
    }
    let mut by_id: std::collections::HashMap<String, VectorResult> = slots
        .into_iter()
        .flatten()
        .map(|r| (r.vector_id.clone(), r))
        .collect();
    if !failed.load(std::sync::atomic::Ordering::SeqCst) {
        for r in run_plan(runner, &alone, cancel, progress)? {
            by_id.insert(r.vector_id.clone(), r);
        }
    }
    Ok(plan
        .iter()
        .filter_map(|lv| by_id.remove(&lv.vector.id))
        .collect())
}

/// What opening a method needs besides the catalog and the SUT.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Where logs, port files and the PKI go.
    pub work: std::path::PathBuf,
    /// Deadline of one testee request.
    pub timeout: std::time::Duration,
}

impl Setup {
    /// Work files in `work`, the default 10 s testee deadline.
    pub fn new(work: impl Into<std::path::PathBuf>) -> Setup {
        Setup {
            work: work.into(),
            timeout: std::time::Duration::from_secs(10),
        }
    }
}

/// Opens the method the manifest calls for and runs `plan` with it, without progress or
/// interruption (tests, benches, tools).
pub fn run(
    catalog: &Catalog,
    sut: &Sut,
    setup: &Setup,
    plan: &[&LoadedVector],
) -> Result<Vec<VectorResult>, Fatal> {
    let mut r = open(catalog, sut, setup)?;
    run_plan(r.as_mut(), plan, &Cancel::new(), &mut |_| {})
}

/// The method the manifest's kind calls for, bound to the catalog and the SUT, its
/// connector opened. The one place that looks at the kind.
pub fn open<'a>(
    catalog: &'a Catalog,
    sut: &'a Sut,
    setup: &Setup,
) -> Result<Box<dyn Runner + 'a>, Fatal> {
    use crate::sut::SutKind;
    fn bound<'a, M: TestMethod + 'a>(
        method: M,
        catalog: &'a Catalog,
        sut: &'a Sut,
    ) -> Box<dyn Runner + 'a> {
        Box::new(Bound {
            method,
            catalog,
            sut,
        })
    }
    // Relative paths in `work` would be resolved against each SUT's own working directory.
    let work = std::path::absolute(&setup.work)
        .map_err(|e| Fatal(format!("{}: {e}", setup.work.display())))?;
    Ok(match &sut.manifest.kind {
        SutKind::Builtin | SutKind::Testee { .. } => {
            let mut driver: Box<dyn crate::connect::driver::CodecDriver> = match &sut.manifest.kind
            {
                SutKind::Testee { start } => Box::new(crate::connect::testee::TesteeDriver::new(
                    start.clone(),
                    sut.base_dir(),
                    setup.timeout,
                    work.join("sut-stderr.log"),
                )),
                _ => crate::connect::builtin::builtin().map_err(|e| Fatal(e.to_string()))?,
            };
            driver.open().map_err(|e| Fatal(e.to_string()))?;
            bound(codec::CodecMethod::new(sut, driver), catalog, sut)
        }
        SutKind::Endpoint { session, reach } => {
            let method =
                session::SessionMethod::new(sut, (**session).clone(), reach.clone(), &work)
                    .map_err(|e| Fatal(e.to_string()))?;
            bound(method, catalog, sut)
        }
        SutKind::McpServer { start, mcp_native } => bound(
            mcpnative::McpNativeMethod::new(sut, mcp_native.clone(), start.clone(), &work),
            catalog,
            sut,
        ),
        SutKind::McpProxy { start } => bound(
            mcpproxy::McpProxyMethod::new(sut, start.clone(), &work),
            catalog,
            sut,
        ),
    })
}
