//! `swp-conform claim --class Cx [--profile relay,cred]`: runs the namespaces a class and the
//! profiles added to it require, prints the claim only when the class and every profile
//! pass (every required namespace complete, every applicable vector passed), else every
//! cause at once, grouped; and writes an evidence bundle either way: the four reports, the SUT
//! manifest, the vector-set digest with every file's own digest, the transcripts of
//! failures, the command line and the versions, sealed by a `MANIFEST` of their digests
//! and, with `--sign`, an Ed25519 signature over it (`crate::evidence`).

use super::{io_error, CliError, RunOptions};
use crate::catalog::class::{Class, Profile};
use crate::catalog::Catalog;
use crate::evidence::keys::SecretKey;
use crate::evidence::manifest::Manifest;
use crate::evidence::Bundle;
use crate::report::analysis::claims::ClaimVerdict;
use crate::report::analysis::classes::ClassStatus;
use crate::report::model::Report;
use crate::sut::Sut;
use std::path::{Path, PathBuf};

/// The outcome of a claim.
pub struct ClaimOutcome {
    /// The verdict of the class with its profiles.
    pub verdict: ClaimVerdict,
    /// What was claimed: `C0 Core Baseline` for a class alone, `SWP C0 + SWP-RELAY` with
    /// profiles.
    pub statement: String,
    /// The claim text, when the class and every profile passed.
    pub claim: Option<String>,
    /// The bundle written.
    pub bundle: PathBuf,
}

impl ClaimOutcome {
    /// What `claim` prints before the bundle's path: the claim line, or why there is none
    /// with every cause, grouped, one line per vector.
    pub fn message(&self) -> String {
        match &self.claim {
            Some(c) => format!("{c}\n"),
            None => {
                let mut s = format!(
                    "no claim: {} is {}: {}\n",
                    self.statement,
                    self.verdict.status.as_str(),
                    self.verdict.reason
                );
                for l in &self.verdict.causes {
                    s.push_str(l);
                    s.push('\n');
                }
                s
            }
        }
    }
}

/// The bundle's name without extension: `evidence-C0`, or `evidence-C0-relay-cred` with
/// profiles.
pub fn bundle_name(class: Class, profiles: &[Profile]) -> String {
    let mut s = format!("evidence-{class}");
    for p in profiles {
        s.push('-');
        s.push_str(p.namespace());
    }
    s
}

/// The profiles of a claim checked against its class: each once, none the class already
/// covers (the claim line would name it twice).
pub fn check_profiles(class: Class, profiles: &[Profile]) -> Result<(), CliError> {
    for (i, p) in profiles.iter().enumerate() {
        if profiles[..i].contains(p) {
            return Err(CliError::Usage(format!("--profile {p} is given twice")));
        }
        if class.covers(*p) {
            return Err(CliError::Usage(format!(
                "--profile {p}: class {class} already requires it; claim --class {class} alone, or a lower class with --profile"
            )));
        }
    }
    Ok(())
}

/// Builds the evidence bundle (`tar.gz`) in memory, sealed by its `MANIFEST` and, with
/// `key`, signed. Entries have fixed mode and mtime and the signature is deterministic, so
/// the bundle differs between runs only where the reports' run blocks do.
pub fn bundle(
    rep: &Report,
    cat: &Catalog,
    sut: &Sut,
    verdict: &ClaimVerdict,
    key: Option<&SecretKey>,
) -> Result<Vec<u8>, CliError> {
    let class = verdict.class;
    let profiles: Vec<Profile> = verdict
        .profiles
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect();
    let claim = verdict.claim.as_deref();
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
        versions(rep, cat, class, &profiles).into_bytes(),
    ));
    let class_verdict = rep.classes.iter().find(|c| c.class == class);
    let profile_verdicts: Vec<_> = rep
        .profiles
        .iter()
        .filter(|v| verdict.profiles.contains(&v.profile))
        .collect();
    files.push((
        "claim.json".into(),
        (serde_json::to_string_pretty(&serde_json::json!({
            "class": class,
            "profiles": verdict.profiles,
            "claimed": claim.is_some(),
            "claim": claim,
            "status": verdict.status,
            "reason": verdict.reason,
            "causes": verdict.causes,
            "verdict": class_verdict,
            "profile_verdicts": profile_verdicts,
        }))
        .unwrap_or_default()
            + "\n")
            .into_bytes(),
    ));
    let head = Manifest {
        harness: rep.harness.clone(),
        class: class.to_string(),
        profiles: verdict.profiles.clone(),
        catalog_sha256: rep
            .digests
            .as_ref()
            .map(|d| d.vector_set_sha256.clone())
            .unwrap_or_default(),
        sut_manifest: format!("manifest/{manifest_name}"),
        status: verdict.status.as_str().to_owned(),
        claim: claim.map(str::to_owned),
        files: Default::default(),
    };
    let mut b = Bundle {
        root: bundle_name(class, &profiles),
        files,
    };
    b.seal(head, key)?;
    b.pack().map_err(io_error(Path::new("evidence bundle")))
}

/// What the claim was checked with and against: the harness, the SUT, and the version of
/// every specification the class and its profiles cover, as the registry states them.
fn versions(rep: &Report, cat: &Catalog, class: Class, profiles: &[Profile]) -> String {
    let mut s = format!(
        "harness: {}\nharness commit: {}\nsut: {} {}\nsut reported: {}\ncore protocol version: {}\n",
        rep.harness,
        rep.run.runner_git_sha,
        rep.sut.name,
        rep.sut.version,
        rep.sut.reported,
        crate::frames::limits::CORE_VERSION
    );
    let mut parts: Vec<&crate::catalog::class::Part> = class.parts().iter().collect();
    for p in profiles {
        if p.uses_p1() && !parts.contains(&&crate::catalog::class::P1) {
            parts.push(&crate::catalog::class::P1);
        }
        parts.push(p.part());
    }
    for p in parts {
        let ver = crate::report::analysis::classes::document_version(cat, p.document);
        s.push_str(&format!("{}: {} {ver}\n", p.what, p.document));
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
    /// The profiles added to the class (`--profile`).
    pub profiles: &'a [Profile],
}

/// Runs the claim: `runner` runs the plan of the class and `o.profiles` as `o` says; writes
/// the reports and the bundle into `out`.
pub fn claim(
    cat: &Catalog,
    sut: &Sut,
    class: Class,
    out: &Path,
    runner: &mut dyn crate::method::Runner,
    cancel: &crate::method::Cancel,
    o: ClaimOptions<'_>,
) -> Result<ClaimOutcome, CliError> {
    let profiles = o.profiles;
    check_profiles(class, profiles)?;
    let mut namespaces: Vec<String> = class.namespaces().iter().map(|n| (*n).to_owned()).collect();
    namespaces.extend(profiles.iter().map(|p| p.namespace().to_owned()));
    let sel = crate::plan::select::Selection {
        namespaces,
        ..Default::default()
    };
    let plan = crate::plan::select::select(cat, &sel)?;
    let mut pattern = format!("class:{class}");
    for p in profiles {
        pattern.push_str(&format!(",profile:{p}"));
    }
    let opts = RunOptions {
        pattern,
        out: Some(out.to_path_buf()),
        stop_after_silent: o.stop_after_silent,
        ..Default::default()
    };
    let rep = super::run_report(cat, sut, &plan, &opts, runner, &mut [], cancel)?;
    let verdict = rep
        .claim_verdict(cat, class, profiles)
        .ok_or_else(|| CliError::Usage(format!("the report has no verdict for class {class}")))?;
    let claim = verdict
        .claim
        .clone()
        .filter(|_| verdict.status == ClassStatus::Pass);
    crate::report::write_all(&rep, out)?;
    let bytes = bundle(&rep, cat, sut, &verdict, o.key)?;
    let path = out.join(format!("{}.tar.gz", bundle_name(class, profiles)));
    std::fs::write(&path, bytes).map_err(io_error(&path))?;
    if let Some(why) = &rep.run.stopped_early {
        return Err(CliError::StoppedEarly(why.clone()));
    }
    Ok(ClaimOutcome {
        statement: if profiles.is_empty() {
            format!("{class} {}", class.title())
        } else {
            verdict.statement(cat)
        },
        verdict,
        claim,
        bundle: path,
    })
}
