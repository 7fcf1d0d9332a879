//! The shape of `harness/src`, measured from its own text: no source file over 700 lines
//! outside its tests, no import cycle over five files, and the published-set front-end
//! imported only by the catalog loader and its own report analysis.
//!
//! The graph is built the way `cargo modules dependencies --no-externs` would draw it, but
//! without a toolchain plug-in, so CI needs nothing beyond cargo: every file is a module;
//! an edge A → B exists when A's code (comments and string literals stripped, `#[cfg(test)]`
//! items removed) names a path that resolves into B: `crate::…`, `super::…`, `self::…`,
//! a child module's name, or a `use` tree that expands to one of those. `mod b;` alone is
//! ownership, not use, and is not an edge. Run with `--nocapture` to print the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest file allowed, counted without its `#[cfg(test)]` items.
const MAX_LINES: usize = 700;
/// Largest strongly connected set of files allowed.
const MAX_CYCLE: usize = 5;

#[test]
fn no_source_file_is_over_700_lines_outside_tests() {
    let crate_ = Crate::read();
    let mut over: Vec<(usize, &str)> = crate_
        .files
        .values()
        .filter(|f| f.code_lines > MAX_LINES)
        .map(|f| (f.code_lines, f.rel.as_str()))
        .collect();
    over.sort_unstable_by(|a, b| b.cmp(a));
    let mut largest: Vec<(usize, &str)> = crate_
        .files
        .values()
        .map(|f| (f.code_lines, f.rel.as_str()))
        .collect();
    largest.sort_unstable_by(|a, b| b.cmp(a));
    println!("largest files (lines outside tests):");
    for (n, f) in largest.iter().take(10) {
        println!("  {n:5} {f}");
    }
    assert!(
        over.is_empty(),
        "{} file(s) under harness/src are over {MAX_LINES} lines outside their tests: {over:?}",
        over.len()
    );
}

#[test]
fn the_largest_import_cycle_is_at_most_five_files() {
    let crate_ = Crate::read();
    let graph = crate_.graph();
    let sccs = strongly_connected(&graph);
    let mut cycles: Vec<&Vec<String>> = sccs.iter().filter(|s| s.len() > 1).collect();
    cycles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    println!(
        "{} files, {edges} use edges, {} cycles",
        graph.len(),
        cycles.len()
    );
    for c in &cycles {
        println!("  cycle of {}: {}", c.len(), c.join(", "));
    }
    if std::env::var_os("SWP_ARCH_EDGES").is_some() {
        for c in &cycles {
            let members: BTreeSet<&String> = c.iter().collect();
            for from in c.iter() {
                for to in graph[from].iter().filter(|t| members.contains(t)) {
                    println!("    edge {from} -> {to}");
                }
            }
        }
    }
    let too_big: Vec<&&Vec<String>> = cycles.iter().filter(|c| c.len() > MAX_CYCLE).collect();
    assert!(
        too_big.is_empty(),
        "import cycles over {MAX_CYCLE} files in harness/src: {}",
        too_big
            .iter()
            .map(|c| format!("[{} files: {}]", c.len(), c.join(", ")))
            .collect::<Vec<_>>()
            .join(" ")
    );
}

#[test]
fn published_is_imported_only_by_the_catalog_loader_and_its_report_analysis() {
    let crate_ = Crate::read();
    let graph = crate_.graph();
    let allowed = |from: &str| {
        from.starts_with("published/")
            || from == "catalog/load.rs"
            || from == "report/analysis/published.rs"
            || from == "lib.rs"
    };
    let users: Vec<&String> = graph
        .iter()
        .filter(|(from, to)| !allowed(from) && to.iter().any(|t| t.starts_with("published/")))
        .map(|(from, _)| from)
        .collect();
    assert!(
        users.is_empty(),
        "the published-set front-end is imported by the engine: {users:?}"
    );
}

/// One source file.
struct File {
    /// Path relative to `harness/src`, with `/`.
    rel: String,
    /// Its module path (`["method", "session", "conv"]`).
    module: Vec<String>,
    /// Code with comments, literals and test items blanked.
    code: String,
    /// Lines outside `#[cfg(test)]` items.
    code_lines: usize,
    /// Child modules it declares (`mod x;`).
    children: BTreeSet<String>,
}

/// The library crate's files (not `main.rs`, a separate crate that sees only the facade).
struct Crate {
    files: BTreeMap<String, File>,
    /// Module path → file.
    by_module: BTreeMap<Vec<String>, String>,
}

impl Crate {
    fn read() -> Crate {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        walk(&root, &mut paths);
        let mut files = BTreeMap::new();
        let mut test_only = BTreeSet::new();
        for path in &paths {
            let rel = path
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "main.rs" {
                continue;
            }
            let text = std::fs::read_to_string(path).expect("readable source");
            let (code, code_lines, test_mods) = strip(&text);
            let module = module_of(&rel);
            for m in test_mods {
                let mut child = module.clone();
                child.push(m);
                test_only.insert(child);
            }
            let children = declared_children(&code);
            files.insert(
                rel.clone(),
                File {
                    rel,
                    module,
                    code,
                    code_lines,
                    children,
                },
            );
        }
        // Files declared only under `#[cfg(test)]` (`mod tests;`) are tests.
        files.retain(|_, f| !test_only.contains(&f.module));
        let by_module = files
            .values()
            .map(|f| (f.module.clone(), f.rel.clone()))
            .collect();
        Crate { files, by_module }
    }

    /// File → files it uses.
    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph = BTreeMap::new();
        for f in self.files.values() {
            let mut to = BTreeSet::new();
            for path in paths_named(&f.code) {
                if let Some(target) = self.resolve(f, &path) {
                    if target != f.rel {
                        to.insert(target);
                    }
                }
            }
            graph.insert(f.rel.clone(), to);
        }
        graph
    }

    /// The file a path names, from file `f`.
    fn resolve(&self, f: &File, path: &[String]) -> Option<String> {
        let (mut base, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (f.module.clone(), &path[1..]),
            "super" => {
                let mut base = f.module.clone();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            first if f.children.contains(first) => (f.module.clone(), path),
            _ => return None,
        };
        let mut found = self.by_module.get(&base).cloned();
        for seg in rest {
            base.push(seg.clone());
            match self.by_module.get(&base) {
                Some(file) => found = Some(file.clone()),
                None => break,
            }
        }
        found
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_of(rel: &str) -> Vec<String> {
    let trimmed = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn declared_children(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            if let Some(name) = rest.trim().strip_suffix(';') {
                out.insert(name.trim().to_owned());
            }
        }
    }
    out
}

/// Blanks comments and literals (keeping line breaks), removes `#[cfg(test)]` items, and
/// counts the lines that remain. Returns the code, its line count and the names of test
/// modules declared as files (`#[cfg(test)] mod tests;`).
fn strip(text: &str) -> (String, usize, Vec<String>) {
    let blanked = blank(text);
    let bytes = blanked.as_bytes();
    let mut keep = vec![true; bytes.len()];
    let mut test_mods = Vec::new();
    let mut search = 0;
    while let Some(at) = blanked[search..].find("#[cfg(test)]") {
        let start = search + at;
        let after = start + "#[cfg(test)]".len();
        // The item runs to its `;` or to the brace that closes its first `{`.
        let mut i = after;
        let mut depth = 0usize;
        let mut end = bytes.len();
        while i < bytes.len() {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    let item = blanked[after..i].trim();
                    if let Some(name) = item.strip_prefix("mod ") {
                        test_mods.push(name.trim().to_owned());
                    }
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        for k in keep.iter_mut().take(end).skip(start) {
            *k = false;
        }
        search = end;
    }
    let mut code = String::with_capacity(blanked.len());
    let mut lines = 0;
    let mut line_has_kept = false;
    for (i, ch) in blanked.char_indices() {
        if ch == '\n' {
            if line_has_kept {
                lines += 1;
            }
            line_has_kept = false;
            code.push('\n');
        } else if keep[i] {
            line_has_kept = true;
            code.push(ch);
        } else {
            code.push(' ');
        }
    }
    if line_has_kept {
        lines += 1;
    }
    (code, lines, test_mods)
}

/// Replaces comments and string/char literals by spaces, keeping newlines, so that the
/// braces and paths that remain are code. Lines that held only a comment stay (as blank
/// lines are counted too: a file's length is what a reader scrolls).
fn blank(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let put_blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    put_blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && !ident_before(&chars, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &chars[i..j.min(chars.len())] {
                put_blank(&mut out, ch);
            }
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            for &ch in &chars[i..(j + 1).min(chars.len())] {
                put_blank(&mut out, ch);
            }
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F}') or a lifetime ('a).
            let close = if next == Some('\\') {
                (i + 2..chars.len()).find(|&k| chars[k] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(k) => {
                    for _ in i..=k {
                        out.push(' ');
                    }
                    i = k + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Every module path the code names: expanded `use` trees, and `a::b::c` paths in
/// expressions and types.
fn paths_named(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // `use` trees, expanded.
    let mut rest = code;
    while let Some(at) = find_keyword(rest, "use") {
        let tail = &rest[at + 3..];
        let end = tail.find(';').unwrap_or(tail.len());
        expand_use(&tail[..end], &[], &mut out);
        rest = &tail[end..];
    }
    // Paths anywhere: a run of `ident::ident::…`.
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident_start(chars[i])
            && (i == 0 || !is_ident(chars[i - 1]) && !colon_before(&chars, i))
        {
            let mut segs = Vec::new();
            let mut j = i;
            loop {
                let s = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                segs.push(chars[s..j].iter().collect::<String>());
                if chars.get(j) == Some(&':')
                    && chars.get(j + 1) == Some(&':')
                    && chars.get(j + 2).is_some_and(|c| is_ident_start(*c))
                {
                    j += 2;
                } else {
                    break;
                }
            }
            if segs.len() > 1 {
                out.push(segs);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

fn colon_before(chars: &[char], i: usize) -> bool {
    i >= 2 && chars[i - 1] == ':' && chars[i - 2] == ':'
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn find_keyword(s: &str, kw: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = s[from..].find(kw) {
        let i = from + at;
        let before = s[..i].chars().next_back();
        let after = s[i + kw.len()..].chars().next();
        if before.is_none_or(|c| !is_ident(c)) && after.is_some_and(char::is_whitespace) {
            return Some(i);
        }
        from = i + kw.len();
    }
    None
}

/// Expands a use tree (`a::{b, c::{d, e}}`, `a::*`, `a as b`) into full paths.
fn expand_use(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let mut path = prefix.to_vec();
        path.extend(segments(head));
        let inner = tree[open + 1..].trim_end();
        let inner = inner.strip_suffix('}').unwrap_or(inner);
        for part in split_top(inner) {
            expand_use(part, &path, out);
        }
        if !path.is_empty() {
            out.push(path);
        }
    } else {
        let mut path = prefix.to_vec();
        let plain = tree.split(" as ").next().unwrap_or(tree);
        path.extend(segments(plain));
        if !path.is_empty() {
            out.push(path);
        }
    }
}

fn segments(s: &str) -> Vec<String> {
    s.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(str::to_owned)
        .collect()
}

fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Tarjan's strongly connected components, iterative-free for clarity (the graph is small).
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on_stack: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}
