//! `report.html`: one self-contained page (inline CSS and script, no network): class badges
//! C0-C5, counts, filters, a coverage matrix of requirements × verdicts grouped by document
//! and section, and every vector with its transcript rendered on demand. The script also
//! recounts the rows it sees and writes the counts into `#check`, which the browser check
//! (`scripts/check-html-report.sh`) compares with the counts rendered here.

use super::shared::{RUN_BEGIN, RUN_END};
use super::summary::Summary;
use crate::report::analysis::classes::ClassStatus;
use crate::report::analysis::requirements::{ReqVerdict, RequirementVerdict};
use crate::report::model::Report;
use crate::report::result::Verdict;
use std::collections::BTreeMap;
use std::fmt::Write;

/// HTML-escapes text for element content and double-quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// JSON safe inside a `<script>` element: `<` is escaped so no `</script>` or `<!--` can
/// end or confuse the element.
fn script_json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
th{background:#f3f3f3;text-align:left}.num{text-align:right}
.badge{display:inline-block;padding:3px 10px;margin:2px;border-radius:10px;font-weight:bold;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}.warn{background:#ef6c00}.incomplete{background:#757575}
.unclaimable{background:#424242}.not-applicable,.not-run{background:#9e9e9e}.not-testable{background:#6d4c41}
.uncovered{background:#ad1457}
td.v{text-align:center;width:2.2em;color:#fff}td.v.off{background:none}
tr.doc th{background:#dde7f3}tr.sec td{background:#f7f7f7;font-style:italic}
.claim{font-size:1.2em;margin:.4em 0}.muted{color:#666}
pre{background:#f7f7f7;padding:6px;overflow:auto;max-height:30em;margin:0}
#filters label{margin-right:.8em}button{font-size:12px}
#matrix{width:100%;table-layout:fixed}#matrix th.v{font-size:11px;overflow-wrap:break-word}
#matrix td.id{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#matrix td.vecs{font-size:12px;overflow-wrap:anywhere}
#vectors{width:100%;table-layout:fixed}#vectors td{overflow-wrap:anywhere}#vectors td.why{font-size:12px;color:#555}
"#;

const SCRIPT: &str = r#"
(function(){
  var check=document.getElementById('check');
  window.addEventListener('error',function(e){check.setAttribute('data-errors',(parseInt(check.getAttribute('data-errors')||'0',10)+1).toString());check.setAttribute('data-last-error',String(e.message));});
  var data=JSON.parse(document.getElementById('report-data').textContent);
  var runEl=document.getElementById('run-data');
  var runData=runEl?JSON.parse(runEl.textContent):{transcripts:{}};
  function count(sel){var m={};document.querySelectorAll(sel).forEach(function(tr){var v=tr.getAttribute('data-verdict');m[v]=(m[v]||0)+1;});return m;}
  var reqCounts=count('#matrix tr.req'),vecCounts=count('#vectors tr.vec');
  function put(prefix,m){Object.keys(m).forEach(function(k){check.setAttribute('data-js-'+prefix+'-'+k,String(m[k]));});}
  put('req',reqCounts);put('vec',vecCounts);
  check.setAttribute('data-js-req-total',String(document.querySelectorAll('#matrix tr.req').length));
  check.setAttribute('data-js-vec-total',String(document.querySelectorAll('#vectors tr.vec').length));
  function checked(name){var s={};document.querySelectorAll('input[name='+name+']').forEach(function(i){if(i.checked){s[i.value]=true;}});return s;}
  function apply(){
    var rv=checked('rv'),vv=checked('vv'),lv=document.getElementById('f-level').value,dv=document.getElementById('f-doc').value,q=document.getElementById('f-text').value.toLowerCase();
    var shown=0,visible={};
    document.querySelectorAll('#matrix tr.req').forEach(function(tr){
      var ok=rv[tr.getAttribute('data-verdict')]&&(!lv||tr.getAttribute('data-level')===lv)&&(!dv||tr.getAttribute('data-doc')===dv)&&(!q||tr.textContent.toLowerCase().indexOf(q)>=0);
      tr.hidden=!ok;if(ok){shown++;visible[tr.getAttribute('data-group')]=true;visible[tr.getAttribute('data-doc')+'\u00a7']=true;}
    });
    document.querySelectorAll('#matrix tr.sec,#matrix tr.doc').forEach(function(tr){tr.hidden=!visible[tr.getAttribute('data-key')];});
    var vshown=0;
    document.querySelectorAll('#vectors tr.vec').forEach(function(tr){
      var ok=vv[tr.getAttribute('data-verdict')]&&(!q||tr.textContent.toLowerCase().indexOf(q)>=0);
      tr.hidden=!ok;var t=document.getElementById('t-'+tr.id);if(t&&!ok){t.hidden=true;}if(ok){vshown++;}
    });
    document.getElementById('shown').textContent=shown+' of '+document.querySelectorAll('#matrix tr.req').length+' requirements, '+vshown+' of '+document.querySelectorAll('#vectors tr.vec').length+' vectors shown';
    check.setAttribute('data-js-req-shown',String(shown));check.setAttribute('data-js-vec-shown',String(vshown));
  }
  document.querySelectorAll('#filters input,#filters select').forEach(function(el){el.addEventListener('input',apply);el.addEventListener('change',apply);});
  function text(s){return document.createTextNode(s);}
  document.getElementById('vectors').addEventListener('click',function(ev){
    var b=ev.target.closest('button[data-vector]');if(!b){return;}
    var id=b.getAttribute('data-vector'),row=document.getElementById('t-v-'+id);
    if(row){row.hidden=!row.hidden;return;}
    var d=data.vectors[id]||{},t=runData.transcripts[id]||d.transcript||[];
    var tr=document.createElement('tr');tr.id='t-v-'+id;var td=document.createElement('td');td.colSpan=8;
    var pre=document.createElement('pre');
    var lines=['expected: '+(d.expected||''),'observed: '+(d.observed||'')];
    if(d.detail){lines.push('detail:   '+d.detail);}
    lines.push('');
    t.forEach(function(e){lines.push((e.dir==='sent'?'\u2192':e.dir==='received'?'\u2190':'\u00b7')+' +'+e.t_ms+'ms '+e.data);});
    if(!t.length){lines.push('(no transcript)');}
    pre.appendChild(text(lines.join('\n')));td.appendChild(pre);tr.appendChild(td);
    b.closest('tr').after(tr);
  });
  apply();
  // A link to `report.html#v-<id>` (the interop matrix's cells) opens that vector's transcript.
  if(location.hash.indexOf('#v-')===0){
    var vr=document.getElementById(location.hash.slice(1)),vb=vr&&vr.querySelector('button[data-vector]');
    if(vb){vb.click();vr.scrollIntoView();}
  }
  // With #selftest in the URL the page exercises itself for the browser check: a filter
  // must show exactly the rows of one verdict, and a vector's transcript must render.
  if(location.hash==='#selftest'){
    var boxes=document.querySelectorAll('input[name=rv]'),want=reqCounts.pass||0;
    boxes.forEach(function(i){i.checked=(i.value==='pass');});apply();
    check.setAttribute('data-js-filter',check.getAttribute('data-js-req-shown')===String(want)?'ok':'shown '+check.getAttribute('data-js-req-shown')+' want '+want);
    boxes.forEach(function(i){i.checked=true;});apply();
    var b=document.querySelector('#vectors button[data-vector]');
    if(b){b.click();var row=document.getElementById('t-v-'+b.getAttribute('data-vector'));
      check.setAttribute('data-js-transcript',row&&row.querySelector('pre')&&row.textContent.indexOf('expected: ')>=0?'ok':'missing');}
  }
  check.setAttribute('data-status','ok');
})();
"#;

/// Renders the page.
pub fn render(rep: &Report) -> String {
    let mut s = String::with_capacity(64 * 1024 + rep.results.len() * 1024);
    let sum = Summary::of(rep);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&sum.title),
        esc(&sum.title)
    );
    let _ = writeln!(
        s,
        "<p>SUT <b>{}</b> · harness {}{}</p>",
        esc(sum.reported),
        esc(sum.harness),
        sum.qualifiers
    );
    if let Some(d) = sum.digests {
        let _ = writeln!(
            s,
            "<p class=\"muted\">manifest sha256 <code>{}</code> · vector set sha256 <code>{}</code></p>",
            esc(&d.sut_manifest_sha256),
            esc(&d.vector_set_sha256)
        );
    }
    let _ = writeln!(
        s,
        "{RUN_BEGIN}\n<p class=\"muted\" id=\"run\">Run {} · {} ms · commit <code>{}</code> · <code>{}</code>{}</p>\n{RUN_END}",
        esc(&sum.run.timestamp_utc),
        sum.run.duration_ms,
        esc(&sum.run.runner_git_sha),
        esc(&sum.run.command.join(" ")),
        if sum.run.interrupted {
            " · <b>interrupted: partial results</b>"
        } else {
            ""
        }
    );
    if let Some(why) = &sum.run.stopped_early {
        let _ = writeln!(
            s,
            "{RUN_BEGIN}\n<p id=\"stopped\"><b>Stopped early</b>: {}</p>\n{RUN_END}",
            esc(why)
        );
    }
    let _ = writeln!(
        s,
        "<p class=\"claim\">Run <b class=\"badge {}\">{}</b> · Claim: <b id=\"claim\">{}</b></p>",
        if sum.passed_run { "pass" } else { "fail" },
        sum.verdict(),
        esc(&sum.claim)
    );
    if !sum.untested.is_empty() {
        s.push_str("<div id=\"untested\"><p><b>Required vectors not tested</b> (no class that needs them can be claimed):</p>\n<ul>\n");
        for u in &sum.untested {
            let _ = writeln!(s, "<li>{}</li>", esc(u));
        }
        s.push_str("</ul></div>\n");
    }
    for line in &sum.classes {
        let _ = writeln!(s, "<p class=\"muted class-line\">{}</p>", esc(line));
    }
    classes(&mut s, rep);
    profiles(&mut s, rep);
    counts(&mut s, rep);
    incidental(&mut s, rep);
    published(&mut s, rep);
    filters(&mut s, rep);
    matrix(&mut s, rep);
    vectors(&mut s, rep);
    data(&mut s, rep);
    let _ = write!(s, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    s
}

fn classes(s: &mut String, rep: &Report) {
    if rep.classes.is_empty() {
        return;
    }
    s.push_str("<h2>Conformance classes</h2>\n<div id=\"classes\">");
    for c in &rep.classes {
        let _ = write!(
            s,
            "<span class=\"badge {}\" data-class=\"{}\" data-status=\"{}\" title=\"{}: {}\">{} {}</span>",
            c.status.as_str(),
            c.class.as_str(),
            c.status.as_str(),
            esc(&c.title),
            esc(&c.reason),
            c.class.as_str(),
            match c.status {
                ClassStatus::Pass => "✓",
                ClassStatus::Fail => "✗",
                ClassStatus::Incomplete => "…",
                ClassStatus::Unclaimable => "—",
            }
        );
    }
    s.push_str("</div>\n<table>\n<tr><th>class</th><th>status</th><th>why</th></tr>\n");
    for c in &rep.classes {
        let _ = writeln!(
            s,
            "<tr><td>{} {}</td><td>{}</td><td>{}</td></tr>",
            c.class.as_str(),
            esc(&c.title),
            c.status.as_str(),
            esc(&c.reason)
        );
    }
    s.push_str("</table>\n");
}

/// The profile claims beside the classes: each profile on top of C0, and the headline.
fn profiles(s: &mut String, rep: &Report) {
    if rep.profiles.is_empty() {
        return;
    }
    s.push_str("<h2>Profile claims</h2>\n<p class=\"muted\">Each profile on top of the baseline class C0, its namespace judged by the class rules.</p>\n<table id=\"profiles\">\n<tr><th>profile</th><th>status</th><th>why</th></tr>\n");
    for p in &rep.profiles {
        let _ = writeln!(
            s,
            "<tr data-profile=\"{}\" data-status=\"{}\"><td>{} {}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.profile),
            p.status.as_str(),
            esc(&p.profile),
            esc(&p.title),
            p.status.as_str(),
            esc(p.claim.as_deref().unwrap_or(&p.reason))
        );
    }
    s.push_str("</table>\n");
    if let Some(h) = &rep.headline_claim {
        let _ = writeln!(
            s,
            "<p id=\"headline-claim\">Headline claim: <b>{}</b></p>",
            esc(h)
        );
    }
}

/// The published-set section: the agreement figure and every departure with its ruling.
/// Defects seen in passing, once per run each, and the steps a close left unrun.
fn incidental(s: &mut String, rep: &Report) {
    if rep.steps_not_run > 0 {
        let _ = writeln!(
            s,
            "<p id=\"steps-not-run\">{} step(s) of executed vectors did not run: a close ended their vector first.</p>",
            rep.steps_not_run
        );
    }
    if rep.incidental.is_empty() {
        return;
    }
    s.push_str("<h2>Seen in passing</h2>\n<p class=\"muted\">Defects seen while running vectors about something else; each counts once, under its own requirement.</p>\n<table id=\"incidental\">\n<tr><th>requirement</th><th>what</th><th>seen in</th></tr>\n");
    for i in &rep.incidental {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&i.requirement),
            esc(&i.detail),
            esc(&i.vectors.join(", "))
        );
    }
    s.push_str("</table>\n");
}

fn published(s: &mut String, rep: &Report) {
    let Some(p) = &rep.published else {
        return;
    };
    let _ = writeln!(
        s,
        "<h2>Published fixtures</h2>\n<p id=\"published-headline\">{}</p>",
        esc(&p.headline())
    );
    if !p.process_checks.is_empty() {
        s.push_str("<ul id=\"published-process\">\n");
        for c in &p.process_checks {
            let _ = writeln!(
                s,
                "<li><code>{}</code>: a process check, not testable at runtime; review its evidence, <code>{}</code></li>",
                esc(&c.vector_id),
                esc(&c.evidence)
            );
        }
        s.push_str("</ul>\n");
    }
    if p.disagreements.is_empty() {
        return;
    }
    s.push_str("<table id=\"published\">\n<tr><th>fixture</th><th>published</th><th>this SUT</th><th>meets it</th><th>ruling</th><th>clause</th><th>SI</th></tr>\n");
    for d in &p.disagreements {
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.vector_id),
            esc(&d.published),
            esc(&d.observed),
            match d.sut_agrees {
                Some(true) => "yes",
                Some(false) => "no",
                None => "not run",
            },
            d.ruling.as_deref().map_or_else(|| "<b>unruled</b>".to_owned(), esc),
            esc(d.clause.as_deref().unwrap_or("")),
            esc(d.si.as_deref().unwrap_or(""))
        );
    }
    s.push_str("</table>\n");
}

fn counts(s: &mut String, rep: &Report) {
    s.push_str("<h2>Counts</h2>\n<table id=\"counts\">\n<tr><th>requirements</th><th></th></tr>\n");
    let totals = crate::report::analysis::requirements::totals(&rep.requirements);
    for (v, n) in &totals {
        let _ = writeln!(
            s,
            "<tr><td>{0}</td><td class=\"num\" id=\"req-{0}\" data-count=\"{1}\">{1}</td></tr>",
            v.as_str(),
            n
        );
    }
    s.push_str("<tr><th>vectors</th><th></th></tr>\n");
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rep.results {
        *by.entry(r.verdict.as_str()).or_default() += 1;
    }
    for n in &rep.not_applicable {
        *by.entry(n.verdict.as_str()).or_default() += 1;
    }
    for (v, n) in &by {
        let _ = writeln!(
            s,
            "<tr><td>{0}</td><td class=\"num\" id=\"vec-{0}\" data-count=\"{1}\">{1}</td></tr>",
            v, n
        );
    }
    s.push_str("</table>\n");
    if !rep.requirement_counts.is_empty() {
        s.push_str("<table id=\"by-level\">\n<tr><th>level</th>");
        for v in ReqVerdict::ALL {
            let _ = write!(s, "<th>{}</th>", v.as_str());
        }
        s.push_str("</tr>\n");
        for (level, m) in &rep.requirement_counts {
            let _ = write!(s, "<tr><td>{}</td>", esc(level));
            for v in ReqVerdict::ALL {
                let _ = write!(
                    s,
                    "<td class=\"num\">{}</td>",
                    m.get(v.as_str()).copied().unwrap_or(0)
                );
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
    if let Some(b) = &rep.baseline {
        let _ = writeln!(
            s,
            "<p>Baseline: {} expected failure(s) as expected, {} deviation(s).</p>",
            b.expected_failures,
            b.deviations.len()
        );
        if !b.deviations.is_empty() {
            s.push_str("<ul>");
            for d in &b.deviations {
                let _ = write!(
                    s,
                    "<li><code>{}</code> {}: expected {}, got {}</li>",
                    esc(&d.vector_id),
                    d.kind.as_str(),
                    esc(&d.expected),
                    esc(&d.got)
                );
            }
            s.push_str("</ul>\n");
        }
    }
    let total_reqs = rep.requirements.len();
    let total_vecs = rep.results.len() + rep.not_applicable.len();
    let _ = writeln!(
        s,
        "<div id=\"check\" hidden data-status=\"script-not-run\" data-req-total=\"{total_reqs}\" data-vec-total=\"{total_vecs}\"{}{}></div>",
        totals
            .iter()
            .map(|(v, n)| format!(" data-req-{}=\"{n}\"", v.as_str()))
            .collect::<String>(),
        by.iter()
            .map(|(v, n)| format!(" data-vec-{v}=\"{n}\""))
            .collect::<String>()
    );
}

fn filters(s: &mut String, rep: &Report) {
    s.push_str("<h2>Filters</h2>\n<div id=\"filters\">\n<div>Requirements: ");
    for v in ReqVerdict::ALL {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" name=\"rv\" value=\"{0}\" checked> {0}</label>",
            v.as_str()
        );
    }
    s.push_str("</div>\n<div>Vectors: ");
    let mut vs: Vec<Verdict> = rep.results.iter().map(|r| r.verdict).collect();
    vs.extend(rep.not_applicable.iter().map(|n| n.verdict));
    vs.sort();
    vs.dedup();
    for v in vs {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" name=\"vv\" value=\"{0}\" checked> {0}</label>",
            v.as_str()
        );
    }
    s.push_str("</div>\n<div><label>level <select id=\"f-level\"><option value=\"\">all</option>");
    let mut levels: Vec<&str> = rep.requirements.iter().map(|r| r.level.as_str()).collect();
    levels.sort();
    levels.dedup();
    for l in levels {
        let _ = write!(s, "<option>{}</option>", esc(l));
    }
    s.push_str(
        "</select></label><label>document <select id=\"f-doc\"><option value=\"\">all</option>",
    );
    let mut docs: Vec<&str> = rep
        .requirements
        .iter()
        .map(|r| r.document.as_str())
        .collect();
    docs.dedup();
    for d in docs {
        let _ = write!(s, "<option>{}</option>", esc(d));
    }
    s.push_str("</select></label><label>text <input id=\"f-text\" type=\"search\" placeholder=\"id, summary, vector\"></label></div>\n<p id=\"shown\" class=\"muted\"></p>\n</div>\n");
}

fn matrix(s: &mut String, rep: &Report) {
    // Fixed widths: the vector lists get what is left, so ids never wrap letter by letter.
    s.push_str("<h2>Coverage matrix: requirements × verdicts</h2>\n<table id=\"matrix\">\n<colgroup><col style=\"width:8.5em\"><col style=\"width:5.5em\"><col style=\"width:3.5em\">");
    for _ in ReqVerdict::ALL {
        s.push_str("<col style=\"width:3.6em\">");
    }
    s.push_str("<col style=\"width:24%\"><col></colgroup>\n<thead><tr><th>requirement</th><th>level</th><th>§</th>");
    for v in ReqVerdict::ALL {
        let _ = write!(s, "<th class=\"v\">{}</th>", v.as_str());
    }
    s.push_str("<th>summary</th><th>vectors</th></tr></thead>\n<tbody>\n");
    let cols = 5 + ReqVerdict::ALL.len();
    let mut doc = "";
    let mut sec = "";
    for (i, r) in rep.requirements.iter().enumerate() {
        if r.document != doc {
            doc = &r.document;
            sec = "";
            let n = rep.requirements[i..]
                .iter()
                .take_while(|x| x.document == r.document)
                .collect::<Vec<_>>();
            let _ = writeln!(
                s,
                "<tr class=\"doc\" data-key=\"{0}§\"><th colspan=\"{cols}\">{0} <span class=\"muted\">({1} requirements: {2})</span></th></tr>",
                esc(doc),
                n.len(),
                esc(&group_counts(&n))
            );
        }
        if r.section != sec {
            sec = &r.section;
            let _ = writeln!(
                s,
                "<tr class=\"sec\" data-key=\"{}§{}|\"><td colspan=\"{cols}\">§{}</td></tr>",
                esc(doc),
                esc(sec),
                esc(sec)
            );
        }
        requirement_row(s, r);
    }
    s.push_str("</tbody>\n</table>\n");
}

fn group_counts(rs: &[&RequirementVerdict]) -> String {
    ReqVerdict::ALL
        .iter()
        .filter_map(|v| {
            let n = rs.iter().filter(|r| r.verdict == *v).count();
            (n > 0).then(|| format!("{n} {}", v.as_str()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn requirement_row(s: &mut String, r: &RequirementVerdict) {
    let _ = write!(
        s,
        "<tr class=\"req\" id=\"r-{}\" data-verdict=\"{}\" data-level=\"{}\" data-doc=\"{}\" data-group=\"{}§{}|\"><td class=\"id\"><code>{}</code></td><td>{}</td><td class=\"sec\">{}</td>",
        esc(&r.id),
        r.verdict.as_str(),
        esc(&r.level),
        esc(&r.document),
        esc(&r.document),
        esc(&r.section),
        esc(&r.id),
        esc(&r.level),
        esc(&r.section)
    );
    for v in ReqVerdict::ALL {
        if v == r.verdict {
            let _ = write!(
                s,
                "<td class=\"v {}\" title=\"{}\">●</td>",
                v.as_str(),
                esc(r.reason.as_deref().unwrap_or(v.as_str()))
            );
        } else {
            s.push_str("<td class=\"v off\"></td>");
        }
    }
    let _ = write!(
        s,
        "<td class=\"sum\">{}</td><td class=\"vecs\">",
        esc(&r.summary)
    );
    for (i, v) in r.vectors.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "<a href=\"#v-{0}\">{0}</a>", esc(v));
    }
    s.push_str("</td></tr>\n");
}

fn vectors(s: &mut String, rep: &Report) {
    s.push_str("<h2>Vectors</h2>\n<table id=\"vectors\">\n<colgroup><col style=\"width:24em\"><col style=\"width:22%\"><col style=\"width:6.5em\"><col style=\"width:7em\"><col style=\"width:7em\"><col style=\"width:10em\"><col><col style=\"width:7em\"></colgroup>\n<thead><tr><th>vector</th><th>title</th><th>namespace</th><th>method</th><th>verdict</th><th>requirements</th><th>why</th><th>transcript</th></tr></thead>\n<tbody>\n");
    for r in rep.all_results() {
        // Why a vector did not pass, or does not apply, reads without a click.
        let why = match r.verdict {
            Verdict::Pass => "",
            _ => r.detail.as_deref().unwrap_or(""),
        };
        let _ = writeln!(
            s,
            "<tr class=\"vec\" id=\"v-{0}\" data-verdict=\"{1}\"><td class=\"id\"><code>{0}</code></td><td>{2}</td><td>{3}</td><td>{4}</td><td class=\"{5}\">{1}</td><td>{6}</td><td class=\"why\">{7}</td><td><button type=\"button\" data-vector=\"{0}\">show</button></td></tr>",
            esc(&r.vector_id),
            r.verdict.as_str(),
            esc(&r.title),
            esc(&r.namespace),
            r.method.map_or("", |m| m.as_str()),
            match r.verdict {
                Verdict::Pass => "pass",
                v if v.is_failure() => "fail",
                _ => "",
            },
            esc(&r.requirements.join(", ")),
            esc(why)
        );
    }
    s.push_str("</tbody>\n</table>\n");
}

#[derive(serde::Serialize)]
struct VectorData<'a> {
    expected: &'a str,
    observed: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    transcript: &'a [crate::report::result::TranscriptEntry],
}

fn data(s: &mut String, rep: &Report) {
    let mut vectors: BTreeMap<&str, VectorData> = BTreeMap::new();
    for r in &rep.results {
        vectors.insert(
            &r.vector_id,
            VectorData {
                expected: &r.expected,
                observed: &r.observed,
                detail: r.detail.as_deref(),
                transcript: &r.transcript,
            },
        );
    }
    for n in &rep.not_applicable {
        vectors.insert(
            &n.vector_id,
            VectorData {
                expected: "",
                observed: "",
                detail: Some(&n.detail),
                transcript: &[],
            },
        );
    }
    let _ = writeln!(
        s,
        "<script type=\"application/json\" id=\"report-data\">{}</script>",
        script_json(&serde_json::json!({ "vectors": vectors }))
    );
    let _ = writeln!(
        s,
        "{RUN_BEGIN}\n<script type=\"application/json\" id=\"run-data\">{}</script>\n{RUN_END}",
        script_json(&serde_json::json!({ "transcripts": rep.run.transcripts }))
    );
}
