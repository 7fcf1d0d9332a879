//! RFC 6570 URI Template expansion, levels 1 to 3 (simple, reserved, fragment, label, path,
//! path-parameter, query and query-continuation expressions, each with one or more
//! variables), for the resource templates a server lists. Prefix (`:n`) and explode (`*`)
//! modifiers are level 4 and are refused rather than guessed: a vector that cannot expand a
//! template says so instead of reading a URI the server never meant.

use std::collections::BTreeMap;

/// Why a template could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// A `{` without its `}`.
    #[error("an expression is not closed: {0}")]
    Unclosed(String),
    /// A level-4 modifier or an operator RFC 6570 reserves.
    #[error("the expression {{{0}}} uses a modifier or operator beyond RFC 6570 level 3")]
    Unsupported(String),
    /// A variable without a value.
    #[error("no value for the variable {0}")]
    Missing(String),
}

/// `template` with every expression expanded from `values`.
pub fn expand(template: &str, values: &BTreeMap<String, String>) -> Result<String, ExpandError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(ExpandError::Unclosed(template.to_owned()));
        };
        out.push_str(&expression(&after[..close], values)?);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The names of the variables `template` uses, in order.
pub fn variables(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in template.split('{').skip(1) {
        let Some(expr) = part.split('}').next() else {
            continue;
        };
        let body = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for v in body.split(',') {
            let name = v
                .trim_end_matches('*')
                .split(':')
                .next()
                .unwrap_or_default();
            if !name.is_empty() && !out.iter().any(|x| x == name) {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// One expression (the text between the braces).
fn expression(expr: &str, values: &BTreeMap<String, String>) -> Result<String, ExpandError> {
    let (op, body) = match expr.chars().next() {
        Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &expr[1..]),
        Some('=' | ',' | '!' | '@' | '|') => return Err(ExpandError::Unsupported(expr.into())),
        _ => (None, expr),
    };
    // first, separator, named, if-empty, allow reserved
    let (first, sep, named, ifemp, reserved) = match op {
        None => ("", ",", false, "", false),
        Some('+') => ("", ",", false, "", true),
        Some('#') => ("#", ",", false, "", true),
        Some('.') => (".", ".", false, "", false),
        Some('/') => ("/", "/", false, "", false),
        Some(';') => (";", ";", true, "", false),
        Some('?') => ("?", "&", true, "=", false),
        _ => ("&", "&", true, "=", false),
    };
    let mut parts = Vec::new();
    for name in body.split(',') {
        if name.is_empty() || name.contains([':', '*']) {
            return Err(ExpandError::Unsupported(expr.into()));
        }
        let Some(value) = values.get(name) else {
            return Err(ExpandError::Missing(name.into()));
        };
        let enc = encode(value, reserved);
        parts.push(match (named, value.is_empty()) {
            (false, _) => enc,
            (true, true) => format!("{name}{ifemp}"),
            (true, false) => format!("{name}={enc}"),
        });
    }
    Ok(format!("{first}{}", parts.join(sep)))
}

/// Percent-encodes all but the unreserved characters (and, for `+` and `#`, the reserved
/// ones and existing percent-encodings), as RFC 6570 §3.2.1 says.
fn encode(s: &str, reserved: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = String::new();
    for (i, &b) in bytes.iter().enumerate() {
        let unreserved = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        let kept = reserved && b":/?#[]@!$&'()*+,;=".contains(&b);
        let pct = reserved
            && b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if unreserved || kept || pct {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> BTreeMap<String, String> {
        [
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("x", "1024"),
            ("y", "768"),
            ("empty", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    /// The examples of RFC 6570 §1.2 for levels 1 to 3.
    #[test]
    fn the_rfc_examples_expand() {
        let v = vals();
        for (t, want) in [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ] {
            assert_eq!(expand(t, &v).as_deref(), Ok(want), "{t}");
        }
    }

    #[test]
    fn level_four_and_broken_templates_are_refused() {
        let v = vals();
        assert!(matches!(
            expand("{var:3}", &v),
            Err(ExpandError::Unsupported(_))
        ));
        assert!(matches!(
            expand("{list*}", &v),
            Err(ExpandError::Unsupported(_))
        ));
        assert!(matches!(expand("{var", &v), Err(ExpandError::Unclosed(_))));
        assert!(matches!(expand("{nope}", &v), Err(ExpandError::Missing(_))));
    }

    #[test]
    fn variables_are_listed_once_in_order() {
        assert_eq!(
            variables("test://{a}/{+b}{?c,a}"),
            vec!["a".to_owned(), "b".into(), "c".into()]
        );
    }
}
