//! The spec kit's published vector set as a catalog front-end: a flat directory of
//! `<id>.json` metadata beside `<id>.bin` frames (or `<id>.evidence.md` for process checks),
//! read into ordinary catalog [`Vector`]s, so selection, baselines, shards, claims, reports
//! and diffs work on it unchanged (`docs/vector-format.md`, "Published sets").
//!
//! Each fixture becomes one step sending its octets (and, when they end inside a frame, the
//! end of the stream), with the metadata's expectation graded as the catalog grades codes
//! (`docs/spec-issues.md` SI-004 to SI-011). A profile payload valid in one P1 form only is
//! sent in the form the SUT declares: the kit's octets in the kit's form, the same message
//! re-wrapped (or unwrapped) by the harness in the other (SI-040). What the fixture assumes
//! of the receiver, which the catalog format has no words for (its own clock, its limits,
//! profile validation), rides along as a [`Fixture`]; [`receiver`] applies it to the SUT or
//! says why it cannot. Where the project's reading departs from the published expectation,
//! a [`rulings`] entry says so and its effect is what runs (another expectation, a judgment
//! on decoding only, the receiver's choice), and the report's published-set analysis
//! (`report::analysis::published`) reports every such case with what the SUT did.

pub mod format;
pub mod octets;
pub mod receiver;
pub mod rulings;

use crate::catalog::vector::{
    AcceptSpec, Applicability, Data, Expect, Expectations, ExtSpec, FieldsSpec, FrameSpec, Method,
    Num, Part, RejectFull, RejectSpec, Send, Step, UnknownProfile, Vector,
};
use crate::catalog::{Catalog, LoadedVector};
use crate::frames::limits::DEFAULT_MAX_CLOCK_SKEW_MS;
use crate::frames::{DecodeError, ErrorCode, FrameError, Limits};
use crate::method::NotApplicable;
use crate::p1::P1Form;
use bytes::Bytes;
use format::{Metadata, Outcome};
use octets::{Finding, Header, Reading};
use rulings::{Effect, Ruling};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest `.bin` read: published frames are a few KiB; the bound keeps a stray file from
/// being held in memory as a vector.
pub const MAX_BIN_BYTES: u64 = 16 * 1024 * 1024;
/// Largest `.json` read; real ones are a few hundred octets.
pub const MAX_JSON_BYTES: u64 = 1024 * 1024;

/// Namespaces whose fixtures are about the core, not a profile: their accepts are core
/// accepts (SI-003), and they run without profile validation.
const CORE_LEVEL: [&str; 4] = ["core", "e1", "s1", "poc"];

/// `poc_*` fixtures have no catalog vector of their own id; each takes the requirements of
/// the catalog vector that covers the same case (the same-case test checks the octets).
pub const SAME_CASE: [(&str, &str); 6] = [
    (
        "poc_0001_valid_mcp_request",
        "core_0002_valid_typical_frame",
    ),
    (
        "poc_0002_valid_swprpc_request",
        "core_0002_valid_typical_frame",
    ),
    ("poc_0003_invalid_version", "core_0008_unsupported_version"),
    (
        "poc_0004_invalid_empty_msg_id",
        "e1_0005_empty_msg_id_invalid",
    ),
    (
        "poc_0005_invalid_truncated_frame",
        "core_0006_invalid_truncated_body",
    ),
    (
        "poc_0006_invalid_varint_overflow",
        "e1_0002_varint_too_long_invalid",
    ),
];

/// What the kit expects, as published, with the codes the catalog's grading also allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Accept (`false`: reject, or a process check when `codes` is empty too).
    pub accept: bool,
    /// The codes the metadata names (empty for an accept).
    pub codes: Vec<ErrorCode>,
    /// Those and the codes the spec equally allows for the fault the octets carry.
    pub allowed: Vec<ErrorCode>,
    /// In words, as the metadata says it.
    pub text: String,
}

/// What a fixture assumes of the receiver beyond the SUT's manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Receiver {
    /// The receiver clock: the fixture's own stamp, or the set's for a fixture about its
    /// stamp (ms since the epoch). `None` when the octets never reach a timestamp check.
    pub now_ms: Option<u64>,
    /// Limits the metadata states; applied where the SUT takes per-vector configuration.
    pub limits: format::StatedLimits,
    /// Header values and sizes of the frame.
    pub header: Header,
    /// How far the stamp lies from the clock, for a fixture whose stamp is the point.
    pub stamp_offset: Option<u64>,
    /// The profile the fixture treats as unknown.
    pub unknown_profile: Option<u64>,
    /// Profiles whose payloads the receiver validates for this fixture.
    pub validate: Vec<u64>,
    /// A P1 payload that decodes in one form only, carried in the form the SUT declares:
    /// the kit's form and the header of the frame as the harness builds it in the other.
    pub carried: Option<Carried>,
}

/// A profile fixture whose P1 payload decodes in one form only and which the harness sends
/// in the form the SUT declares (SI-040): in the kit's own form its octets are the kit's;
/// in the other, the same message re-wrapped into the annex's `Payload` (or unwrapped from
/// it), so the frame's sizes differ by the wrapper's few octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// The form the kit's payload is in.
    pub kit: P1Form,
    /// Header values and sizes of the frame in the other form.
    pub other: Header,
}

impl Receiver {
    /// The header of the frame a SUT declaring `form` is sent.
    pub fn header_in(&self, form: P1Form) -> &Header {
        match &self.carried {
            Some(c) if c.kit != form => &c.other,
            _ => &self.header,
        }
    }
}

/// A published fixture behind a [`Vector`]: its metadata file, what the kit expects, the
/// ruling that applies, and what it assumes of the receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// The metadata file's name.
    pub file: String,
    /// The published expectation.
    pub published: Published,
    /// The project's ruling on it, if any.
    pub ruling: Option<&'static Ruling>,
    /// About a profile (the MCP mapping, A2A, SWP-*), not the core.
    pub profile_level: bool,
    /// What it assumes of the receiver.
    pub receiver: Receiver,
    /// Why it cannot run anywhere (a process check, a single frame of multi-frame behaviour).
    pub skip: Option<NotApplicable>,
    /// For a process check, the evidence file its review reads (`none named` when the
    /// metadata names none); the report lists it.
    pub evidence: Option<String>,
    /// Why the harness cannot read it: the vector becomes a harness error.
    pub problem: Option<String>,
}

/// Reading a published set failed as a whole (per-fixture problems become results).
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// The directory could not be listed.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Reading one file with a size bound failed.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a regular file")]
    NotFile,
    #[error("larger than the harness bound of {0} octets")]
    TooLarge(u64),
}

/// Reads a regular file of at most `cap` octets; the bound holds for what is read, so a
/// file growing underneath cannot make the harness allocate more.
fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(ReadError::NotFile);
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(ReadError::TooLarge(cap));
    }
    Ok(buf)
}

/// The metadata files of a directory, by id (non-recursive), and the other file names.
fn scan(dir: &Path) -> std::io::Result<(BTreeMap<String, PathBuf>, Vec<String>)> {
    let mut json = BTreeMap::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.strip_suffix(".json") {
            Some(stem) if !stem.is_empty() => {
                json.insert(stem.to_owned(), entry.path());
            }
            _ => others.push(name),
        }
    }
    Ok((json, others))
}

/// Whether `dir` holds a published set: some `<id>.json` has an `<id>.bin` or
/// `<id>.evidence.md` beside it, and there is no `requirements/` directory (a YAML catalog
/// has one).
pub fn is_published_dir(dir: &Path) -> bool {
    if dir.join("requirements").is_dir() {
        return false;
    }
    scan(dir).is_ok_and(|(json, others)| {
        json.keys().any(|id| {
            others.contains(&format!("{id}.bin")) || others.contains(&format!("{id}.evidence.md"))
        })
    })
}

/// One fixture as read from disk, before conversion.
struct Raw {
    id: String,
    path: PathBuf,
    meta: Metadata,
    octets: Option<Bytes>,
    reading: Option<Reading>,
    /// The fixture's words say its timestamp is the point (stale, future, missing).
    about_stamp: bool,
}

fn namespace_of(id: &str) -> String {
    id.split('_').next().unwrap_or_default().to_owned()
}

/// A file the metadata names, as a plain name inside the set's directory.
fn sibling(dir: &Path, name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.contains(['/', '\\']) || name == ".." || name == "." {
        return Err(format!(
            "{name:?} is not a file name in the set's directory"
        ));
    }
    Ok(dir.join(name))
}

/// Octets of the uvarint encoding of `v`.
fn uvarint_len(v: u64) -> u64 {
    u64::from((64 - v.leading_zeros()).max(1).div_ceil(7))
}

/// `base` with the limits a fixture states in place, kept coherent: a frame bound the
/// fixture lowers lowers the payload bound with it (core-spec §3.2: the payload bound is the
/// frame bound minus the header).
pub fn stated_over(base: crate::sut::Limits, s: &format::StatedLimits) -> crate::sut::Limits {
    let mut l = crate::sut::Limits {
        max_frame_bytes: s.max_frame_bytes.map_or(base.max_frame_bytes, |n| {
            u32::try_from(n).unwrap_or(u32::MAX)
        }),
        min_msg_id_bytes: s.min_msg_id_bytes.unwrap_or(base.min_msg_id_bytes),
        max_msg_id_bytes: s.max_msg_id_bytes.unwrap_or(base.max_msg_id_bytes),
        max_ext_bytes: s.max_ext_bytes.unwrap_or(base.max_ext_bytes),
        max_payload_bytes: s.max_payload_bytes.unwrap_or(base.max_payload_bytes),
    };
    if s.max_payload_bytes.is_none() {
        let frame = u64::from(l.max_frame_bytes);
        let header = 5 + 1 + l.min_msg_id_bytes + 1 + uvarint_len(frame);
        l.max_payload_bytes = l.max_payload_bytes.min(frame.saturating_sub(header));
    }
    l
}

/// The limits a fixture assumes: the ones it states, the spec's defaults for the rest.
pub fn assumed_limits(s: &format::StatedLimits) -> Limits {
    let d = Limits::default();
    let u = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    let base = crate::sut::Limits {
        max_frame_bytes: d.max_frame_bytes,
        min_msg_id_bytes: u(d.min_msg_id_bytes),
        max_msg_id_bytes: u(d.max_msg_id_bytes),
        max_ext_bytes: u(d.max_ext_bytes),
        max_payload_bytes: u(d.max_payload_bytes),
    };
    let l = stated_over(base, s);
    let us = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Limits {
        max_frame_bytes: l.max_frame_bytes,
        min_msg_id_bytes: us(l.min_msg_id_bytes),
        max_msg_id_bytes: us(l.max_msg_id_bytes),
        max_ext_bytes: us(l.max_ext_bytes),
        max_payload_bytes: us(l.max_payload_bytes),
    }
}

fn read_raw(dir: &Path, id: String, path: PathBuf) -> Raw {
    let mut raw = Raw {
        id,
        path,
        meta: Metadata::default(),
        octets: None,
        reading: None,
        about_stamp: false,
    };
    let doc = match read_capped(&raw.path, MAX_JSON_BYTES) {
        Ok(b) => b,
        Err(e) => {
            raw.meta
                .problems
                .push(format!("cannot read the metadata: {e}"));
            return raw;
        }
    };
    raw.meta = match serde_json::from_slice(&doc) {
        Ok(v) => format::parse(&v),
        Err(e) => {
            raw.meta
                .problems
                .push(format!("the metadata is not valid JSON: {e}"));
            return raw;
        }
    };
    if let Some(named) = raw.meta.id.clone().filter(|n| *n != raw.id) {
        raw.meta.problems.push(format!(
            "the metadata names vector {named:?}, but the file is {}.json",
            raw.id
        ));
    }
    let words = [&raw.meta.description, &raw.meta.rejection_reason];
    raw.about_stamp = raw.meta.timestamp_required.is_some()
        || words.iter().filter_map(|w| w.as_deref()).any(|w| {
            let w = w.to_ascii_lowercase();
            w.contains("timestamp") || w.contains("freshness")
        });
    if raw.meta.outcome == Some(Outcome::Process) {
        return raw;
    }
    let Some(bin) = raw.meta.bin_file.clone() else {
        raw.meta
            .problems
            .push("the metadata names no .bin fixture".into());
        return raw;
    };
    let octets = match sibling(dir, &bin)
        .and_then(|p| read_capped(&p, MAX_BIN_BYTES).map_err(|e| format!("cannot read {bin}: {e}")))
    {
        Ok(b) => Bytes::from(b),
        Err(e) => {
            raw.meta.problems.push(e);
            return raw;
        }
    };
    match octets::read(&octets, &assumed_limits(&raw.meta.limits)) {
        Ok(r) => raw.reading = Some(r),
        Err(e) => raw.meta.problems.push(format!("{bin}: {e}")),
    }
    raw.octets = Some(octets);
    raw
}

/// The stamp of a fixture whose frame is whole (a receiver reaches its timestamp check).
fn stamp(r: &Raw) -> Option<u64> {
    r.reading
        .as_ref()
        .filter(|x| x.complete)
        .and_then(|x| x.header.ts_unix_ms)
}

/// The moment each namespace's fixtures were stamped: the median stamp of the fixtures that
/// are not about their stamp, per namespace, else over the whole set. Fixtures were made in
/// batches minutes apart, so one clock for the whole set would date some of them in the
/// future, and a stale fixture's own stamp would make it fresh.
fn batch_clocks(raws: &[Raw]) -> (BTreeMap<String, u64>, Option<u64>) {
    fn median(mut v: Vec<u64>) -> Option<u64> {
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    }
    let mut per: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut all = Vec::new();
    for r in raws.iter().filter(|r| !r.about_stamp) {
        if let Some(ts) = stamp(r).filter(|t| *t > 0) {
            per.entry(namespace_of(&r.id)).or_default().push(ts);
            all.push(ts);
        }
    }
    let per = per
        .into_iter()
        .filter_map(|(ns, v)| median(v).map(|m| (ns, m)))
        .collect();
    (per, median(all))
}

/// Loads the published set in `dir` as catalog vectors. `reference` is the project's
/// catalog: its vectors of the same ids give the fixtures their requirements.
pub fn load(dir: &Path, reference: &Catalog) -> Result<Vec<LoadedVector>, PublishedError> {
    let (json, _) = scan(dir).map_err(|source| PublishedError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let raws: Vec<Raw> = json
        .into_iter()
        .map(|(id, path)| read_raw(dir, id, path))
        .collect();
    let (per, all) = batch_clocks(&raws);
    Ok(raws
        .into_iter()
        .map(|r| {
            let clock = per.get(&namespace_of(&r.id)).copied().or(all);
            let vector = convert(&r, clock, reference);
            LoadedVector {
                vector,
                path: r.path,
            }
        })
        .collect())
}

/// The codes the spec equally allows for the fault the octets carry (SI-005 to SI-011),
/// when the published code is one of them.
fn alternatives(finding: Option<&Finding>, off_clock: bool) -> &'static [ErrorCode] {
    use ErrorCode as C;
    match finding {
        Some(Finding::Frame(FrameError::TooLarge { .. }))
        | Some(Finding::Decode(DecodeError::BodyTooLarge { .. })) => {
            &[C::FrameTooLarge, C::InvalidFrame]
        }
        Some(Finding::Decode(DecodeError::Uvarint { .. })) => &[C::InvalidUvarint, C::InvalidFrame],
        Some(Finding::Decode(DecodeError::Missing(_))) => {
            &[C::InvalidEnvelope, C::InvalidFrame, C::InvalidUvarint]
        }
        Some(Finding::Decode(DecodeError::MsgIdLength { .. })) => {
            &[C::MsgIdInvalid, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::ExtTooLarge { .. })) => {
            &[C::ExtTooLarge, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::PayloadTooLarge { .. })) => {
            &[C::PayloadTooLarge, C::InvalidEnvelope]
        }
        Some(Finding::Decode(DecodeError::Truncated { .. } | DecodeError::Trailing(_))) => {
            &[C::InvalidFrame, C::InvalidEnvelope]
        }
        Some(Finding::Decoded(_)) if off_clock => &[C::InvalidEnvelope, C::SecurityPolicy],
        _ => &[],
    }
}

/// Which P1 forms a profile payload decodes in: (bare message, wrapper).
fn p1_forms(profile_id: u64, msg_type: u64, payload: &[u8]) -> Option<(bool, bool)> {
    let desc = crate::p1::pb::message_for(profile_id, msg_type)?;
    let bare = prost_reflect::DynamicMessage::decode(desc.clone(), payload).is_ok();
    let wrapped = P1Form::Wrapper
        .unwrap(profile_id, msg_type, payload)
        .is_ok_and(|inner| prost_reflect::DynamicMessage::decode(desc, &inner[..]).is_ok());
    Some((bare, wrapped))
}

fn describe_published(m: &Metadata) -> String {
    match &m.outcome {
        Some(Outcome::Accept) => "accept".into(),
        Some(Outcome::Reject(codes)) => {
            let mut s = format!(
                "reject {}",
                codes
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
            if let Some(c) = m.code.as_deref().filter(|c| !c.starts_with("ERR_")) {
                s.push_str(&format!(" (code {c})"));
            }
            s
        }
        Some(Outcome::Process) => "process check".into(),
        None => "(not understood)".into(),
    }
}

/// A fixture the harness cannot read: every method reports a harness error with `why`.
fn broken(r: &Raw, why: String) -> Vector {
    let mut v = skeleton(r, Vec::new());
    v.fixture = Some(Arc::new(Fixture {
        file: file_name(&r.path),
        published: Published {
            accept: false,
            codes: Vec::new(),
            allowed: Vec::new(),
            text: describe_published(&r.meta),
        },
        ruling: None,
        profile_level: false,
        receiver: Receiver::default(),
        skip: None,
        evidence: None,
        problem: Some(format!("{}: {why}", file_name(&r.path))),
    }));
    v
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn skeleton(r: &Raw, requirements: Vec<String>) -> Vector {
    Vector {
        id: r.id.clone(),
        title: r
            .meta
            .description
            .clone()
            .unwrap_or_else(|| r.id.replace('_', " ")),
        namespace: namespace_of(&r.id),
        requirements,
        methods: vec![Method::Codec, Method::Session],
        applies_when: Applicability::default(),
        notes: None,
        connect: None,
        shape: None,
        topology: None,
        proxy: None,
        mcp: None,
        // One frame, judged on its own: nothing another vector sends can change its verdict
        // (core_0016, the one fixture about a count, is not applicable).
        exclusive: false,
        steps: Vec::new(),
        fixture: None,
    }
}

/// The catalog vector whose requirements a fixture takes.
fn counterpart<'c>(id: &str, reference: &'c Catalog) -> Option<&'c Vector> {
    let target = SAME_CASE
        .iter()
        .find(|(f, _)| *f == id)
        .map_or(id, |(_, c)| *c);
    reference
        .vectors
        .iter()
        .find(|lv| lv.vector.id == target)
        .map(|lv| &lv.vector)
}

/// The code requirements a catalog vector gives its first reject.
fn code_requirements(v: &Vector) -> Vec<String> {
    v.steps
        .iter()
        .flat_map(|s| s.expect.as_slice())
        .find_map(|e| match e {
            Expect::Reject(RejectSpec::Full(f)) if !f.code_requirements.is_empty() => {
                Some(f.code_requirements.clone())
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn convert(r: &Raw, clock: Option<u64>, reference: &Catalog) -> Vector {
    if !r.meta.problems.is_empty() {
        return broken(r, r.meta.problems.join("; "));
    }
    let Some(outcome) = r.meta.outcome.clone() else {
        return broken(r, "the metadata states no outcome".into());
    };
    let peer = counterpart(&r.id, reference);
    let ns = namespace_of(&r.id);
    let published = Published {
        accept: outcome == Outcome::Accept,
        codes: match &outcome {
            Outcome::Reject(c) => c.clone(),
            _ => Vec::new(),
        },
        allowed: Vec::new(),
        text: describe_published(&r.meta),
    };
    let mut fx = Fixture {
        file: file_name(&r.path),
        published,
        ruling: rulings::named(&r.id),
        profile_level: r.meta.profile.is_some() || !CORE_LEVEL.contains(&ns.as_str()),
        receiver: Receiver {
            limits: r.meta.limits,
            ..Receiver::default()
        },
        skip: None,
        evidence: None,
        problem: None,
    };
    let mut v = skeleton(r, peer.map(|p| p.requirements.clone()).unwrap_or_default());
    v.notes = Some(
        [r.meta.group.as_deref(), r.meta.rejection_reason.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": "),
    )
    .filter(|n| !n.is_empty());
    if outcome == Outcome::Process || r.meta.evidence_type.as_deref() == Some("process") {
        let evidence = r.meta.evidence_file.as_deref().unwrap_or("none named");
        fx.skip = Some(NotApplicable::untested(format!(
            "a process vector, not testable at runtime: its evidence is {evidence}"
        )));
        fx.evidence = Some(evidence.to_owned());
        v.fixture = Some(Arc::new(fx));
        return v;
    }
    let (Some(octets), Some(reading)) = (&r.octets, &r.reading) else {
        return broken(r, "no octets".into());
    };
    let h = reading.header;
    fx.receiver.header = h;
    let decoded = match &reading.finding {
        Finding::Decoded(e) => Some(e.as_ref()),
        _ => None,
    };
    // The clock: a fixture's own stamp, unless its stamp is the point (stale, future, zero):
    // then the moment its batch was stamped.
    let mut off_clock = false;
    if let Some(ts) = stamp(r) {
        match clock.filter(|c| ts.abs_diff(*c) > DEFAULT_MAX_CLOCK_SKEW_MS) {
            Some(c) => {
                off_clock = true;
                fx.receiver.now_ms = Some(c);
                fx.receiver.stamp_offset = Some(ts.abs_diff(c));
                v.applies_when.timestamp_freshness = Some(!fx.published.accept);
            }
            None => fx.receiver.now_ms = Some(ts),
        }
    }
    // The profile the frame addresses: claimed by the SUT, unless it is the one the fixture
    // treats as unknown.
    if let Some(p) = h.profile_id.filter(|_| reading.complete) {
        if fx.published.codes.contains(&ErrorCode::UnknownProfile) {
            fx.receiver.unknown_profile = Some(p);
        } else {
            v.applies_when.profiles = vec![p];
        }
    }
    let forms = match (decoded, fx.profile_level) {
        (Some(e), true) => p1_forms(e.profile_id, e.msg_type, &e.payload),
        _ => None,
    };
    // A P1 payload valid in one form only: the form it is in, and the frame as the harness
    // carries it in either (SI-040); without that, it applies only to SUTs of its form.
    let mut carry_in = None;
    if let (Some((bare, wrapped)), Some(e)) = (forms, decoded) {
        let kit = if bare {
            P1Form::Message
        } else {
            P1Form::Wrapper
        };
        if bare != wrapped {
            carry_in = Some((kit, carry(e, octets, kit)));
        }
        let placeholder = e.payload.windows(r.id.len()).any(|w| w == r.id.as_bytes());
        if fx.ruling.is_none() {
            // A payload valid in neither form must be refused, whatever the kit expects.
            if !bare && !wrapped {
                fx.ruling = Some(&rulings::INVALID_P1);
            } else if placeholder {
                fx.ruling = Some(&rulings::PLACEHOLDER);
            }
        }
    }
    // The published expectation, with the codes the catalog's grading also allows.
    let group = alternatives(Some(&reading.finding), off_clock);
    let mut allowed = fx.published.codes.clone();
    if allowed.iter().any(|c| group.contains(c)) {
        allowed.extend(group.iter().filter(|c| !fx.published.codes.contains(c)));
    }
    fx.published.allowed = allowed.clone();
    let profile = decoded.map(|e| e.profile_id);
    if fx.profile_level {
        fx.receiver.validate.extend(profile);
    }
    let mut terminates = None;
    let mut expect = if fx.published.accept {
        match accept(r, decoded, fx.profile_level) {
            Ok(a) => Some(a),
            Err(why) => return broken(r, why),
        }
    } else {
        None
    };
    let mut code_reqs = peer.map(code_requirements).unwrap_or_default();
    match fx.ruling.map(|x| x.effect) {
        Some(Effect::SingleFrame(what)) => {
            fx.skip = Some(NotApplicable::untested(format!(
                "a single frame cannot show this: {what}"
            )));
        }
        Some(Effect::UnknownProfilePath(path)) => {
            v.applies_when.unknown_profile = Some(path);
            if path == UnknownProfile::Close {
                terminates = Some(true);
            }
        }
        Some(Effect::Expect(ruled)) => {
            expect = None;
            allowed = ruled.codes.to_vec();
            v.requirements = owned(ruled.requirements);
            code_reqs = owned(ruled.code_requirements);
            if ruled.validate {
                fx.receiver.validate = profile.into_iter().collect();
            }
        }
        Some(Effect::DecodingOnly) => {
            // The core's acceptance and dispatch: the receiver is not asked to validate the
            // profile, and a refusal by the profile (an endpoint's always runs) still shows
            // the core dispatched the frame (SI-003).
            let Some(e) = decoded else {
                return broken(
                    r,
                    "a ruling on decoding for a frame that does not decode".into(),
                );
            };
            let mut a = expect.take().unwrap_or_else(|| core_accept(e));
            a.profile_may_refuse = true;
            expect = Some(a);
            fx.receiver.validate.clear();
            v.requirements = owned(rulings::DECODING_REQUIREMENTS);
            code_reqs.clear();
        }
        Some(Effect::EitherWay(requirements)) => {
            let Some(e) = decoded else {
                return broken(
                    r,
                    "a ruling on a choice for a frame that does not decode".into(),
                );
            };
            // Any refusal passes; one that comes after the quiet window (a slow close) is
            // judged as a frame the profile may refuse: inconclusive, never a failure.
            let mut a = expect.take().unwrap_or_else(|| core_accept(e));
            a.reject_allowed = true;
            a.profile_may_refuse = true;
            expect = Some(a);
            v.requirements = owned(requirements);
            code_reqs.clear();
        }
        Some(Effect::Explains) | None => {}
    }
    // Carried in the SUT's form only where nothing pins the kit's payload octets (an
    // asserted payload length compares them).
    let pinned = expect
        .as_ref()
        .and_then(|a| a.fields.as_ref())
        .is_some_and(|f| f.payload.is_some());
    let mut frame = None;
    match carry_in {
        Some((_, Some((spec, carried)))) if !pinned => {
            fx.receiver.carried = Some(carried);
            frame = Some(Box::new(spec));
        }
        Some((kit, _)) => v.applies_when.p1_payload = Some(kit),
        None => {}
    }
    let expectation = match expect {
        Some(a) => Expect::Accept(Box::new(a)),
        None => {
            let Some((first, also)) = allowed.split_first() else {
                return broken(r, "a reject without a code".into());
            };
            Expect::Reject(RejectSpec::Full(RejectFull {
                code: first.as_str().to_owned(),
                also: also.iter().map(|c| c.as_str().to_owned()).collect(),
                terminates,
                code_requirements: code_reqs,
            }))
        }
    };
    let send = Send {
        raw: frame
            .is_none()
            .then(|| vec![Part::Hex(hex::encode(octets))]),
        frame,
        identity_probe: false,
        slow_request: None,
        reply_to_forwarded: false,
        jsonrpc_line: None,
        translate: None,
    };
    let step = |send: Option<Send>, end: bool, e: Expect, note: &str| Step {
        note: Some(note.to_owned()),
        send,
        end,
        corrupt_record: false,
        replay_record: false,
        side: None,
        second_connection: false,
        requirements: Vec::new(),
        repeat: None,
        at_ms: None,
        mcp: None,
        expect: Expectations::One(Box::new(e)),
    };
    let what = format!("the octets of {}", r.meta.bin_file.as_deref().unwrap_or(""));
    v.steps = if reading.at_end {
        vec![
            step(Some(send), false, Expect::Nothing, &what),
            step(None, true, expectation, "the stream ends"),
        ]
    } else {
        vec![step(Some(send), false, expectation, &what)]
    };
    v.shape = crate::catalog::vector::Shape::of(&v);
    let mut notes: Vec<String> = v.notes.take().into_iter().collect();
    if let Some(rl) = fx.ruling {
        notes.push(format!("Ruling ({}): {}", rl.si, rl.reading));
    }
    if let Some(c) = &fx.receiver.carried {
        notes.push(format!(
            "Carried in the P1 form the SUT declares (SI-040): the kit's {} octets for a {} SUT, else the same message {} by the harness",
            c.kit.as_str(),
            c.kit.as_str(),
            match c.kit {
                P1Form::Message => "in the annex's Payload wrapper",
                P1Form::Wrapper => "unwrapped",
            }
        ));
    }
    v.notes = (!notes.is_empty()).then(|| notes.join(". "));
    v.fixture = Some(Arc::new(fx));
    v
}

fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// The frame of a profile fixture whose P1 payload is valid in the `kit` form only, as a
/// frame the harness encodes in the form the SUT declares: the payload is the msg_type's
/// message with no fields set and the bare message's octets appended, which the wrapper
/// form carries whole as its member (`P1Form::wrap`). Also the header of the frame in the
/// other form. `None` where the harness's encoding in the kit's form is not exactly the
/// kit's octets (a padded uvarint, say), or the other form does not carry the same message
/// octets: the fixture then runs only for SUTs of the kit's form.
fn carry(e: &crate::frames::Envelope, octets: &Bytes, kit: P1Form) -> Option<(FrameSpec, Carried)> {
    let desc = crate::p1::pb::message_for(e.profile_id, e.msg_type)?;
    let bare = kit.unwrap(e.profile_id, e.msg_type, &e.payload).ok()?;
    let mut spec = crate::p1::P1Spec::new();
    spec.insert(
        desc.full_name().to_owned(),
        serde_json::Value::Object(serde_json::Map::new()),
    );
    spec.insert(
        "unknown_fields".to_owned(),
        serde_json::Value::String(hex::encode(&bare)),
    );
    let frame = FrameSpec {
        version: Some(Num::Lit(e.version)),
        profile_id: Some(Num::Lit(e.profile_id)),
        msg_type: Some(Num::Lit(e.msg_type)),
        flags: Some(Num::Lit(e.flags)),
        ts_unix_ms: Some(Num::Lit(e.ts_unix_ms)),
        msg_id: Some(Data::Hex(hex::encode(&e.msg_id))),
        extensions: e
            .extensions
            .iter()
            .map(|(t, v)| ExtSpec {
                ext_type: Num::Lit(t),
                value: Data::Hex(hex::encode(&v)),
            })
            .collect(),
        payload: Some(Data::P1(spec)),
    };
    let build = |form: P1Form| {
        let mut p = crate::plan::expr::Params::new();
        p.insert("P1_WRAPPER", u64::from(form == P1Form::Wrapper));
        crate::plan::materialize::build_frame(&frame, &p, None).ok()
    };
    if build(kit)? != *octets {
        return None;
    }
    let other_form = match kit {
        P1Form::Message => P1Form::Wrapper,
        P1Form::Wrapper => P1Form::Message,
    };
    let other = build(other_form)?;
    let read = octets::read(&other, &Limits::unbounded()).ok()?;
    let Finding::Decoded(o) = &read.finding else {
        return None;
    };
    if other_form
        .unwrap(o.profile_id, o.msg_type, &o.payload)
        .ok()?
        != bare
    {
        return None;
    }
    Some((
        frame,
        Carried {
            kit,
            other: read.header,
        },
    ))
}

/// The core's accept of a decoded frame: its own version, profile and msg_type (a reject
/// fixture's metadata describes the receiver, not the frame).
fn core_accept(e: &crate::frames::Envelope) -> AcceptSpec {
    AcceptSpec {
        fields: Some(FieldsSpec {
            version: Some(Num::Lit(e.version)),
            profile_id: Some(Num::Lit(e.profile_id)),
            msg_type: Some(Num::Lit(e.msg_type)),
            ..FieldsSpec::default()
        }),
        unknown_flags: None,
        profile_may_refuse: false,
        reject_allowed: false,
        answered: false,
    }
}

/// The accept a fixture expects: the envelope values it asserts; the payload exactly as the
/// frame carries it where the metadata asserts its length. A core-level accept lets the
/// profile refuse the payload (SI-003: the core dispatched it).
fn accept(
    r: &Raw,
    decoded: Option<&crate::frames::Envelope>,
    profile_level: bool,
) -> Result<AcceptSpec, String> {
    let a = r.meta.asserted;
    let lit = |v: Option<u64>| v.map(Num::Lit);
    let mut fields = FieldsSpec {
        version: lit(a.version),
        profile_id: lit(a.profile_id),
        msg_type: lit(a.msg_type),
        ..FieldsSpec::default()
    };
    if a.payload_len.is_some() || a.min_payload_len.is_some() {
        let Some(e) = decoded else {
            return Err("an accept whose frame the harness's codec cannot decode".into());
        };
        let len = e.payload.len() as u64;
        if a.payload_len.is_some_and(|n| n != len) || a.min_payload_len.is_some_and(|n| len < n) {
            return Err(format!(
                "the metadata asserts a payload of {} octets, the frame carries {len}",
                a.payload_len.map_or_else(
                    || format!("at least {}", a.min_payload_len.unwrap_or(0)),
                    |n| n.to_string()
                )
            ));
        }
        fields.payload = Some(Data::Hex(hex::encode(&e.payload)));
    }
    Ok(AcceptSpec {
        fields: Some(fields),
        unknown_flags: None,
        profile_may_refuse: !profile_level,
        reject_allowed: false,
        answered: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{e1, Envelope};

    fn frame(payload: &[u8]) -> (Envelope, Bytes) {
        let env = Envelope {
            version: 1,
            profile_id: 12,
            msg_type: 1,
            ts_unix_ms: 1_771_513_334_692,
            msg_id: Bytes::from_static(b"12345678abcdefgh"),
            extensions: crate::frames::e1::Extensions::from_entries([(16u64, b"x")]),
            payload: Bytes::copy_from_slice(payload),
            ..Envelope::default()
        };
        let octets = e1::frame_bytes(&env).unwrap();
        (env, octets)
    }

    fn built(spec: &FrameSpec, form: P1Form) -> Bytes {
        let mut p = crate::plan::expr::Params::new();
        p.insert("P1_WRAPPER", u64::from(form == P1Form::Wrapper));
        crate::plan::materialize::build_frame(spec, &p, None).unwrap()
    }

    /// The kit's bare RpcReq (rpc_id "rpc", method "m") is sent as it is to a message-form
    /// SUT and as the wrapper's member 1 to the other, every other field unchanged.
    #[test]
    fn a_bare_payload_is_carried_in_either_form() {
        let bare = [0x0a, 3, b'r', b'p', b'c', 0x12, 1, b'm'];
        let (env, octets) = frame(&bare);
        let (spec, carried) = carry(&env, &octets, P1Form::Message).unwrap();
        assert_eq!(built(&spec, P1Form::Message), octets);
        let wrapped = built(&spec, P1Form::Wrapper);
        let mut member = vec![0x0a, 8];
        member.extend_from_slice(&bare);
        let (body, _) = crate::frames::frame::take_frame(&wrapped, &Limits::default())
            .unwrap()
            .unwrap();
        let got = e1::decode(&body, &Limits::default()).unwrap();
        assert_eq!(got.payload.to_vec(), member);
        assert_eq!(
            Envelope {
                payload: env.payload.clone(),
                ..got
            },
            env
        );
        assert_eq!(carried.kit, P1Form::Message);
        assert_eq!(carried.other.payload, Some(10));
        assert_eq!(carried.other.frame, Some(body.len() as u64));
        let r = Receiver {
            carried: Some(carried),
            ..Receiver::default()
        };
        assert_eq!(r.header_in(P1Form::Wrapper).payload, Some(10));
        assert_eq!(r.header_in(P1Form::Message).payload, None);
    }

    /// Octets the harness would not write the same way (a padded uvarint) are not carried:
    /// sending its own encoding would not be the kit's fixture.
    #[test]
    fn octets_the_harness_would_encode_otherwise_are_not_carried() {
        let (env, octets) = frame(&[0x0a, 3, b'r', b'p', b'c']);
        let mut padded = octets.to_vec();
        // flags 0 written as 0x80 0x00: one octet more, so the prefix grows by one.
        let at = 4 + 3;
        assert_eq!(padded[at], 0);
        padded.splice(at..=at, [0x80, 0x00]);
        let n = u32::from_be_bytes([padded[0], padded[1], padded[2], padded[3]]) + 1;
        padded[..4].copy_from_slice(&n.to_be_bytes());
        assert!(carry(&env, &Bytes::from(padded), P1Form::Message).is_none());
    }
}
