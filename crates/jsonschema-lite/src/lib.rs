//! A JSON Schema validator for the test suites (issue 29 item 4: the
//! `jsonschema` crate brought ~55 crates — regex engines, ICU data, big
//! numbers, URL parsing — into every cold test build for the dozen keywords
//! `docs/schema.json` uses).
//!
//! It checks the draft 2020-12 meaning of exactly these keywords: `type`
//! (a name or a list), `const`, `enum`, `properties`, `required`,
//! `additionalProperties` (a boolean or a schema), `items` (one schema for
//! every element), `minimum`, `maximum`, `oneOf`, `anyOf` and `$ref` (a JSON pointer
//! into the same document, `#/...`); `$schema`, `$id`, `$defs`, `title`,
//! `description` and `$comment` are annotations. Any other keyword is
//! refused when the schema is compiled ([`validator_for`] fails), so a
//! schema that starts using one cannot be half-checked silently: extend
//! this crate first. Numbers compare by value (`1` equals `1.0`; `2.0` is an
//! integer), as the specification says.
//!
//! The API is the subset of the `jsonschema` crate's the tests call
//! (dev-dependency `jsonschema = { package = "jsonschema-lite", ... }`).

use serde_json::Value;
use std::fmt;

const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "title",
    "description",
    "$comment",
];
const CHECKED: &[&str] = &[
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minimum",
    "maximum",
    "oneOf",
    "anyOf",
    "$ref",
];
const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// A schema that failed to compile: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError(pub String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaError {}

/// One way the instance breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// What is wrong.
    pub message: String,
    /// JSON pointer to the offending part of the instance (`""`: the root).
    pub instance_path: String,
    /// JSON pointer to the schema keyword that failed.
    pub schema_path: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A compiled schema (the document, checked for keywords this crate knows
/// and for `$ref`s that resolve).
#[derive(Debug, Clone)]
pub struct Validator {
    root: Value,
}

/// Compiles `schema`: every keyword known, every `$ref` resolvable.
pub fn validator_for(schema: &Value) -> Result<Validator, SchemaError> {
    check_schema(schema, schema, "")?;
    Ok(Validator {
        root: schema.clone(),
    })
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let p = r.strip_prefix('#')?;
    if p.is_empty() {
        return Some(root);
    }
    root.pointer(p)
}

fn check_schema(root: &Value, s: &Value, at: &str) -> Result<(), SchemaError> {
    let obj = match s {
        Value::Bool(_) => return Ok(()),
        Value::Object(o) => o,
        _ => {
            return Err(SchemaError(format!(
                "{at}: a schema must be an object or a boolean"
            )))
        }
    };
    let err = |m: String| Err(SchemaError(format!("{at}: {m}")));
    for (k, v) in obj {
        let here = format!("{at}/{}", escape(k));
        match k.as_str() {
            k if ANNOTATIONS.contains(&k) => {
                if k == "$defs" {
                    let Some(d) = v.as_object() else {
                        return err("$defs must be an object".into());
                    };
                    for (n, sub) in d {
                        check_schema(root, sub, &format!("{here}/{}", escape(n)))?;
                    }
                }
            }
            "type" => {
                let names: Vec<&Value> = match v {
                    Value::Array(a) => a.iter().collect(),
                    one => vec![one],
                };
                for n in names {
                    if !n.as_str().is_some_and(|n| TYPES.contains(&n)) {
                        return err(format!("unknown type {n}"));
                    }
                }
            }
            "const" => {}
            "enum" if v.is_array() => {}
            "required" if v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => {}
            "minimum" | "maximum" if v.is_number() => {}
            "properties" if v.is_object() => {
                for (n, sub) in v.as_object().expect("object") {
                    check_schema(root, sub, &format!("{here}/{}", escape(n)))?;
                }
            }
            "additionalProperties" | "items" => check_schema(root, v, &here)?,
            "oneOf" | "anyOf" if v.as_array().is_some_and(|a| !a.is_empty()) => {
                for (i, sub) in v.as_array().expect("array").iter().enumerate() {
                    check_schema(root, sub, &format!("{here}/{i}"))?;
                }
            }
            "$ref" => match v.as_str() {
                Some(r) if resolve(root, r).is_some() => {}
                _ => return err(format!("$ref {v} does not resolve in this document")),
            },
            k if CHECKED.contains(&k) => return err(format!("`{k}` has a malformed value {v}")),
            k => {
                return err(format!(
                    "keyword `{k}` is not supported by jsonschema-lite (crates/jsonschema-lite: add it there)"
                ))
            }
        }
    }
    Ok(())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match (t, v) {
        ("integer", Value::Number(n)) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => type_name(v) == t,
    }
}

/// Equality of JSON values with numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(p), Some(q)) => p == q,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        _ => a == b,
    }
}

impl Validator {
    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        let mut errors = Vec::new();
        self.check(&self.root, "", instance, "", &mut errors, true);
        errors.is_empty()
    }

    /// Every way `instance` breaks the schema (none: valid).
    pub fn iter_errors(&self, instance: &Value) -> std::vec::IntoIter<ValidationError> {
        let mut errors = Vec::new();
        self.check(&self.root, "", instance, "", &mut errors, false);
        errors.into_iter()
    }

    /// Checks `v` (at `ip`) against schema `s` (at `sp`); with `first`,
    /// stops at the first error.
    fn check(
        &self,
        s: &Value,
        sp: &str,
        v: &Value,
        ip: &str,
        out: &mut Vec<ValidationError>,
        first: bool,
    ) {
        let obj = match s {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                out.push(ValidationError {
                    message: format!("{v} is not allowed here"),
                    instance_path: ip.into(),
                    schema_path: sp.into(),
                });
                return;
            }
            Value::Object(o) => o,
            _ => unreachable!("checked when compiled"),
        };
        let fail = |out: &mut Vec<ValidationError>, kw: &str, message: String| {
            out.push(ValidationError {
                message,
                instance_path: ip.into(),
                schema_path: format!("{sp}/{kw}"),
            });
        };
        for (k, kv) in obj {
            if first && !out.is_empty() {
                return;
            }
            match k.as_str() {
                "type" => {
                    let ok = match kv {
                        Value::Array(a) => a.iter().any(|t| is_type(v, t.as_str().unwrap_or(""))),
                        t => is_type(v, t.as_str().unwrap_or("")),
                    };
                    if !ok {
                        fail(out, k, format!("{v} is not of type {kv}"));
                    }
                }
                "const" if !same(v, kv) => {
                    fail(out, k, format!("{kv} was expected, not {v}"));
                }
                "enum" if !kv.as_array().expect("checked").iter().any(|e| same(v, e)) => {
                    fail(out, k, format!("{v} is not one of {kv}"));
                }
                "minimum" | "maximum" => {
                    if let (Some(x), Some(lim)) = (v.as_f64(), kv.as_f64()) {
                        let bad = if k == "minimum" { x < lim } else { x > lim };
                        if bad {
                            fail(out, k, format!("{v} is outside the {k} {kv}"));
                        }
                    }
                }
                "required" => {
                    if let Value::Object(o) = v {
                        for n in kv.as_array().expect("checked") {
                            let n = n.as_str().expect("checked");
                            if !o.contains_key(n) {
                                fail(out, k, format!("\"{n}\" is a required property"));
                            }
                        }
                    }
                }
                "properties" => {
                    if let Value::Object(o) = v {
                        for (n, sub) in kv.as_object().expect("checked") {
                            if let Some(x) = o.get(n) {
                                let e = escape(n);
                                self.check(
                                    sub,
                                    &format!("{sp}/properties/{e}"),
                                    x,
                                    &format!("{ip}/{e}"),
                                    out,
                                    first,
                                );
                            }
                        }
                    }
                }
                "additionalProperties" => {
                    if let Value::Object(o) = v {
                        let props = obj.get("properties").and_then(Value::as_object);
                        for (n, x) in o {
                            if props.is_some_and(|p| p.contains_key(n)) {
                                continue;
                            }
                            if kv == &Value::Bool(false) {
                                fail(
                                    out,
                                    k,
                                    format!("additional property \"{n}\" is not allowed"),
                                );
                            } else {
                                self.check(
                                    kv,
                                    &format!("{sp}/{k}"),
                                    x,
                                    &format!("{ip}/{}", escape(n)),
                                    out,
                                    first,
                                );
                            }
                        }
                    }
                }
                "items" => {
                    if let Value::Array(a) = v {
                        for (i, x) in a.iter().enumerate() {
                            self.check(
                                kv,
                                &format!("{sp}/items"),
                                x,
                                &format!("{ip}/{i}"),
                                out,
                                first,
                            );
                            if first && !out.is_empty() {
                                return;
                            }
                        }
                    }
                }
                "oneOf" | "anyOf" => {
                    // how many branches the value is valid under: oneOf
                    // wants exactly one, anyOf at least one
                    let n = kv
                        .as_array()
                        .expect("checked")
                        .iter()
                        .enumerate()
                        .filter(|(i, sub)| {
                            let mut e = Vec::new();
                            self.check(sub, &format!("{sp}/{k}/{i}"), v, ip, &mut e, true);
                            e.is_empty()
                        })
                        .count();
                    if k == "oneOf" && n != 1 {
                        fail(
                            out,
                            k,
                            format!("{v} is valid under {n} of the oneOf schemas, not exactly one"),
                        );
                    } else if k == "anyOf" && n == 0 {
                        fail(
                            out,
                            k,
                            format!("{v} is valid under none of the anyOf schemas"),
                        );
                    }
                }
                "$ref" => {
                    let r = kv.as_str().expect("checked");
                    let target = resolve(&self.root, r).expect("checked when compiled");
                    self.check(target, &r[1..], v, ip, out, first);
                }
                _ => {} // annotations
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, v: Value) -> Vec<String> {
        let s = validator_for(&schema).expect("compiles");
        let e: Vec<String> = s
            .iter_errors(&v)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert_eq!(s.is_valid(&v), e.is_empty());
        e
    }

    #[test]
    fn types_and_numbers() {
        assert!(errors(json!({"type": "integer"}), json!(3)).is_empty());
        assert!(errors(json!({"type": "integer"}), json!(3.0)).is_empty());
        assert_eq!(errors(json!({"type": "integer"}), json!(3.5)).len(), 1);
        assert_eq!(errors(json!({"type": "string"}), json!(3)).len(), 1);
        assert!(errors(json!({"type": ["string", "null"]}), json!(null)).is_empty());
        assert_eq!(
            errors(json!({"type": ["string", "null"]}), json!(false)).len(),
            1
        );
        assert!(errors(json!({"type": "number"}), json!(-2)).is_empty());
        assert_eq!(errors(json!({"minimum": 0}), json!(-1)).len(), 1);
        assert!(errors(json!({"minimum": 0, "maximum": 1}), json!(1.0)).is_empty());
        assert_eq!(errors(json!({"maximum": 1}), json!(1.5)).len(), 1);
        // not a number: the bounds do not apply
        assert!(errors(json!({"minimum": 0}), json!("x")).is_empty());
    }

    #[test]
    fn const_and_enum_compare_numbers_by_value() {
        assert!(errors(json!({"const": 1}), json!(1.0)).is_empty());
        assert_eq!(errors(json!({"const": "a"}), json!("b")).len(), 1);
        assert!(errors(json!({"enum": ["a", 2]}), json!(2.0)).is_empty());
        assert_eq!(errors(json!({"enum": ["a", 2]}), json!("c")).len(), 1);
    }

    #[test]
    fn objects() {
        let s = json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "additionalProperties": false
        });
        assert!(errors(s.clone(), json!({"a": "x", "b": 1})).is_empty());
        assert_eq!(
            errors(s.clone(), json!({"a": "x"})),
            ["\"b\" is a required property at "]
        );
        assert_eq!(
            errors(s.clone(), json!({"a": 1, "b": 1})),
            ["1 is not of type \"string\" at /a"]
        );
        assert_eq!(
            errors(s.clone(), json!({"a": "x", "b": 1, "c": 0})).len(),
            1
        );
        let m = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert!(errors(m.clone(), json!({"x": 1, "y": 2})).is_empty());
        assert_eq!(
            errors(m, json!({"x": 1, "y/z": "2"})),
            ["\"2\" is not of type \"integer\" at /y~1z"]
        );
    }

    #[test]
    fn arrays_refs_and_one_of() {
        let s = json!({
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "type": "array",
            "items": {"$ref": "#/$defs/pos"}
        });
        assert!(errors(s.clone(), json!([1, 2, 3])).is_empty());
        assert_eq!(errors(s, json!([1, 0, -1])).len(), 2);
        let o = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
        // 2 is both an integer and a number: two branches, not one
        assert_eq!(errors(o.clone(), json!(2)).len(), 1);
        assert!(errors(o.clone(), json!(2.5)).is_empty());
        assert_eq!(errors(o, json!("x")).len(), 1);
        // anyOf: one branch or more
        let a = json!({"anyOf": [{"type": "integer"}, {"type": "number"}]});
        assert!(errors(a.clone(), json!(2)).is_empty());
        assert!(errors(a.clone(), json!(2.5)).is_empty());
        assert_eq!(errors(a, json!("x")).len(), 1);
        assert!(errors(json!(true), json!({"any": 1})).is_empty());
        assert_eq!(errors(json!({"items": false}), json!([1])).len(), 1);
    }

    #[test]
    fn unknown_keywords_and_dangling_refs_do_not_compile() {
        let e = validator_for(&json!({"pattern": "^a"})).unwrap_err();
        assert!(e.0.contains("`pattern` is not supported"), "{e}");
        assert!(validator_for(&json!({"properties": {"a": {"$ref": "#/$defs/x"}}})).is_err());
        assert!(validator_for(&json!({"type": "integr"})).is_err());
        assert!(validator_for(&json!({"required": "a"})).is_err());
    }

    #[test]
    fn the_projects_schema_compiles_and_rejects_a_bad_document() {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let v = validator_for(&schema).expect("docs/schema.json uses only supported keywords");
        assert!(!v.is_valid(&json!({"schema": "metal-profiler/1", "kernels": [{"name": "x"}]})));
        assert!(!v.is_valid(&json!([])));
    }
}
