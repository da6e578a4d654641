//! docs/architecture.md kept true: its crate map names every crate under
//! `crates/` and no other, each row's "uses (misura crates)" column is the
//! crate's real `[dependencies]` on other misura crates, and the rules it
//! states that can be checked mechanically hold: no library crate depends
//! on `anyhow` nor on `clap`, the crates
//! that use no other misura crate, the one crate with `unsafe`, and
//! `#![forbid(unsafe_code)]` in every other library. The lists are read from
//! the doc, so a change to the code fails here until the doc follows.
//! Like the rest of `tests/shape.rs`, whose module this is, these read the
//! files as text.

use super::rust_files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Names = BTreeSet<String>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn doc() -> String {
    read(&root().join("docs/architecture.md"))
}

/// The doc's text between the heading `## {title}` and the next `## `.
fn section(doc: &str, title: &str) -> String {
    let head = format!("\n## {title}\n");
    let start = doc
        .find(&head)
        .unwrap_or_else(|| panic!("docs/architecture.md has no section {title:?}"))
        + head.len();
    let end = doc[start..].find("\n## ").map_or(doc.len(), |i| start + i);
    doc[start..end].to_string()
}

/// The section's prose on one line: white space folded to single spaces.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names in backquotes in `text`: `` `wire`, `stats` `` → wire, stats.
fn quoted(text: &str) -> Names {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// `text` without what stands in parentheses (notes, not crates).
fn outside_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// Every crate directory under `crates/`, by its short name, with what its
/// Cargo.toml says.
fn crates() -> BTreeMap<String, Manifest> {
    let dir = root().join("crates");
    std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, Manifest::read(&p))
        })
        .collect()
}

/// What one crate's Cargo.toml and sources say.
struct Manifest {
    dir: PathBuf,
    package: String,
    /// The keys of `[dependencies]` (not dev- or build-dependencies).
    dependencies: Names,
}

impl Manifest {
    fn read(dir: &Path) -> Manifest {
        let text = read(&dir.join("Cargo.toml"));
        let mut table = "";
        let mut package = String::new();
        let mut dependencies = Names::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                table = line;
                continue;
            }
            let key = line
                .split(|c: char| c == '=' || c == '.' || c.is_whitespace())
                .next()
                .unwrap_or("");
            if table == "[package]" && key == "name" {
                package = line.split('"').nth(1).unwrap_or("").to_string();
            } else if table == "[dependencies]" && !key.is_empty() && !key.starts_with('#') {
                dependencies.insert(key.to_string());
            }
        }
        Manifest {
            dir: dir.to_path_buf(),
            package,
            dependencies,
        }
    }

    /// The misura crates it depends on, by short name (`misura-wire` → `wire`).
    fn misura_uses(&self) -> Names {
        self.dependencies
            .iter()
            .filter_map(|d| d.strip_prefix("misura-"))
            .map(str::to_string)
            .collect()
    }

    fn is_library(&self) -> bool {
        self.dir.join("src/lib.rs").is_file()
    }
}

/// The crate map's rows: each crate's short name and its "uses" cell read
/// as the doc words it: names in backquotes, "—" for none, "and the above"
/// adding the row above's crates, "all of them" every other crate, and
/// what stands in parentheses a note.
fn crate_map(doc: &str, all: &Names) -> Vec<(String, Names)> {
    let mut rows: Vec<(String, Names)> = Vec::new();
    for line in section(doc, "The crate map").lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let name = cells[1].trim_matches('`').to_string();
        let uses_cell = cells[cells.len() - 2];
        let mut uses = quoted(&outside_parentheses(uses_cell));
        if uses_cell.contains("all of them") {
            uses.extend(all.iter().filter(|c| **c != name).cloned());
        }
        if uses_cell.contains("the above") {
            let above = &rows.last().expect("\"the above\" on the first row").1;
            uses.extend(above.iter().cloned());
        }
        rows.push((name, uses));
    }
    rows
}

#[test]
fn the_crate_map_names_every_crate_and_no_other() {
    let crates = crates();
    let on_disk: Names = crates.keys().cloned().collect();
    let mapped: Vec<String> = crate_map(&doc(), &on_disk)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let in_map: Names = mapped.iter().cloned().collect();
    assert_eq!(mapped.len(), in_map.len(), "a crate has two rows");
    assert_eq!(
        in_map, on_disk,
        "the crate map of docs/architecture.md against crates/"
    );
    for (name, m) in &crates {
        let package = if name == "misura" {
            "misura".to_string()
        } else {
            format!("misura-{name}")
        };
        assert_eq!(m.package, package, "crates/{name}'s package name");
    }
}

#[test]
fn the_crate_map_says_what_each_crate_uses() {
    let crates = crates();
    let all: Names = crates.keys().cloned().collect();
    let mut wrong = Vec::new();
    for (name, doc_uses) in crate_map(&doc(), &all) {
        let Some(m) = crates.get(&name) else { continue };
        let real = m.misura_uses();
        if real != doc_uses {
            wrong.push(format!(
                "{name}: the doc says {doc_uses:?}, Cargo.toml has {real:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's crate map, \"uses (misura crates)\":\n  {}",
        wrong.join("\n  ")
    );
}

fn libraries_depending_on(dep: &str) -> Names {
    crates()
        .into_iter()
        .filter(|(_, m)| m.is_library() && m.dependencies.contains(dep))
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn the_rules_name_the_libraries_on_anyhow_and_clap() {
    let rules = folded(&section(&doc(), "The rules"));
    assert!(
        rules.contains("`anyhow` is a dependency of the binary alone"),
        "\"The rules\" no longer say that no library crate depends on anyhow"
    );
    assert_eq!(
        libraries_depending_on("anyhow"),
        Names::new(),
        "the library crates that depend on anyhow: none (docs/architecture.md, The rules)"
    );
    assert!(
        rules.contains("`clap` is a dependency of the binary alone"),
        "\"The rules\" no longer say that no library crate depends on clap"
    );
    assert_eq!(
        libraries_depending_on("clap"),
        Names::new(),
        "the library crates that depend on clap: none (docs/architecture.md, The rules)"
    );
}

#[test]
fn the_leaves_use_no_other_misura_crate() {
    let text = folded(&section(&doc(), "Dependency direction"));
    let phrase = " use no other misura crate";
    let end = text
        .find(phrase)
        .expect("\"Dependency direction\" names the crates that use no other misura crate");
    // The sentence starts after a full stop, a semicolon or the drawing.
    let before = &text[..end];
    let start = [
        before.rfind(". ").map(|i| i + 1),
        before.rfind(';').map(|i| i + 1),
        before.rfind("```").map(|i| i + 3),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);
    let said = quoted(&before[start..]);
    let real: Names = crates()
        .into_iter()
        .filter(|(_, m)| m.misura_uses().is_empty())
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        said, real,
        "the crates that use no other misura crate (docs/architecture.md)"
    );
}

/// Whether `code` has an `unsafe` block, function, impl, trait or extern
/// block, comments aside.
fn has_unsafe(code: &str) -> bool {
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .any(|l| {
            l.split("unsafe").skip(1).any(|after| {
                let after = after.trim_start();
                ["{", "fn ", "impl", "trait ", "extern "]
                    .iter()
                    .any(|k| after.starts_with(k))
            })
        })
}

#[test]
fn unsafe_lives_in_one_crate_and_every_other_library_forbids_it() {
    let rules = folded(&section(&doc(), "The rules"));
    let claim = " is the only crate with `unsafe`";
    let end = rules
        .find(claim)
        .expect("\"The rules\" name the crate with unsafe");
    let start = rules[..end].rfind("**").map_or(0, |i| i + 2);
    let only: Vec<String> = quoted(&rules[start..end]).into_iter().collect();
    assert_eq!(only.len(), 1, "one crate has unsafe: {only:?}");
    let forbid = "#![forbid(unsafe_code)]";
    let mut wrong = Vec::new();
    for (name, m) in crates() {
        let mut files = Vec::new();
        rust_files(&m.dir.join("src"), &mut files);
        let with_unsafe = files.iter().any(|f| has_unsafe(&read(f)));
        let top = if m.is_library() { "lib.rs" } else { "main.rs" };
        let forbids = read(&m.dir.join("src").join(top))
            .lines()
            .any(|l| l.trim() == forbid);
        let is_the_one = name == only[0];
        if with_unsafe != is_the_one {
            wrong.push(format!("{name}: unsafe code {with_unsafe}"));
        }
        // Every library but the one says so; the binary has no such line.
        if forbids != (m.is_library() && !is_the_one) {
            wrong.push(format!("{name}: {forbid} {forbids}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_readers_read() {
    assert_eq!(
        quoted(&outside_parentheses("`wire`, `sys` (the `HostFacts` type)")),
        ["sys", "wire"].map(String::from).into()
    );
    assert!(has_unsafe("    unsafe { x() }") && has_unsafe("pub unsafe fn f()"));
    assert!(!has_unsafe("#![forbid(unsafe_code)]") && !has_unsafe("// unsafe { }"));
    let all: Names = ["a", "b", "c"].map(String::from).into();
    let doc = "x\n## The crate map\n\n| crate | what | uses |\n|---|---|---|\n\
               | `a` | leaf | — |\n| `b` | on a | `a` |\n| `c` | top | all of them |\n## Next\n";
    let rows = crate_map(doc, &all);
    assert_eq!(rows.len(), 3);
    assert!(rows[0].1.is_empty());
    assert_eq!(rows[2].1, ["a", "b"].map(String::from).into());
}
