//! Arguments for a server's own tools, made from the tool's `inputSchema`: a value that
//! satisfies it (to call the tool) and one that breaks it (to see the server refuse it),
//! each confirmed with a JSON Schema validator, so a vector never blames a server for
//! arguments the harness got wrong.

use serde_json::{json, Map, Value};

/// Deepest nesting followed; deeper schemas are not satisfied.
const MAX_DEPTH: usize = 12;

/// Whether `instance` is valid against `schema`; `None` when the schema cannot be compiled
/// (a remote `$ref`, an unknown draft).
pub fn is_valid(schema: &Value, instance: &Value) -> Option<bool> {
    jsonschema::validator_for(schema)
        .ok()
        .map(|v| v.is_valid(instance))
}

/// Arguments valid against `schema`, when the harness can build them.
pub fn valid(schema: &Value) -> Option<Value> {
    let v = build(schema, schema, 0)?;
    (is_valid(schema, &v) == Some(true)).then_some(v)
}

/// Arguments the schema refuses, when there are any: a missing required property, else a
/// property of the wrong type, else an undeclared property where none is allowed.
pub fn invalid(schema: &Value) -> Option<Value> {
    let good = valid(schema);
    let mut candidates = Vec::new();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !required.is_empty() {
        if let Some(Value::Object(mut m)) = good.clone() {
            m.remove(required[0]);
            candidates.push(Value::Object(m));
        }
        candidates.push(json!({}));
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            let wrong = match first_type(p).as_deref() {
                Some("string") => json!(12345),
                Some("integer") | Some("number") => json!("not a number"),
                Some("boolean") => json!("not a boolean"),
                Some("array") | Some("object") => json!(12345),
                _ => continue,
            };
            let mut m = match good.clone() {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            m.insert(name.clone(), wrong);
            candidates.push(Value::Object(m));
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut m = match good {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.insert("swp_conform_undeclared".into(), json!(1));
        candidates.push(Value::Object(m));
    }
    candidates
        .into_iter()
        .find(|c| is_valid(schema, c) == Some(false))
}

fn first_type(s: &Value) -> Option<String> {
    match s.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_owned),
        _ => None,
    }
}

/// Resolves a local `$ref` (`#/...`) against the root schema.
fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let ptr = r.strip_prefix('#')?;
    if ptr.is_empty() {
        return Some(root);
    }
    root.pointer(ptr)
}

fn build(s: &Value, root: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let o = match s {
        Value::Bool(true) => return Some(json!("swp-conform")),
        Value::Object(o) => o,
        _ => return None,
    };
    if let Some(r) = o.get("$ref").and_then(Value::as_str) {
        return build(resolve(root, r)?, root, depth + 1);
    }
    if let Some(c) = o.get("const") {
        return Some(c.clone());
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array) {
        return e.first().cloned();
    }
    if let Some(d) = o.get("default") {
        return Some(d.clone());
    }
    if let Some(x) = o
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return Some(x.clone());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = o.get(key).and_then(Value::as_array) {
            return branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .find_map(|b| build(b, root, depth + 1));
        }
    }
    if let Some(all) = o.get("allOf").and_then(Value::as_array) {
        return build(&merge(o, all, root), root, depth + 1);
    }
    let ty = first_type(s).or_else(|| {
        (o.contains_key("properties") || o.contains_key("required")).then(|| "object".into())
    });
    match ty.as_deref() {
        Some("object") => {
            let props = o.get("properties").and_then(Value::as_object);
            let mut m = Map::new();
            for name in o
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let value = match props.and_then(|p| p.get(name)) {
                    Some(p) => build(p, root, depth + 1)?,
                    None => match o.get("additionalProperties") {
                        Some(Value::Bool(false)) => return None,
                        Some(a @ Value::Object(_)) => build(a, root, depth + 1)?,
                        _ => json!("swp-conform"),
                    },
                };
                m.insert(name.to_owned(), value);
            }
            Some(Value::Object(m))
        }
        Some("string") => Some(Value::String(string(o))),
        Some("integer") => Some(json!(number(o, true) as i64)),
        Some("number") => Some(json!(number(o, false))),
        Some("boolean") => Some(json!(false)),
        Some("null") => Some(Value::Null),
        Some("array") => {
            let n = o
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(8);
            let item = o.get("items").unwrap_or(&Value::Bool(true));
            let mut items = Vec::new();
            for i in 0..n {
                let mut v = build(item, root, depth + 1)?;
                if let (true, Value::String(s)) =
                    (o.get("uniqueItems") == Some(&json!(true)), &mut v)
                {
                    s.push_str(&format!("-{i}"));
                }
                items.push(v);
            }
            Some(Value::Array(items))
        }
        _ => Some(json!("swp-conform")),
    }
}

/// `allOf` as one schema: properties and required lists united, other keywords of the
/// first member that has them.
fn merge(own: &Map<String, Value>, all: &[Value], root: &Value) -> Value {
    let mut out = own.clone();
    out.remove("allOf");
    let mut props = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for part in std::iter::once(&Value::Object(own.clone())).chain(all.iter()) {
        let part = match part.get("$ref").and_then(Value::as_str) {
            Some(r) => resolve(root, r).unwrap_or(part),
            None => part,
        };
        let Some(p) = part.as_object() else { continue };
        if let Some(ps) = p.get("properties").and_then(Value::as_object) {
            props.extend(ps.clone());
        }
        if let Some(rs) = p.get("required").and_then(Value::as_array) {
            required.extend(rs.iter().cloned());
        }
        for (k, v) in p {
            if !matches!(k.as_str(), "properties" | "required" | "allOf" | "$ref") {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    out.insert("properties".into(), Value::Object(props));
    out.insert("required".into(), Value::Array(required));
    Value::Object(out)
}

fn string(o: &Map<String, Value>) -> String {
    let mut s = match o.get("format").and_then(Value::as_str) {
        // A loopback address where nothing listens: a tool that dereferences it fails at
        // once, and nothing leaves the machine.
        Some("uri") | Some("url") | Some("uri-reference") | Some("iri") => {
            "http://127.0.0.1:9/swp-conform".to_owned()
        }
        Some("date-time") => "2025-01-01T00:00:00Z".to_owned(),
        Some("date") => "2025-01-01".to_owned(),
        Some("time") => "00:00:00Z".to_owned(),
        Some("email") => "swp-conform@example.com".to_owned(),
        Some("uuid") => "00000000-0000-4000-8000-000000000000".to_owned(),
        Some("ipv4") => "127.0.0.1".to_owned(),
        Some("ipv6") => "::1".to_owned(),
        Some("hostname") => "localhost".to_owned(),
        _ => "swp-conform".to_owned(),
    };
    let min = o.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while s.chars().count() < min.min(4096) {
        s.push('x');
    }
    if let Some(max) = o.get("maxLength").and_then(Value::as_u64) {
        s = s.chars().take(max as usize).collect();
    }
    s
}

fn number(o: &Map<String, Value>, integer: bool) -> f64 {
    let min = o.get("minimum").and_then(Value::as_f64).or_else(|| {
        o.get("exclusiveMinimum").and_then(Value::as_f64).map(|m| {
            if integer {
                m.floor() + 1.0
            } else {
                m + 0.5
            }
        })
    });
    let max = o.get("maximum").and_then(Value::as_f64).or_else(|| {
        o.get("exclusiveMaximum").and_then(Value::as_f64).map(|m| {
            if integer {
                m.ceil() - 1.0
            } else {
                m - 0.5
            }
        })
    });
    let mut n = min.unwrap_or(1.0);
    if let Some(max) = max {
        if n > max {
            n = max;
        }
    }
    if let Some(step) = o
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0)
    {
        n = (n / step).ceil() * step;
    }
    if integer {
        n.ceil()
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_values_the_schema_accepts() {
        let s = json!({"type": "object", "properties": {
            "path": {"type": "string", "minLength": 20},
            "n": {"type": "integer", "minimum": 3, "maximum": 9},
            "mode": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "opt": {"type": "string"}
        }, "required": ["path", "n", "mode", "tags"]});
        let v = valid(&s).unwrap();
        assert_eq!(v["n"], json!(3));
        assert_eq!(v["mode"], json!("a"));
        assert_eq!(v["tags"].as_array().unwrap().len(), 2);
        assert!(v.get("opt").is_none());
        assert!(v["path"].as_str().unwrap().len() >= 20);
    }

    #[test]
    fn refs_defaults_and_unions_are_followed() {
        let s = json!({"type": "object", "$defs": {"loc": {"type": "string", "default": "here"}},
            "properties": {"at": {"$ref": "#/$defs/loc"},
                           "x": {"anyOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 0}]}},
            "required": ["at", "x"]});
        let v = valid(&s).unwrap();
        assert_eq!(v, json!({"at": "here", "x": 0.5}));
    }

    #[test]
    fn broken_arguments_are_confirmed_broken() {
        let s = json!({"type": "object", "properties": {"message": {"type": "string"}},
                       "required": ["message"]});
        let bad = invalid(&s).unwrap();
        assert_eq!(is_valid(&s, &bad), Some(false));
        // A schema that accepts anything cannot be broken.
        assert_eq!(invalid(&json!({"type": "object"})), None);
    }

    #[test]
    fn unsatisfiable_schemas_give_nothing() {
        let s = json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}},
                       "required": ["p"]});
        assert_eq!(valid(&s), None);
    }
}
