//! A spec kit fixture as the catalog holds it beside the vector read from it: what the kit
//! expects, the project's ruling on it, and what it assumes of the receiver
//! ([`Receiver`]). The published-set front-end (`crate::published`) builds it; the engine
//! reads only the receiver, the report's published-set section the rest.

use super::receiver::Receiver;
use super::terms::UnknownProfile;
use crate::frames::ErrorCode;

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

/// A published fixture behind a vector: its metadata file, what the kit expects, the
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
    /// For a process check, the evidence file its review reads (`none named` when the
    /// metadata names none); the report lists it.
    pub evidence: Option<String>,
}

/// How a ruling changes the way a fixture runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It runs as published.
    Explains,
    /// Not applicable: one frame cannot show this behaviour (what it needs, in words).
    SingleFrame(&'static str),
    /// It applies to SUTs with this unknown-profile path only.
    UnknownProfilePath(UnknownProfile),
    /// It runs with this expectation instead.
    Expect(Ruled),
    /// It is judged on decoding only: the core accepts the frame and dispatches it to the
    /// addressed profile, which the receiver is not asked to validate (a codec SUT decodes
    /// it as a core; an endpoint's profile may still refuse it, which shows the dispatch).
    /// The published expectation is about what the payload cannot carry, so it is not
    /// compared with what the SUT did.
    DecodingOnly,
    /// The spec leaves the receiver the choice: an accept (of the asserted envelope values)
    /// and any refusal, an error frame or a close, both pass. The requirements are those
    /// of the case the ruling describes (none when the choice is all there is to judge).
    EitherWay(&'static [&'static str]),
}

/// The expectation a ruling puts in place of the published one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ruled {
    /// Reject with the first code; the others pass too.
    pub codes: &'static [ErrorCode],
    /// Requirements of the ruled case (registry IDs).
    pub requirements: &'static [&'static str],
    /// Where the code is graded: a profile-level reject's code is a SHOULD (ERR-004,
    /// SI-012), so another code warns and never fails.
    pub code_requirements: &'static [&'static str],
    /// Ask the SUT to validate the addressed profile's payloads (the fault is the profile's).
    pub validate: bool,
}

/// One ruling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ruling {
    /// The spec kit's ids of the fixtures it covers.
    pub fixtures: &'static [&'static str],
    /// The project's reading, in words.
    pub reading: &'static str,
    /// The clause it rests on.
    pub clause: &'static str,
    /// The spec-issues entries.
    pub si: &'static str,
    /// What it does to the run.
    pub effect: Effect,
}
