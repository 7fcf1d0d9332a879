//! Test methods: the one shape every method runs a vector in, and the
//! plan loop. `run_vector` does the shared work (result scaffold, applicability,
//! materialisation, finishing the verdict); a method implements only what differs: which
//! of its methods a vector admits, what the vector becomes for this SUT, and how it is
//! driven and judged.

pub mod applicable;
pub mod codec;
pub mod contract;
pub mod conv;
pub mod evaluate;
pub mod mcpnative;
pub mod mcpproxy;
pub mod receiver;
pub mod session;
pub mod silence;
pub mod translate;

use crate::catalog::{Catalog, LoadedVector};
use crate::plan::materialize::MaterialiseError;
use crate::report::result::{Incidental, StepResult, VectorResult, Verdict};
use crate::sut::Sut;

pub use crate::support::cancel::Cancel;
pub use applicable::applicability;
pub(crate) use contract::unfilled;
pub use contract::{
    answered, step_results, weight, Fatal, Judged, NotApplicable, Outcome, TestMethod,
};
pub use silence::Silence;

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

/// The codec method outside the CLI's plan loop.
impl codec::CodecMethod<'_> {
    /// Runs the plan's vectors one by one (a convenience for tests and benches).
    pub fn run(
        self,
        catalog: &Catalog,
        plan: &[&LoadedVector],
    ) -> Result<Vec<VectorResult>, Fatal> {
        let sut = self.sut;
        let mut b = Bound {
            method: self,
            catalog,
            sut,
        };
        run_plan(
            &mut b,
            plan,
            &Cancel::new(),
            &mut Silence::never(),
            &mut |_| {},
        )
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
        r.lacks = na.lacks;
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
    r.heard = o.heard;
    r.sut_not_started = o.sut_not_started;
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
        .header.requirements
        .iter()
        .flat_map(|r| resolve(r))
        .any(|id| reg.level(&id).is_some_and(|l| l.is_absolute()))
        // A published fixture the harness cannot read must fail the run, not warn.
        || receiver::unreadable(&lv.vector);
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
        lv.vector.header.id.clone(),
        lv.vector.header.namespace.clone(),
        path,
        reqs,
        absolute,
    );
    r.title.clone_from(&lv.vector.header.title);
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
/// when `cancel` is set or `silence` says the SUT answers nothing (the caller lists the
/// vectors not reached), and stops the run on a [`Fatal`] failure.
pub fn run_plan(
    runner: &mut dyn Runner,
    plan: &[&LoadedVector],
    cancel: &Cancel,
    silence: &mut Silence,
    progress: &mut dyn FnMut(&VectorResult),
) -> Result<Vec<VectorResult>, Fatal> {
    let mut out = Vec::with_capacity(plan.len());
    for lv in plan {
        if cancel.is_cancelled() || silence.stopped().is_some() {
            break;
        }
        let r = run_one(runner, lv, cancel)?;
        silence.observe(&r);
        progress(&r);
        out.push(r);
    }
    Ok(out)
}

/// Runs the plan on `runner` and `helpers` at once (`run --jobs N`): each worker takes the
/// next vector not yet taken, so a slow vector holds up only its own worker. Vectors marked
/// `exclusive` then run one by one on `runner`, with no other traffic to the SUT. Results
/// come back in plan order, so reports do not depend on scheduling; `silence` counts them in
/// the order they finish, and once it stops the run no worker takes another vector. Without
/// helpers this is [`run_plan`].
pub fn run_plan_jobs<'r>(
    runner: &mut (dyn Runner + 'r),
    helpers: &mut [Box<dyn Runner + 'r>],
    plan: &[&LoadedVector],
    cancel: &Cancel,
    silence: &mut Silence,
    progress: &mut dyn FnMut(&VectorResult),
) -> Result<Vec<VectorResult>, Fatal> {
    if helpers.is_empty() {
        return run_plan(runner, plan, cancel, silence, progress);
    }
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (shared, alone): (Vec<_>, Vec<_>) = plan
        .iter()
        .copied()
        .partition(|lv| !lv.vector.header.exclusive);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let stopped = AtomicBool::new(false);
    let mut slots: Vec<Option<VectorResult>> = (0..shared.len()).map(|_| None).collect();
    let mut fatal = None;
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<VectorResult, Fatal>)>();
        let workers = std::iter::once(&mut *runner).chain(helpers.iter_mut().map(|h| h.as_mut()));
        for w in workers {
            let (tx, next, failed, stopped, shared) =
                (tx.clone(), &next, &failed, &stopped, &shared);
            scope.spawn(move || loop {
                if cancel.is_cancelled()
                    || failed.load(Ordering::SeqCst)
                    || stopped.load(Ordering::SeqCst)
                {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(lv) = shared.get(i) else { break };
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
                    if silence.observe(&r) {
                        stopped.store(true, Ordering::SeqCst);
                    }
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
        for r in run_plan(runner, &alone, cancel, silence, progress)? {
            by_id.insert(r.vector_id.clone(), r);
        }
    }
    Ok(plan
        .iter()
        .filter_map(|lv| by_id.remove(&lv.vector.header.id))
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
    run_plan(
        r.as_mut(),
        plan,
        &Cancel::new(),
        &mut Silence::never(),
        &mut |_| {},
    )
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
