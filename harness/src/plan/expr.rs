//! Integer expressions in vectors (`${MAX_FRAME_BYTES} + 1`), evaluated against the SUT's
//! parameters. Checked arithmetic in i128; a result outside u64 is an error, never a wrap.

use std::collections::BTreeMap;

/// Parameter values an expression may name.
pub type Params = BTreeMap<&'static str, u64>;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// Bad syntax.
    #[error("cannot parse expression {expr:?} at offset {at}: expected {expected}")]
    Syntax {
        /// The text.
        expr: String,
        /// Byte offset.
        at: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// A name that is not a parameter at all.
    #[error("unknown parameter ${{{0}}}{hint}: expressions take the run's own names and the manifest params of docs/sut-manifest.md", hint = nearest(.0))]
    UnknownParam(String),
    /// A known parameter the SUT does not declare (the vector is then not applicable).
    #[error("the SUT declares no value for ${{{0}}}")]
    Undeclared(String),
    /// The value left the u64 range.
    #[error("expression {0:?} evaluates outside 0..=2^64-1")]
    Range(String),
    /// A division by zero.
    #[error("expression {0:?} divides by zero")]
    DivZero(String),
}

/// The parameter names the harness itself provides (limits, policy, the clock), beside
/// the ones a manifest declares ([`MANIFEST_PARAM_NAMES`]).
const BUILTIN_PARAM_NAMES: &[&str] = &[
    "MAX_FRAME_BYTES",
    "MIN_MSG_ID_BYTES",
    "MAX_MSG_ID_BYTES",
    "MAX_EXT_BYTES",
    "MAX_PAYLOAD_BYTES",
    "MAX_CLOCK_SKEW_MS",
    "NOW_MS",
    "RATE_LIMIT_FRAMES",
    "RATE_LIMIT_WINDOW_MS",
    "CORE_PROFILE_ID",
    "P1_WRAPPER",
];

/// Every parameter name a vector may use: the harness's own, then the manifest's, then the
/// optional-feature triggers (a `holds` over one, `${NAME} == 1`, gates a vector on a
/// behaviour the spec leaves to the SUT, and undeclared leaves it out by the SUT's choice).
pub fn param_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_PARAM_NAMES
        .iter()
        .chain(MANIFEST_PARAM_NAMES)
        .chain(crate::plan::features::FEATURE_PARAMS)
        .copied()
}

/// ", did you mean ${X}?" for the known name closest to `name`, when one is close.
fn nearest(name: &str) -> String {
    let best = param_names()
        .map(|n| (distance(name, n), n))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, n)) if d <= name.len().max(4) / 3 => format!(", did you mean ${{{n}}}?"),
        _ => String::new(),
    }
}

/// Levenshtein distance over bytes (parameter names are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether `name` is a parameter a vector may use.
pub fn is_param(name: &str) -> bool {
    param_names().any(|n| n == name)
}

/// The parameters of [`param_names`] a manifest declares in its `params` (numbers): the
/// implementation-defined windows and sizes of the SWP-* profiles, which vectors are sized
/// from (docs/sut-manifest.md).
pub const MANIFEST_PARAM_NAMES: &[&str] = &[
    "RPC_REPLAY_WINDOW_MS",
    // 0: a replay of a call still running waits for its outcome; 1: it is told at once to
    // retry (a retryable RPC_ERR). Both read swp-rpc §6 (SI-P-RPC-V1).
    "RPC_REPLAY_WHILE_RUNNING",
    "RPC_STREAM_ITEMS",
    "EVENTS_ID_RETENTION_MS",
    "EVENTS_TICKS_COUNT",
    "EVENTS_BATCH_COUNT",
    "ARTIFACT_CHUNK_BYTES",
    "ARTIFACT_BYTES",
    "ARTIFACT_UPLOAD_MAX_BYTES",
    "CRED_MAX_CHAIN_LENGTH",
    "CRED_MAX_TTL_MS",
    "POLICYHINT_UNKNOWN_KEY_POLICY",
    "POLICYHINT_CONFLICT_POLICY",
    // Readings a SUT owes a declaration of, since each value is conformant and the vectors
    // expect what it says (issue 27): undeclared, their vectors are untested, never skipped
    // by choice (violation reports are a MUST, swp-policyhint §6).
    // 0 the ack first, then the set's violations; 1 the violations, then the ack; 2 no ack.
    "POLICYHINT_ACK_ORDER",
    // 0 no report when a set is taken; 1 each unmet MUST constraint; 2 unmet advice too.
    "POLICYHINT_UNMET_REPORT",
    // 1 every GET of an artifact is answered with its ART_OFFER first; 0 the chunks alone.
    "ARTIFACT_OFFERS_ON_GET",
    "AGDISC_MAX_AGE_MS",
    "RELAY_DEDUPE_WINDOW_MS",
    "RELAY_RETRY_BACKOFF_MS",
    "RELAY_MAX_ATTEMPTS",
    "RELAY_DEAD_LETTER_AFTER_MS",
    "RELAY_SETTLE_MS",
];

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    params: &'a Params,
}

impl Parser<'_> {
    fn err(&self, expected: &'static str) -> ExprError {
        ExprError::Syntax {
            expr: self.src.to_owned(),
            at: self.pos,
            expected,
        }
    }

    fn skip_ws(&mut self) {
        while self.src[self.pos..].starts_with(|c: char| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.src[self.pos..].starts_with(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<i128, ExprError> {
        let mut v = self.product()?;
        loop {
            if self.eat("+") {
                v = v.checked_add(self.product()?).ok_or_else(|| self.range())?;
            } else if self.eat("-") {
                v = v.checked_sub(self.product()?).ok_or_else(|| self.range())?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<i128, ExprError> {
        let mut v = self.atom()?;
        loop {
            if self.eat("*") {
                v = v.checked_mul(self.atom()?).ok_or_else(|| self.range())?;
            } else if self.eat("/") {
                // Floor division of the non-negative sizes vectors use (chunk counts).
                let d = self.atom()?;
                if d == 0 {
                    return Err(ExprError::DivZero(self.src.to_owned()));
                }
                v = v.div_euclid(d);
            } else {
                return Ok(v);
            }
        }
    }

    fn range(&self) -> ExprError {
        ExprError::Range(self.src.to_owned())
    }

    fn atom(&mut self) -> Result<i128, ExprError> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        if self.eat("(") {
            let v = self.sum()?;
            return if self.eat(")") {
                Ok(v)
            } else {
                Err(self.err("')'"))
            };
        }
        if let Some(name) = rest.strip_prefix("${") {
            let end = name.find('}').ok_or_else(|| self.err("'}' closing ${"))?;
            let name = &name[..end];
            self.pos += 2 + end + 1;
            if !is_param(name) {
                return Err(ExprError::UnknownParam(name.to_owned()));
            }
            return self
                .params
                .get(name)
                .map(|&v| i128::from(v))
                .ok_or_else(|| ExprError::Undeclared(name.to_owned()));
        }
        for f in ["min", "max"] {
            if rest.starts_with(f) && rest[f.len()..].trim_start().starts_with('(') {
                self.pos += f.len();
                self.eat("(");
                let a = self.sum()?;
                if !self.eat(",") {
                    return Err(self.err("','"));
                }
                let b = self.sum()?;
                if !self.eat(")") {
                    return Err(self.err("')'"));
                }
                return Ok(if f == "min" { a.min(b) } else { a.max(b) });
            }
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(self.err("a number, ${NAME}, min(..) or max(..)"));
        }
        let v: i128 = rest[..digits].parse().map_err(|_| self.range())?;
        self.pos += digits;
        Ok(v)
    }
}

/// Evaluates `src` against `params`.
pub fn eval(src: &str, params: &Params) -> Result<u64, ExprError> {
    u64::try_from(eval_signed(src, params)?).map_err(|_| ExprError::Range(src.to_owned()))
}

/// Evaluates a condition `a OP b` (OP one of `<= < >= > == !=`), or a bare expression that
/// holds when nonzero.
pub fn holds(src: &str, params: &Params) -> Result<bool, ExprError> {
    for op in ["<=", ">=", "==", "!=", "<", ">"] {
        if let Some((a, b)) = src.split_once(op) {
            let (a, b) = (eval_signed(a, params)?, eval_signed(b, params)?);
            return Ok(match op {
                "<=" => a <= b,
                ">=" => a >= b,
                "==" => a == b,
                "!=" => a != b,
                "<" => a < b,
                _ => a > b,
            });
        }
    }
    Ok(eval(src, params)? != 0)
}

fn eval_signed(src: &str, params: &Params) -> Result<i128, ExprError> {
    let mut p = Parser {
        src,
        pos: 0,
        params,
    };
    let v = p.sum()?;
    p.skip_ws();
    if p.pos != src.len() {
        return Err(p.err("an operator or the end"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        let mut p = Params::new();
        p.insert("MAX_FRAME_BYTES", 100);
        p.insert("MIN_MSG_ID_BYTES", 8);
        p
    }

    #[test]
    fn arithmetic_and_params() {
        let p = params();
        assert_eq!(eval("${MAX_FRAME_BYTES} + 1", &p), Ok(101));
        assert_eq!(eval("2 * (${MIN_MSG_ID_BYTES} - 3)", &p), Ok(10));
        assert_eq!(eval("min(${MAX_FRAME_BYTES}, 7) + max(1, 2)", &p), Ok(9));
        assert_eq!(eval("  42 ", &p), Ok(42));
        assert_eq!(eval("(${MAX_FRAME_BYTES} + 7 - 1) / 7", &p), Ok(15));
        assert_eq!(eval("2 * 9 / 4", &p), Ok(4));
        assert!(matches!(eval("1 / 0", &p), Err(ExprError::DivZero(_))));
    }

    #[test]
    fn an_unknown_name_suggests_the_closest_known_one() {
        let e = eval("${MAX_FRAME_BYTE}", &params())
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean ${MAX_FRAME_BYTES}?"), "{e}");
        let e = eval("${ZZZ_QQQ}", &params()).unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
        assert!(e.contains("docs/sut-manifest.md"), "{e}");
    }

    #[test]
    fn errors_are_specific() {
        let p = params();
        assert!(matches!(
            eval("${NOPE}", &p),
            Err(ExprError::UnknownParam(_))
        ));
        assert!(matches!(
            eval("${NOW_MS}", &p),
            Err(ExprError::Undeclared(_))
        ));
        assert!(matches!(eval("1 - 2", &p), Err(ExprError::Range(_))));
        assert!(matches!(eval("1 +", &p), Err(ExprError::Syntax { .. })));
        assert!(matches!(eval("1 2", &p), Err(ExprError::Syntax { .. })));
        assert!(matches!(
            eval("99999999999999999999999", &p),
            Err(ExprError::Range(_))
        ));
    }

    #[test]
    fn conditions() {
        let p = params();
        assert_eq!(holds("${MAX_FRAME_BYTES} - 200 < 0", &p), Ok(true));
        assert_eq!(holds("${MIN_MSG_ID_BYTES} >= 9", &p), Ok(false));
        assert_eq!(holds("${MIN_MSG_ID_BYTES} == 8", &p), Ok(true));
        assert_eq!(holds("1", &p), Ok(true));
    }
}
