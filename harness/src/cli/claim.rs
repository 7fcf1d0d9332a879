//! `swp-conform claim --class Cx`: runs the namespaces a class requires, prints the claim
//! only when the class verdict is pass (every required namespace complete, every applicable
//! vector passed), and writes an evidence bundle either way: the four reports, the SUT
//! manifest, the vector-set digest with every file's own digest, the transcripts of
//! failures, the command line and the versions.

use super::{io_error, CliError, RunOptions};
use crate::catalog::class::Class;
use crate::catalog::Catalog;
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

/// Builds the evidence bundle (`tar.gz`) in memory. Entries have fixed mode and mtime so
/// the bundle differs between runs only where the reports' run blocks do.
pub fn bundle(
    rep: &Report,
    cat: &Catalog,
    sut: &Sut,
    class: Class,
    claim: Option<&str>,
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
    let bundle_err = io_error(Path::new("evidence bundle"));
    let enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(enc);
    let root = format!("evidence-{class}");
    for (name, body) in &files {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        if let Err(e) = tar.append_data(&mut h, format!("{root}/{name}"), body.as_slice()) {
            return Err(bundle_err(e));
        }
    }
    tar.into_inner()
        .and_then(|enc| enc.finish())
        .map_err(bundle_err)
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

/// Runs the claim: `runner` runs the class's plan, stopping after `stop_after_silent`
/// silent vectors in a row (0: never); writes the reports and the bundle into `out`.
pub fn claim(
    cat: &Catalog,
    sut: &Sut,
    class: Class,
    out: &Path,
    runner: &mut dyn crate::method::Runner,
    cancel: &crate::method::Cancel,
    stop_after_silent: u32,
) -> Result<ClaimOutcome, CliError> {
    let sel = crate::plan::select::Selection {
        class: Some(class),
        ..Default::default()
    };
    let plan = crate::plan::select::select(cat, &sel)?;
    let opts = RunOptions {
        pattern: format!("class:{class}"),
        out: Some(out.to_path_buf()),
        stop_after_silent,
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
    let bytes = bundle(&rep, cat, sut, class, claim.as_deref())?;
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
