//! What an installed misura brings beside the binary: shell completions
//! (`misura completions SHELL`), checked against the commands `misura
//! --help` lists and loaded in bash, zsh and fish, and manual pages (`misura
//! man`). The package itself is built, installed and run in tests/package.rs.

#[macro_use]
mod common;

use common::*;
use std::collections::BTreeSet;
use std::process::Command;

/// The commands `misura [COMMAND…] --help` lists (without `help`).
fn commands_of(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line == "Commands:" {
            inside = true;
        } else if inside && line.is_empty() {
            break;
        } else if inside && line.starts_with("  ") && !line.starts_with("   ") {
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                names.push(name.to_string());
            }
        }
    }
    assert!(!names.is_empty(), "no commands in:\n{text}");
    names
}

/// The whole tree of commands, as the page names they get: `misura`,
/// `misura-rtt`, `misura-lab-up`, …
fn every_page_name() -> BTreeSet<String> {
    fn walk(path: &mut Vec<String>, into: &mut BTreeSet<String>) {
        into.insert(
            std::iter::once("misura".to_string())
                .chain(path.iter().cloned())
                .collect::<Vec<_>>()
                .join("-"),
        );
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let o = run(&[args.as_slice(), &["--help"]].concat());
        let text = String::from_utf8_lossy(&o.stdout);
        if !text.contains("\nCommands:\n") {
            return;
        }
        for sub in commands_of(&args) {
            path.push(sub);
            walk(path, into);
            path.pop();
        }
    }
    let mut names = BTreeSet::new();
    walk(&mut Vec::new(), &mut names);
    names
}

fn completions(shell: &str) -> String {
    let o = run(&["completions", shell]);
    assert!(
        o.status.success(),
        "misura completions {shell}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_shell_script_names_every_command_and_their_flags() {
    let commands = commands_of(&[]);
    assert!(commands.contains(&"rtt".to_string()) && commands.contains(&"man".to_string()));
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = completions(shell);
        for c in &commands {
            assert!(
                script.contains(c.as_str()),
                "the {shell} completions do not mention `misura {c}`"
            );
        }
        // Flags of subcommands (fish writes them `-l netns`).
        for word in ["netns", "export-json", "topology", "engine"] {
            assert!(script.contains(word), "the {shell} completions lack {word}");
        }
        // The values of an enumerated flag, where the shell offers them.
        if ["bash", "zsh", "fish"].contains(&shell) {
            assert!(
                script.contains("routed"),
                "the {shell} completions lack --topology's values"
            );
        }
    }
}

/// A shell's standard output, failing on its error.
fn shell_output(shell: &mut Command) -> String {
    let o = shell.output().expect("running a shell");
    assert!(
        o.status.success(),
        "{shell:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Ask bash's completion function what it offers after `words`.
fn bash_complete(script: &str, words: &[&str]) -> Vec<String> {
    let dir = TempDir::new("completions");
    let file = dir.path("misura.bash");
    std::fs::write(&file, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _misura misura '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    shell_output(Command::new("bash").args(["--norc", "--noprofile", "-c", &program]))
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_commands_subcommands_and_enumerated_values() {
    let script = completions("bash");
    assert_eq!(bash_complete(&script, &["misura", "la"]), ["lab"]);
    let lab = bash_complete(&script, &["misura", "lab", ""]);
    for want in ["up", "down", "status"] {
        assert!(
            lab.iter().any(|w| w == want),
            "misura lab <TAB> gave {lab:?}"
        );
    }
    let topologies = bash_complete(&script, &["misura", "lab", "up", "--topology", ""]);
    assert_eq!(
        topologies.iter().collect::<BTreeSet<_>>(),
        ["direct", "hosts", "routed", "switch"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .iter()
            .collect(),
        "misura lab up --topology <TAB>"
    );
}

/// Run misura expecting it to fail with `code`; its standard error.
fn refused(args: &[&str], code: i32) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(code), "misura {args:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_unknown_shell_is_refused_with_the_ones_there_are() {
    let err = refused(&["completions", "tcsh"], 2);
    assert!(
        err.contains("tcsh") && err.contains("bash") && err.contains("fish"),
        "{err}"
    );
}

#[test]
fn man_out_writes_one_page_per_command_and_subcommand() {
    let dir = TempDir::new("man");
    let out = dir.path("man1");
    let o = run(&["man", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written: BTreeSet<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let expected: BTreeSet<String> = every_page_name()
        .into_iter()
        .map(|n| format!("{n}.1"))
        .collect();
    assert!(expected.contains("misura-lab-up.1") && expected.contains("misura-clock-tsc.1"));
    assert_eq!(written, expected);
    for name in &written {
        let page = std::fs::read_to_string(out.join(name)).unwrap();
        let stem = name.trim_end_matches(".1");
        assert!(
            page.contains(&format!(".TH {stem} 1 ")),
            "{name} has no title line for {stem}"
        );
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION"] {
            assert!(page.contains(section), "{name} lacks {section}");
        }
    }
    // The top page lists the commands' pages; a command's page its flags.
    let top = std::fs::read_to_string(out.join("misura.1")).unwrap();
    assert!(
        top.contains("misura\\-rtt(1)"),
        "misura.1 does not refer to misura-rtt(1)"
    );
    let rtt = std::fs::read_to_string(out.join("misura-rtt.1")).unwrap();
    assert!(rtt.contains("\\-\\-count") && rtt.contains("\\-\\-netns"));
    // Printing one page gives the same bytes as its file.
    let o = run(&["man", "lab", "up"]);
    assert!(o.status.success());
    assert_eq!(
        o.stdout,
        std::fs::read(out.join("misura-lab-up.1")).unwrap()
    );
}

#[test]
fn man_names_an_unknown_command_and_an_unwritable_directory() {
    let err = refused(&["man", "rt"], 2);
    assert!(
        err.contains("`misura` has no command `rt`") && err.contains("rtt"),
        "{err}"
    );

    let err = refused(&["man", "--out", "/proc/misura-man"], 6);
    assert!(err.contains("/proc/misura-man"), "{err}");
}

#[test]
#[ignore = "needs zsh and fish (scripts/test.sh installs them as root)"]
fn fish_completes_and_zsh_loads_its_script() {
    let fish = require_tool("fish", "apt install fish");
    let zsh = require_tool("zsh", "apt install zsh");
    let dir = TempDir::new("completions-shells");
    let fish_script = dir.path("misura.fish");
    std::fs::write(&fish_script, completions("fish")).unwrap();
    let offered = |line: &str| -> Vec<String> {
        let program = format!("source {}; complete -C '{line}'", fish_script.display());
        shell_output(Command::new(&fish).args(["--no-config", "-c", &program]))
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(offered("misura la"), ["lab"]);
    assert_eq!(
        offered("misura lab up --topology "),
        ["direct", "hosts", "routed", "switch"]
    );

    // zsh: the script parses, and sourced after compinit it registers
    // _misura as misura's completion function.
    let zsh_script = dir.path("_misura");
    std::fs::write(&zsh_script, completions("zsh")).unwrap();
    let program = format!(
        "autoload -U compinit; compinit -u -D; source {}; print -r -- $_comps[misura]",
        zsh_script.display()
    );
    let registered = shell_output(
        Command::new(&zsh)
            .args(["-f", "-c", &program])
            .env("HOME", dir.0.as_os_str()),
    );
    assert_eq!(registered.trim(), "_misura");
}
