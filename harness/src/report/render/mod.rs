//! Renderers: each turns the one report into one format (JSON, JUnit, Markdown, HTML, the
//! console summary), from one summary view ([`summary`]) where they say the same thing.
//! Errors are returned, never written into a file.

pub mod console;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod shared;
pub mod summary;

use crate::report::model::Report;

pub use shared::{levels, tag, transcript_is_run_specific, transcript_line, RUN_BEGIN, RUN_END};

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
