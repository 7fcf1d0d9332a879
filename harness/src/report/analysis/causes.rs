//! Every cause that withholds a claim, grouped, so a vendor sees them all in one message
//! rather than one per round: namespaces with no vector run, required vectors untested for a
//! missing declaration (each with what it lacks), other untested ones, failures at MUST
//! level, failures of required vectors at SHOULD level (SI-050), and what the catalog cannot
//! test yet. The status of a class or profile claim is decided here too, from the same
//! groups, so the status and the message cannot disagree.

use crate::report::analysis::classes::{ClassStatus, NamespaceStatus, Withheld, WithheldKind};

/// How many vector ids a one-line group names before it counts the rest.
const SHOWN: usize = 8;

/// The causes of one or more judgements (a class, or a class and its profiles), grouped.
#[derive(Debug, Clone, Default)]
pub struct Causes<'a> {
    /// Namespaces without vectors (or without required vectors) in the catalog.
    pub empty: Vec<&'a str>,
    /// Required vectors not built yet.
    pub unbuilt: Vec<&'a Withheld>,
    /// Namespaces of which no vector ran against the SUT, with how many of their required
    /// vectors were left untested.
    pub idle: Vec<(&'a str, usize)>,
    /// Required vectors untested because the manifest lacks a declaration.
    pub undeclared: Vec<&'a Withheld>,
    /// Required vectors untested for another reason, in namespaces where something ran.
    pub untested: Vec<&'a Withheld>,
    /// Vectors failed at MUST level (or unsupported).
    pub must: Vec<&'a Withheld>,
    /// Required vectors failed at SHOULD level.
    pub should: Vec<&'a Withheld>,
    /// The run was interrupted.
    pub interrupted: bool,
}

impl<'a> Causes<'a> {
    /// The causes in `withheld` and `namespaces` (of one judgement).
    pub fn of(
        withheld: &'a [Withheld],
        namespaces: &'a [NamespaceStatus],
        interrupted: bool,
    ) -> Self {
        let mut c = Causes {
            interrupted,
            ..Default::default()
        };
        c.add(withheld, namespaces);
        c
    }

    /// Adds the causes of another judgement (a profile beside its class); a vector or
    /// namespace the two share is named once.
    pub fn add(&mut self, withheld: &'a [Withheld], namespaces: &'a [NamespaceStatus]) {
        let idle_ns: Vec<&str> = namespaces
            .iter()
            .filter(|n| n.executed == 0 && n.in_catalog > 0 && n.required > 0)
            .map(|n| n.namespace.as_str())
            .collect();
        for n in namespaces {
            let ns = n.namespace.as_str();
            if (n.in_catalog == 0 || n.required == 0) && !self.empty.contains(&ns) {
                self.empty.push(ns);
            }
        }
        for ns in &idle_ns {
            if self.idle.iter().any(|(n, _)| n == ns) {
                continue;
            }
            let prefix = format!("{ns}_");
            let folded = withheld
                .iter()
                .filter(|w| w.kind == WithheldKind::Untested && w.vector_id.starts_with(&prefix))
                .count();
            self.idle.push((ns, folded));
        }
        let in_idle = |id: &str| {
            idle_ns
                .iter()
                .any(|ns| id.strip_prefix(ns).is_some_and(|r| r.starts_with('_')))
        };
        for w in withheld {
            let group = match w.kind {
                WithheldKind::Unbuilt => &mut self.unbuilt,
                WithheldKind::Fail => &mut self.must,
                WithheldKind::Should => &mut self.should,
                WithheldKind::Untested if !w.lacks.is_empty() => &mut self.undeclared,
                // Folded into its namespace's "no vector ran" line.
                WithheldKind::Untested if in_idle(&w.vector_id) => continue,
                WithheldKind::Untested => &mut self.untested,
            };
            if !group.iter().any(|x| x.vector_id == w.vector_id) {
                group.push(w);
            }
        }
        for g in [
            &mut self.unbuilt,
            &mut self.undeclared,
            &mut self.untested,
            &mut self.must,
            &mut self.should,
        ] {
            g.sort();
        }
    }

    /// The status the causes leave: unclaimable when the catalog cannot test it, fail on a
    /// failure, incomplete on a gap, else pass.
    pub fn status(&self) -> ClassStatus {
        if !self.empty.is_empty() || !self.unbuilt.is_empty() {
            ClassStatus::Unclaimable
        } else if !self.must.is_empty() || !self.should.is_empty() {
            ClassStatus::Fail
        } else if !self.undeclared.is_empty()
            || !self.untested.is_empty()
            || !self.idle.is_empty()
            || self.interrupted
        {
            ClassStatus::Incomplete
        } else {
            ClassStatus::Pass
        }
    }

    fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut g = Vec::new();
        if !self.empty.is_empty() {
            g.push((
                format!("no vectors in the catalog yet for {}", stars(&self.empty)),
                Vec::new(),
            ));
        }
        if !self.unbuilt.is_empty() {
            g.push((
                format!("{} required vector(s) not built yet", self.unbuilt.len()),
                self.unbuilt.iter().map(|w| w.vector_id.clone()).collect(),
            ));
        }
        if !self.idle.is_empty() {
            let names: Vec<&str> = self.idle.iter().map(|(n, _)| *n).collect();
            g.push((
                format!("no vector of {} ran against this SUT", stars(&names)),
                Vec::new(),
            ));
        }
        let named =
            |ws: &[&Withheld]| -> Vec<String> { ws.iter().map(|w| w.vector_id.clone()).collect() };
        if !self.undeclared.is_empty() {
            g.push((
                format!(
                    "{} required vector(s) untested for a missing declaration",
                    self.undeclared.len()
                ),
                self.undeclared
                    .iter()
                    .map(|w| format!("{} (lacks {})", w.vector_id, w.lacks.join(", ")))
                    .collect(),
            ));
        }
        if !self.untested.is_empty() {
            g.push((
                format!("{} required vector(s) untested", self.untested.len()),
                named(&self.untested),
            ));
        }
        if !self.must.is_empty() {
            g.push((
                format!("{} vector(s) failed at MUST level", self.must.len()),
                named(&self.must),
            ));
        }
        if !self.should.is_empty() {
            g.push((
                format!(
                    "{} required vector(s) failed at SHOULD level (a claim needs 100% pass)",
                    self.should.len()
                ),
                named(&self.should),
            ));
        }
        g
    }

    /// Every group in one line, each naming its first few vectors (the lines of
    /// [`Causes::lines`] name all of them).
    pub fn one_line(&self) -> String {
        let mut parts: Vec<String> = self
            .groups()
            .into_iter()
            .map(|(head, ids)| {
                if ids.is_empty() {
                    return head;
                }
                let mut shown: Vec<String> = ids.iter().take(SHOWN).cloned().collect();
                if ids.len() > SHOWN {
                    shown.push(format!("and {} more", ids.len() - SHOWN));
                }
                format!("{head}: {}", shown.join(", "))
            })
            .collect();
        if self.interrupted {
            parts.push("the run was interrupted".into());
        }
        parts.join("; ")
    }

    /// Every group as a heading line and one indented line per vector, each with why it
    /// withholds the claim: the message `claim` prints.
    pub fn lines(&self) -> Vec<String> {
        let why = |w: &Withheld| format!("    {}: {}", w.vector_id, w.why);
        let mut out = Vec::new();
        if !self.empty.is_empty() {
            out.push(format!(
                "  not claimable yet: no vectors in the catalog for {}",
                stars(&self.empty)
            ));
        }
        if !self.unbuilt.is_empty() {
            out.push("  not claimable yet: required vectors not built:".into());
            out.extend(self.unbuilt.iter().map(|w| why(w)));
        }
        if !self.idle.is_empty() {
            out.push("  namespaces with no vector run against this SUT:".into());
            out.extend(self.idle.iter().map(|(ns, n)| {
                format!(
                    "    {ns}_*{}",
                    if *n > 0 {
                        format!(" ({n} required vector(s) untested)")
                    } else {
                        " (every vector out of scope by the manifest's choices)".into()
                    }
                )
            }));
        }
        if !self.undeclared.is_empty() {
            out.push("  untested because the manifest lacks a declaration:".into());
            out.extend(
                self.undeclared
                    .iter()
                    .map(|w| format!("    {}: lacks {}", w.vector_id, w.lacks.join(", "))),
            );
        }
        if !self.untested.is_empty() {
            out.push("  untested:".into());
            out.extend(self.untested.iter().map(|w| why(w)));
        }
        if !self.must.is_empty() {
            out.push("  failed at MUST level:".into());
            out.extend(self.must.iter().map(|w| why(w)));
        }
        if !self.should.is_empty() {
            out.push(
                "  failed at SHOULD level (required vectors: a claim needs 100% pass):".into(),
            );
            out.extend(self.should.iter().map(|w| why(w)));
        }
        if self.interrupted {
            out.push("  the run was interrupted".into());
        }
        out
    }
}

/// `a_*, b_*`.
fn stars(ns: &[&str]) -> String {
    ns.iter()
        .map(|n| format!("{n}_*"))
        .collect::<Vec<_>>()
        .join(", ")
}
