//! Renderers: each turns the one report into one format (JSON, JUnit, Markdown, HTML, the
//! console summary), from one summary view ([`summary`]) where they say the same thing.
//! Errors are returned, never written into a file.

pub mod console;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod summary;

use crate::report::model::Report;
use crate::report::result::{Dir, TranscriptEntry, VectorResult, Verdict};

/// Rendering or writing a report failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The JUnit writer failed.
    #[error("junit.xml: {0}")]
    Junit(#[from] quick_junit::SerializeError),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The marker lines around run-specific parts of `report.md` and `report.html` (the
/// counterpart of JSON's `run` block): everything outside them is deterministic.
pub const RUN_BEGIN: &str = "<!-- run:begin -->";
/// See [`RUN_BEGIN`].
pub const RUN_END: &str = "<!-- run:end -->";

/// The file names `run --out DIR` writes, with their renderings.
pub fn render_all(rep: &Report) -> Result<Vec<(&'static str, String)>, RenderError> {
    Ok(vec![
        ("report.json", rep.to_json()),
        ("junit.xml", junit::render(rep)?),
        ("report.md", markdown::render(rep)),
        ("report.html", html::render(rep)),
    ])
}

/// Writes every format into `dir`.
pub fn write_all(rep: &Report, dir: &std::path::Path) -> Result<(), RenderError> {
    let io = |p: &std::path::Path| {
        let path = p.display().to_string();
        move |source| RenderError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, text) in render_all(rep)? {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(io(&p))?;
    }
    Ok(())
}

/// `text` with every region between [`RUN_BEGIN`] and [`RUN_END`] (markers kept) emptied,
/// and for JSON the `run` member removed: what must be byte-identical across two runs.
pub fn strip_run(name: &str, text: &str) -> String {
    if name.ends_with(".json") {
        return match serde_json::from_str::<serde_json::Value>(text) {
            Ok(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.remove("run");
                }
                serde_json::to_string_pretty(&v).unwrap_or_default()
            }
            Err(_) => text.to_owned(),
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(b) = rest.find(RUN_BEGIN) {
        out.push_str(&rest[..b + RUN_BEGIN.len()]);
        rest = &rest[b + RUN_BEGIN.len()..];
        match rest.find(RUN_END) {
            Some(e) => rest = &rest[e..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// How a result stands for the run: `FAIL` fails it (with a baseline: deviates from it),
/// `WARN` is a SHOULD-level failure that does not, `XFAIL` a failure the baseline expects,
/// `NOTE` neither pass nor failure, `PASS` a pass.
pub fn tag(rep: &Report, r: &VectorResult) -> &'static str {
    if let Some(b) = &rep.baseline {
        // A deviation fails the run, an unexpected pass included.
        if b.deviations.iter().any(|d| d.vector_id == r.vector_id) {
            return "FAIL";
        }
        if r.verdict == Verdict::Pass {
            return "PASS";
        }
        if r.verdict.is_failure() {
            return "XFAIL";
        }
        return "NOTE";
    }
    if r.verdict == Verdict::Pass {
        "PASS"
    } else if crate::report::model::fails_run(r, rep.strict) {
        "FAIL"
    } else if r.verdict.is_failure() {
        "WARN"
    } else {
        "NOTE"
    }
}

/// One transcript line as text: direction arrow, time, data.
pub fn transcript_line(t: &TranscriptEntry) -> String {
    let arrow = match t.dir {
        Dir::Sent => "→",
        Dir::Received => "←",
        Dir::Note => "·",
    };
    format!("{arrow} +{}ms {}", t.t_ms, t.data)
}

/// Whether a vector's transcript lives in the run block (session and MCP-native methods).
pub fn transcript_is_run_specific(rep: &Report, r: &VectorResult) -> bool {
    rep.run.transcripts.contains_key(&r.vector_id)
}

/// The level of each requirement named by the report, by ID.
pub fn levels(rep: &Report) -> std::collections::HashMap<&str, &str> {
    rep.requirements
        .iter()
        .map(|r| (r.id.as_str(), r.level.as_str()))
        .collect()
}
