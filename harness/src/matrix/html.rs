//! `matrix.html`: the interop matrix as one self-contained page (no network, no external
//! file): columns with their claims, the rows where SUTs disagree first, then every vector
//! grouped by namespace and requirement, filters, and the intermediary pairs. Each cell links
//! to that SUT's report page at the vector (which opens its transcript) and shows the reason
//! on hover. The page's script recounts what it shows into `#check` for the browser test.

use crate::matrix::model::{ColumnStatus, Matrix, Row};
use crate::report::render::html::esc;
use crate::report::render::shared::{RUN_BEGIN, RUN_END};
use std::collections::BTreeSet;
use std::fmt::Write;

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left}.muted{color:#666}
td.c{text-align:center;font-size:12px;white-space:nowrap}td.c a{color:inherit;text-decoration:none;display:block}
.pass{background:#c8e6c9}.fail,.timeout,.crash,.unsupported{background:#ffcdd2}
.reject-code-not-observable{background:#dcedc8}.inconclusive,.harness-error,.interrupted{background:#ffe0b2}
.not-applicable,.not-run,.absent{background:#eeeeee;color:#888}
tr.ns th{background:#dde7f3}tr.rq td{background:#f7f7f7;font-style:italic;font-size:12px}
th.col{font-size:12px;max-width:12em;overflow-wrap:anywhere}.claim{font-weight:bold}
.bad{color:#b71c1c}#filters label{margin-right:1em}
"#;

const SCRIPT: &str = r#"
(function(){
  var check=document.getElementById('check');
  function rows(){return document.querySelectorAll('#full tr.v');}
  function apply(){
    var ns=document.getElementById('f-ns').value,lv=document.getElementById('f-level').value;
    var dis=document.getElementById('f-dis').checked,brk=document.getElementById('f-brk').checked;
    var shown=0,groups={};
    rows().forEach(function(tr){
      var ok=(!ns||tr.getAttribute('data-ns')===ns)&&(!lv||tr.getAttribute('data-level')===lv)
        &&(!dis||tr.getAttribute('data-disagree')==='1')&&(!brk||tr.getAttribute('data-breaks')==='1');
      tr.hidden=!ok;if(ok){shown++;groups[tr.getAttribute('data-ns')]=1;groups[tr.getAttribute('data-ns')+' '+tr.getAttribute('data-rq')]=1;}
    });
    document.querySelectorAll('#full tr.ns,#full tr.rq').forEach(function(tr){tr.hidden=!groups[tr.getAttribute('data-key')];});
    document.getElementById('shown').textContent=shown+' of '+rows().length+' vectors shown';
    check.setAttribute('data-js-shown',String(shown));
  }
  var cells={};
  document.querySelectorAll('#full td.c').forEach(function(td){var v=td.getAttribute('data-verdict');cells[v]=(cells[v]||0)+1;});
  Object.keys(cells).forEach(function(k){check.setAttribute('data-js-cells-'+k,String(cells[k]));});
  check.setAttribute('data-js-rows',String(rows().length));
  check.setAttribute('data-js-columns',String(document.querySelectorAll('#full th.col').length));
  check.setAttribute('data-js-disagree',String(document.querySelectorAll('#disagree tr.v').length));
  check.setAttribute('data-js-breaks',String(document.querySelectorAll('#full tr.v[data-breaks="1"]').length));
  document.querySelectorAll('#filters input,#filters select').forEach(function(el){el.addEventListener('change',apply);});
  apply();
  // With #selftest the page exercises its filters for the browser check: "disagree" must
  // show exactly the disagreement rows, "breaks" exactly the rows someone breaks.
  if(location.hash==='#selftest'){
    var d=document.getElementById('f-dis'),b=document.getElementById('f-brk');
    d.checked=true;apply();var sd=check.getAttribute('data-js-shown');d.checked=false;
    b.checked=true;apply();var sb=check.getAttribute('data-js-shown');b.checked=false;apply();
    check.setAttribute('data-js-filter',(sd===check.getAttribute('data-js-disagree')&&sb===check.getAttribute('data-js-breaks'))?'ok':'disagree '+sd+' breaks '+sb);
  }
  check.setAttribute('data-status','ok');
})();
"#;

/// A verdict's short text in a cell.
fn short(v: &str) -> &'static str {
    match v {
        "pass" => "pass",
        "fail" => "FAIL",
        "reject-code-not-observable" => "pass*",
        "inconclusive" => "inc",
        "not-applicable" => "n/a",
        "unsupported" => "unsup",
        "timeout" => "t/o",
        "crash" => "crash",
        "harness-error" => "h-err",
        "interrupted" => "intr",
        "not-run" => "not-run",
        _ => "",
    }
}

/// Renders the page.
pub fn render(m: &Matrix) -> String {
    let mut s = String::with_capacity(64 * 1024 + m.rows.len() * m.columns.len() * 96);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>SWP interop matrix</title><style>{STYLE}</style></head><body>\n<h1>Interop matrix</h1>\n"
    );
    let _ = writeln!(
        s,
        "{RUN_BEGIN}\n<p class=\"muted\" id=\"run\">Run {} · {} ms · {} SUT run(s) at once · <code>{}</code></p>\n{RUN_END}",
        esc(&m.run.timestamp_utc),
        m.run.duration_ms,
        m.run.jobs,
        esc(&m.run.command.join(" "))
    );
    let _ = writeln!(
        s,
        "<p>{} vectors × {} columns · <b>{}</b> rows where SUTs disagree · {} rows some SUT breaks · harness {}</p>",
        m.counts.rows,
        m.counts.columns,
        m.counts.disagreements,
        m.counts.rows_with_breaks,
        esc(&m.harness_version)
    );
    if m.catalogs.len() > 1 {
        let _ = writeln!(
            s,
            "<p class=\"bad\"><b>The columns were judged with {} different catalogs</b>: compare rows with care.</p>",
            m.catalogs.len()
        );
    }
    columns(&mut s, m);
    pairs(&mut s, m);
    s.push_str("<h2>Where SUTs disagree</h2>\n<p class=\"muted\">A vector that applied to two SUTs (both manifests claim what it needs), one meeting it and the other breaking it.</p>\n<table id=\"disagree\">");
    header(&mut s, m, "");
    for row in m.rows.iter().filter(|r| r.disagree) {
        row_html(&mut s, m, row);
    }
    s.push_str("</table>\n<h2>Every vector</h2>\n");
    filters(&mut s, m);
    s.push_str("<table id=\"full\">");
    header(&mut s, m, " class=\"col\"");
    let (mut ns, mut rq) = (String::new(), String::new());
    for row in &m.rows {
        if row.namespace != ns {
            ns.clone_from(&row.namespace);
            rq.clear();
            let _ = writeln!(
                s,
                "<tr class=\"ns\" data-key=\"{0}\"><th colspan=\"{1}\">{0}</th></tr>",
                esc(&ns),
                m.columns.len() + 2
            );
        }
        if row.requirement != rq {
            rq.clone_from(&row.requirement);
            let _ = writeln!(
                s,
                "<tr class=\"rq\" data-key=\"{} {}\"><td colspan=\"{}\">{} · {}</td></tr>",
                esc(&ns),
                esc(&rq),
                m.columns.len() + 2,
                esc(&rq),
                esc(&row.level)
            );
        }
        row_html(&mut s, m, row);
    }
    let _ = write!(
        s,
        "</table>\n<div id=\"check\" hidden data-rows=\"{}\" data-disagree=\"{}\" data-breaks=\"{}\"></div>\n<script>{SCRIPT}</script>\n</body></html>\n",
        m.counts.rows, m.counts.disagreements, m.counts.rows_with_breaks
    );
    s
}

fn columns(s: &mut String, m: &Matrix) {
    s.push_str("<h2>SUTs</h2>\n<table id=\"columns\"><tr><th>label</th><th>SUT</th><th>claims</th><th>classes</th><th>report</th></tr>\n");
    for c in &m.columns {
        let claim = match c.status {
            ColumnStatus::NoReport => {
                format!("<span class=\"bad\">no report: {}</span>", esc(&c.why))
            }
            _ if c.claims.is_empty() => {
                let first = c.classes.iter().find(|k| k.status != "pass");
                format!(
                    "<span class=\"bad\">no claim{}</span>",
                    first.map_or(String::new(), |k| format!(
                        ": {} {}: {}",
                        esc(&k.class),
                        esc(&k.status),
                        esc(&k.reason)
                    ))
                )
            }
            _ if !c.headline.is_empty() => {
                format!("<span class=\"claim\">{}</span>", esc(&c.headline))
            }
            _ => format!("<span class=\"claim\">{}</span>", esc(&c.claims.join(", "))),
        };
        let incomplete = if c.status == ColumnStatus::Incomplete {
            format!(" <span class=\"bad\">incomplete: {}</span>", esc(&c.why))
        } else {
            String::new()
        };
        let classes: Vec<String> = c
            .classes
            .iter()
            .map(|k| {
                format!(
                    "<span class=\"{}\" title=\"{}\">{} {}</span>",
                    if k.status == "pass" { "pass" } else { "fail" },
                    esc(&k.reason),
                    esc(&k.class),
                    esc(&k.status)
                )
            })
            .collect();
        let link = c.page.as_ref().map_or(String::new(), |p| {
            format!("<a href=\"{}\">report</a>", esc(p))
        });
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{} {}</td><td>{claim}{incomplete}</td><td>{}</td><td>{link}</td></tr>",
            esc(&c.label),
            esc(&c.name),
            esc(&c.version),
            classes.join(" ")
        );
    }
    s.push_str("</table>\n");
}

fn pairs(s: &mut String, m: &Matrix) {
    if m.pairs.is_empty() {
        return;
    }
    let ups: BTreeSet<&str> = m.pairs.iter().map(|p| p.upstream.as_str()).collect();
    let mids: BTreeSet<&str> = m.pairs.iter().map(|p| p.intermediary.as_str()).collect();
    s.push_str("<h2>Intermediary pairs</h2>\n<p class=\"muted\">Rows: intermediaries; columns: the upstream stack behind them. Each cell: vectors met / broken, and the claim.</p>\n<table id=\"pairs\"><tr><th></th>");
    for u in &ups {
        let _ = write!(s, "<th>{}</th>", esc(u));
    }
    s.push_str("</tr>\n");
    for i in &mids {
        let _ = write!(s, "<tr><th>{}</th>", esc(i));
        for u in &ups {
            match m
                .pairs
                .iter()
                .find(|p| p.intermediary == *i && p.upstream == *u)
            {
                Some(p) => {
                    let _ = write!(
                        s,
                        "<td class=\"{}\"><a href=\"{}/report.html\">{} / {}</a> {}</td>",
                        if p.breaks == 0 { "pass" } else { "fail" },
                        esc(&p.label),
                        p.meets,
                        p.breaks,
                        esc(&p.claims.join(", "))
                    );
                }
                None => s.push_str("<td class=\"absent\">–</td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

fn filters(s: &mut String, m: &Matrix) {
    let ns: BTreeSet<&str> = m.rows.iter().map(|r| r.namespace.as_str()).collect();
    let lv: BTreeSet<&str> = m.rows.iter().map(|r| r.level.as_str()).collect();
    s.push_str(
        "<div id=\"filters\"><label>namespace <select id=\"f-ns\"><option value=\"\">all</option>",
    );
    for n in ns {
        let _ = write!(s, "<option>{}</option>", esc(n));
    }
    s.push_str(
        "</select></label><label>level <select id=\"f-level\"><option value=\"\">all</option>",
    );
    for l in lv {
        let _ = write!(s, "<option>{}</option>", esc(l));
    }
    s.push_str("</select></label><label><input type=\"checkbox\" id=\"f-dis\"> only rows where SUTs disagree</label><label><input type=\"checkbox\" id=\"f-brk\"> only rows some SUT breaks</label> <span id=\"shown\" class=\"muted\"></span></div>\n");
}

fn header(s: &mut String, m: &Matrix, class: &str) {
    s.push_str("<tr><th>vector</th><th>class</th>");
    for c in &m.columns {
        // The highest class, and how many profiles the claim line adds beyond it (the line
        // itself, with versions, is in the SUTs table).
        let extra = c.headline.matches(" + ").count();
        let claim = match (c.claims.last(), extra) {
            (None, 0) => "no claim".to_owned(),
            (None, n) => format!("{n} profile claim(s)"),
            (Some(top), 0) => top.clone(),
            (Some(top), n) => format!("{top} + {n} profile(s)"),
        };
        let _ = write!(
            s,
            "<th{class} title=\"{}\">{}<br><span class=\"muted\">{}</span></th>",
            esc(&format!("{} {}", c.name, c.version)),
            esc(&c.label),
            esc(&claim)
        );
    }
    s.push_str("</tr>\n");
}

fn row_html(s: &mut String, m: &Matrix, row: &Row) {
    let _ = write!(
        s,
        "<tr class=\"v\" data-ns=\"{}\" data-rq=\"{}\" data-level=\"{}\" data-disagree=\"{}\" data-breaks=\"{}\"><td title=\"{}\"><code>{}</code></td><td>{}</td>",
        esc(&row.namespace),
        esc(&row.requirement),
        esc(&row.level),
        u8::from(row.disagree),
        u8::from(row.any_breaks),
        esc(&row.title),
        esc(&row.vector_id),
        esc(row.class.as_deref().unwrap_or("-"))
    );
    for (c, cell) in m.columns.iter().zip(&row.cells) {
        let v = cell.verdict.map_or("absent", |v| v.as_str());
        let text = if v == "absent" { "–" } else { short(v) };
        let title = if cell.reason.is_empty() {
            v.to_owned()
        } else {
            format!("{v}: {}", cell.reason)
        };
        match (&c.page, cell.verdict) {
            (Some(p), Some(_)) => {
                let _ = write!(
                    s,
                    "<td class=\"c {v}\" data-verdict=\"{v}\" title=\"{}\"><a href=\"{}#v-{}\">{text}</a></td>",
                    esc(&title),
                    esc(p),
                    esc(&row.vector_id)
                );
            }
            _ => {
                let _ = write!(
                    s,
                    "<td class=\"c {v}\" data-verdict=\"{v}\" title=\"{}\">{text}</td>",
                    esc(&title)
                );
            }
        }
    }
    s.push_str("</tr>\n");
}
