//! The conformance classes C0-C5 of the spec kit's `conformance-classes.md`: their names and
//! the namespaces each requires.

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

    /// The specifications a claim of the class is made against, as (what, document stem):
    /// Core, its bindings, then the profiles (`conformance-classes.md` asks claims to carry
    /// their versions).
    pub fn documents(self) -> &'static [(&'static str, &'static str)] {
        const C0: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
        ];
        const C1: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
            ("profile 1", "mcp-mapping-profile"),
        ];
        const C2: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
            ("P1", "profile-payload-encoding-p1"),
            ("profile 2", "a2a-profile"),
        ];
        const C3: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
            ("P1", "profile-payload-encoding-p1"),
            ("profile 12", "swp-rpc"),
            ("profile 13", "swp-events"),
            ("profile 18", "swp-obs"),
        ];
        const C4: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
            ("P1", "profile-payload-encoding-p1"),
            ("profile 12", "swp-rpc"),
            ("profile 13", "swp-events"),
            ("profile 18", "swp-obs"),
            ("profile 14", "swp-artifact"),
            ("profile 17", "swp-state"),
        ];
        const C5: &[(&str, &str)] = &[
            ("Core", "core-spec"),
            ("E1", "encoding-binding-e1"),
            ("S1", "security-bindings"),
            ("P1", "profile-payload-encoding-p1"),
            ("profile 12", "swp-rpc"),
            ("profile 13", "swp-events"),
            ("profile 18", "swp-obs"),
            ("profile 14", "swp-artifact"),
            ("profile 17", "swp-state"),
            ("profile 10", "swp-agdisc"),
            ("profile 11", "swp-tooldisc"),
            ("profile 15", "swp-cred"),
            ("profile 16", "swp-policyhint"),
            ("profile 19", "swp-relay"),
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

    /// The namespaces the class requires.
    pub fn namespaces(self) -> &'static [&'static str] {
        const C0: &[&str] = &["core", "e1", "s1"];
        match self {
            Class::C0 => C0,
            Class::C1 => &["core", "e1", "s1", "mcp"],
            Class::C2 => &["core", "e1", "s1", "a2a"],
            Class::C3 => &["core", "e1", "s1", "rpc", "events", "obs"],
            Class::C4 => &[
                "core", "e1", "s1", "rpc", "events", "obs", "artifact", "state",
            ],
            Class::C5 => &[
                "core",
                "e1",
                "s1",
                "rpc",
                "events",
                "obs",
                "artifact",
                "state",
                "agdisc",
                "tooldisc",
                "cred",
                "policyhint",
                "relay",
            ],
        }
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
