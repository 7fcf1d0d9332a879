//! Tool I/O schemas (seed 003): each tool's input and output JSON Schemas, learnt from the
//! upstream's tools/list, compiled with the jsonschema crate (draft 2020-12) and cached by a
//! fingerprint of the schema, so tools sharing a schema, or a tools/list seen again, compile
//! nothing new.

use super::canonical::{Canonical, GatewayError};
use jsonschema::Validator;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The SHA-256 of a schema's canonical text (object keys sorted), so key order does not
/// split the cache.
pub type Fingerprint = [u8; 32];

/// The fingerprint of a schema.
pub fn fingerprint(schema: &Value) -> Fingerprint {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<_> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), canonical(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    Sha256::digest(canonical(schema).to_string().as_bytes()).into()
}

/// The tool I/O envelope schema: `tool` a string, `input` an object, `output` (when present)
/// an object.
fn tool_io_schema() -> Option<&'static Validator> {
    static V: OnceLock<Option<Validator>> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::draft202012::new(&json!({
            "type": "object",
            "required": ["tool", "input"],
            "properties": {
                "tool": {"type": "string", "minLength": 1},
                "input": {"type": "object"},
                "output": {"type": "object"}
            }
        }))
        .ok()
    })
    .as_ref()
}

#[derive(Debug, Clone)]
struct ToolEntry {
    input: Fingerprint,
    output: Option<Fingerprint>,
}

/// Compiled schemas by fingerprint, and each tool's pair of fingerprints.
#[derive(Default)]
pub struct SchemaRegistry {
    compiled: HashMap<Fingerprint, Arc<Validator>>,
    tools: HashMap<String, ToolEntry>,
    compilations: usize,
}

impl std::fmt::Debug for SchemaRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaRegistry")
            .field("tools", &self.tools.len())
            .field("compiled", &self.compiled.len())
            .finish()
    }
}

impl SchemaRegistry {
    /// Learns the tools of a tools/list result, replacing what was known. A tool whose
    /// schema does not compile is an internal error: the gateway cannot check its calls.
    pub fn load_tools_list(&mut self, result: &Value) -> Result<usize, GatewayError> {
        let tools = result
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                GatewayError::new(
                    Canonical::InternalError,
                    "upstream tools/list result has no tools array",
                )
            })?;
        let mut learnt = HashMap::new();
        for t in tools {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                return Err(GatewayError::new(
                    Canonical::InternalError,
                    "upstream tools/list lists a tool without a name",
                ));
            };
            let input = self.compile(
                t.get("inputSchema").unwrap_or(&json!({"type": "object"})),
                name,
            )?;
            let output = match t.get("outputSchema") {
                Some(s) => Some(self.compile(s, name)?),
                None => None,
            };
            learnt.insert(name.to_owned(), ToolEntry { input, output });
        }
        self.tools = learnt;
        Ok(self.tools.len())
    }

    fn compile(&mut self, schema: &Value, tool: &str) -> Result<Fingerprint, GatewayError> {
        let fp = fingerprint(schema);
        if let std::collections::hash_map::Entry::Vacant(slot) = self.compiled.entry(fp) {
            let v = jsonschema::draft202012::new(schema).map_err(|e| {
                GatewayError::new(
                    Canonical::InternalError,
                    format!("tool {tool:?}: its schema does not compile: {e}"),
                )
            })?;
            slot.insert(Arc::new(v));
            self.compilations += 1;
        }
        Ok(fp)
    }

    /// Schemas compiled so far (a cache hit compiles nothing).
    pub fn compilations(&self) -> usize {
        self.compilations
    }

    /// Checks a tools/call's params: the named tool exists and its input satisfies the
    /// tool I/O schema and the tool's input schema. Returns the tool name.
    pub fn check_call(&self, params: &Value) -> Result<String, GatewayError> {
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            return Err(GatewayError::new(
                Canonical::InvalidToolInput,
                "tools/call params have no string name",
            ));
        };
        let entry = self.tools.get(tool).ok_or_else(|| {
            GatewayError::new(Canonical::ToolNotFound, format!("no tool named {tool:?}"))
        })?;
        let input = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        self.io_check(
            &json!({"tool": tool, "input": input}),
            Canonical::InvalidToolInput,
        )?;
        self.schema_check(
            &entry.input,
            &input,
            tool,
            "input",
            Canonical::InvalidToolInput,
        )?;
        Ok(tool.to_owned())
    }

    /// Checks a tools/call result for `requested`: the record names the tool requested, and
    /// its structured output (when the tool declares an output schema and did not fail)
    /// satisfies it. A breach is the gateway's internal error: the contract forbids passing
    /// output the tool's own schema rejects.
    pub fn check_result(
        &self,
        requested: &str,
        tool: &str,
        result: &Value,
    ) -> Result<(), GatewayError> {
        if tool != requested {
            return Err(GatewayError::new(
                Canonical::InternalError,
                format!("the tool I/O record names {tool:?}, the caller requested {requested:?}"),
            ));
        }
        let Some(entry) = self.tools.get(tool) else {
            return Err(GatewayError::new(
                Canonical::ToolNotFound,
                format!("no tool named {tool:?}"),
            ));
        };
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            // A tool-level failure passes through unchanged (mcp-mapping-profile §6).
            return Ok(());
        }
        let Some(out_fp) = &entry.output else {
            return Ok(());
        };
        let Some(output) = result.get("structuredContent") else {
            return Err(GatewayError::new(
                Canonical::InternalError,
                format!(
                    "tool {tool:?} declares an output schema but returned no structuredContent"
                ),
            ));
        };
        self.io_check(
            &json!({"tool": tool, "input": {}, "output": output}),
            Canonical::InternalError,
        )?;
        self.schema_check(out_fp, output, tool, "output", Canonical::InternalError)
    }

    fn io_check(&self, record: &Value, code: Canonical) -> Result<(), GatewayError> {
        let v = tool_io_schema().ok_or_else(|| {
            GatewayError::new(
                Canonical::InternalError,
                "the tool I/O schema does not compile",
            )
        })?;
        v.validate(record).map_err(|e| {
            GatewayError::new(
                code,
                format!("tool I/O schema: {e} (at {})", e.instance_path()),
            )
        })
    }

    fn schema_check(
        &self,
        fp: &Fingerprint,
        value: &Value,
        tool: &str,
        what: &str,
        code: Canonical,
    ) -> Result<(), GatewayError> {
        let v = self
            .compiled
            .get(fp)
            .ok_or_else(|| GatewayError::new(Canonical::InternalError, "schema cache miss"))?;
        v.validate(value).map_err(|e| {
            let at = e.instance_path().to_string();
            GatewayError::new(
                code,
                format!(
                    "tool {tool:?} {what}: {e} (at {})",
                    if at.is_empty() { "/" } else { &at }
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> SchemaRegistry {
        let mut r = SchemaRegistry::default();
        let list = json!({"tools": crate::endpoint::tools::definitions()});
        assert_eq!(r.load_tools_list(&list).unwrap(), 4);
        r
    }

    #[test]
    fn schemas_are_cached_by_fingerprint() {
        let mut r = registry();
        // Seven schemas, six distinct: fail and broken_output share their input schema.
        assert_eq!(r.compilations(), 6);
        let list = json!({"tools": crate::endpoint::tools::definitions()});
        r.load_tools_list(&list).unwrap();
        assert_eq!(r.compilations(), 6, "a second tools/list compiles nothing");
        assert_eq!(
            fingerprint(&json!({"a": 1, "b": [{"c": 2, "d": 3}]})),
            fingerprint(&json!({"b": [{"d": 3, "c": 2}], "a": 1}))
        );
    }

    #[test]
    fn calls_are_checked() {
        let r = registry();
        assert_eq!(
            r.check_call(&json!({"name":"echo","arguments":{"message":"x"}}))
                .unwrap(),
            "echo"
        );
        let code = |p: Value| r.check_call(&p).unwrap_err().code;
        assert_eq!(code(json!({"name":"nope"})), Canonical::ToolNotFound);
        assert_eq!(
            code(json!({"name":"echo","arguments":{"message":1}})),
            Canonical::InvalidToolInput
        );
        assert_eq!(
            code(json!({"name":"echo","arguments":[1]})),
            Canonical::InvalidToolInput
        );
        assert_eq!(
            code(json!({"name":"add","arguments":{"a":1}})),
            Canonical::InvalidToolInput
        );
        assert_eq!(code(json!({"arguments":{}})), Canonical::InvalidToolInput);
    }

    #[test]
    fn results_are_checked() {
        let r = registry();
        let ok = json!({"content":[],"structuredContent":{"echo":"x"}});
        r.check_result("echo", "echo", &ok).unwrap();
        let e = r.check_result("add", "echo", &ok).unwrap_err();
        assert_eq!(e.code, Canonical::InternalError);
        let bad = json!({"content":[],"structuredContent":{"count":"three"}});
        assert_eq!(
            r.check_result("broken_output", "broken_output", &bad)
                .unwrap_err()
                .code,
            Canonical::InternalError
        );
        r.check_result("fail", "fail", &json!({"content":[],"isError":true}))
            .unwrap();
        assert_eq!(
            r.check_result("echo", "echo", &json!({"content":[]}))
                .unwrap_err()
                .code,
            Canonical::InternalError
        );
    }
}
