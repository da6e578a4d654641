//! Helpers shared by the schema tests (`crates/report/tests/schema*.rs`,
//! `html_rfc2544.rs`, and misura's `tests/schema_more.rs`, which reaches this
//! file by `#[path]`): paths, loading, compiling and checking a schema, the
//! checks every schema passes (a draft 2020-12 document, closed objects
//! described and required, definitions shared with `oneway.schema.json`),
//! editing a fixture by JSON pointer, and comparing a fixture with what the
//! Rust model writes back.
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

/// Panics with every error unless `instance` satisfies `name`.schema.json.
pub fn assert_valid(name: &str, what: &str, instance: &Value) {
    if let Err(errors) = check(name, instance) {
        panic!(
            "{what} fails {name}.schema.json with {} error(s):\n  {}",
            errors.len(),
            errors.join("\n  ")
        );
    }
}

/// Panics if `instance` satisfies `name`.schema.json.
pub fn assert_invalid(name: &str, what: &str, instance: &Value) {
    if check(name, instance).is_ok() {
        panic!("{what} should fail {name}.schema.json but passes");
    }
}

/// Valid for `name`.schema.json, unchanged through the Rust model `T`, and
/// what the model writes back valid too.
pub fn assert_valid_and_modelled<T: DeserializeOwned + Serialize>(
    name: &str,
    what: &str,
    v: &Value,
) {
    assert_valid(name, what, v);
    let back = round_trip::<T>(what, v);
    if let Some(d) = first_difference("", v, &back) {
        panic!("{what} changes through the Rust model (input vs re-serialised) at {d}");
    }
    assert_valid(name, &format!("{what} re-serialised from the model"), &back);
}

/// `v` (the fixture `file`) with a newer `format_version`, 3, or one
/// written as a string fails `name`.schema.json.
pub fn assert_refuses_other_versions(name: &str, file: &str, v: &Value) {
    assert_invalid(
        name,
        &format!("{file} with format_version 3"),
        &with(v, "/format_version", serde_json::json!(3)),
    );
    assert_invalid(
        name,
        &format!("{file} with format_version \"1\""),
        &with(v, "/format_version", serde_json::json!("1")),
    );
}

/// `v` (the fixture `file`) without any one of its top-level fields fails
/// `name`.schema.json.
pub fn assert_refuses_each_field_missing(name: &str, file: &str, v: &Value) {
    let keys = v.as_object().expect("fixture is an object").keys();
    for key in keys {
        assert_invalid(
            name,
            &format!("{file} without {key}"),
            &without(v, &format!("/{key}")),
        );
    }
}

/// `v` (the fixture `file`) with the value at `pointer` written as a string
/// fails `name`.schema.json, and the Rust model `T` refuses it too.
pub fn assert_refuses_string_at<T: DeserializeOwned>(
    name: &str,
    file: &str,
    v: &Value,
    pointer: &str,
) {
    let as_string = v
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in {file}"))
        .to_string();
    let bad = with(v, pointer, Value::String(as_string));
    assert_invalid(name, &format!("{file} with a string at {pointer}"), &bad);
    assert!(
        serde_json::from_value::<T>(bad).is_err(),
        "the Rust model accepts a string at {pointer} of {file}"
    );
}

/// `name`.schema.json is a valid draft 2020-12 document with an `$id` ending
/// in its file name, a title and a description, and it compiles.
pub fn assert_schema_document(name: &str) {
    let schema = load_json(&schema_path(name));
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("{name}.schema.json is not a valid schema: {e}");
    }
    assert_eq!(
        schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{name}: $schema"
    );
    for key in ["$id", "title", "description"] {
        assert!(
            schema[key].as_str().is_some_and(|s| !s.is_empty()),
            "{name}: {key} missing"
        );
    }
    assert!(
        schema["$id"]
            .as_str()
            .is_some_and(|id| id.ends_with(&format!("/{name}.schema.json"))),
        "{name}: $id"
    );
    compile(name);
}

/// Every closed object of `name`.schema.json describes and requires each of
/// its properties (`check_object_schemas`).
pub fn assert_described_and_required(name: &str) {
    let mut problems = Vec::new();
    check_object_schemas("#", &load_json(&schema_path(name)), &mut problems);
    assert!(
        problems.is_empty(),
        "{name}.schema.json:\n  {}",
        problems.join("\n  ")
    );
}

/// The provenance fields every result carries at its top level (`Meta`).
pub const META_FIELDS: [&str; 5] = [
    "format_version",
    "tool",
    "tool_version",
    "started_at",
    "command",
];

/// `name`.schema.json repeats `defs` from `oneway.schema.json` word for
/// word (each schema stands alone; the copies must not drift apart).
pub fn assert_same_defs_as_oneway(name: &str, defs: &[&str]) {
    let s = load_json(&schema_path(name));
    let oneway = load_json(&schema_path("oneway"));
    for def in defs {
        assert!(
            s["$defs"].get(def).is_some(),
            "{name}.schema.json has no $defs/{def}"
        );
        assert_eq!(
            s["$defs"].get(def),
            oneway["$defs"].get(def),
            "{name}: $defs/{def} differs from oneway.schema.json"
        );
    }
}

/// `assert_same_defs_as_oneway`, and the top-level `META_FIELDS` described
/// as in `oneway.schema.json` too.
pub fn assert_shares_oneway(name: &str, defs: &[&str]) {
    assert_same_defs_as_oneway(name, defs);
    let s = load_json(&schema_path(name));
    let oneway = load_json(&schema_path("oneway"));
    for key in META_FIELDS {
        assert_eq!(
            s["properties"][key], oneway["properties"][key],
            "{name}: properties/{key} differs from oneway.schema.json"
        );
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
