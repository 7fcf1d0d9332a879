//! `history.html`: one self-contained page; per SUT a strip of its runs (oldest to newest,
//! with versions and counts) and the vectors whose verdict changed, newest change first, with
//! regressions and flaky rows marked.

use crate::history::model::{History, Trend};
use crate::report::render::html::esc;
use std::fmt::Write;

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left}.muted{color:#666}
.strip td{font-size:12px;text-align:center;min-width:7em}.ok{background:#c8e6c9}.bad{background:#ffcdd2}
.regression{background:#c62828;color:#fff;padding:0 6px;border-radius:8px}
.fixed{background:#2e7d32;color:#fff;padding:0 6px;border-radius:8px}
.changed{background:#757575;color:#fff;padding:0 6px;border-radius:8px}
.flaky{background:#ef6c00;color:#fff;padding:0 6px;border-radius:8px}
"#;

/// Renders the page.
pub fn render(h: &History) -> String {
    let mut s = String::with_capacity(32 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>SWP verdict history</title><style>{STYLE}</style></head><body>\n<h1>Verdict history</h1>\n"
    );
    if h.newest_regressions.is_empty() {
        s.push_str("<p id=\"newest\">No regression in the newest runs.</p>\n");
    } else {
        let _ = writeln!(
            s,
            "<p id=\"newest\"><b>{} regression(s) in the newest runs</b>: {}</p>",
            h.newest_regressions.len(),
            esc(&h.newest_regressions.join(", "))
        );
    }
    for sut in &h.suts {
        let _ = writeln!(
            s,
            "<h2 id=\"s-{0}\">{0}</h2>\n<table class=\"strip\"><tr>",
            esc(&sut.label)
        );
        for r in &sut.runs {
            let fails: usize = ["fail", "timeout", "crash", "unsupported"]
                .iter()
                .map(|k| r.counts.get(*k).copied().unwrap_or(0))
                .sum();
            let _ = write!(
                s,
                "<td class=\"{}\" title=\"{}\">{}<br>{}<br>{} pass · {} fail<br><span class=\"muted\">{}</span></td>",
                if fails == 0 { "ok" } else { "bad" },
                esc(&format!("harness {} · catalog {}", r.harness, r.catalog_sha256)),
                esc(&r.timestamp_utc),
                esc(&r.sut_version),
                r.counts.get("pass").copied().unwrap_or(0),
                fails,
                esc(&if r.claims.is_empty() {
                    "no claim".to_owned()
                } else {
                    r.claims.join(", ")
                })
            );
        }
        let _ = writeln!(
            s,
            "</tr></table>\n<p class=\"muted\">{} vector(s) changed, {} never did.</p>",
            sut.changes.len(),
            sut.stable
        );
        if sut.changes.is_empty() {
            continue;
        }
        s.push_str("<table class=\"changes\"><tr><th>vector</th><th>now</th><th>last change</th><th>between</th><th>since</th><th>changes</th></tr>\n");
        for c in &sut.changes {
            let trend = match c.trend {
                Trend::Regression => "regression",
                Trend::Fixed => "fixed",
                Trend::Changed => "changed",
            };
            let flaky = if c.flaky {
                format!(
                    " <span class=\"flaky\" title=\"changed with no change of SUT, harness or catalog at {}\">flaky</span>",
                    esc(&c.flaky_at.join(", "))
                )
            } else {
                String::new()
            };
            let st = &c.last_change;
            let mut between = Vec::new();
            if let Some((a, b)) = &st.sut_version {
                between.push(format!("SUT {} → {}", esc(a), esc(b)));
            }
            if let Some((a, b)) = &st.harness {
                between.push(format!("harness {} → {}", esc(a), esc(b)));
            }
            if st.catalog_changed {
                between.push("catalog changed".into());
            }
            if between.is_empty() {
                between.push("no version changed".into());
            }
            let _ = writeln!(
                s,
                "<tr class=\"{trend}-row\" data-vector=\"{0}\"><td><code>{0}</code> <span class=\"{trend}\">{trend}</span>{flaky}</td><td>{1}</td><td>{2} → {3}<br><span class=\"muted\">{4} → {5}</span></td><td>{6}</td><td>{7}</td><td>{8}</td></tr>",
                esc(&c.vector_id),
                c.now.as_str(),
                st.from.as_str(),
                st.to.as_str(),
                esc(&st.from_run),
                esc(&st.to_run),
                between.join("<br>"),
                esc(c.failing_since.as_deref().unwrap_or("")),
                c.changes
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str("</body></html>\n");
    s
}
