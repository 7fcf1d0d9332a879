//! The octets the harness sends, pinned: every SWP vector materialised for each reference
//! manifest of the codec and session methods, compared with the committed golden files under
//! `reports/reference/materialised/`. The harness encodes with its own codec (`frames/`), so
//! a change of what it puts on the wire (a codec edit, a vector edit, a new parameter) shows
//! in review as a diff of these files, like the report snapshots, rather than passing
//! silently because the reference changed the same way.
//!
//! After an intended change:
//! `SWP_UPDATE_GOLDEN=1 cargo test -p swp-conform --test materialised`, review the diff,
//! commit, and run again without the switch.

mod common;

use common::{rewrote, root, update_switch};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use swp_conform::catalog::vector::{Method, Vector};
use swp_conform::catalog::{Catalog, LoadedVector};
use swp_conform::method::codec::CODEC_NOW_MS;
use swp_conform::method::session::SessionMethod;
use swp_conform::method::{applicability, TestMethod};
use swp_conform::plan::materialize::{
    self, Action, ConcreteStep, Expectation, Fields, MaterialiseError, ReplyPattern,
};
use swp_conform::sut::{Sut, SutKind};

const SWITCH: &str = "SWP_UPDATE_GOLDEN";

/// Octet strings longer than this are written as length, head and SHA-256, so the files
/// stay reviewable (the boundary vectors send megabytes).
const ABBREVIATE_OVER: usize = 512;

/// How many octets of an abbreviated string are still shown: the length prefix and the
/// envelope header, where a codec change would show.
const HEAD: usize = 32;

/// Longest diff shown per file in a failure message.
const MAX_DIFF_LINES: usize = 400;

/// Golden files and the manifests each covers. Manifests share a file when they materialise
/// identically (same method, limits, policy and session options); the test checks that they
/// still do, so a manifest that diverges must get a file of its own. The built-in SUT is
/// `reference-inproc.yaml` (`swp_conform::sut::BUILTIN_MANIFEST`).
const GOLDEN: &[(&str, &[&str])] = &[
    (
        "inproc",
        &["reference-inproc.yaml", "reference-testee.yaml"],
    ),
    ("tcp", &["reference-tcp.yaml", "reference-stdio.yaml"]),
    ("tls", &["reference-tls.yaml"]),
    ("relay", &["reference-relay.yaml"]),
    ("lenient", &["reference-lenient.yaml"]),
];

fn golden_dir() -> PathBuf {
    root().join("reports/reference/materialised")
}

fn manifest(name: &str) -> Sut {
    Sut::load(&root().join("implementations/manifests").join(name))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// How a manifest runs SWP vectors.
enum Admit<'a> {
    /// Codec method: the vector's own methods decide (translate vectors carry no frames).
    Codec,
    /// Session method: the method itself decides (topology, TLS options, probes).
    Session(Box<SessionMethod<'a>>),
}

impl Admit<'_> {
    fn method(&self) -> Method {
        match self {
            Admit::Codec => Method::Codec,
            Admit::Session(_) => Method::Session,
        }
    }

    /// Why `v` is not run by this manifest's SWP method, if it is not.
    fn refuse(&self, v: &Vector) -> Option<String> {
        match self {
            // The codec method runs a vector by `translate` when it has both (no frames).
            Admit::Codec => v
                .header
                .methods
                .contains(&Method::Translate)
                .then(|| "a translate vector".to_owned()),
            Admit::Session(m) => m.admit(v).err().map(|e| e.why),
        }
    }
}

fn admitter<'a>(sut: &'a Sut, work: &Path) -> Admit<'a> {
    match &sut.manifest.kind {
        SutKind::Builtin | SutKind::Testee { .. } => Admit::Codec,
        SutKind::Endpoint { session, reach } => Admit::Session(Box::new(
            SessionMethod::new(sut, (**session).clone(), reach.clone(), work)
                .unwrap_or_else(|e| panic!("session method for {}: {e}", sut.manifest.name)),
        )),
        _ => panic!("not a codec or session manifest"),
    }
}

/// Octets for the file: hex, or length, head and digest when long.
fn octets(b: &[u8]) -> String {
    if b.len() <= ABBREVIATE_OVER {
        hex::encode(b)
    } else {
        format!(
            "<{} octets, head {}…, sha256 {}>",
            b.len(),
            hex::encode(&b[..HEAD]),
            hex::encode(Sha256::digest(b))
        )
    }
}

fn fields(f: &Fields) -> String {
    let mut parts = Vec::new();
    let num = |parts: &mut Vec<String>, k: &str, v: Option<u64>| {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    };
    num(&mut parts, "version", f.version);
    num(&mut parts, "profile_id", f.profile_id);
    num(&mut parts, "msg_type", f.msg_type);
    num(&mut parts, "flags", f.flags);
    num(&mut parts, "ts_unix_ms", f.ts_unix_ms);
    if let Some(m) = &f.msg_id {
        parts.push(format!("msg_id={}", octets(m)));
    }
    if let Some(p) = &f.payload {
        parts.push(format!("payload={}", octets(p)));
    }
    if let Some(x) = &f.extensions {
        let xs: Vec<String> = x
            .iter()
            .map(|(t, v)| format!("{t}:{}", octets(v)))
            .collect();
        parts.push(format!("extensions=[{}]", xs.join(",")));
    }
    parts.join(" ")
}

fn reply(r: &ReplyPattern) -> String {
    let mut parts = Vec::new();
    if let Some(p) = r.profile_id {
        parts.push(format!("profile_id={p}"));
    }
    if let Some(m) = r.msg_type {
        parts.push(format!("msg_type={m}"));
    }
    if r.same_msg_id {
        parts.push("same_msg_id".into());
    }
    if let Some(p) = &r.payload {
        parts.push(format!("payload={}", octets(p)));
    }
    if let Some(j) = &r.payload_json {
        parts.push(format!("payload_json={j}"));
    }
    if let Some(p) = &r.payload_p1 {
        parts.push(format!(
            "payload_p1={}",
            serde_json::to_string(p).unwrap_or_default()
        ));
    }
    if r.p1_canonical {
        parts.push("p1_canonical".into());
    }
    if let Some(w) = r.when_silent {
        parts.push(format!("when_silent={w:?}"));
    }
    parts.join(" ")
}

fn expectation(e: &Expectation) -> String {
    match e {
        Expectation::Accept {
            fields: f,
            unknown_flags,
            profile_may_refuse,
            reject_allowed,
            answered,
        } => {
            let mut s = format!("accept {{{}}}", fields(f));
            if let Some(u) = unknown_flags {
                write!(s, " unknown_flags={u}").unwrap();
            }
            if *profile_may_refuse {
                s.push_str(" profile_may_refuse");
            }
            if *reject_allowed {
                s.push_str(" reject_allowed");
            }
            if *answered {
                s.push_str(" answered");
            }
            s
        }
        Expectation::Reject {
            allowed,
            terminates,
            code_requirements,
        } => {
            let codes: Vec<&str> = allowed.iter().map(|c| c.as_str()).collect();
            let mut s = format!("reject {}", codes.join("|"));
            if let Some(t) = terminates {
                write!(s, " terminates={t}").unwrap();
            }
            if !code_requirements.is_empty() {
                write!(s, " code_requirements={}", code_requirements.join(",")).unwrap();
            }
            s
        }
        Expectation::Denied(r) => format!("denied ({})", expectation(r)),
        Expectation::Answer { code, also } => {
            let also: Vec<&str> = also.iter().map(|c| c.as_str()).collect();
            format!("answer err code={code:?} also={}", also.join("|"))
        }
        Expectation::Nothing => "nothing".into(),
        Expectation::Close => "close".into(),
        Expectation::Silence {
            ms,
            refusal_allowed,
        } => format!(
            "silence {ms} ms{}",
            if *refusal_allowed {
                " or a refusal"
            } else {
                ""
            }
        ),
        Expectation::Reply(r) => format!("reply {{{}}}", reply(r)),
        Expectation::A2aTasks(t) => {
            format!("a2a_tasks {}", serde_json::to_string(t).unwrap_or_default())
        }
        Expectation::Identity => "identity".into(),
        Expectation::Forwarded => "forwarded".into(),
        Expectation::ForwardedPayload => "forwarded_payload".into(),
        Expectation::ErrorJson(j) => format!("error_json {j}"),
        Expectation::Stream(st) => {
            format!("stream {}", serde_json::to_string(st).unwrap_or_default())
        }
        Expectation::Flow(items) => {
            let each: Vec<String> = items
                .iter()
                .map(|f| {
                    format!(
                        "{}x {}",
                        f.count,
                        serde_json::to_string(&f.spec).unwrap_or_default()
                    )
                })
                .collect();
            format!("flow [{}]", each.join(", "))
        }
    }
}

fn action(a: &Action) -> String {
    match a {
        Action::Send(b) => format!("send {}", octets(b)),
        Action::End => "end of stream".into(),
        Action::CorruptRecord => "corrupt a TLS record".into(),
        Action::ReplayRecord => "replay the last TLS record".into(),
        Action::IdentityProbe => "the manifest's identity probe".into(),
        Action::SlowRequest(id) => format!("the manifest's slow request, msg_id {}", octets(id)),
        Action::SendAsReply(b) => format!(
            "send, msg_id replaced by the one last forwarded upstream, {}",
            octets(b)
        ),
    }
}

fn steps(out: &mut String, steps: &[ConcreteStep]) {
    for s in steps {
        let mut label = format!("step {}", s.step + 1);
        if s.rep > 0 {
            write!(label, " rep {}", s.rep + 1).unwrap();
        }
        if s.upstream {
            label.push_str(" upstream");
        }
        let at = s.now_ms - CODEC_NOW_MS;
        writeln!(out, "  {label} @+{at}ms: {}", action(&s.action)).unwrap();
        let ex: Vec<String> = s.expect.iter().map(expectation).collect();
        let ex = if ex.is_empty() {
            "nothing".to_owned()
        } else {
            ex.join("; ")
        };
        writeln!(out, "    expect: {ex}").unwrap();
    }
}

/// The body of a golden file for `sut`: every vector of its SWP method, in id order.
fn render(cat: &Catalog, sut: &Sut, work: &Path) -> String {
    let admit = admitter(sut, work);
    let params = sut.params(CODEC_NOW_MS);
    let mut out = String::new();
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    writeln!(out, "# params: {}", p.join(" ")).unwrap();
    if let Admit::Session(_) = &admit {
        // Frames the session method builds from the manifest; each gets a fresh msg_id in a
        // run, shown here with a fixed one.
        let SutKind::Endpoint { session, .. } = &sut.manifest.kind else {
            unreachable!()
        };
        let probes = [
            (
                "probe",
                session.probe.as_ref().map(|p| &p.frame),
                "swp-probe",
            ),
            (
                "identity probe",
                session.identity_probe.as_ref().map(|p| &p.frame),
                "swp-ident",
            ),
            ("slow request", session.slow_request.as_ref(), "swp-slow-"),
        ];
        for (what, frame, prefix) in probes {
            let Some(f) = frame else { continue };
            let id = bytes::Bytes::from(format!("{prefix}0000001"));
            let b = materialize::build_frame(f, &params, Some(id))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            writeln!(out, "# {what} (msg_id {prefix}0000001): {}", octets(&b)).unwrap();
        }
    }
    let mut vs: Vec<&LoadedVector> = cat
        .vectors
        .iter()
        .filter(|lv| lv.vector.header.methods.contains(&admit.method()))
        .collect();
    vs.sort_by(|a, b| a.vector.header.id.cmp(&b.vector.header.id));
    for lv in vs {
        let v = &lv.vector;
        writeln!(out).unwrap();
        writeln!(out, "{}", v.header.id).unwrap();
        let why = applicability(v, sut)
            .map(|na| na.why)
            .or_else(|| admit.refuse(v));
        if let Some(why) = why {
            writeln!(out, "  not applicable: {why}").unwrap();
            continue;
        }
        // What is sent is the vector with the manifest's `params` filled in.
        let v = match swp_conform::plan::placeholders::fill(v, &sut.manifest.params) {
            Ok(v) => v,
            Err(e) => {
                writeln!(out, "  not applicable: {e}").unwrap();
                continue;
            }
        };
        match materialize::materialise(&v, &params) {
            Ok(s) => steps(&mut out, &s),
            Err(
                MaterialiseError::NotApplicable(why)
                | MaterialiseError::HarnessBound(why)
                | MaterialiseError::NotBuildable(why)
                | MaterialiseError::Undeclared { why, .. },
            ) => writeln!(out, "  not applicable: {why}").unwrap(),
            Err(MaterialiseError::Invalid(why)) => panic!("{}: {why}", v.header.id),
        }
    }
    out
}

fn header(file: &str, members: &[&str]) -> String {
    format!(
        "# {file}.txt: the octets the harness sends for every SWP vector, and what it expects\n\
         # after each step, against {members}.\n\
         # Checked by harness/tests/materialised.rs. After an intended change:\n\
         #   SWP_UPDATE_GOLDEN=1 cargo test -p swp-conform --test materialised\n\
         # then review the diff of this file like code. Receiver clock origin NOW_MS =\n\
         # {CODEC_NOW_MS} (`@+N` is a step's offset from it); octet strings over {ABBREVIATE_OVER}\n\
         # octets are given as length, first {HEAD} octets and SHA-256. `step N rep R` is the Rth\n\
         # repetition of step N.\n",
        members = members.join(", ")
    )
}

fn unified_diff(old: &str, new: &str, name: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header(
            &format!("{name} (committed)"),
            &format!("{name} (regenerated)"),
        )
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        text
    } else {
        format!(
            "{}\n… {} more diff lines",
            lines[..MAX_DIFF_LINES].join("\n"),
            lines.len() - MAX_DIFF_LINES
        )
    }
}

#[test]
fn materialised_octets_match_the_golden_files() {
    let cat = common::catalog();
    let work = root().join("target/materialised-test");
    let update = update_switch(SWITCH);
    let mut problems = Vec::new();
    let mut written = 0;
    for (file, members) in GOLDEN {
        let mut bodies = Vec::new();
        for m in *members {
            let sut = manifest(m);
            bodies.push((m, render(&cat, &sut, &work.join(m))));
        }
        let (first, body) = &bodies[0];
        for (m, b) in &bodies[1..] {
            if b != body {
                problems.push(format!(
                    "{m} no longer materialises like {first}; give it a golden file of its own in GOLDEN:\n{}",
                    unified_diff(body, b, m)
                ));
            }
        }
        let text = header(file, members) + body;
        let path = golden_dir().join(format!("{file}.txt"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == text {
            continue;
        }
        if update {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &text).unwrap();
            written += 1;
        } else {
            problems.push(format!(
                "reports/reference/materialised/{file}.txt differs from what the harness materialises now:\n{}",
                unified_diff(&committed, &text, &format!("{file}.txt"))
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n\nif the change is intended: {SWITCH}=1 cargo test -p swp-conform --test materialised",
        problems.join("\n\n")
    );
    if written > 0 {
        rewrote(written, SWITCH);
    }
}

#[test]
fn no_stale_golden_files() {
    let known: Vec<String> = GOLDEN.iter().map(|(f, _)| format!("{f}.txt")).collect();
    let stale: Vec<String> = std::fs::read_dir(golden_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !known.contains(n))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        stale.is_empty(),
        "files under reports/reference/materialised/ that no manifest produces: {stale:?}"
    );
}
