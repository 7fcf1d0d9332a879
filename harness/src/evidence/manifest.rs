//! The bundle's `MANIFEST`: what was claimed, with what, and the SHA-256 of every other
//! file, in a line format a shell can check (`sha256sum -c` reads its file lines). Its exact
//! bytes are what `MANIFEST.sig` signs, so it has one rendering and the parser accepts only
//! that rendering: two texts never mean the same manifest.

use std::collections::BTreeMap;

/// The first line, naming the format and its version.
pub const MAGIC: &str = "swp-conform evidence manifest 1";

/// The `MANIFEST` of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Harness name and version (`swp-conform 0.1.0`), as the report states it.
    pub harness: String,
    /// The class claimed (`C0`..`C5`).
    pub class: String,
    /// The profiles claimed on top of it, by name (`relay`); a `profiles:` line only when
    /// there are some, so a class claim's MANIFEST reads as before.
    pub profiles: Vec<String>,
    /// The vector set the SUT was judged against (`vector_set_sha256` of the report).
    pub catalog_sha256: String,
    /// The SUT manifest's name in the bundle (`manifest/<file>`).
    pub sut_manifest: String,
    /// The class's status (`pass`, `fail`, `incomplete`, `unclaimable`).
    pub status: String,
    /// The claim line, when the class passed.
    pub claim: Option<String>,
    /// Every other file of the bundle: name relative to the bundle's root → hex SHA-256.
    pub files: BTreeMap<String, String>,
}

/// Why a `MANIFEST` does not parse; the line is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The text is not UTF-8.
    #[error("MANIFEST is not UTF-8 text")]
    NotText,
    /// The first line is not [`MAGIC`].
    #[error("MANIFEST line 1: expected {MAGIC:?}, found {0:?}")]
    Magic(String),
    /// A header line is missing or out of order.
    #[error("MANIFEST line {line}: expected `{want}: …`, found {found:?}")]
    Header {
        /// Line number.
        line: usize,
        /// The field expected there.
        want: &'static str,
        /// What is there.
        found: String,
    },
    /// A file line is not `<64 hex>  <name>`, or not in order, or repeats a name.
    #[error("MANIFEST line {line}: {why}: {found:?}")]
    FileLine {
        /// Line number.
        line: usize,
        /// What is wrong.
        why: &'static str,
        /// The line.
        found: String,
    },
    /// The text does not end with a newline, or has a blank line.
    #[error("MANIFEST is not in its one rendering (line endings or blank lines)")]
    Layout,
}

/// One header line's value: no line breaks, so a claim line cannot forge a field.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

impl Manifest {
    /// The one rendering: header lines in fixed order, then `files:` and one line per file
    /// in name order, `sha256sum`'s format (digest, two spaces, name). LF line ends.
    pub fn render(&self) -> String {
        let profiles = if self.profiles.is_empty() {
            String::new()
        } else {
            format!("profiles: {}\n", one_line(&self.profiles.join(",")))
        };
        let mut s = format!(
            "{MAGIC}\nharness: {}\nclass: {}\n{profiles}catalog-sha256: {}\nsut-manifest: {}\nstatus: {}\nclaim: {}\nfiles:\n",
            one_line(&self.harness),
            one_line(&self.class),
            one_line(&self.catalog_sha256),
            one_line(&self.sut_manifest),
            one_line(&self.status),
            self.claim.as_deref().map_or("none".to_owned(), one_line),
        );
        for (name, digest) in &self.files {
            s.push_str(&format!("{digest}  {}\n", one_line(name)));
        }
        s
    }

    /// Parses the one rendering; anything else is refused with the line that is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let text = std::str::from_utf8(bytes).map_err(|_| ManifestError::NotText)?;
        if !text.ends_with('\n') || text.contains('\r') {
            return Err(ManifestError::Layout);
        }
        let mut lines = text[..text.len() - 1].split('\n').enumerate().peekable();
        // The one optional header line, `profiles:`, is present only when non-empty.
        let mut profiles_line: Option<(usize, &str)> = None;
        let mut next = || {
            let got = lines.next().map(|(i, l)| (i + 1, l));
            if got.is_some_and(|(_, l)| l.starts_with("class: ")) {
                if let Some((i, l)) = lines.next_if(|(_, l)| l.starts_with("profiles: ")) {
                    profiles_line = Some((i + 1, l));
                }
            }
            got
        };
        match next() {
            Some((_, l)) if l == MAGIC => {}
            other => {
                return Err(ManifestError::Magic(
                    other.map(|x| x.1).unwrap_or("").into(),
                ))
            }
        }
        let mut field = |want: &'static str| -> Result<String, ManifestError> {
            let (line, l) = next().unwrap_or((0, ""));
            l.strip_prefix(want)
                .and_then(|r| r.strip_prefix(": "))
                .map(str::to_owned)
                .ok_or_else(|| ManifestError::Header {
                    line,
                    want,
                    found: l.into(),
                })
        };
        let harness = field("harness")?;
        let class = field("class")?;
        let catalog_sha256 = field("catalog-sha256")?;
        let sut_manifest = field("sut-manifest")?;
        let status = field("status")?;
        let claim = Some(field("claim")?).filter(|c| c != "none");
        let (line, l) = next().unwrap_or((0, ""));
        if l != "files:" {
            return Err(ManifestError::Header {
                line,
                want: "files",
                found: l.into(),
            });
        }
        let mut files = BTreeMap::new();
        let mut last: Option<&str> = None;
        while let Some((line, l)) = next() {
            let bad = |why| ManifestError::FileLine {
                line,
                why,
                found: l.into(),
            };
            let (digest, name) = l
                .split_once("  ")
                .ok_or_else(|| bad("not `<sha256>  <name>`"))?;
            if digest.len() != 64
                || !digest
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                return Err(bad("not a lowercase hex SHA-256"));
            }
            if name.is_empty() || last.is_some_and(|p| p >= name) {
                return Err(bad("file names must be unique and in order"));
            }
            last = Some(name);
            files.insert(name.to_owned(), digest.to_owned());
        }
        let profiles = match profiles_line {
            None => Vec::new(),
            Some((line, l)) => {
                let list = &l["profiles: ".len()..];
                let names: Vec<String> = list.split(',').map(str::to_owned).collect();
                if names.iter().any(|n| n.is_empty() || n.trim() != n) {
                    return Err(ManifestError::Header {
                        line,
                        want: "profiles",
                        found: l.into(),
                    });
                }
                names
            }
        };
        Ok(Manifest {
            harness,
            class,
            profiles,
            catalog_sha256,
            sut_manifest,
            status,
            claim,
            files,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            harness: "swp-conform 0.1.0".into(),
            class: "C0".into(),
            profiles: Vec::new(),
            catalog_sha256: "ab".repeat(32),
            sut_manifest: "manifest/m.yaml".into(),
            status: "pass".into(),
            claim: Some("SWP C0 — x".into()),
            files: [
                ("manifest/m.yaml".to_owned(), "01".repeat(32)),
                ("report.json".to_owned(), "02".repeat(32)),
            ]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn the_rendering_parses_back() {
        let m = sample();
        let t = m.render();
        assert!(
            t.ends_with(&format!("{}  report.json\n", "02".repeat(32))),
            "{t}"
        );
        assert_eq!(Manifest::parse(t.as_bytes()).unwrap(), m);
        let none = Manifest {
            claim: None,
            ..sample()
        };
        assert_eq!(Manifest::parse(none.render().as_bytes()).unwrap(), none);
        assert!(
            !t.contains("profiles:"),
            "a class claim's MANIFEST reads as before: {t}"
        );
    }

    #[test]
    fn profiles_render_on_one_line_after_the_class_and_parse_back() {
        let m = Manifest {
            profiles: vec!["relay".into(), "cred".into()],
            ..sample()
        };
        let t = m.render();
        assert!(
            t.contains("class: C0\nprofiles: relay,cred\ncatalog-sha256: "),
            "{t}"
        );
        assert_eq!(Manifest::parse(t.as_bytes()).unwrap(), m);
        for bad in [
            t.replace("profiles: relay,cred", "profiles: "),
            t.replace("profiles: relay,cred", "profiles: relay,,cred"),
            t.replace("profiles: relay,cred", "profiles: relay, cred"),
            // Anywhere but right after `class:` it is not the one rendering.
            t.replace("profiles: relay,cred\n", "")
                .replace("status: pass\n", "status: pass\nprofiles: relay,cred\n"),
        ] {
            assert!(Manifest::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn other_renderings_are_refused() {
        let t = sample().render();
        for bad in [
            t.replace('\n', "\r\n"),
            t.trim_end().to_owned(),
            t.replace("class: C0\n", ""),
            t.replace("files:\n", "files:\n\n"),
            t.replace(&"02".repeat(32), &"0G".repeat(32)),
            format!("{t}{}  manifest/m.yaml\n", "03".repeat(32)),
        ] {
            assert!(Manifest::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
