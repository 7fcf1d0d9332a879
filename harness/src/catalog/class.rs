//! The conformance classes C0-C5 of the spec kit's `conformance-classes.md`: their names, the
//! specifications each is claimed against and the namespaces each requires; and the profiles
//! that can be claimed beside a class, derived from the same parts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A conformance class.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Class {
    /// Core Baseline.
    C0,
    /// MCP Bridge.
    C1,
    /// A2A Baseline.
    C2,
    /// SWP Runtime.
    C3,
    /// SWP Data Plane.
    C4,
    /// SWP Federation.
    C5,
}

/// A class name that is not C0-C5.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown class {0:?}: expected C0..C5")]
pub struct UnknownClass(pub String);

impl Class {
    /// Every class, in order.
    pub const ALL: [Class; 6] = [
        Class::C0,
        Class::C1,
        Class::C2,
        Class::C3,
        Class::C4,
        Class::C5,
    ];

    /// `C0`..`C5`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::C0 => "C0",
            Class::C1 => "C1",
            Class::C2 => "C2",
            Class::C3 => "C3",
            Class::C4 => "C4",
            Class::C5 => "C5",
        }
    }

    /// The class's name in `conformance-classes.md`.
    pub fn title(self) -> &'static str {
        match self {
            Class::C0 => "Core Baseline",
            Class::C1 => "MCP Bridge",
            Class::C2 => "A2A Baseline",
            Class::C3 => "SWP Runtime",
            Class::C4 => "SWP Data Plane",
            Class::C5 => "SWP Federation",
        }
    }

    /// The specifications a claim of the class is made against, in claim-line order: Core,
    /// its bindings, then the profiles (`conformance-classes.md` asks claims to carry their
    /// versions).
    pub fn parts(self) -> &'static [Part] {
        const C0: &[Part] = &[CORE, E1, S1];
        const C1: &[Part] = &[CORE, E1, S1, MCP];
        const C2: &[Part] = &[CORE, E1, S1, P1, A2A];
        const C3: &[Part] = &[CORE, E1, S1, P1, RPC, EVENTS, OBS];
        const C4: &[Part] = &[CORE, E1, S1, P1, RPC, EVENTS, OBS, ARTIFACT, STATE];
        const C5: &[Part] = &[
            CORE, E1, S1, P1, RPC, EVENTS, OBS, ARTIFACT, STATE, AGDISC, TOOLDISC, CRED,
            POLICYHINT, RELAY,
        ];
        match self {
            Class::C0 => C0,
            Class::C1 => C1,
            Class::C2 => C2,
            Class::C3 => C3,
            Class::C4 => C4,
            Class::C5 => C5,
        }
    }

    /// The specifications a claim of the class is made against, as (what, document stem).
    pub fn documents(self) -> Vec<(&'static str, &'static str)> {
        self.parts().iter().map(|p| (p.what, p.document)).collect()
    }

    /// The namespaces the class requires, in claim-line order.
    pub fn namespaces(self) -> Vec<&'static str> {
        self.parts().iter().filter_map(|p| p.namespace).collect()
    }

    /// Whether a claim of the class already covers `p` (`C5` covers `relay`).
    pub fn covers(self, p: Profile) -> bool {
        self.parts().contains(p.part())
    }
}

/// One specification a claim is made against: Core, a binding, P1 or a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// What a claim line calls it: `Core`, `E1`, `S1`, `P1`, `profile 19`.
    pub what: &'static str,
    /// Its document stem in the requirement registry (`swp-relay`), which holds the title
    /// and the version its own heading states.
    pub document: &'static str,
    /// The namespace of its vectors; P1 has none (its vectors are the profiles').
    pub namespace: Option<&'static str>,
    /// Its `profile_id` in the profile registry, for a profile.
    pub profile_id: Option<u64>,
}

const fn part(what: &'static str, document: &'static str, ns: Option<&'static str>) -> Part {
    Part {
        what,
        document,
        namespace: ns,
        profile_id: None,
    }
}

const fn profile(id: u64, what: &'static str, document: &'static str, ns: &'static str) -> Part {
    Part {
        what,
        document,
        namespace: Some(ns),
        profile_id: Some(id),
    }
}

const CORE: Part = part("Core", "core-spec", Some("core"));
const E1: Part = part("E1", "encoding-binding-e1", Some("e1"));
const S1: Part = part("S1", "security-bindings", Some("s1"));
/// The payload encoding binding every A2A and SWP-* profile's payloads use.
pub const P1: Part = part("P1", "profile-payload-encoding-p1", None);
const MCP: Part = profile(1, "profile 1", "mcp-mapping-profile", "mcp");
const A2A: Part = profile(2, "profile 2", "a2a-profile", "a2a");
const AGDISC: Part = profile(10, "profile 10", "swp-agdisc", "agdisc");
const TOOLDISC: Part = profile(11, "profile 11", "swp-tooldisc", "tooldisc");
const RPC: Part = profile(12, "profile 12", "swp-rpc", "rpc");
const EVENTS: Part = profile(13, "profile 13", "swp-events", "events");
const ARTIFACT: Part = profile(14, "profile 14", "swp-artifact", "artifact");
const CRED: Part = profile(15, "profile 15", "swp-cred", "cred");
const POLICYHINT: Part = profile(16, "profile 16", "swp-policyhint", "policyhint");
const STATE: Part = profile(17, "profile 17", "swp-state", "state");
const OBS: Part = profile(18, "profile 18", "swp-obs", "obs");
const RELAY: Part = profile(19, "profile 19", "swp-relay", "relay");

/// A profile that can be claimed beside a class (`conformance-classes.md`: additive profile
/// claims; `conformance-claims-checklist.md` §2): every profile some class requires, named
/// on the command line by its vector namespace (`relay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Profile(usize);

/// A profile name that is none of [`Profile::all`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile {name:?}: expected one of {valid}")]
pub struct UnknownProfile {
    /// The name given.
    pub name: String,
    /// The valid names, comma-separated.
    pub valid: String,
}

impl Profile {
    /// Every claimable profile, in the order the classes first require them. Derived from
    /// the classes' parts, so a profile a class requires is claimable on its own.
    pub fn all() -> Vec<Profile> {
        (0..Self::table().len()).map(Profile).collect()
    }

    fn table() -> &'static [Part] {
        static TABLE: std::sync::OnceLock<Vec<Part>> = std::sync::OnceLock::new();
        TABLE.get_or_init(|| {
            let mut t: Vec<Part> = Vec::new();
            for p in Class::ALL.iter().flat_map(|c| c.parts()) {
                if p.profile_id.is_some() && !t.contains(p) {
                    t.push(*p);
                }
            }
            t
        })
    }

    /// Its part: document, namespace, profile id.
    pub fn part(self) -> &'static Part {
        &Self::table()[self.0]
    }

    /// Its vector namespace, which is also its name on the command line.
    pub fn namespace(self) -> &'static str {
        self.part().namespace.unwrap_or_default()
    }

    /// Whether its payloads are P1, so a claim of it also names the P1 version
    /// (`profile-payload-encoding-p1.md` §7).
    pub fn uses_p1(self) -> bool {
        self.part().profile_id.is_some_and(crate::p1::pb::is_p1)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace())
    }
}

impl std::str::FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Profile, UnknownProfile> {
        Profile::all()
            .into_iter()
            .find(|p| p.namespace() == s.trim())
            .ok_or_else(|| UnknownProfile {
                name: s.to_owned(),
                valid: Profile::all()
                    .iter()
                    .map(|p| p.namespace())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Class {
    type Err = UnknownClass;

    fn from_str(s: &str) -> Result<Class, UnknownClass> {
        Class::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownClass(s.to_owned()))
    }
}
