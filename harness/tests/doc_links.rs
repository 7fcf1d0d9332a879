//! Every relative markdown link in README.md and docs/*.md names a file of the repository
//! that exists, and a `#fragment` into a markdown file names one of its headings (GitHub's
//! anchors). Documents are merged and renamed; their links must follow.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats `-N`.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = HashSet::new();
    for line in prose(text) {
        let Some(h) = line.strip_prefix('#') else {
            continue;
        };
        let h = h.trim_start_matches('#').trim();
        let slug: String = h
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut n = 0;
        let mut s = slug.clone();
        while !seen.insert(s.clone()) {
            n += 1;
            s = format!("{slug}-{n}");
        }
        out.insert(s);
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in prose(&text) {
            for (i, _) in line.match_indices("](") {
                let rest = &line[i + 2..];
                let url = &rest[..rest.find([')', ' ']).unwrap_or(rest.len())];
                if url.contains("://") || url.starts_with("mailto:") {
                    continue;
                }
                let (path, frag) = url.split_once('#').unwrap_or((url, ""));
                let target = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let what = format!("{}: {url}", file.strip_prefix(&root).unwrap().display());
                match target.canonicalize() {
                    Ok(t) if !t.starts_with(&root) => {
                        bad.push(format!("{what} (outside the repository)"))
                    }
                    Ok(t) if !frag.is_empty() && t.extension().is_some_and(|x| x == "md") => {
                        if !anchors(&std::fs::read_to_string(&t).unwrap()).contains(frag) {
                            bad.push(format!("{what} (no such heading)"));
                        }
                    }
                    Ok(_) => {}
                    Err(_) => bad.push(format!("{what} (no such file)")),
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}
