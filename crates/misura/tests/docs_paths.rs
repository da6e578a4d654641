//! Every file path a user is sent to exists: the paths printed by any `--help`
//! (every command and subcommand, walked from `misura --help`), and the
//! relative links and repository paths named in README.md and docs/**.md,
//! with the heading a link's `#anchor` names. Issue 36: `misura rtt --help`
//! sent its reader to docs/guide/round-trips.md, a page that never existed.
//! No root needed.

mod common;

use common::misura;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `misura ARGS --help`, its stdout.
fn help(args: &[&str]) -> String {
    let out = misura()
        .args(args)
        .arg("--help")
        .output()
        .expect("running misura --help");
    assert!(
        out.status.success(),
        "misura {} --help exited {:?}: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("--help is UTF-8")
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() || !line.starts_with(' ') {
            break;
        }
        // A name sits at two spaces; a wrapped description line deeper.
        if let Some(rest) = line.strip_prefix("  ") {
            if rest.starts_with(' ') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() && name != "help" {
                names.push(name);
            }
        }
    }
    names
}

/// Repository paths a text names: `docs/…`, `examples/…`, `scripts/…`,
/// `schema/…`, `packaging/…` (a path ends at the first character that
/// cannot be in one; a trailing `.` or `,` is punctuation).
fn repo_paths(text: &str) -> BTreeSet<String> {
    const ROOTS: [&str; 5] = ["docs/", "examples/", "scripts/", "schema/", "packaging/"];
    let mut found = BTreeSet::new();
    for (i, _) in text.char_indices() {
        let rest = &text[i..];
        let Some(root) = ROOTS.iter().find(|r| rest.starts_with(**r)) else {
            continue;
        };
        // Only at the start of a word: not `foo/docs/…`, not `man/docs`.
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| {
            c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' || c == '.'
        }) {
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '*'))
            .collect();
        let path = path.trim_end_matches(['.', ',']);
        if path.len() > root.len() && !path.contains('*') {
            found.insert(path.to_string());
        }
    }
    found
}

/// The markdown files of the user's documentation: README.md and docs/**.md.
fn doc_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("reading docs/").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut files);
    files.sort();
    files
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut set = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            set.insert(anchor(line.trim_start_matches('#')));
        }
    }
    set
}

/// Relative link targets `](target)` of a markdown text.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = markdown;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") && !target.contains(' ') {
                out.push(target.to_string());
            }
        }
    }
    out
}

#[test]
fn every_doc_path_printed_by_help_exists() {
    let mut seen = 0;
    let mut missing = Vec::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(cmd) = queue.pop() {
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let text = help(&args);
        seen += 1;
        for path in repo_paths(&text) {
            if !repo().join(&path).exists() {
                missing.push(format!("`misura {} --help` names {path}", args.join(" ")));
            }
        }
        if cmd.len() < 3 {
            for sub in subcommands(&text) {
                let mut next = cmd.clone();
                next.push(sub);
                queue.push(next);
            }
        }
    }
    assert!(
        seen > 30,
        "walked only {seen} help texts: is the Commands: list parsed?"
    );
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_path_and_link_in_the_guides_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("reading a doc");
        let shown = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        for path in repo_paths(&text) {
            checked += 1;
            if !repo().join(&path).exists() {
                missing.push(format!("{shown} names {path}"));
            }
        }
        for link in links(&text) {
            checked += 1;
            let (target, fragment) = match link.split_once('#') {
                Some((t, f)) => (t, Some(f)),
                None => (link.as_str(), None),
            };
            let resolved = if target.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a doc's folder").join(target)
            };
            if !resolved.exists() {
                missing.push(format!("{shown} links to {link}: no such file"));
                continue;
            }
            if let Some(fragment) = fragment {
                if resolved.extension().is_some_and(|x| x == "md") {
                    let target_text = std::fs::read_to_string(&resolved).expect("reading a doc");
                    if !anchors(&target_text).contains(fragment) {
                        missing.push(format!("{shown} links to {link}: no such heading"));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "checked only {checked} paths and links");
    assert!(
        missing.is_empty(),
        "broken references:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_path_finder_finds_and_skips() {
    let found =
        repo_paths("see docs/guide/rtt.md, and scripts/nic-lab.sh. not foo/docs/x.md nor docs/");
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec![
            "docs/guide/rtt.md".to_string(),
            "scripts/nic-lab.sh".to_string()
        ]
    );
    assert_eq!(anchor("Exit codes"), "exit-codes");
    assert_eq!(anchor("The `rtt` command: a try"), "the-rtt-command-a-try");
    assert_eq!(
        links("[a](b.md#c) [d](https://x) [e](#f)"),
        vec!["b.md#c", "#f"]
    );
    assert_eq!(
        subcommands("Commands:\n  up  Build\n      more\n  help  x\n\nOptions:"),
        vec!["up"]
    );
}
