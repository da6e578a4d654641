//! Helpers shared by the schema tests: paths, loading, compiling and
//! checking a schema, editing a fixture by JSON pointer, and comparing a
//! fixture with what the Rust model writes back.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub fn schema_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schema")
        .join(format!("{name}.schema.json"))
}

pub fn fixture_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

pub fn load_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

pub fn compile(name: &str) -> Validator {
    let schema = load_json(&schema_path(name));
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", schema_path(name).display()))
}

pub fn check(name: &str, instance: &Value) -> Result<(), Vec<String>> {
    let validator = compile(name);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            format!("{at}: {e} (schema {})", e.schema_path())
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

pub fn fixture(file: &str) -> Value {
    load_json(&fixture_path(file))
}

pub fn split(pointer: &str) -> (&str, &str) {
    let i = pointer
        .rfind('/')
        .unwrap_or_else(|| panic!("bad pointer {pointer}"));
    (&pointer[..i], &pointer[i + 1..])
}

pub fn node<'a>(v: &'a mut Value, pointer: &str) -> &'a mut Value {
    v.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer:?} in the fixture"))
}

pub fn without(v: &Value, pointer: &str) -> Value {
    let mut v = v.clone();
    let (parent, key) = split(pointer);
    let removed = match node(&mut v, parent) {
        Value::Object(m) => m.remove(key),
        _ => panic!("{parent:?} is not an object"),
    };
    assert!(removed.is_some(), "no {pointer} in the fixture");
    v
}

pub fn with(v: &Value, pointer: &str, new: Value) -> Value {
    let mut v = v.clone();
    let (parent, key) = split(pointer);
    match node(&mut v, parent) {
        Value::Object(m) => {
            m.insert(key.to_string(), new);
        }
        Value::Array(a) => {
            let i: usize = key
                .parse()
                .unwrap_or_else(|_| panic!("{pointer}: not an index"));
            *a.get_mut(i)
                .unwrap_or_else(|| panic!("no {pointer} in the fixture")) = new;
        }
        _ => panic!("{parent:?} is neither an object nor an array"),
    }
    v
}

pub fn with_all(v: &Value, changes: &[(&str, Value)]) -> Value {
    changes.iter().fold(v.clone(), |v, (pointer, new)| {
        with(&v, pointer, new.clone())
    })
}

pub fn renamed(v: &Value, pointer: &str, new_key: &str) -> Value {
    let (parent, _) = split(pointer);
    let old = v
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the fixture"))
        .clone();
    with(&without(v, pointer), &format!("{parent}/{new_key}"), old)
}

pub fn round_trip<T: DeserializeOwned + Serialize>(what: &str, v: &Value) -> Value {
    let typed: T = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what} does not deserialise: {e}"));
    serde_json::to_value(&typed).unwrap_or_else(|e| panic!("{what} does not serialise: {e}"))
}

pub fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(&format!("{path}/{k}"), p, q) {
                            return Some(d);
                        }
                    }
                    (p, q) => return Some(format!("{path}/{k}: {p:?} vs {q:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{path}/{i}"), p, q)),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} vs {b}")),
    }
}

pub fn check_object_schemas(at: &str, s: &Value, problems: &mut Vec<String>) {
    match s {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                // Closed objects define fields; property maps elsewhere (in
                // if/then/else, anyOf) only refine the types of fields
                // defined and described already.
                let closed = m.get("additionalProperties") == Some(&Value::Bool(false));
                if closed {
                    for (k, p) in props {
                        if p.get("description")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            problems.push(format!("{at}/properties/{k}: no description"));
                        }
                    }
                }
                if closed && m.contains_key("type") {
                    let mut required: Vec<&str> = m
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
                    required.sort_unstable();
                    names.sort_unstable();
                    if required != names {
                        problems.push(format!(
                            "{at}: required {required:?} differs from properties {names:?}"
                        ));
                    }
                }
            }
            for (k, v) in m {
                check_object_schemas(&format!("{at}/{k}"), v, problems);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                check_object_schemas(&format!("{at}/{i}"), v, problems);
            }
        }
        _ => {}
    }
}
