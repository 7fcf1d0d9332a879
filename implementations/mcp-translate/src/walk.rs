//! The walking context shared by every rule: source and target version, the JSON Pointer
//! of the place being visited, the warnings collected, and the two modes: translating
//! (drop and convert, warning each time) and checking (the same walk over an output, where
//! anything that would need a change is an error).

use crate::correlate::Session;
use crate::outcome::{ErrorKind, TranslateError, Warning, WarningKind};
use crate::version::{Direction, Version};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The detail of a field dropped because a later version introduced it: static text, so a
/// warning costs one allocation (its path).
fn since_detail(since: Version) -> &'static str {
    match since {
        Version::V2024_11_05 => "defined from 2024-11-05",
        Version::V2025_03_26 => "defined from 2025-03-26; the target is older",
        Version::V2025_06_18 => "defined from 2025-06-18; the target is older",
        Version::V2025_11_25 => "defined from 2025-11-25; the target is older",
        Version::V2026_07_28 => "defined from 2026-07-28; the target is older",
    }
}

/// The detail of a field dropped because the target version removed it.
fn until_detail(until: Version) -> &'static str {
    match until {
        Version::V2026_07_28 => "removed in 2026-07-28",
        _ => "not defined by the target version",
    }
}

/// A JSON object.
pub(crate) type Obj = Map<String, Value>;
/// The result of a rule.
pub(crate) type R<T = ()> = Result<T, TranslateError>;

/// One segment of the path being visited.
#[derive(Debug, Clone)]
pub(crate) enum Seg {
    /// A known key.
    K(&'static str),
    /// An array index.
    I(usize),
    /// A key read from the input (schema property names).
    O(String),
}

/// The walking context.
pub(crate) struct Cx<'w> {
    /// The sender's version.
    pub from: Version,
    /// The receiver's version: every rule keys on it.
    pub to: Version,
    /// Which way the message travels.
    pub dir: Direction,
    /// Checking an output instead of translating: any needed change is an error.
    pub check: bool,
    /// `tools/list result`, `notifications/progress`, ...
    pub message_type: String,
    /// Collected warnings.
    pub warnings: &'w mut Vec<Warning>,
    /// What the intermediary knows of the connection (empty for a lone message).
    pub session: &'w Session,
    path: Vec<Seg>,
}

fn escape(out: &mut String, s: &str) {
    if !s.contains(['~', '/']) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

impl<'w> Cx<'w> {
    pub(crate) fn new(
        from: Version,
        to: Version,
        dir: Direction,
        check: bool,
        warnings: &'w mut Vec<Warning>,
        session: &'w Session,
    ) -> Self {
        Cx {
            from,
            to,
            dir,
            check,
            message_type: "message".into(),
            warnings,
            session,
            path: Vec::new(),
        }
    }

    /// The hop goes from a session version to 2026-07-28 or later.
    pub(crate) fn up(&self) -> bool {
        !self.from.is_stateless() && self.to.is_stateless()
    }

    /// The hop goes from 2026-07-28 or later to a session version.
    pub(crate) fn down(&self) -> bool {
        self.from.is_stateless() && !self.to.is_stateless()
    }

    /// The JSON Pointer of the current place, plus `key` when given.
    pub(crate) fn pointer(&self, key: Option<&str>) -> String {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(48);
        for s in &self.path {
            out.push('/');
            match s {
                Seg::K(k) => escape(&mut out, k),
                Seg::O(k) => escape(&mut out, k),
                // Writing into a String cannot fail.
                Seg::I(i) => {
                    let _ = write!(out, "{i}");
                }
            }
        }
        if let Some(k) = key {
            out.push('/');
            escape(&mut out, k);
        }
        out
    }

    /// Runs `f` one level down, at `seg`.
    pub(crate) fn at<T>(&mut self, seg: Seg, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.path.push(seg);
        let r = f(self);
        self.path.pop();
        r
    }

    /// A typed error at the current place. In checking mode every failure is the output's.
    pub(crate) fn err(&self, kind: ErrorKind, details: impl Into<String>) -> TranslateError {
        TranslateError {
            from: self.from,
            to: self.to,
            message_type: self.message_type.clone(),
            kind: if self.check {
                ErrorKind::InvalidOutput
            } else {
                kind
            },
            path: self.pointer(None),
            details: details.into(),
        }
    }

    /// An invalid-input error at the current place.
    pub(crate) fn invalid(&self, details: impl Into<String>) -> TranslateError {
        self.err(ErrorKind::InvalidInput, details)
    }

    /// Records a change at `key` under the current place; in checking mode the change
    /// means the output is not valid for its version.
    pub(crate) fn warn(
        &mut self,
        kind: WarningKind,
        key: Option<&str>,
        detail: impl Into<Cow<'static, str>>,
    ) -> R {
        let detail = detail.into();
        if self.check {
            let mut e = self.err(
                ErrorKind::InvalidOutput,
                format!("not valid in {}: {detail}", self.to),
            );
            e.path = self.pointer(key);
            return Err(e);
        }
        let path = self.pointer(key);
        self.warnings.push(Warning { kind, path, detail });
        Ok(())
    }

    /// `v` as an object, or an invalid-input error naming `what`.
    pub(crate) fn obj<'v>(&self, v: &'v mut Value, what: &str) -> R<&'v mut Obj> {
        match v {
            Value::Object(o) => Ok(o),
            other => Err(self.invalid(format!(
                "{what} must be an object, found {}",
                kind_of(other)
            ))),
        }
    }

    /// Removes every field of `fields` whose version is newer than the target, with a
    /// `dropped` warning each.
    pub(crate) fn drop_newer(&mut self, o: &mut Obj, what: &str, fields: &[(&str, Version)]) -> R {
        for &(k, since) in fields {
            if since <= self.to {
                continue;
            }
            // One hash per field: translating removes directly; checking only looks.
            if self.check {
                if find(o, k).is_some() {
                    self.warn(
                        WarningKind::Dropped,
                        Some(k),
                        format!("{what}.{k} exists from {since}"),
                    )?;
                }
            } else if find(o, k).is_some() && o.shift_remove(k).is_some() {
                self.warn(WarningKind::Dropped, Some(k), since_detail(since))?;
            }
        }
        Ok(())
    }

    /// Removes every field of `fields` that the target no longer defines (removed in the
    /// paired version), with a `dropped` warning each.
    pub(crate) fn drop_removed(
        &mut self,
        o: &mut Obj,
        what: &str,
        fields: &[(&str, Version)],
    ) -> R {
        for &(k, until) in fields {
            if self.to < until || find(o, k).is_none() {
                continue;
            }
            if self.check {
                self.warn(
                    WarningKind::Dropped,
                    Some(k),
                    format!("{what}.{k} was removed in {until}"),
                )?;
            } else if o.shift_remove(k).is_some() {
                self.warn(WarningKind::Dropped, Some(k), until_detail(until))?;
            }
        }
        Ok(())
    }

    /// Drops field `k` with a warning when present (used where a rule, not a version table,
    /// decides).
    pub(crate) fn drop_field(
        &mut self,
        o: &mut Obj,
        k: &str,
        detail: impl Into<Cow<'static, str>>,
    ) -> R {
        if o.contains_key(k) {
            self.warn(WarningKind::Dropped, Some(k), detail)?;
            o.shift_remove(k);
        }
        Ok(())
    }

    /// Visits field `k` of `o` when present; an error when it is `required` and absent.
    pub(crate) fn field(
        &mut self,
        o: &mut Obj,
        k: &'static str,
        required: bool,
        f: impl FnOnce(&mut Self, &mut Value) -> R,
    ) -> R {
        let slot = if o.len() <= 12 {
            o.iter_mut().find(|(x, _)| x.as_str() == k).map(|(_, v)| v)
        } else {
            o.get_mut(k)
        };
        match slot {
            Some(v) => self.at(Seg::K(k), |cx| f(cx, v)),
            None if required => Err(self.invalid(format!("required field `{k}` is missing"))),
            None => Ok(()),
        }
    }

    /// Visits every element of the array field `k` of `o`.
    pub(crate) fn each(
        &mut self,
        o: &mut Obj,
        k: &'static str,
        required: bool,
        mut f: impl FnMut(&mut Self, &mut Value) -> R,
    ) -> R {
        self.field(o, k, required, |cx, v| {
            let Value::Array(items) = v else {
                return Err(cx.invalid(format!("`{k}` must be an array, found {}", kind_of(v))));
            };
            for (i, item) in items.iter_mut().enumerate() {
                cx.at(Seg::I(i), |cx| f(cx, item))?;
            }
            Ok(())
        })
    }

    /// The string field `k` of `o`; an error when absent or not a string.
    pub(crate) fn req_str<'o>(&self, o: &'o Obj, k: &str) -> R<&'o str> {
        match find(o, k) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => {
                Err(self.invalid(format!("`{k}` must be a string, found {}", kind_of(other))))
            }
            None => Err(self.invalid(format!("required field `{k}` is missing"))),
        }
    }

    /// Checks that field `k`, when present, is a string (or absent unless `required`).
    pub(crate) fn str_field(&self, o: &Obj, k: &str, required: bool) -> R {
        match find(o, k) {
            None if !required => Ok(()),
            _ => self.req_str(o, k).map(|_| ()),
        }
    }

    /// Checks that field `k`, when present, is an object.
    pub(crate) fn obj_field(&self, o: &Obj, k: &str, required: bool) -> R {
        match find(o, k) {
            None if !required => Ok(()),
            None => Err(self.invalid(format!("required field `{k}` is missing"))),
            Some(Value::Object(_)) => Ok(()),
            Some(other) => {
                Err(self.invalid(format!("`{k}` must be an object, found {}", kind_of(other))))
            }
        }
    }
}

/// Field `k` of `o`. MCP objects are small: below a dozen entries a scan of the keys is
/// cheaper than hashing the key (SipHash), which dominated lookups in the benchmarks.
pub(crate) fn find<'o>(o: &'o Obj, k: &str) -> Option<&'o Value> {
    if o.len() <= 12 {
        o.iter().find(|(x, _)| x.as_str() == k).map(|(_, v)| v)
    } else {
        o.get(k)
    }
}

/// The JSON type name of `v`, for messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
