//! What the harness answers, as a client that declared the capability, to the requests a
//! server sends: here an elicitation, accepted with content made from the form the server
//! asked for, so a vector can judge what the server does with a real answer.

use super::args;
use serde_json::{json, Map, Value};

/// The answer to `elicitation/create` with `params`: `accept` with a value for every
/// property the harness can fill (the property's `default` first, as SEP-1034 lets a server
/// propose one), confirmed against `requestedSchema`; `decline` when no such content
/// exists or the request is not a form (a URL elicitation needs the capability's `url`,
/// which the harness does not declare).
pub(super) fn elicitation_answer(params: &Value) -> Value {
    let decline = json!({"action": "decline"});
    if params
        .get("mode")
        .and_then(Value::as_str)
        .is_some_and(|m| m != "form")
    {
        return decline;
    }
    let Some(schema) = params.get("requestedSchema") else {
        return decline;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let value = prop
                .get("default")
                .filter(|d| args::is_valid(prop, d) == Some(true))
                .cloned()
                .or_else(|| {
                    // A default that breaks its own property is not offered back.
                    let mut bare = prop.clone();
                    if let Some(o) = bare.as_object_mut() {
                        o.remove("default");
                    }
                    args::valid(&bare)
                });
            match value {
                Some(v) => {
                    content.insert(name.clone(), v);
                }
                None if required.contains(&name.as_str()) => return decline,
                None => {}
            }
        }
    }
    let content = Value::Object(content);
    if args::is_valid(schema, &content) != Some(true) {
        return decline;
    }
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_accepted_with_its_defaults_and_made_values() {
        let p = json!({"message": "Who are you?", "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer", "minimum": 18},
                "colour": {"type": "string", "enum": ["red", "green"]},
                "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
                "many": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
                "ok": {"type": "boolean", "default": false}
            },
            "required": ["name", "age", "colour", "titled"]
        }});
        let a = elicitation_answer(&p);
        assert_eq!(a["action"], "accept", "{a}");
        assert_eq!(a["content"]["name"], "Ada");
        assert_eq!(a["content"]["ok"], false);
        assert!(a["content"]["age"].as_i64().is_some_and(|n| n >= 18), "{a}");
        assert!(["red", "green"].contains(&a["content"]["colour"].as_str().unwrap_or("")));
        assert!(["a", "b"].contains(&a["content"]["titled"].as_str().unwrap_or("")));
    }

    #[test]
    fn a_default_that_breaks_its_property_is_not_sent() {
        let p = json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"n": {"type": "integer", "maximum": 3, "default": 9}}, "required": ["n"]}});
        let a = elicitation_answer(&p);
        assert_eq!(a["action"], "accept");
        assert!(a["content"]["n"].as_i64().is_some_and(|n| n <= 3), "{a}");
    }

    #[test]
    fn url_elicitations_and_unfillable_forms_are_declined() {
        assert_eq!(
            elicitation_answer(
                &json!({"mode": "url", "url": "https://x", "message": "m", "elicitationId": "1"})
            )["action"],
            "decline"
        );
        let p = json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"n": {"type": "string", "minLength": 5, "maxLength": 2}}, "required": ["n"]}});
        assert_eq!(elicitation_answer(&p)["action"], "decline");
    }
}
