//! Values as the text of reports (expected, observed, reasons) shows them: JSON as JSON,
//! text quoted, lists joined, absence as `nothing`. Never Rust's `Debug` form
//! (`Some(String("x"))`), which a vendor reading a report should not have to decode.

use std::fmt::Display;

/// Text quoted as a JSON string (`"cn:harness-client"`), escapes and all.
pub fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// A JSON value as compact JSON (a string quoted), or `nothing` when there is none.
pub fn json_or_nothing(v: Option<&serde_json::Value>) -> String {
    v.map_or_else(|| "nothing".to_owned(), ToString::to_string)
}

/// A value, or `nothing` when there is none.
pub fn or_nothing<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "nothing".to_owned(), |x| x.to_string())
}

/// Text items quoted and joined with `, `, or `nothing` when there are none.
pub fn quoted_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    joined(items.into_iter().map(|s| quoted(s.as_ref())))
}

/// Items joined with `, `, or `nothing` when there are none.
pub fn joined<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|x| x.to_string()).collect();
    if v.is_empty() {
        "nothing".to_owned()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_text_not_as_rust() {
        let v = serde_json::json!("cn:harness-client");
        assert_eq!(json_or_nothing(Some(&v)), r#""cn:harness-client""#);
        assert_eq!(json_or_nothing(None), "nothing");
        assert_eq!(or_nothing(Some(3)), "3");
        assert_eq!(or_nothing(None::<u64>), "nothing");
        assert_eq!(
            quoted_list(["2025-06-18", "a\"b"]),
            r#""2025-06-18", "a\"b""#
        );
        assert_eq!(quoted_list(Vec::<String>::new()), "nothing");
        assert_eq!(joined([1, 2]), "1, 2");
    }
}
