//! The harness must be able to fail: the catalog runs against deliberately broken codecs and
//! exactly the vectors that test the broken rule fail, naming the broken requirement.
//!
//! Each mutant wraps the reference and changes one behaviour the way a buggy decoder would:
//! it rewrites what the reference sees or reports, never the verdicts.

use bytes::Bytes;
use std::collections::BTreeSet;
use std::path::Path;
use swp_conform::catalog::{self, Catalog};
use swp_conform::connect::driver::{Answer, CodecDriver, DriverError};
use swp_conform::connect::inproc::InProcess;
use swp_conform::method::codec::CodecMethod;
use swp_conform::report::result::{VectorResult, Verdict};
use swp_conform::sut::Sut;
use swp_core::uvarint;
use swp_testee_proto::{Chunk, DecodeReply, DecodeRequest, Event, Hex};

#[derive(Clone, Copy, Debug)]
enum Bug {
    /// Treats a zero length prefix as a keep-alive and skips it.
    AcceptsZeroLength,
    /// Reads uvarints of up to 11 octets.
    AcceptsElevenOctetUvarint,
    /// Does not check msg_id length against MIN/MAX_MSG_ID_BYTES.
    IgnoresMsgIdBound,
    /// Reads msg_type differently when unknown flag bit 0x8000 is set.
    FlagChangesMsgType,
    /// Wraps a 10-octet uvarint that overflows 64 bits (keeps the low 64 bits) instead of
    /// rejecting it, in every uvarint of the envelope and of the extension TLVs.
    WrapsUvarintOverflow,
    /// Rejects a stamp exactly MAX_CLOCK_SKEW_MS away: a legitimate reading of the window's
    /// edge (docs/spec-issues.md SI-018), so no vector may fail it.
    ExcludesWindowEdge,
    /// Enforces a window 2 ms narrower than the MAX_CLOCK_SKEW_MS it declares.
    NarrowsWindow,
    /// Does not check that an A2A Event has content or that a failed Result has a reason.
    IgnoresA2aContentRules,
    /// Compares the length prefix with `>=` where `>` belongs: a frame of exactly
    /// MAX_FRAME_BYTES is refused as too large.
    FrameLimitOffByOne,
}

struct Mutant(Bug);

/// Walks frame boundaries across chunks, letting `rewrite` replace each complete frame
/// (prefix + body) that lies within one chunk, or drop it.
fn rewrite_frames(
    req: &DecodeRequest,
    rewrite: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> DecodeRequest {
    let mut out = req.clone();
    for chunk in &mut out.chunks {
        let b = &chunk.bytes.0;
        let mut new = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b.len() - i >= 4 {
                let n = u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize;
                if b.len() - i - 4 >= n {
                    if let Some(r) = rewrite(&b[i..i + 4 + n]) {
                        new.extend_from_slice(&r);
                    }
                    i += 4 + n;
                    continue;
                }
            }
            new.extend_from_slice(&b[i..]);
            break;
        }
        *chunk = Chunk {
            now_ms: chunk.now_ms,
            bytes: Hex(Bytes::from(new)),
        };
    }
    out
}

/// A lenient uvarint: up to 11 octets, but still no value past 64 bits (overflow is another
/// mutant's bug, `WrapsUvarintOverflow`).
fn lenient(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for k in 0..11u32 {
        let x = *b.get(*pos)?;
        *pos += 1;
        let low = u64::from(x & 0x7f);
        match k {
            0..=8 => v |= low << (7 * k),
            9 if low <= 1 => v |= low << 63,
            10 if low == 0 => {}
            _ => return None,
        }
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Re-encodes a frame whose uvarints are up to 11 octets long canonically.
fn canonicalise(frame: &[u8]) -> Option<Vec<u8>> {
    let body = &frame[4..];
    let mut pos = 0;
    let mut ints = Vec::new();
    for _ in 0..5 {
        ints.push(lenient(body, &mut pos)?);
    }
    let mut fields = Vec::new();
    for _ in 0..3 {
        let len = lenient(body, &mut pos)? as usize;
        let v = body.get(pos..pos.checked_add(len)?)?.to_vec();
        pos += len;
        fields.push(v);
    }
    if pos != body.len() {
        return None;
    }
    let mut out = Vec::new();
    for v in ints {
        uvarint::encode(v, &mut out);
    }
    for f in fields {
        uvarint::encode(f.len() as u64, &mut out);
        out.extend_from_slice(&f);
    }
    let mut framed = (out.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(&out);
    Some(framed)
}

/// A uvarint decoder with no overflow check: at most 10 octets, bits past 63 dropped. Sets
/// `wrapped` when it dropped any.
fn wrapping(b: &[u8], pos: &mut usize, wrapped: &mut bool) -> Option<u64> {
    let mut v: u64 = 0;
    for k in 0..10u32 {
        let x = *b.get(*pos)?;
        *pos += 1;
        let low = u64::from(x & 0x7f);
        if k == 9 && low > 1 {
            *wrapped = true;
        }
        v |= low.wrapping_shl(7 * k);
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// A `bytes` field read with the wrapping decoder.
fn wrapping_bytes<'a>(b: &'a [u8], pos: &mut usize, wrapped: &mut bool) -> Option<&'a [u8]> {
    let len = usize::try_from(wrapping(b, pos, wrapped)?).ok()?;
    let v = b.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(v)
}

/// When a frame decodes only because overflowing uvarints wrap, the same frame with those
/// fields re-encoded canonically at their wrapped values: what the buggy decoder believes it
/// read. Any other frame is left as it is.
fn unwrap_overflow(frame: &[u8]) -> Option<Vec<u8>> {
    let body = &frame[4..];
    let mut wrapped = false;
    let mut pos = 0;
    let mut ints = Vec::new();
    for _ in 0..5 {
        ints.push(wrapping(body, &mut pos, &mut wrapped)?);
    }
    let msg_id = wrapping_bytes(body, &mut pos, &mut wrapped)?;
    let block = wrapping_bytes(body, &mut pos, &mut wrapped)?;
    let payload = wrapping_bytes(body, &mut pos, &mut wrapped)?;
    if pos != body.len() {
        return None;
    }
    let mut exts = Vec::new();
    let mut at = 0;
    while at < block.len() {
        let t = wrapping(block, &mut at, &mut wrapped)?;
        let v = wrapping_bytes(block, &mut at, &mut wrapped)?;
        uvarint::encode(t, &mut exts);
        uvarint::encode(v.len() as u64, &mut exts);
        exts.extend_from_slice(v);
    }
    if !wrapped {
        return None;
    }
    let mut out = Vec::new();
    for v in ints {
        uvarint::encode(v, &mut out);
    }
    for f in [msg_id, &exts, payload] {
        uvarint::encode(f.len() as u64, &mut out);
        out.extend_from_slice(f);
    }
    let mut framed = (out.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(&out);
    Some(framed)
}

/// The field numbers of a bare P1 message with the value of each varint field, or `None`
/// when the octets are not a well-formed message of varint and length-delimited fields.
fn p1_fields(mut b: &[u8]) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (tag, n) = uvarint::decode(b).ok()?;
        b = &b[n..];
        let (v, n) = uvarint::decode(b).ok()?;
        b = &b[n..];
        match tag & 7 {
            0 => {}
            2 => b = b.get(usize::try_from(v).ok()?..)?,
            _ => return None,
        }
        out.push((tag >> 3, v));
    }
    Some(out)
}

/// A profile-2 frame that breaks only the content rules, re-encoded with what the buggy
/// receiver does not look for: a `message` on a content-less Event, an `error_message` on a
/// failed Result without one (appended fields: protobuf merges them). Any other frame: `None`.
fn with_a2a_content(frame: &[u8]) -> Option<Vec<u8>> {
    let body = Bytes::copy_from_slice(&frame[4..]);
    let mut env = swp_core::e1::decode(&body, &swp_core::limits::Limits::default()).ok()?;
    if env.profile_id != 2 {
        return None;
    }
    let fields = p1_fields(&env.payload)?;
    let has = |f: u64| fields.iter().any(|(n, _)| *n == f);
    let ok = fields
        .iter()
        .rev()
        .find(|(n, _)| *n == 2)
        .is_some_and(|(_, v)| *v != 0);
    let extra: &[u8] = match env.msg_type {
        3 if !has(2) && !has(3) => b"\x12\x01x",
        4 if !ok && !has(4) => b"\x22\x01x",
        _ => return None,
    };
    let mut payload = env.payload.to_vec();
    payload.extend_from_slice(extra);
    env.payload = Bytes::from(payload);
    swp_core::e1::frame_bytes(&env).ok().map(|b| b.to_vec())
}

impl CodecDriver for Mutant {
    fn describe(&self) -> String {
        format!("mutant {:?}", self.0)
    }

    // The mutants are codec bugs; MCP translation stays the reference's.
    fn translate(
        &mut self,
        req: &swp_testee_proto::TranslateRequest,
    ) -> Result<Answer<swp_testee_proto::TranslateReply>, DriverError> {
        InProcess.translate(req)
    }

    fn decode(&mut self, req: &DecodeRequest) -> Result<Answer<DecodeReply>, DriverError> {
        match self.0 {
            Bug::AcceptsZeroLength => {
                let req =
                    rewrite_frames(req, |f| if f.len() == 4 { None } else { Some(f.to_vec()) });
                InProcess.decode(&req)
            }
            Bug::AcceptsElevenOctetUvarint => {
                let req =
                    rewrite_frames(req, |f| Some(canonicalise(f).unwrap_or_else(|| f.to_vec())));
                InProcess.decode(&req)
            }
            Bug::WrapsUvarintOverflow => {
                let req = rewrite_frames(req, |f| {
                    Some(unwrap_overflow(f).unwrap_or_else(|| f.to_vec()))
                });
                InProcess.decode(&req)
            }
            Bug::ExcludesWindowEdge | Bug::NarrowsWindow => {
                let by = if matches!(self.0, Bug::ExcludesWindowEdge) {
                    1
                } else {
                    2
                };
                let mut req = req.clone();
                let p = &mut req.config.policy;
                p.max_clock_skew_ms = p.max_clock_skew_ms.saturating_sub(by);
                InProcess.decode(&req)
            }
            Bug::IgnoresA2aContentRules => {
                let req = rewrite_frames(req, |f| {
                    Some(with_a2a_content(f).unwrap_or_else(|| f.to_vec()))
                });
                InProcess.decode(&req)
            }
            Bug::FrameLimitOffByOne => {
                let mut req = req.clone();
                let l = &mut req.config.limits;
                l.max_frame_bytes = l.max_frame_bytes.saturating_sub(1);
                InProcess.decode(&req)
            }
            Bug::IgnoresMsgIdBound => {
                let mut req = req.clone();
                req.config.limits.min_msg_id_bytes = 1;
                req.config.limits.max_msg_id_bytes = u64::from(u32::MAX);
                InProcess.decode(&req)
            }
            Bug::FlagChangesMsgType => {
                let mut rep = match InProcess.decode(req)? {
                    Answer::Ok(r) => r,
                    other => return Ok(other),
                };
                for ev in rep.chunks.iter_mut().flatten() {
                    if let Event::Accept { envelope, .. } = ev {
                        if envelope.flags & 0x8000 != 0 {
                            envelope.msg_type = envelope.msg_type.wrapping_add(0x100);
                        }
                    }
                }
                Ok(Answer::Ok(rep))
            }
        }
    }
}

fn catalog() -> Catalog {
    catalog::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(bug: Bug) -> Vec<VectorResult> {
    let cat = catalog();
    let sut = Sut::builtin().unwrap();
    let plan: Vec<_> = cat.vectors.iter().collect();
    CodecMethod::new(&sut, Box::new(Mutant(bug)))
        .run(&cat, &plan)
        .unwrap()
}

/// Asserts the set of non-passing vectors, and that each names one of `requirements`.
fn check(bug: Bug, expected: &[&str], requirements: &[&str]) {
    let results = run(bug);
    let failed: BTreeSet<&str> = results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass && r.verdict != Verdict::NotApplicable)
        .map(|r| r.vector_id.as_str())
        .collect();
    let want: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(failed, want, "{bug:?}: the vectors that fail");
    for r in results
        .iter()
        .filter(|r| want.contains(r.vector_id.as_str()))
    {
        assert_eq!(r.verdict, Verdict::Fail, "{}: {:?}", r.vector_id, r.detail);
        assert!(
            r.absolute,
            "{}: a MUST-level failure must fail the run",
            r.vector_id
        );
        assert!(
            r.requirements
                .iter()
                .any(|q| requirements.contains(&q.as_str())),
            "{} should name one of {requirements:?}, names {:?}",
            r.vector_id,
            r.requirements
        );
    }
}

#[test]
fn the_reference_passes_every_applicable_vector() {
    let cat = catalog();
    let sut = Sut::builtin().unwrap();
    let plan: Vec<_> = cat.vectors.iter().collect();
    let results = CodecMethod::new(&sut, Box::new(InProcess))
        .run(&cat, &plan)
        .unwrap();
    let bad: Vec<_> = results
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable))
        .map(|r| (&r.vector_id, r.verdict, &r.detail))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn refusing_a_frame_of_exactly_the_maximum_is_caught() {
    check(
        Bug::FrameLimitOffByOne,
        &[
            "core_0019_boundary_max_frame_exact",
            "core_0133_length_prefix_at_the_maximum_waits_for_its_body",
        ],
        &["CORE-009", "CORE-008"],
    );
}

#[test]
fn accepting_a_zero_length_frame_is_caught() {
    check(
        Bug::AcceptsZeroLength,
        &[
            "core_0003_invalid_zero_length",
            "core_0028_error_mapping_invalid_frame",
        ],
        &["CORE-004"],
    );
}

#[test]
fn accepting_an_eleven_octet_uvarint_is_caught() {
    check(
        Bug::AcceptsElevenOctetUvarint,
        &[
            "e1_0002_varint_too_long_invalid",
            "e1_0116_too_long_uvarint_ts_unix_ms",
            "e1_0117_too_long_uvarint_payload",
        ],
        &["E1-001"],
    );
}

#[test]
fn ignoring_the_msg_id_bound_is_caught() {
    check(
        Bug::IgnoresMsgIdBound,
        &[
            "core_0010_invalid_msg_id_short",
            "core_0011_invalid_msg_id_long",
        ],
        &["CORE-036"],
    );
}

#[test]
fn a_flag_that_changes_a_field_is_caught() {
    check(
        Bug::FlagChangesMsgType,
        &[
            "core_0013_unknown_flags_set",
            "core_0026_unknown_flags_no_reinterpretation",
            "e1_0122_ten_octet_uvarints_accepted",
        ],
        &["CORE-031", "CORE-032"],
    );
}

#[test]
fn wrapping_an_overflowing_uvarint_is_caught() {
    check(
        Bug::WrapsUvarintOverflow,
        &[
            "e1_0003_varint_overflow_invalid",
            "e1_0109_overflow_uvarint_version",
            "e1_0110_overflow_uvarint_msg_type",
            "e1_0111_overflow_uvarint_flags",
            "e1_0112_overflow_uvarint_ts_unix_ms",
            "e1_0113_overflow_uvarint_msg_id",
            "e1_0114_overflow_uvarint_extensions",
            "e1_0115_overflow_uvarint_payload",
            "e1_0128_overflowing_extension_type",
        ],
        &["E1-002"],
    );
}

#[test]
fn rejecting_at_exactly_the_skew_fails_nothing() {
    check(Bug::ExcludesWindowEdge, &[], &[]);
}

#[test]
fn a_window_narrower_than_declared_is_caught() {
    check(
        Bug::NarrowsWindow,
        &["core_0126_freshness_window_edges_accepted"],
        &["CORE-037"],
    );
}

#[test]
fn ignoring_the_a2a_content_rules_is_caught() {
    check(
        Bug::IgnoresA2aContentRules,
        &[
            "a2a_0106_event_without_content_rejected",
            "a2a_0107_failure_result_without_reason_rejected",
        ],
        &["A2A-026", "A2A-027"],
    );
}
