//! `swp-conform claim --class Cx`: runs the namespaces a class requires, prints the claim
//! only when the class verdict is pass (every required namespace complete, every applicable
//! vector passed), and writes an evidence bundle either way: the four reports, the SUT
//! manifest, the vector-set digest with every file's own digest, the transcripts of
//! failures, the command line and the versions, sealed by a `MANIFEST` of their digests
//! and, with `--sign`, an Ed25519 signature over it (`crate::evidence`).

use super::{io_error, CliError, RunOptions};
use crate::catalog::class::Class;
use crate::catalog::Catalog;
use crate::evidence::keys::SecretKey;
use crate::evidence::manifest::Manifest;
use crate::evidence::Bundle;
use crate::report::analysis::classes::{ClassStatus, ClassVerdict};
use crate::report::model::Report;
use crate::sut::Sut;
use std::path::{Path, PathBuf};

/// The outcome of a claim.
pub struct ClaimOutcome {
    /// The class's verdict.
    pub verdict: ClassVerdict,
    /// The claim text, when the class passed.
    pub claim: Option<String>,
    /// The bundle written.
    pub bundle: PathBuf,
}

/// Builds the evidence bundle (`tar.gz`) in memory, sealed by its `MANIFEST` and, with
/// `key`, signed. Entries have fixed mode and mtime and the signature is deterministic, so
/// the bundle differs between runs only where the reports' run blocks do.
pub fn bundle(
    rep: &Report,
    cat: &Catalog,
    sut: &Sut,
    class: Class,
    claim: Option<&str>,
    key: Option<&SecretKey>,
) -> Result<Vec<u8>, CliError> {
    let mut files: Vec<(String, Vec<u8>)> = crate::report::render_all(rep)?
        .into_iter()
        .map(|(n, t)| (n.to_owned(), t.into_bytes()))
        .collect();
    let manifest_name = sut
        .path
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or("sut-manifest.yaml".to_owned(), |f| {
            f.to_string_lossy().into_owned()
        });
    files.push((
        format!("manifest/{manifest_name}"),
        sut.text.clone().into_bytes(),
    ));
    let mut vs = format!(
        "{}  vector-set\n",
        rep.digests
            .as_ref()
            .map(|d| d.vector_set_sha256.as_str())
            .unwrap_or("")
    );
    for lv in &cat.vectors {
        let body = std::fs::read(&lv.path).map_err(io_error(&lv.path))?;
        vs.push_str(&format!(
            "{}  {}\n",
            super::sha256_hex(&body),
            cat.display_path(&lv.path)
        ));
    }
    files.push(("vector-set.sha256".into(), vs.into_bytes()));
    for r in &rep.failures {
        let mut t = format!(
            "{} [{}]\nrequirements: {}\nexpected: {}\nobserved: {}\n",
            r.vector_id,
            r.verdict.as_str(),
            r.requirements.join(", "),
            r.expected,
            r.observed
        );
        if let Some(d) = &r.detail {
            t.push_str(&format!("detail: {d}\n"));
        }
        for e in rep.transcript(r) {
            t.push_str(&crate::report::render::transcript_line(e));
            t.push('\n');
        }
        files.push((format!("transcripts/{}.txt", r.vector_id), t.into_bytes()));
    }
    files.push((
        "command.txt".into(),
        format!("{}\n", rep.run.command.join(" ")).into_bytes(),
    ));
    files.push((
        "versions.txt".into(),
        versions(rep, cat, class).into_bytes(),
    ));
    let verdict = rep.classes.iter().find(|c| c.class == class);
    files.push((
        "claim.json".into(),
        (serde_json::to_string_pretty(&serde_json::json!({
            "class": class,
            "claimed": claim.is_some(),
            "claim": claim,
            "verdict": verdict,
        }))
        .unwrap_or_default()
            + "\n")
            .into_bytes(),
    ));
    let head = Manifest {
        harness: rep.harness.clone(),
        class: class.to_string(),
        catalog_sha256: rep
            .digests
            .as_ref()
            .map(|d| d.vector_set_sha256.clone())
            .unwrap_or_default(),
        sut_manifest: format!("manifest/{manifest_name}"),
        status: verdict.map_or("untested", |v| v.status.as_str()).to_owned(),
        claim: claim.map(str::to_owned),
        files: Default::default(),
    };
    let mut b = Bundle {
        root: format!("evidence-{class}"),
        files,
    };
    b.seal(head, key)?;
    b.pack().map_err(io_error(Path::new("evidence bundle")))
}

/// What the claim was checked with and against: the harness, the SUT, and the version of
/// every specification the class covers, as the registry states them.
fn versions(rep: &Report, cat: &Catalog, class: Class) -> String {
    let mut s = format!(
        "harness: {}\nharness commit: {}\nsut: {} {}\nsut reported: {}\ncore protocol version: {}\n",
        rep.harness,
        rep.run.runner_git_sha,
        rep.sut.name,
        rep.sut.version,
        rep.sut.reported,
        crate::frames::limits::CORE_VERSION
    );
    for (what, doc) in class.documents() {
        let ver = cat
            .requirements
            .versions
            .get(*doc)
            .map_or("version not stated", String::as_str);
        s.push_str(&format!("{what}: {doc} {ver}\n"));
    }
    s
}

/// How a claim runs and what it does with its bundle.
#[derive(Clone, Copy, Default)]
pub struct ClaimOptions<'a> {
    /// Stop after this many silent vectors in a row (0: never).
    pub stop_after_silent: u32,
    /// Sign the bundle's `MANIFEST` with this key.
    pub key: Option<&'a SecretKey>,
}

/// Runs the claim: `runner` runs the class's plan as `o` says; writes the reports and the
/// bundle into `out`.
pub fn claim(
    cat: &Catalog,
    sut: &Sut,
    class: Class,
    out: &Path,
    runner: &mut dyn crate::method::Runner,
    cancel: &crate::method::Cancel,
    o: ClaimOptions<'_>,
) -> Result<ClaimOutcome, CliError> {
    let sel = crate::plan::select::Selection {
        class: Some(class),
        ..Default::default()
    };
    let plan = crate::plan::select::select(cat, &sel)?;
    let opts = RunOptions {
        pattern: format!("class:{class}"),
        out: Some(out.to_path_buf()),
        stop_after_silent: o.stop_after_silent,
        ..Default::default()
    };
    let rep = super::run_report(cat, sut, &plan, &opts, runner, &mut [], cancel)?;
    let verdict = rep
        .classes
        .iter()
        .find(|c| c.class == class)
        .cloned()
        .ok_or_else(|| CliError::Usage(format!("the report has no verdict for class {class}")))?;
    let claim = verdict
        .claim
        .clone()
        .filter(|_| verdict.status == ClassStatus::Pass);
    crate::report::write_all(&rep, out)?;
    let bytes = bundle(&rep, cat, sut, class, claim.as_deref(), o.key)?;
    let path = out.join(format!("evidence-{class}.tar.gz"));
    std::fs::write(&path, bytes).map_err(io_error(&path))?;
    if let Some(why) = &rep.run.stopped_early {
        return Err(CliError::StoppedEarly(why.clone()));
    }
    Ok(ClaimOutcome {
        verdict,
        claim,
        bundle: path,
    })
}
