//! P1 payloads in vectors: a message named by its protobuf name (or alias, `a2a.Task`) with
//! its fields as YAML, encoded through the embedded descriptors (prost-reflect), and reply
//! payloads decoded by name and compared on their semantic fields (P1 §4: conformance is
//! judged on decoded fields; unknown fields are ignored).
//!
//! Field values: strings, booleans, numbers, lists for repeated fields, maps for nested
//! messages; a `bytes` field takes `"hex:0a0b"` for octets or any other string for its
//! UTF-8 octets.

pub mod pb;
pub mod valid;

use bytes::Bytes;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value,
};
use serde_json::{Map, Value as Json};

/// A P1 payload spec or payload that does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum P1Error {
    /// The vector's spec is malformed (a harness-side problem: the vector is broken).
    #[error("{0}")]
    Spec(String),
    /// The payload does not carry what the spec says (a verdict about the SUT).
    #[error("{0}")]
    Payload(String),
}

fn spec_err(s: impl Into<String>) -> P1Error {
    P1Error::Spec(s.into())
}

/// Which shape a SUT gives P1 payloads (`p1_payload` in its manifest). P1 §2 says the
/// payload "MUST decode as one of the profile message schemas", and every annex defines both
/// the messages and a `Payload` wrapper whose oneof members are numbered by msg_type, so both
/// readings are conformant (docs/spec-issues.md): the SUT declares its own.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum P1Form {
    /// The bare message of the msg_type.
    #[default]
    Message,
    /// The annex's `Payload` message with the oneof member of the message set.
    Wrapper,
}

impl P1Form {
    /// The name used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            P1Form::Message => "message",
            P1Form::Wrapper => "wrapper",
        }
    }

    /// `bare`, an encoded `message`, in this form: unchanged, or as the wrapper's oneof
    /// member for that message (its field number is the message's msg_type).
    pub fn wrap(self, message: &str, bare: Vec<u8>) -> Result<Vec<u8>, P1Error> {
        if self == P1Form::Message {
            return Ok(bare);
        }
        let (wrapper, field) = member_of(message)?;
        let mut w = DynamicMessage::new(wrapper);
        let inner = DynamicMessage::decode(
            crate::p1::pb::message(message).map_err(|e| spec_err(e.to_string()))?,
            &bare[..],
        );
        // An inner message with appended unknown octets (forward-compatibility probes)
        // does not survive a decode and re-encode: write the member by hand instead.
        match inner {
            Ok(m) if prost::Message::encode_to_vec(&m) == bare => {
                w.try_set_field(&field, Value::Message(m))
                    .map_err(|e| spec_err(e.to_string()))?;
                Ok(prost::Message::encode_to_vec(&w))
            }
            _ => {
                let mut out = Vec::with_capacity(bare.len() + 12);
                prost::encoding::encode_key(
                    field.number(),
                    prost::encoding::WireType::LengthDelimited,
                    &mut out,
                );
                prost::encoding::encode_varint(bare.len() as u64, &mut out);
                out.extend_from_slice(&bare);
                Ok(out)
            }
        }
    }

    /// The bare message octets of a payload in this form, for a frame of `msg_type`: the
    /// wrapper must decode and carry the member numbered `msg_type`; other fields are
    /// ignored, as P1 §4 ignores unknown fields.
    pub fn unwrap(
        self,
        profile_id: u64,
        msg_type: u64,
        payload: &[u8],
    ) -> Result<Vec<u8>, P1Error> {
        if self == P1Form::Message {
            return Ok(payload.to_vec());
        }
        let wrapper = wrapper_of(profile_id)?;
        let got = DynamicMessage::decode(wrapper.clone(), payload).map_err(|e| {
            P1Error::Payload(format!(
                "the payload does not decode as the wrapper {}: {e}",
                wrapper.full_name()
            ))
        })?;
        let Some(field) = wrapper.get_field(u32::try_from(msg_type).unwrap_or(0)) else {
            return Err(P1Error::Payload(format!(
                "{} has no member for msg_type {msg_type}",
                wrapper.full_name()
            )));
        };
        let set: Vec<u32> = wrapper
            .fields()
            .filter(|f| got.has_field(f))
            .map(|f| f.number())
            .collect();
        match got.get_field(&field).as_message() {
            Some(m) if got.has_field(&field) => Ok(prost::Message::encode_to_vec(m)),
            _ => Err(P1Error::Payload(format!(
                "the wrapper {} carries member(s) {}, not {msg_type} (the frame's msg_type)",
                wrapper.full_name(),
                crate::support::show::joined(&set)
            ))),
        }
    }
}

/// The `Payload` wrapper of the profile whose messages live in the package of `message`,
/// and the member that carries `message`.
fn member_of(message: &str) -> Result<(MessageDescriptor, FieldDescriptor), P1Error> {
    let desc = crate::p1::pb::message(message).map_err(|e| spec_err(e.to_string()))?;
    let wrapper = crate::p1::pb::message(&format!("{}.Payload", desc.package_name()))
        .map_err(|_| spec_err(format!("{} has no Payload wrapper", desc.package_name())))?;
    let field = wrapper
        .fields()
        .find(|f| {
            f.kind()
                .as_message()
                .is_some_and(|m| m.full_name() == desc.full_name())
        })
        .ok_or_else(|| {
            spec_err(format!(
                "{} has no member for {}",
                wrapper.full_name(),
                desc.full_name()
            ))
        })?;
    Ok((wrapper, field))
}

/// The `Payload` wrapper of a P1 profile.
fn wrapper_of(profile_id: u64) -> Result<MessageDescriptor, P1Error> {
    crate::p1::pb::wrapper(profile_id)
        .ok_or_else(|| P1Error::Payload(format!("profile {profile_id} does not use P1")))
}

/// A P1 payload spec: `{MESSAGE: {field: value, ...}}`, optionally with `unknown_fields:
/// HEX` appended raw after the encoding (a forward-compatibility probe).
pub type P1Spec = Map<String, Json>;

/// The message name and fields of a spec.
pub fn parts(spec: &P1Spec) -> Result<(&str, &Json, Option<&str>), P1Error> {
    let mut named = spec.iter().filter(|(k, _)| k.as_str() != "unknown_fields");
    let (Some((name, fields)), None) = (named.next(), named.next()) else {
        return Err(spec_err(
            "a p1 payload names exactly one message: `{a2a.Task: {...}}`",
        ));
    };
    let extra = match spec.get("unknown_fields") {
        None => None,
        Some(Json::String(h)) => Some(h.as_str()),
        Some(_) => return Err(spec_err("`unknown_fields` takes hex digits")),
    };
    Ok((name, fields, extra))
}

fn hex(h: &str) -> Result<Vec<u8>, P1Error> {
    let clean: String = h.chars().filter(|c| !c.is_whitespace()).collect();
    ::hex::decode(&clean).map_err(|e| spec_err(format!("hex {h:?}: {e}")))
}

/// The octets of a P1 bytes value as vectors write it: `hex:...`, or a string's UTF-8.
pub fn bytes_value(s: &str) -> Result<Vec<u8>, P1Error> {
    match s.strip_prefix("hex:") {
        Some(h) => hex(h),
        None => Ok(s.as_bytes().to_vec()),
    }
}

/// An integer field's value: a number, or a string holding an integer expression. A vector
/// writes `"2 * ${ARTIFACT_CHUNK_BYTES}"`; the manifest's value replaces the placeholder
/// before encoding, and while the vector is only being checked (placeholders unfilled)
/// every parameter stands for 2^20, so the expression's shape is still checked.
fn integer(v: &Json) -> Option<i128> {
    match v {
        Json::String(s) => {
            let probe: crate::plan::expr::Params = crate::plan::expr::param_names()
                .map(|n| (n, 1u64 << 20))
                .collect();
            crate::plan::expr::eval(s, &probe).ok().map(i128::from)
        }
        _ => v
            .as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from)),
    }
}

fn scalar(field: &FieldDescriptor, kind: &Kind, v: &Json) -> Result<Value, P1Error> {
    let name = field.name();
    let bad = || {
        spec_err(format!(
            "field {name}: {v} is not a valid {}",
            kind_name(kind)
        ))
    };
    Ok(match kind {
        Kind::Bytes => match v {
            Json::String(s) => Value::Bytes(Bytes::from(bytes_value(s)?)),
            _ => return Err(bad()),
        },
        Kind::String => Value::String(v.as_str().ok_or_else(bad)?.to_owned()),
        Kind::Bool => Value::Bool(v.as_bool().ok_or_else(bad)?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(
            integer(v)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(bad)?,
        ),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(
            integer(v)
                .and_then(|n| i64::try_from(n).ok())
                .ok_or_else(bad)?,
        ),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(
            integer(v)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(bad)?,
        ),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(
            integer(v)
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(bad)?,
        ),
        Kind::Float => Value::F32(v.as_f64().ok_or_else(bad)? as f32),
        Kind::Double => Value::F64(v.as_f64().ok_or_else(bad)?),
        Kind::Enum(e) => match v {
            Json::String(s) => Value::EnumNumber(
                e.get_value_by_name(s)
                    .ok_or_else(|| spec_err(format!("field {name}: no enum value {s}")))?
                    .number(),
            ),
            _ => Value::EnumNumber(
                v.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(bad)?,
            ),
        },
        Kind::Message(m) => Value::Message(message(m, v)?),
    })
}

fn value(field: &FieldDescriptor, v: &Json) -> Result<Value, P1Error> {
    let kind = field.kind();
    if field.is_list() {
        let items = v
            .as_array()
            .ok_or_else(|| spec_err(format!("field {} is repeated: give a list", field.name())))?;
        return Ok(Value::List(
            items
                .iter()
                .map(|x| scalar(field, &kind, x))
                .collect::<Result<_, _>>()?,
        ));
    }
    if field.is_map() {
        return Err(spec_err(format!(
            "field {}: map fields are not supported in vectors",
            field.name()
        )));
    }
    scalar(field, &kind, v)
}

fn message(desc: &MessageDescriptor, fields: &Json) -> Result<DynamicMessage, P1Error> {
    let obj = match fields {
        Json::Object(o) => o,
        Json::Null => &Map::new(),
        _ => {
            return Err(spec_err(format!(
                "{}: give its fields as a map",
                desc.full_name()
            )))
        }
    };
    let mut m = DynamicMessage::new(desc.clone());
    for (k, v) in obj {
        let f = desc.get_field_by_name(k).ok_or_else(|| {
            let names: Vec<String> = desc.fields().map(|f| f.name().to_owned()).collect();
            spec_err(format!(
                "{} has no field {k:?} (fields: {})",
                desc.full_name(),
                names.join(", ")
            ))
        })?;
        let val = value(&f, v)?;
        m.try_set_field(&f, val)
            .map_err(|e| spec_err(format!("field {k}: {e}")))?;
    }
    Ok(m)
}

/// Encodes a spec into payload octets in `form` (deterministic: fields in number order).
pub fn encode_in(spec: &P1Spec, form: P1Form) -> Result<Vec<u8>, P1Error> {
    let (name, _, _) = parts(spec)?;
    form.wrap(name, encode(spec)?)
}

/// Encodes a spec into the bare message's octets (deterministic: fields in number order).
pub fn encode(spec: &P1Spec) -> Result<Vec<u8>, P1Error> {
    let (name, fields, extra) = parts(spec)?;
    let desc = crate::p1::pb::message(name).map_err(|e| spec_err(e.to_string()))?;
    let mut out = prost::Message::encode_to_vec(&message(&desc, fields)?);
    if let Some(h) = extra {
        out.extend_from_slice(&hex(h)?);
    }
    Ok(out)
}

/// Whether `payload` decodes as the spec's message and carries every listed field value.
pub fn check(spec: &P1Spec, payload: &[u8]) -> Result<(), P1Error> {
    let (name, fields, _) = parts(spec)?;
    let desc = crate::p1::pb::message(name).map_err(|e| spec_err(e.to_string()))?;
    let got = DynamicMessage::decode(desc.clone(), payload).map_err(|e| {
        P1Error::Payload(format!(
            "the payload does not decode as {}: {e}",
            desc.full_name()
        ))
    })?;
    let want = message(&desc, fields)?;
    for (f, v) in want.fields() {
        let seen = got.get_field(&f);
        if !same_field(&f, &got, &want) || !same_value(seen.as_ref(), v) {
            return Err(P1Error::Payload(format!(
                "{}.{} is {} instead of {}",
                desc.name(),
                f.name(),
                show(&seen),
                show(v)
            )));
        }
    }
    Ok(())
}

/// Whether two messages carry the same fields as the wire shows them (P1 §4 judges decoded
/// fields): a field without presence that is set to its proto3 default is written as no
/// octets at all, so it equals an absent one; a field with presence (a message, a oneof
/// member, `optional`) differs when one side has it and the other does not. Unknown fields
/// are not compared.
pub fn same_message(a: &DynamicMessage, b: &DynamicMessage) -> bool {
    a.descriptor().full_name() == b.descriptor().full_name()
        && a.descriptor().fields().all(|f| {
            same_field(&f, a, b) && same_value(a.get_field(&f).as_ref(), b.get_field(&f).as_ref())
        })
}

/// Presence agrees, where the field has presence on the wire.
fn same_field(f: &FieldDescriptor, a: &DynamicMessage, b: &DynamicMessage) -> bool {
    !f.supports_presence() || a.has_field(f) == b.has_field(f)
}

/// Two field values as the wire shows them: nested messages by [`same_message`], lists and
/// maps element by element, scalars by value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Message(x), Value::Message(y)) => same_message(x, y),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same_value(p, q)))
        }
        _ => a == b,
    }
}

/// Whether `payload` is the canonical encoding of the message it decodes to: what a
/// deterministic serializer writes (fields in number order, defaults omitted).
pub fn check_canonical(spec: &P1Spec, payload: &[u8]) -> Result<(), P1Error> {
    let (name, _, _) = parts(spec)?;
    check_canonical_named(name, payload)
}

/// As [`check_canonical`], for the message of that name (or alias).
pub fn check_canonical_named(name: &str, payload: &[u8]) -> Result<(), P1Error> {
    let desc = crate::p1::pb::message(name).map_err(|e| spec_err(e.to_string()))?;
    let got = DynamicMessage::decode(desc.clone(), payload).map_err(|e| {
        P1Error::Payload(format!(
            "the payload does not decode as {}: {e}",
            desc.full_name()
        ))
    })?;
    let canonical = prost::Message::encode_to_vec(&got);
    if canonical == payload {
        Ok(())
    } else {
        Err(P1Error::Payload(format!(
            "the {} payload is not serialized deterministically: sent {}, canonical {} (P1 §4)",
            desc.name(),
            ::hex::encode(payload),
            ::hex::encode(&canonical)
        )))
    }
}

/// The (profile_id, msg_type) a P1 message is the payload of, by its name or alias: the
/// message class a `flow` expectation waits for.
pub fn class_of(spec: &P1Spec) -> Result<(u64, u64), P1Error> {
    let (name, _, _) = parts(spec)?;
    let desc = crate::p1::pb::message(name).map_err(|e| spec_err(e.to_string()))?;
    crate::p1::pb::class_of(&desc).ok_or_else(|| {
        spec_err(format!(
            "{} is not the payload of any msg_type",
            desc.full_name()
        ))
    })
}

/// A short rendering of a field value for failure messages.
pub fn show(v: &Value) -> String {
    match v {
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) if s.chars().all(|c| !c.is_control()) => format!("{s:?}"),
            _ => format!("hex:{}", ::hex::encode(b)),
        },
        Value::String(s) => format!("{s:?}"),
        // The protobuf text format (`5`, `[1,2]`, `{code:"x"}`), not Rust's `U64(5)`.
        other => other.to_string(),
    }
}

/// A field's type as a .proto file names it, for messages.
fn kind_name(kind: &Kind) -> String {
    let scalar = match kind {
        Kind::Message(m) => return m.full_name().to_owned(),
        Kind::Enum(e) => return e.full_name().to_owned(),
        Kind::Double => "double",
        Kind::Float => "float",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
        Kind::Uint32 => "uint32",
        Kind::Uint64 => "uint64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
        Kind::Fixed32 => "fixed32",
        Kind::Fixed64 => "fixed64",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
    };
    scalar.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Json) -> P1Spec {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn encode_and_check() {
        let s = spec(json!({"a2a.Task": {"task_id": "hex:0102", "kind": "echo", "input": "hi"}}));
        let b = encode(&s).unwrap();
        assert_eq!(
            b,
            [0x0a, 0x02, 0x01, 0x02, 0x12, 0x04, b'e', b'c', b'h', b'o', 0x1a, 0x02, b'h', b'i']
        );
        check(&s, &b).unwrap();
        check(&spec(json!({"a2a.Task": {"kind": "echo"}})), &b).unwrap();
        let e = check(&spec(json!({"a2a.Task": {"kind": "fail"}})), &b).unwrap_err();
        assert!(
            e.to_string()
                .contains("Task.kind is \"echo\" instead of \"fail\""),
            "{e}"
        );
        let with_unknown = encode(&spec(
            json!({"a2a.Task": {"kind": "x"}, "unknown_fields": "7801"}),
        ))
        .unwrap();
        assert!(with_unknown.ends_with(&[0x78, 0x01]));
        let h = encode(&spec(
            json!({"a2a.Handshake": {"agent_id": "a", "capabilities": ["x", "y"]}}),
        ))
        .unwrap();
        check(
            &spec(json!({"a2a.Handshake": {"capabilities": ["x", "y"]}})),
            &h,
        )
        .unwrap();
    }

    #[test]
    fn integers_may_be_expressions_and_names_give_the_class() {
        let s = spec(
            json!({"artifact.ArtGet": {"artifact_id": "a", "start": "2 * 4096", "end": 9000}}),
        );
        let b = encode(&s).unwrap();
        check(
            &spec(json!({"swp.p1.swp.artifact.v1.ArtGet": {"start": 8192}})),
            &b,
        )
        .unwrap();
        // Unfilled placeholders still check the expression's shape.
        encode(&spec(
            json!({"artifact.ArtGet": {"start": "${ARTIFACT_CHUNK_BYTES} + 1"}}),
        ))
        .unwrap();
        assert!(encode(&spec(json!({"artifact.ArtGet": {"start": "2 *"}}))).is_err());
        assert_eq!(class_of(&s), Ok((14, 2)));
        assert_eq!(class_of(&spec(json!({"rpc.RpcResp": {}}))), Ok((12, 2)));
        assert_eq!(class_of(&spec(json!({"a2a.Result": {}}))), Ok((2, 4)));
        assert!(class_of(&spec(json!({"events.EventRecord": {}}))).is_err());
    }

    #[test]
    fn a_default_equals_an_absent_field_as_on_the_wire() {
        // events_0003's nested event with an explicit default: rpc_id "" and severity ""
        // are no octets on the wire, so a SUT that omits them sends the same payload.
        let sent = encode(&spec(json!({"events.EvtPublish": {"event": {
            "event_id": "e", "msg_id": "m"}}})))
        .unwrap();
        check(
            &spec(json!({"events.EvtPublish": {"event": {
                "event_id": "e", "msg_id": "m", "rpc_id": "", "ts_unix_ms": 0}}})),
            &sent,
        )
        .unwrap();
        // A different value still differs, and so does a nested message present on one
        // side only (a message field has presence: an empty one is two octets).
        let e = check(
            &spec(json!({"events.EvtPublish": {"event": {"event_id": "e", "rpc_id": "r"}}})),
            &sent,
        )
        .unwrap_err();
        assert!(e.to_string().contains("EvtPublish.event"), "{e}");
        let bare = encode(&spec(json!({"events.EvtPublish": {}}))).unwrap();
        assert!(check(&spec(json!({"events.EvtPublish": {"event": {}}})), &bare).is_err());
        check(&spec(json!({"events.EvtPublish": {}})), &bare).unwrap();
    }

    #[test]
    fn canonical_order() {
        let h = encode(&spec(
            json!({"a2a.Handshake": {"agent_id": "a", "capabilities": ["x"]}}),
        ))
        .unwrap();
        let hs = spec(json!({"a2a.Handshake": {}}));
        check_canonical(&hs, &h).unwrap();
        // The same fields, capabilities first: decodes alike, but is not canonical.
        let mut swapped = h[3..].to_vec();
        swapped.extend_from_slice(&h[..3]);
        check(&hs, &swapped).unwrap();
        assert!(check_canonical(&hs, &swapped).is_err());
    }

    #[test]
    fn errors_name_the_problem() {
        for (v, want) in [
            (json!({"a2a.Task": {"nope": 1}}), "has no field \"nope\""),
            (json!({"a2a.Task": {"kind": 5}}), "field kind"),
            (json!({"a2a.Nope": {}}), "no P1 message named"),
            (
                json!({"a2a.Task": {}, "a2a.Event": {}}),
                "exactly one message",
            ),
            (json!({"a2a.Task": {"task_id": "hex:zz"}}), "hex"),
        ] {
            let e = encode(&spec(v)).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }
}
