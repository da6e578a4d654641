//! The workspace's shape, kept: no import cycles between the files of a
//! crate, no command importing another in any crate (what two commands
//! share lives in a library or in `shared/`), and in every crate no file
//! over 600 lines and no function over 150 lines unless the file says why at
//! its top (a line `//! Long: …`), and no library printing (the binary does).
//! These read the sources as text; they are
//! a guard for whoever changes the code next, not a parser.
//! `shape/architecture.rs` keeps docs/architecture.md's crate map and rules
//! true to the Cargo.tomls.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "shape/architecture.rs"]
mod architecture;

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `src/` of every crate of the workspace (the binary's among them).
fn crate_srcs() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&crates)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// `crates/wire/src` → `wire`.
fn crate_name(src: &Path) -> String {
    src.parent()
        .and_then(|c| c.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `commands/rtt/mod.rs` → `commands::rtt`; `main.rs` or `lib.rs` → `crate`.
fn module_of(src: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts == ["main"] || parts == ["lib"] {
        return "crate".into();
    }
    parts.join("::")
}

/// The text before the unit-test module (`#[cfg(test)]` then `mod …`):
/// unit tests may use anything. A `#[cfg(test)]` on anything else stays.
fn code_of(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]") {
        let start = at + i;
        let after = text[start + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod ") || after.starts_with("pub mod ") {
            return &text[..start];
        }
        at = start + 1;
    }
    text
}

fn says_why_long(text: &str) -> bool {
    text.lines()
        .take_while(|l| l.starts_with("//!") || l.is_empty())
        .any(|l| l.starts_with("//! Long:"))
}

/// Paths `a::b::c` named after `crate::` or `super::` in `code`.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::b, c::{d, e}}`: each item's leading path.
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let item = item.trim();
                let end = item
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(item.len());
                out.push(item[..end].split("::").filter(|s| !s.is_empty()).collect());
            }
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

/// The imports between the files of the crate whose sources are `src`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|p| (module_of(src, p), p.clone()))
        .collect();
    let longest_module = |parts: &[&str]| -> Option<String> {
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("::"))
            .find(|m| modules.contains_key(m))
    };
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, p) in &modules {
        let text = std::fs::read_to_string(p).unwrap();
        let code = code_of(&text);
        let own: Vec<&str> = if m == "crate" {
            vec![]
        } else {
            m.split("::").collect()
        };
        // `super` of module a::b (a/b.rs or a/b/mod.rs) is a.
        let parent: Vec<&str> = own[..own.len().saturating_sub(1)].to_vec();
        let edges = g.entry(m.clone()).or_default();
        for path in paths_after(code, "crate::") {
            if let Some(t) = longest_module(&path) {
                edges.insert(t);
            }
        }
        for path in paths_after(code, "super::") {
            let full: Vec<&str> = parent.iter().copied().chain(path.iter().copied()).collect();
            if let Some(t) = longest_module(&full) {
                edges.insert(t);
            }
        }
        // A parent that uses a child module's items by its name.
        for line in code.lines() {
            if let Some(child) = ["pub mod ", "pub(crate) mod ", "pub(super) mod ", "mod "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
                .and_then(|r| r.strip_suffix(';'))
            {
                let child_mod = if m == "crate" {
                    child.to_string()
                } else {
                    format!("{m}::{child}")
                };
                let named = code.contains(&format!("{child}::"));
                if named && modules.contains_key(&child_mod) {
                    edges.insert(child_mod);
                }
            }
        }
        edges.remove(m);
    }
    g
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Import cycles known and left for later, by crate; this list only
/// shrinks. In `measure` and `sys` a parent module and its children use
/// each other's items; and
/// `sys::packet`'s doc links `crate::udp`, which imports `packet` (the
/// finder reads text, comments too).
const KNOWN_CYCLES: &[(&str, &[&str])] = &[
    ("measure", &["load", "load::model"]),
    ("sys", &["hostinfo", "timer"]),
    ("sys", &["packet", "udp"]),
    (
        "sys",
        &["ring", "ring::mmsg", "ring::probe", "ring::rx", "ring::tx"],
    ),
    // Came with the PHC cross-timestamps (58d91ea), for their owner.
    ("sys", &["phc", "phc_cross"]),
];

#[test]
fn no_import_cycles_between_the_files_of_a_crate() {
    let g = graph(&src());
    assert!(
        g.len() > 20,
        "found only {} modules: is src/ where it was?",
        g.len()
    );
    let mut found = Vec::new();
    for src in crate_srcs() {
        let name = crate_name(&src);
        for c in cycles(&graph(&src)) {
            let known = KNOWN_CYCLES
                .iter()
                .any(|(k, m)| *k == name && c.iter().map(String::as_str).eq(m.iter().copied()));
            if !known {
                found.push(format!("{name}: {c:?}"));
            }
        }
    }
    assert!(found.is_empty(), "import cycles:\n  {}", found.join("\n  "));
}

/// The command (folder under `commands/`) a module belongs to.
fn command_of(m: &str) -> Option<String> {
    let mut parts = m.split("::");
    (parts.next() == Some("commands"))
        .then(|| parts.next().map(String::from))
        .flatten()
}

/// The commands each command's files import, in one crate's import graph.
fn command_imports(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, targets) in g {
        let Some(from) = command_of(m) else { continue };
        for t in targets {
            if let Some(to) = command_of(t).filter(|to| *to != from) {
                out.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    out
}

/// In every crate (the binary's `commands/` and any library that grows
/// one), no command imports another: what two commands share lives in a
/// library (`misura-rtt`, `misura-agent`, …) or in the binary's `shared/`.
#[test]
fn no_command_imports_another() {
    let binary = graph(&src());
    assert!(
        binary.keys().filter(|m| command_of(m).is_some()).count() >= 20,
        "the finder lost the binary's commands: {:?}",
        binary.keys().collect::<Vec<_>>()
    );
    let mut wrong = Vec::new();
    for src in crate_srcs() {
        let name = crate_name(&src);
        for (from, tos) in command_imports(&graph(&src)) {
            for to in tos {
                wrong.push(format!("{name}: commands::{from} imports commands::{to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "move what two commands share into a library or shared/:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_command_import_finder_finds_them() {
    let mut g = BTreeMap::new();
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    g.insert(
        "commands::load::phases".to_string(),
        set(&["commands::rtt", "shared::output"]),
    );
    g.insert(
        "commands::rtt".to_string(),
        set(&["commands::rtt::plan", "shared::output"]),
    );
    g.insert("shared::output".to_string(), set(&["commands::agent"]));
    let found = command_imports(&g);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found["load"], set(&["rtt"]));
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
}

/// (lines, name, first line) of every function outside unit tests.
fn functions(code: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        // Qualifiers before `fn`: visibility, const, async, unsafe, extern.
        let mut t = l.trim_start();
        loop {
            let before = t;
            for q in [
                "pub(crate) ",
                "pub(super) ",
                "pub ",
                "const ",
                "async ",
                "unsafe ",
                "extern \"C\" ",
            ] {
                t = t.strip_prefix(q).unwrap_or(t);
            }
            if let Some(r) = t.strip_prefix("pub(in ") {
                t = r.split_once(") ").map_or(t, |(_, rest)| rest);
            }
            if t == before {
                break;
            }
        }
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i64, false);
        for (j, l2) in lines.iter().enumerate().skip(i) {
            let (o, c) = (
                l2.matches('{').count() as i64,
                l2.matches('}').count() as i64,
            );
            depth += o - c;
            opened |= o > 0;
            if !opened && l2.trim_end().ends_with(';') {
                break;
            }
            if opened && depth <= 0 {
                out.push((j - i + 1, name.clone(), i + 1));
                break;
            }
        }
    }
    out
}

/// Long files whose reason cannot be written at their top yet, with it:
/// they are being changed in place by work not landed yet.
const LONG_FOR_NOW: &[(&str, &str)] = &[];

#[test]
fn files_and_functions_stay_small_or_say_why() {
    let mut files = Vec::new();
    for src in crate_srcs() {
        rust_files(&src, &mut files);
    }
    assert!(
        files.len() > 200,
        "found only {} files: are the crates where they were?",
        files.len()
    );
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = crates.canonicalize().unwrap();
    let mut problems = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let rel = p.canonicalize().unwrap();
        let rel = rel.strip_prefix(&crates).unwrap().display().to_string();
        if says_why_long(&text) || LONG_FOR_NOW.iter().any(|(f, _)| *f == rel) {
            continue;
        }
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            problems.push(format!("{rel}: {n} lines (over {MAX_FILE_LINES})"));
        }
        for (len, name, at) in functions(code_of(&text)) {
            if len > MAX_FN_LINES {
                problems.push(format!(
                    "{rel}:{at}: fn {name} is {len} lines (over {MAX_FN_LINES})"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "split these, or write `//! Long: why` at the file's top:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_function_measure_counts_lines() {
    let code = "fn a() {\n    if x {\n    }\n}\nfn b();\npub fn c() { 1 }\npub(crate) const unsafe fn d() {\n}\n";
    let f = functions(code);
    assert_eq!(f[0], (4, "a".to_string(), 1));
    assert_eq!(f[1], (1, "c".to_string(), 6));
    assert_eq!(f[2], (2, "d".to_string(), 7));
    let with_test_use = "#[cfg(test)]\nuse x;\nfn a() {}\n#[cfg(test)]\nmod tests {}\n";
    assert_eq!(code_of(with_test_use), "#[cfg(test)]\nuse x;\nfn a() {}\n");
}

/// The printing macros a library must not use: it reports through `log` or
/// returns values, and the binary writes them (its logger, `shared/logger.rs`).
const PRINTS: &[&str] = &["eprintln!", "println!", "eprint!", "print!("];

/// `file:line: text` of each print in `code` (comment lines skipped).
fn prints_in(rel: &str, code: &str) -> Vec<String> {
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| PRINTS.iter().any(|p| l.contains(p)))
        .map(|(i, l)| format!("{rel}:{}: {}", i + 1, l.trim()))
        .collect()
}

#[test]
fn libraries_do_not_print() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = crates.canonicalize().unwrap();
    let mut found = Vec::new();
    for src in crate_srcs() {
        if crate_name(&src) == "misura" {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for p in files.iter().filter(|p| !p.ends_with("tests.rs")) {
            let text = std::fs::read_to_string(p).unwrap();
            let rel = p.canonicalize().unwrap();
            let rel = rel.strip_prefix(&crates).unwrap().display().to_string();
            found.extend(prints_in(&rel, code_of(&text)));
        }
    }
    assert!(
        found.is_empty(),
        "libraries report through `log` (log::warn!, …) or return values; the \
         binary prints. Printing in a library's non-test code:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_print_finder_finds_prints() {
    let code = "fn a() {\n    // eprintln!(\"no\")\n    eprint!(\"x\");\n    log::warn!(\"y\");\n    print!(\"z\");\n}\n";
    assert_eq!(
        prints_in("f.rs", code),
        ["f.rs:3: eprint!(\"x\");", "f.rs:5: print!(\"z\");"]
    );
}
