//! Legacy vector sets (spec kit `conformance.md`, `conformance/vectors/README.md`): a flat
//! directory of `<id>.json` expected-metadata files beside `<id>.bin` raw-stream fixtures, or
//! beside `<id>.evidence.md` for process vectors.
//!
//! Each vector is mapped onto one codec-method check (the whole `.bin` as one chunk, then end
//! of stream) or reported as *not mapped* with the precise reason. Not-mapped vectors become
//! `harness-error` results with an absolute requirement, so a set the harness cannot fully
//! interpret never looks passing. Expectation keys under `expected` and `assertions` that are
//! not understood make a vector not mapped rather than being skipped; other top-level keys
//! are descriptive metadata and are ignored.

use crate::catalog::vector::Method;
use crate::connect::driver::{Answer, CodecDriver};
use crate::connect::testee::TesteeDriver;
use crate::evaluate::{describe_expected, describe_observed, judge_codec_step};
use crate::frames::ErrorCode;
use crate::materialize::{hex_bytes, Expectation, Fields};
use crate::method::codec::CODEC_NOW_MS;
use crate::model::{Dir, TranscriptEntry, VectorResult, Verdict};
use crate::report::model::{Report, RunInfo, SutInfo};
use crate::sut::{codec_config_of, Sut, SutError, SutKind};
use crate::transcript::transcript_hex;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use swp_testee_proto::{Chunk, DecodeRequest, Event, Hex};

/// Largest `.bin` fixture read: the harness holds one fixture in memory at a time.
pub const MAX_BIN_BYTES: u64 = 64 * 1024 * 1024;
/// Largest `.json` metadata file read; real ones are a few hundred octets.
pub const MAX_JSON_BYTES: u64 = 1024 * 1024;

/// What the vector expects of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every frame is accepted.
    Accept,
    /// Some frame (or the stream) is rejected with an allowed code.
    Reject,
}

/// `expected.binding_behavior`, as far as the codec method can observe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingBehavior {
    /// `stream close`: the reject terminates the stream.
    StreamClose,
    /// `error response`: the frame is answered with an error and the stream stays open (the
    /// reply itself is not observable through the codec method).
    ErrorResponse,
    /// `accept`: the same as outcome accept.
    Accept,
}

/// `assertions.envelope`: checked against the first accepted envelope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvelopeAssertions {
    /// Field values (`extensions` is never set: legacy sets do not assert it).
    pub fields: Fields,
    /// `msg_id_len`.
    pub msg_id_len: Option<u64>,
    /// `payload_len`.
    pub payload_len: Option<u64>,
}

impl EnvelopeAssertions {
    /// Whether anything is asserted.
    pub fn is_empty(&self) -> bool {
        *self == EnvelopeAssertions::default()
    }
}

/// A vector the harness can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The `.bin` fixture; read at run time so only one fixture is in memory at once.
    pub bin: PathBuf,
    /// Expected outcome.
    pub outcome: Outcome,
    /// Allowed canonical codes for a reject (first: the recommended one); empty for accept.
    pub allowed: Vec<ErrorCode>,
    /// The legacy alias the vector gave in `code`, if any.
    pub alias: Option<String>,
    /// Binding behaviour, when given.
    pub binding: Option<BindingBehavior>,
    /// Envelope assertions.
    pub envelope: EnvelopeAssertions,
}

/// How a legacy vector maps onto the harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping {
    /// It runs as a codec-method check (boxed: it is ten times the size of a reason).
    Runnable(Box<Check>),
    /// It cannot run; why.
    Unmapped(String),
}

/// One legacy vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyVector {
    /// The file stem, `<namespace>_<nnnn>_<case>`.
    pub id: String,
    /// The `.json` file (or the fixture, when the metadata is missing).
    pub path: PathBuf,
    /// `description`, when given.
    pub description: Option<String>,
    /// The mapping.
    pub mapping: Mapping,
}

/// A loaded legacy set, in id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacySet {
    /// The directory.
    pub dir: PathBuf,
    /// Its vectors.
    pub vectors: Vec<LegacyVector>,
}

impl LegacySet {
    /// Number of runnable vectors.
    pub fn runnable(&self) -> usize {
        self.vectors
            .iter()
            .filter(|v| matches!(v.mapping, Mapping::Runnable(_)))
            .count()
    }

    /// The vectors that are not mapped, with their reasons.
    pub fn unmapped(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.vectors.iter().filter_map(|v| match &v.mapping {
            Mapping::Unmapped(why) => Some((v.id.as_str(), why.as_str())),
            Mapping::Runnable(_) => None,
        })
    }
}

/// Running a legacy set failed as a whole (per-vector problems are results, not errors).
#[derive(Debug, thiserror::Error)]
pub enum LegacyError {
    /// A directory or file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The directory is not a legacy set.
    #[error("{0}: not a legacy vector set (no <id>.json beside an <id>.bin or <id>.evidence.md, or it has a requirements/ directory)")]
    NotLegacy(String),
    /// The SUT manifest could not be loaded.
    #[error(transparent)]
    Sut(#[from] SutError),
    /// The connector could not be set up.
    #[error(transparent)]
    Driver(#[from] crate::connect::driver::DriverError),
    /// The report could not be rendered.
    #[error(transparent)]
    Render(#[from] crate::report::render::RenderError),
    /// Legacy vectors are codec fixtures; an endpoint SUT cannot run them.
    #[error("legacy vector sets run by the codec method; this manifest describes an endpoint or MCP server (no codec method)")]
    EndpointSut,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> LegacyError + '_ {
    move |source| LegacyError::Io {
        path: path.display().to_string(),
        source,
    }
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

/// Reads a regular file of at most `cap` octets. The bound is enforced on what is read, not
/// on the metadata, so a file growing underneath cannot make the harness allocate more.
fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    if !std::fs::metadata(path)?.is_file() {
        // A FIFO or device named `x.bin` would block or never end.
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

/// The files of one vector id.
#[derive(Debug, Default)]
struct Files {
    json: Option<PathBuf>,
    bin: Option<PathBuf>,
    evidence: Option<PathBuf>,
}

/// Groups the directory's regular files by vector id (non-recursive).
fn scan(dir: &Path) -> Result<BTreeMap<String, Files>, LegacyError> {
    let mut out: BTreeMap<String, Files> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        // `.evidence.md` first: its stem must not keep the `.evidence` part.
        let (stem, slot): (&str, fn(&mut Files) -> &mut Option<PathBuf>) =
            if let Some(s) = name.strip_suffix(".evidence.md") {
                (s, |f| &mut f.evidence)
            } else if let Some(s) = name.strip_suffix(".json") {
                (s, |f| &mut f.json)
            } else if let Some(s) = name.strip_suffix(".bin") {
                (s, |f| &mut f.bin)
            } else {
                continue;
            };
        if stem.is_empty() {
            continue;
        }
        *slot(out.entry(stem.to_owned()).or_default()) = Some(path);
    }
    Ok(out)
}

/// Whether `dir` holds a legacy set: some `<id>.json` has an `<id>.bin` or `<id>.evidence.md`
/// sibling, and there is no `requirements/` directory (the YAML catalog has one).
pub fn is_legacy_dir(dir: &Path) -> bool {
    if dir.join("requirements").is_dir() {
        return false;
    }
    scan(dir).is_ok_and(|files| {
        files
            .values()
            .any(|f| f.json.is_some() && (f.bin.is_some() || f.evidence.is_some()))
    })
}

/// Loads and maps every vector of a legacy set.
pub fn load(dir: &Path) -> Result<LegacySet, LegacyError> {
    if !is_legacy_dir(dir) {
        return Err(LegacyError::NotLegacy(dir.display().to_string()));
    }
    let vectors = scan(dir)?
        .into_iter()
        .map(|(id, files)| map_vector(id, files))
        .collect();
    Ok(LegacySet {
        dir: dir.to_owned(),
        vectors,
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn map_vector(id: String, files: Files) -> LegacyVector {
    let unmapped = |id: String, path: PathBuf, why: String| LegacyVector {
        id,
        path,
        description: None,
        mapping: Mapping::Unmapped(why),
    };
    let Some(json) = files.json else {
        let path = files.bin.or(files.evidence).unwrap_or_default();
        let why = format!("no {id}.json expected metadata beside {}", file_name(&path));
        return unmapped(id, path, why);
    };
    let doc = match read_capped(&json, MAX_JSON_BYTES) {
        Ok(b) => b,
        Err(e) => return unmapped(id, json, format!("cannot read the metadata: {e}")),
    };
    let obj = match serde_json::from_slice::<Value>(&doc) {
        Ok(Value::Object(o)) => o,
        Ok(_) => return unmapped(id, json, "the metadata is not a JSON object".into()),
        Err(e) => return unmapped(id, json, format!("the metadata is not valid JSON: {e}")),
    };
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mapping = (|| {
        if let Some(v) = obj.get("vector_id") {
            if v.as_str() != Some(id.as_str()) {
                return Mapping::Unmapped(format!(
                    "vector_id {v} does not match the file name {id}"
                ));
            }
        }
        let Some(bin) = files.bin else {
            return Mapping::Unmapped(match &files.evidence {
                Some(e) => format!(
                    "no .bin fixture (process vector with evidence file {})",
                    file_name(e)
                ),
                None => "no .bin fixture and no .evidence.md".into(),
            });
        };
        match std::fs::metadata(&bin) {
            Ok(m) if m.len() > MAX_BIN_BYTES => {
                return Mapping::Unmapped(format!(
                    "{} is {} octets, above the harness bound of {MAX_BIN_BYTES}",
                    file_name(&bin),
                    m.len()
                ))
            }
            Ok(_) => {}
            Err(e) => return Mapping::Unmapped(format!("{}: {e}", file_name(&bin))),
        }
        match interpret(&obj) {
            Ok(i) => Mapping::Runnable(Box::new(Check {
                bin,
                outcome: i.outcome,
                allowed: i.allowed,
                alias: i.alias,
                binding: i.binding,
                envelope: i.envelope,
            })),
            Err(problems) => Mapping::Unmapped(problems.join("; ")),
        }
    })();
    LegacyVector {
        id,
        path: json,
        description,
        mapping,
    }
}

/// What a metadata document expects, fixture aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpretation {
    /// Outcome.
    pub outcome: Outcome,
    /// Allowed canonical codes (empty for accept).
    pub allowed: Vec<ErrorCode>,
    /// The alias given in `code`, if any.
    pub alias: Option<String>,
    /// Binding behaviour.
    pub binding: Option<BindingBehavior>,
    /// Envelope assertions.
    pub envelope: EnvelopeAssertions,
}

/// Keys of `expected` that the mapping understands.
const EXPECTED_KEYS: [&str; 4] = ["outcome", "expected_error_code", "code", "binding_behavior"];

/// A code given in `code`: canonical, or an alias and the canonical codes it stands for.
enum CodeClaim {
    Canonical(ErrorCode),
    Alias(String, &'static [ErrorCode]),
}

fn names(codes: &[ErrorCode]) -> String {
    codes
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Interprets a metadata document: every problem found, or the expectation.
pub fn interpret(obj: &Map<String, Value>) -> Result<Interpretation, Vec<String>> {
    let mut problems = Vec::new();
    let expected = match obj.get("expected") {
        Some(Value::Object(m)) => Some(m),
        None => None,
        Some(other) => {
            problems.push(format!("expected is {}, not an object", kind(other)));
            None
        }
    };
    if let Some(m) = expected {
        for k in m.keys() {
            if !EXPECTED_KEYS.contains(&k.as_str()) {
                problems.push(format!("expected.{k} is not understood"));
            }
        }
    }
    // A key may sit under `expected` or at the top level; both must agree when both exist.
    let mut text = |key: &str| -> Option<(String, String)> {
        let inner = expected
            .and_then(|m| m.get(key))
            .filter(|v| present(v))
            .map(|v| (format!("expected.{key}"), v));
        let outer = obj
            .get(key)
            .filter(|v| present(v))
            .map(|v| (key.to_owned(), v));
        if let (Some((_, a)), Some((_, b))) = (&inner, &outer) {
            if a != b {
                problems.push(format!("expected.{key} {a} and {key} {b} disagree"));
                return None;
            }
        }
        let (label, v) = inner.or(outer)?;
        match v.as_str() {
            Some(s) => Some((label, s.to_owned())),
            None => {
                problems.push(format!("{label} is {}, not a string", kind(v)));
                None
            }
        }
    };
    let outcome_raw = text("outcome");
    let eec_raw = text("expected_error_code");
    let code_raw = text("code");
    let binding_raw = expected
        .and_then(|m| m.get("binding_behavior"))
        .filter(|v| present(v))
        .map(|v| match v.as_str() {
            Some(s) => Ok(s.to_owned()),
            None => Err(format!(
                "expected.binding_behavior is {}, not a string",
                kind(v)
            )),
        });

    let outcome = match &outcome_raw {
        None => {
            problems.push("expected.outcome is missing".into());
            None
        }
        Some((label, s)) => match s.to_ascii_lowercase().as_str() {
            "accept" | "ok" => Some(Outcome::Accept),
            "reject" | "error" => Some(Outcome::Reject),
            _ => {
                problems.push(format!("{label} '{s}' is not accept/reject"));
                None
            }
        },
    };
    let eec = eec_raw.and_then(|(label, s)| match s.parse::<ErrorCode>() {
        Ok(c) => Some(c),
        Err(_) => {
            problems.push(format!(
                "{label} '{s}' is not canonical (an ERR_* code of error-codes.md)"
            ));
            None
        }
    });
    let code = code_raw.and_then(|(label, s)| {
        if let Ok(c) = s.parse::<ErrorCode>() {
            return Some(CodeClaim::Canonical(c));
        }
        match ErrorCode::from_alias(&s) {
            Ok(set) => Some(CodeClaim::Alias(s, set)),
            Err(_) => {
                problems.push(format!(
                    "{label} '{s}' is neither a canonical ERR_* code nor a registered alias"
                ));
                None
            }
        }
    });
    let mut alias = None;
    // The canonical code governs; an alias must stand for it.
    let allowed: Vec<ErrorCode> = match (eec, code) {
        (Some(c), None) => vec![c],
        (Some(c), Some(CodeClaim::Canonical(d))) if c == d => vec![c],
        (Some(c), Some(CodeClaim::Canonical(d))) => {
            problems.push(format!("code {d} disagrees with expected_error_code {c}"));
            Vec::new()
        }
        (Some(c), Some(CodeClaim::Alias(a, set))) => {
            if set.contains(&c) {
                alias = Some(a);
                vec![c]
            } else {
                problems.push(format!(
                    "code '{a}' stands for {}, not expected_error_code {c}",
                    names(set)
                ));
                Vec::new()
            }
        }
        (None, Some(CodeClaim::Canonical(d))) => vec![d],
        (None, Some(CodeClaim::Alias(a, set))) => {
            alias = Some(a);
            set.to_vec()
        }
        (None, None) => Vec::new(),
    };
    // A code that is given but unusable has its own problem already; only a reject that
    // names no code at all needs this one.
    let code_given = ["expected_error_code", "code"].iter().any(|k| {
        obj.get(*k).is_some_and(present) || expected.and_then(|m| m.get(*k)).is_some_and(present)
    });
    let binding = match binding_raw {
        None => None,
        Some(Err(e)) => {
            problems.push(e);
            None
        }
        Some(Ok(s)) => {
            let norm: String = s
                .to_ascii_lowercase()
                .chars()
                .map(|c| if c == '_' || c == '-' { ' ' } else { c })
                .collect();
            match norm.trim() {
                "stream close" | "close" => Some(BindingBehavior::StreamClose),
                "error response" => Some(BindingBehavior::ErrorResponse),
                "accept" => Some(BindingBehavior::Accept),
                _ => {
                    problems.push(format!("expected.binding_behavior '{s}' is not understood"));
                    None
                }
            }
        }
    };
    match (outcome, binding) {
        (Some(Outcome::Accept), Some(b)) if b != BindingBehavior::Accept => problems
            .push("expected.binding_behavior describes a reject, but the outcome is accept".into()),
        (Some(Outcome::Reject), Some(BindingBehavior::Accept)) => {
            problems.push("expected.binding_behavior is accept, but the outcome is reject".into())
        }
        _ => {}
    }
    match outcome {
        Some(Outcome::Accept) if !allowed.is_empty() || alias.is_some() => problems.push(format!(
            "the outcome is accept, but an error code is given ({})",
            names(&allowed)
        )),
        Some(Outcome::Reject) if !code_given => {
            problems.push("the outcome is reject, but neither expected_error_code nor code names the expected code".into())
        }
        _ => {}
    }
    let envelope = assertions(obj.get("assertions"), &mut problems);
    match outcome {
        Some(outcome) if problems.is_empty() => Ok(Interpretation {
            outcome,
            allowed,
            alias,
            binding,
            envelope,
        }),
        _ => Err(problems),
    }
}

/// Whether a metadata value says anything: generated templates leave unused keys null or
/// empty, which is the same as leaving them out.
fn present(v: &Value) -> bool {
    !(v.is_null() || v.as_str() == Some(""))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `assertions`; every key it does not understand is a problem.
fn assertions(v: Option<&Value>, problems: &mut Vec<String>) -> EnvelopeAssertions {
    let mut a = EnvelopeAssertions::default();
    let obj = match v {
        None | Some(Value::Null) => return a,
        Some(Value::Object(o)) => o,
        Some(other) => {
            problems.push(format!("assertions is {}, not an object", kind(other)));
            return a;
        }
    };
    for (k, v) in obj {
        if k != "envelope" {
            problems.push(format!("assertion {k} is not understood"));
            continue;
        }
        if v.is_null() {
            continue;
        }
        let Value::Object(env) = v else {
            problems.push(format!("assertions.envelope is {}, not an object", kind(v)));
            continue;
        };
        for (field, val) in env {
            if val.is_null() {
                // Generated templates leave unasserted fields null.
                continue;
            }
            let label = format!("assertion envelope.{field}");
            let mut num = |slot: &mut Option<u64>| match val.as_u64() {
                Some(n) => *slot = Some(n),
                None => problems.push(format!("{label} is {val}, not a non-negative integer")),
            };
            match field.as_str() {
                "version" => num(&mut a.fields.version),
                "profile_id" => num(&mut a.fields.profile_id),
                "msg_type" => num(&mut a.fields.msg_type),
                "flags" => num(&mut a.fields.flags),
                "ts_unix_ms" => num(&mut a.fields.ts_unix_ms),
                "msg_id_len" => num(&mut a.msg_id_len),
                "payload_len" => num(&mut a.payload_len),
                "msg_id" | "payload" => {
                    let parsed = val.as_str().map(hex_bytes);
                    match parsed {
                        Some(Ok(b)) if field == "msg_id" => a.fields.msg_id = Some(b),
                        Some(Ok(b)) => a.fields.payload = Some(b),
                        Some(Err(e)) => problems.push(format!("{label}: {e}")),
                        None => problems.push(format!("{label} is {val}, not a hex string")),
                    }
                }
                _ => problems.push(format!("{label} is not understood")),
            }
        }
    }
    let consistent = |name: &str, bytes: &Option<Bytes>, len: Option<u64>| match (bytes, len) {
        (Some(b), Some(l)) if b.len() as u64 != l => Some(format!(
            "assertion envelope.{name} has {} octets, but envelope.{name}_len is {l}",
            b.len()
        )),
        _ => None,
    };
    problems.extend(consistent("msg_id", &a.fields.msg_id, a.msg_id_len));
    problems.extend(consistent("payload", &a.fields.payload, a.payload_len));
    a
}

/// Runs every vector of `set` against the SUT behind `driver`, in id order.
pub fn run(set: &LegacySet, sut: &Sut, driver: &mut dyn CodecDriver) -> Vec<VectorResult> {
    set.vectors
        .iter()
        .map(|v| run_one(set, v, sut, driver))
        .collect()
}

fn base(set: &LegacySet, v: &LegacyVector) -> VectorResult {
    // Relative to the set's parent, as the engine makes catalog paths relative.
    let root = set.dir.parent().unwrap_or(&set.dir);
    let path = crate::model::display_path(root, &v.path);
    // Legacy sets name no requirements; core vectors are MUST-level, so every non-pass fails
    // the run rather than hiding behind an unknown level.
    VectorResult::new(
        v.id.clone(),
        v.id.split('_').next().unwrap_or_default().to_owned(),
        path,
        Vec::new(),
        true,
    )
}

fn note(r: &mut VectorResult, text: String) {
    r.transcript.push(TranscriptEntry {
        t_ms: 0,
        dir: Dir::Note,
        data: text,
    });
}

/// Runs one legacy vector.
pub fn run_one(
    set: &LegacySet,
    v: &LegacyVector,
    sut: &Sut,
    driver: &mut dyn CodecDriver,
) -> VectorResult {
    let mut r = base(set, v);
    let check = match &v.mapping {
        Mapping::Unmapped(why) => {
            r.expected = "(not mapped)".into();
            r.observed = "not run".into();
            r.detail = Some(format!("not mapped: {why}"));
            return r;
        }
        Mapping::Runnable(c) => c,
    };
    if check.outcome == Outcome::Reject && check.allowed.is_empty() {
        // `interpret` never produces this; a hand-built `Check` could.
        r.detail = Some("a reject check needs at least one allowed code".into());
        return r;
    }
    r.expected = describe(check);
    if check.outcome == Outcome::Reject {
        r.expected_error_code = check.allowed.first().map(|c| c.as_str().to_owned());
    }
    if !sut.manifest.methods.contains(&Method::Codec) {
        r.verdict = Verdict::NotApplicable;
        r.detail = Some("legacy vectors need the codec method; the SUT does not offer it".into());
        return r;
    }
    r.method = Some(crate::catalog::vector::Method::Codec);
    let bytes = match read_capped(&check.bin, MAX_BIN_BYTES) {
        Ok(b) => Bytes::from(b),
        Err(e) => {
            r.detail = Some(format!("cannot read {}: {e}", check.bin.display()));
            return r;
        }
    };
    r.transcript.push(TranscriptEntry {
        t_ms: 0,
        dir: Dir::Sent,
        data: transcript_hex(&bytes),
    });
    note(&mut r, "end of stream".into());
    let req = DecodeRequest {
        config: codec_config_of(&sut.manifest),
        chunks: vec![Chunk {
            now_ms: CODEC_NOW_MS,
            bytes: Hex(bytes),
        }],
        end_of_stream: true,
    };
    let reply = match driver.decode(&req) {
        Ok(Answer::Ok(rep)) => rep,
        Ok(Answer::Unsupported(why)) => {
            r.verdict = Verdict::Unsupported;
            r.detail = Some(why);
            return r;
        }
        Err(e) => {
            r.verdict = e.verdict();
            r.detail = Some(e.to_string());
            return r;
        }
    };
    if reply.chunks.len() != 1 {
        r.detail = Some(format!(
            "the SUT answered for {} chunks, 1 was sent",
            reply.chunks.len()
        ));
        return r;
    }
    let events: Vec<Event> = reply
        .chunks
        .into_iter()
        .flatten()
        .chain(reply.end)
        .collect();
    if !events.is_empty() {
        r.transcript.push(TranscriptEntry {
            t_ms: 0,
            dir: Dir::Received,
            data: serde_json::to_string(&events).unwrap_or_default(),
        });
    }
    r.observed = describe_observed(&events);
    match check.outcome {
        Outcome::Accept => judge_accept(&mut r, check, &events),
        Outcome::Reject => {
            if !check.envelope.is_empty() {
                note(
                    &mut r,
                    "envelope assertions describe the sent frame; a reject has no decoded envelope to check them against".into(),
                );
            }
            if check.binding == Some(BindingBehavior::ErrorResponse) {
                note(
                    &mut r,
                    "binding behaviour 'error response': the response itself is not observable through the codec method; only that the stream stays open is checked".into(),
                );
            }
            judge_reject(&mut r, check, &events);
        }
    }
    r.pass = r.verdict == Verdict::Pass;
    r
}

fn expectation(check: &Check) -> Expectation {
    match check.outcome {
        Outcome::Accept => Expectation::Accept {
            fields: check.envelope.fields.clone(),
            unknown_flags: None,
            profile_may_refuse: false,
            reject_allowed: false,
            answered: false,
        },
        Outcome::Reject => Expectation::Reject {
            allowed: check.allowed.clone(),
            terminates: terminates(check),
            code_requirements: Vec::new(),
        },
    }
}

/// Whether the reject must terminate the stream. `binding_behavior` offers "error response"
/// and "stream close" as alternatives, so an error response keeps the stream open.
fn terminates(check: &Check) -> Option<bool> {
    match check.binding {
        Some(BindingBehavior::StreamClose) => Some(true),
        Some(BindingBehavior::ErrorResponse) => Some(false),
        Some(BindingBehavior::Accept) | None => None,
    }
}

/// The one-line expectation, with the envelope assertions an accept is held to.
fn describe(check: &Check) -> String {
    let mut s = describe_expected(&[expectation(check)]);
    if terminates(check) == Some(false) {
        s.push_str(", stream stays open");
    }
    let a = &check.envelope;
    if check.outcome == Outcome::Accept && !a.is_empty() {
        let f = &a.fields;
        let nums = [
            ("version", f.version),
            ("profile_id", f.profile_id),
            ("msg_type", f.msg_type),
            ("flags", f.flags),
            ("ts_unix_ms", f.ts_unix_ms),
            ("msg_id_len", a.msg_id_len),
            ("payload_len", a.payload_len),
        ];
        let mut parts: Vec<String> = nums
            .iter()
            .filter_map(|(n, v)| v.map(|v| format!("{n}={v}")))
            .collect();
        if let Some(m) = &f.msg_id {
            parts.push(format!("msg_id={}", transcript_hex(m)));
        }
        if f.payload.is_some() {
            parts.push("payload as given".into());
        }
        let _ = write!(s, " with {}", parts.join(", "));
    }
    s
}

/// Accept: every event is an accept, at least one; assertions hold for the first.
fn judge_accept(r: &mut VectorResult, check: &Check, events: &[Event]) {
    if events.is_empty() {
        r.verdict = Verdict::Fail;
        r.detail = Some("nothing observed, expected accept".into());
        return;
    }
    for (i, ev) in events.iter().enumerate() {
        // Field assertions apply to the first envelope; later frames need only be accepted.
        let exp = if i == 0 {
            expectation(check)
        } else {
            Expectation::Accept {
                fields: Fields::default(),
                unknown_flags: None,
                profile_may_refuse: false,
                reject_allowed: false,
                answered: false,
            }
        };
        let j = judge_codec_step(std::slice::from_ref(&exp), std::slice::from_ref(ev));
        if j.verdict != Verdict::Pass {
            r.verdict = j.verdict;
            r.observed_error_code = j.observed_code.map(|c| c.as_str().to_owned());
            r.observed_code = j.observed_alias;
            let why = j.detail.unwrap_or_default();
            r.detail = Some(if events.len() > 1 {
                format!("event {}: {why}", i + 1)
            } else {
                why
            });
            return;
        }
    }
    if let Some(Event::Accept { envelope, .. }) = events.first() {
        let lens = [
            (
                "msg_id_len",
                check.envelope.msg_id_len,
                envelope.msg_id.0.len(),
            ),
            (
                "payload_len",
                check.envelope.payload_len,
                envelope.payload.0.len(),
            ),
        ];
        for (name, want, got) in lens {
            if let Some(w) = want {
                if w != got as u64 {
                    r.verdict = Verdict::Fail;
                    r.detail = Some(format!("{name} is {got}, expected {w}"));
                    return;
                }
            }
        }
    }
    r.verdict = Verdict::Pass;
}

/// The canonical codes a reject event names, or why it names none usable.
fn event_codes(code: Option<&str>, alias: Option<&str>) -> Result<Vec<ErrorCode>, String> {
    match (code, alias) {
        (Some(c), _) => c
            .parse::<ErrorCode>()
            .map(|c| vec![c])
            .map_err(|_| format!("the SUT reported {c:?}, which is not a canonical ERR_* code")),
        (None, Some(a)) => ErrorCode::from_alias(a)
            .map(<[ErrorCode]>::to_vec)
            .map_err(|e| format!("the SUT reported alias {a:?}: {e}")),
        (None, None) => Ok(Vec::new()),
    }
}

/// Reject: some event is a reject whose code is allowed.
fn judge_reject(r: &mut VectorResult, check: &Check, events: &[Event]) {
    let mut wrong: Option<String> = None;
    let mut codeless = false;
    let mut accepted = false;
    for ev in events {
        let Event::Reject {
            code,
            alias,
            terminated,
            ..
        } = ev
        else {
            accepted = true;
            continue;
        };
        let codes = match event_codes(code.as_deref(), alias.as_deref()) {
            Ok(cs) => cs,
            Err(why) => {
                r.observed_code = r.observed_code.take().or_else(|| alias.clone());
                wrong.get_or_insert(why);
                continue;
            }
        };
        if codes.is_empty() {
            codeless = true;
            continue;
        }
        if let Some(c) = codes.iter().find(|c| check.allowed.contains(c)) {
            r.observed_error_code = Some(c.as_str().to_owned());
            r.observed_code = alias.clone();
            match (terminates(check), *terminated) {
                (Some(want), Some(got)) if want != got => {
                    r.verdict = Verdict::Fail;
                    r.detail = Some(if want {
                        "rejected as expected, but the stream stayed open (binding_behavior: stream close)".into()
                    } else {
                        "rejected as expected, but the stream was terminated (binding_behavior: error response)".into()
                    });
                    return;
                }
                (Some(_), None) => note(
                    r,
                    "the SUT does not report whether the stream was terminated".into(),
                ),
                _ => {}
            }
            r.verdict = Verdict::Pass;
            r.detail = None;
            return;
        }
        if r.observed_error_code.is_none() {
            r.observed_error_code = codes.first().map(|c| c.as_str().to_owned());
            r.observed_code = alias.clone();
        }
        wrong.get_or_insert(format!(
            "rejected with {}, expected {}",
            names(&codes),
            names(&check.allowed)
        ));
    }
    // A positively observed wrong code outweighs a reject whose code cannot be seen.
    if let Some(why) = wrong {
        r.verdict = Verdict::Fail;
        r.detail = Some(why);
    } else if codeless {
        r.verdict = Verdict::RejectCodeNotObservable;
        r.detail = Some(format!(
            "reject observed without a code; expected {}",
            names(&check.allowed)
        ));
    } else {
        r.verdict = Verdict::Fail;
        r.detail = Some(if accepted {
            "accepted, expected a reject".into()
        } else {
            "nothing observed, expected a reject".into()
        });
    }
}

/// The "legacy mapping" section: counts, then every vector that is not mapped and why.
pub fn mapping_summary(set: &LegacySet) -> String {
    let mut s = String::new();
    let unmapped: Vec<_> = set.unmapped().collect();
    let _ = writeln!(
        s,
        "legacy mapping: {} vectors, {} runnable, {} not mapped",
        set.vectors.len(),
        set.runnable(),
        unmapped.len()
    );
    for (id, why) in unmapped {
        let _ = writeln!(s, "  {id}: {why}");
    }
    s
}

/// A finished legacy run.
#[derive(Debug)]
pub struct LegacyRun {
    /// The loaded set.
    pub set: LegacySet,
    /// The report (already written when an output directory was given).
    pub report: Report,
    /// The console text: the summary and the mapping section.
    pub text: String,
}

/// Loads `dir`, runs it against the SUT of `sut_path` (the built-in reference when `None`)
/// and writes `out/report.json` when `out` is given.
pub fn run_dir(
    dir: &Path,
    sut_path: &Option<PathBuf>,
    out: &Option<PathBuf>,
    timeout_ms: u64,
) -> Result<LegacyRun, LegacyError> {
    let started = Instant::now();
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let set = load(dir)?;
    let sut = match sut_path {
        Some(p) => Sut::load(p)?,
        None => Sut::builtin()?,
    };
    if let Some(o) = out {
        std::fs::create_dir_all(o).map_err(io_err(o))?;
    }
    let mut driver: Box<dyn CodecDriver> = match &sut.manifest.kind {
        SutKind::Builtin => crate::connect::driver::builtin()?,
        SutKind::Testee { start } => {
            let start = start.clone();
            let base = sut.base_dir();
            let log = out
                .as_ref()
                .map(|o| o.join("sut-stderr.log"))
                .unwrap_or_else(|| std::env::temp_dir().join("swp-conform-sut-stderr.log"));
            Box::new(TesteeDriver::new(
                start,
                base,
                Duration::from_millis(timeout_ms),
                log,
            ))
        }
        SutKind::Endpoint { .. } | SutKind::McpServer { .. } | SutKind::McpProxy { .. } => {
            return Err(LegacyError::EndpointSut)
        }
    };
    let results = run(&set, &sut, driver.as_mut());
    let report = Report::new(
        RunInfo {
            pattern: format!("legacy:{}", dir.display()),
            no_fallback: true,
            timestamp_utc: crate::report::model::rfc3339(ts),
            runner_git_sha: crate::report::model::runner_git_sha(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            command: std::env::args().collect(),
            interrupted: false,
            ..Default::default()
        },
        SutInfo {
            name: sut.manifest.name.clone(),
            version: sut.manifest.version.clone(),
            reported: driver.describe(),
        },
        results,
        false,
    );
    let mut text = crate::report::render::console::summary(&report, false, false);
    text.push_str(&mapping_summary(&set));
    if let Some(o) = out {
        // Every format, like a catalog run (no requirement or class trace: a legacy set
        // has no registry).
        for (name, body) in crate::report::render_all(&report)? {
            let p = o.join(name);
            std::fs::write(&p, body).map_err(io_err(&p))?;
        }
        let _ = writeln!(text, "report: {}", o.join("report.json").display());
    }
    Ok(LegacyRun { set, report, text })
}

/// The `run` subcommand for a legacy set: runs it, prints the summary and the mapping
/// section, and answers whether the run passed.
pub fn run_cli(
    dir: &Path,
    sut_path: &Option<PathBuf>,
    out: &Option<PathBuf>,
    timeout_ms: u64,
) -> Result<bool, LegacyError> {
    let run = run_dir(dir, sut_path, out, timeout_ms)?;
    print!("{}", run.text);
    Ok(!run.report.run_failed)
}
