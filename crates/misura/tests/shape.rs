//! The binary's shape, kept: no import cycles between its files, no file
//! over 600 lines and no function over 150 lines unless the file says why at
//! its top (a line `//! Long: …`). These read the sources as text; they are
//! a guard for whoever changes the code next, not a parser.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

/// `commands/rtt/mod.rs` → `commands::rtt`; `main.rs` → `crate`.
fn module_of(p: &Path) -> String {
    let rel = p.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts == ["main"] {
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

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let modules: BTreeMap<String, PathBuf> =
        files.iter().map(|p| (module_of(p), p.clone())).collect();
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

#[test]
fn no_import_cycles_between_the_binarys_files() {
    let g = graph();
    assert!(
        g.len() > 20,
        "found only {} modules: is src/ where it was?",
        g.len()
    );
    let c = cycles(&g);
    assert!(c.is_empty(), "import cycles: {c:?}");
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

#[test]
fn files_and_functions_stay_small_or_say_why() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut problems = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        if says_why_long(&text) {
            continue;
        }
        let rel = p.strip_prefix(src()).unwrap().display().to_string();
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
