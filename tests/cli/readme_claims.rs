//! The figures and formats of the README and the pages under docs/, read
//! from them and checked against what the code does: the capture table
//! formats (docs/capture.md) against what `noisetop capture` writes, the
//! list of files read each interval (docs/metrics.md) against what the
//! sampler reads, the files a replay requires, the hands-off reasons
//! (docs/hands-off.md), the check rules' texts (docs/check.md), the
//! README's subcommands and test command, and the links between pages.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use noisetop::model::interval::FreqSource;
use noisetop::model::machine::Machine;
use noisetop::os::capture::Captured;
use noisetop::os::fs::{Base, Fs, Roots};
use noisetop::os::hw::Probe;
use noisetop::sample::engine::Engine;
use noisetop::sample::ladder;
use noisetop::sample::sampler::Sampler;
use noisetop::testkit::synth::{self, Flavor, Spec};

use crate::docs;

fn readme() -> String {
    docs::read("README.md")
}

const FLAVORS: [Flavor; 5] = [
    Flavor::IntelLaptop,
    Flavor::IntelServer,
    Flavor::AmdServer,
    Flavor::Vm,
    Flavor::Arm64,
];

fn synth_capture(dir: &Path, flavor: Flavor, instants: u32) {
    let spec = Spec {
        instants,
        ..Spec::new(flavor, 4)
    };
    synth::write_capture(dir, &spec).unwrap();
}

// ------------------------------------------------------------ files read

/// A path read, with the numbers that vary between machines named as
/// docs/metrics.md names them (`cpuN`, `stateK`, `hwmonN`, `tempK_input`, `ZONE`).
fn pattern(base: Base, rel: &str) -> String {
    let root = match base {
        Base::Proc => "/proc",
        Base::Sys => "/sys",
        Base::Dev => "/dev",
    };
    let parts: Vec<String> = rel
        .split('/')
        .enumerate()
        .map(|(i, p)| {
            let numbered = |prefix: &str, name: &str| {
                p.strip_prefix(prefix)
                    .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                    .map(|_| name.to_string())
            };
            if i == 2 && rel.starts_with("class/powercap/") {
                return "ZONE".into();
            }
            if let Some(k) = p
                .strip_prefix("temp")
                .and_then(|r| r.strip_suffix("_input"))
                .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
            {
                let _ = k;
                return "tempK_input".into();
            }
            numbered("cpu", "cpuN")
                .or_else(|| numbered("state", "stateK"))
                .or_else(|| numbered("hwmon", "hwmonN"))
                .or_else(|| numbered("policy", "policyN"))
                .unwrap_or_else(|| p.to_string())
        })
        .collect();
    let path = parts.join("/");
    // a chip's hwmon directory, where /sys/class/hwmon/hwmonN links to
    if path.starts_with("devices/") && path.ends_with("/hwmonN/tempK_input") {
        return format!("{root}/devices/…/hwmonN/tempK_input");
    }
    // a RAPL zone, where /sys/class/powercap/intel-rapl:N links to
    if path.starts_with("devices/virtual/powercap/") && path.ends_with("/energy_uj") {
        return format!("{root}/devices/virtual/powercap/…/ZONE/energy_uj");
    }
    format!("{root}/{path}")
}

/// The list of files read each interval, in docs/metrics.md.
fn readme_interval_files() -> BTreeSet<String> {
    let s = docs::section(
        "docs/metrics.md",
        "Files read each interval, and only at start",
    );
    let start = s.find("```text\n").expect("a text block") + 8;
    let end = start + s[start..].find("```").unwrap();
    s[start..end].lines().map(str::to_string).collect()
}

#[test]
fn the_files_read_each_interval_are_the_readme_list() {
    let listed = readme_interval_files();
    let mut seen_anywhere = BTreeSet::new();
    for flavor in FLAVORS {
        let dir = tempfile::tempdir().unwrap();
        synth_capture(dir.path(), flavor, 4);
        let i0 = dir.path().join("0000");
        let mut fs = Fs::new(Roots::under(&i0));
        fs.set_log(true);
        let mut e = Engine::new(Sampler::new(fs, Captured::load(&i0).unwrap()));
        let start: BTreeSet<String> = e
            .sampler
            .fs
            .take_log()
            .iter()
            .map(|(b, r)| pattern(*b, r))
            .collect();
        assert!(
            start.contains("/proc/cpuinfo"),
            "{flavor:?} reads cpuinfo at start"
        );
        let mut each = BTreeSet::new();
        for i in 1..4 {
            let inst = dir.path().join(format!("{i:04}"));
            e.sampler.fs.set_roots(Roots::under(&inst));
            e.sampler.hw = Captured::load(&inst).unwrap();
            e.step();
            each.extend(e.sampler.fs.take_log().iter().map(|(b, r)| pattern(*b, r)));
        }
        for p in &each {
            assert!(
                listed.contains(p),
                "{flavor:?} reads {p} each interval; docs/metrics.md does not list it"
            );
        }
        assert!(!each.contains("/proc/cpuinfo"));
        seen_anywhere.extend(each);
    }
    for p in &listed {
        assert!(
            seen_anywhere.contains(p),
            "docs/metrics.md lists {p}, which no sampler read each interval"
        );
    }
}

#[test]
fn a_costly_current_frequency_file_is_dropped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    // the Arm64 tree has no APERF/MPERF: scaling_cur_freq is its best rung
    synth_capture(dir.path(), Flavor::Arm64, 2);
    let i0 = dir.path().join("0000");
    let probe = Probe::default();
    let m = Machine::read(&mut Fs::new(Roots::under(&i0)));
    assert_eq!(m.cur_freq_note, None);
    assert_eq!(ladder::freq_source(&m, &probe), Some(FreqSource::Cpufreq));
    // a limit every read exceeds stands for a file that takes 15-20 ms
    let m = Machine::read_with_limit(&mut Fs::new(Roots::under(&i0)), 0);
    let note = m.cur_freq_note.clone().unwrap();
    assert!(
        note.starts_with("scaling_cur_freq took ")
            && note.ends_with(" a read on cpu0 (more than 0.000 ms): not read each interval"),
        "{note}"
    );
    assert!(
        m.cpufreq
            .iter()
            .all(|c| c.cur_path.is_none() && c.cur_khz.is_none())
    );
    assert_ne!(ladder::freq_source(&m, &probe), Some(FreqSource::Cpufreq));
    // only the first CPU's file was read to learn that
    let mut fs = Fs::new(Roots::under(&i0));
    fs.set_log(true);
    let _ = Machine::read_with_limit(&mut fs, 0);
    let reads = fs
        .take_log()
        .iter()
        .filter(|(_, r)| r.ends_with("scaling_cur_freq"))
        .count();
    assert!(reads <= 2, "scaling_cur_freq read {reads} times");
}

// ------------------------------------------------------------ capture format

/// The formats docs/capture.md gives for one capture table: every
/// backticked span after `- `name`:` on its bullet.
fn readme_formats(name: &str) -> Vec<Vec<String>> {
    let s = docs::section("docs/capture.md", "Capture format");
    let key = format!("- `{name}`:");
    let at = s
        .find(&key)
        .unwrap_or_else(|| panic!("no bullet for {name}"));
    let line = s[at + key.len()..].lines().next().unwrap();
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Whether one token of a table line has the shape a documented word gives.
fn token_fits(word: &str, tok: &str) -> bool {
    let dec = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let hex = |t: &str| {
        t.strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    match word {
        "cpu" | "mono_ns" | "wall_ns" | "time_enabled_ns" | "time_running_ns" => dec(tok),
        "0xREG" | "0xVALUE" => hex(tok),
        "pmu/event=count" => tok
            .split_once('=')
            .is_some_and(|(ev, n)| ev.contains('/') && dec(n)),
        other => other == tok,
    }
}

/// Whether a table line matches a documented format (`…` repeats the word
/// before it, `MESSAGE` takes the rest of the line).
fn line_fits(format: &[String], line: &str) -> bool {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let mut t = 0;
    for (i, w) in format.iter().enumerate() {
        match w.as_str() {
            "…" => {
                let prev = &format[i - 1];
                while t < toks.len() && token_fits(prev, toks[t]) {
                    t += 1;
                }
            }
            "MESSAGE" => return t < toks.len(),
            _ => {
                if t >= toks.len() || !token_fits(w, toks[t]) {
                    return false;
                }
                t += 1;
            }
        }
    }
    t == toks.len()
}

fn check_tables(instant: &Path, what: &str) -> usize {
    let mut lines = 0;
    for name in ["clock", "perf", "msr"] {
        let formats = readme_formats(name);
        assert!(
            !formats.is_empty(),
            "docs/capture.md gives no format for {name}"
        );
        let Ok(text) = std::fs::read_to_string(instant.join("noisetop").join(name)) else {
            continue;
        };
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            assert!(
                formats.iter().any(|f| line_fits(f, line)),
                "{what} noisetop/{name} line {line:?} fits none of the documented formats {formats:?}"
            );
            lines += 1;
        }
    }
    lines
}

#[test]
fn capture_tables_have_the_readme_format() {
    let mut lines = 0;
    for flavor in FLAVORS {
        let dir = tempfile::tempdir().unwrap();
        synth_capture(dir.path(), flavor, 2);
        lines += check_tables(&dir.path().join("0001"), &format!("{flavor:?}"));
    }
    // what the binary writes on this machine
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args([
            "capture",
            cap.to_str().unwrap(),
            "--count",
            "1",
            "--interval",
            "100ms",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines += check_tables(&cap.join("0001"), "live capture");
    assert!(lines > 20, "only {lines} lines checked");
    // the format words themselves are what the writers put in their headers
    let perf_header = noisetop::os::perf::write_table(&[]);
    for w in &readme_formats("perf")[0] {
        if w != "…" {
            assert!(
                perf_header.contains(w.as_str()),
                "perf header lacks {w}: {perf_header}"
            );
        }
    }
}

#[test]
fn a_replay_requires_only_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    synth_capture(&cap, Flavor::IntelLaptop, 3);
    let s = docs::section("docs/capture.md", "Capture format");
    assert!(s.contains("A replay requires only `noisetop/clock` in each instant"));
    for i in 0..3 {
        let inst = cap.join(format!("{i:04}"));
        for f in ["perf", "msr", "probe.json", "budget", "always"] {
            let _ = std::fs::remove_file(inst.join("noisetop").join(f));
        }
        std::fs::remove_dir_all(inst.join("proc")).unwrap();
        std::fs::remove_dir_all(inst.join("sys")).unwrap();
    }
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_noisetop"))
            .args(["replay", "--batch", cap.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).matches("# t=").count(),
        2,
        "two intervals from three bare instants"
    );
    std::fs::remove_file(cap.join("0001/noisetop/clock")).unwrap();
    let out = run();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0001/noisetop/clock"), "{err}");
}

#[test]
fn the_hands_off_reason_is_the_one_noisetop_gives() {
    let s = docs::read("docs/hands-off.md");
    assert!(s.starts_with("# Hands-off: noisetop does not interrupt a watched CPU\n"));
    let said = noisetop::sample::hands_off::not_read(&[7]).replace('7', "N");
    assert!(s.contains(&format!("`{said}`")), "docs/hands-off.md: {s}");
    // the lines each sink prints, as the page quotes them
    let ipis = noisetop::pipeline::OwnIpis::text(&Ok(noisetop::pipeline::OwnIpis {
        cpus: vec![1],
        setup: 7,
        since_first: 0,
        woke_since_first: 0,
    }));
    assert_eq!(
        ipis,
        "IPIs to watched CPU 1: 0 since the first sample (7 at setup); 0 wake-ups of tasks there"
    );
    assert!(
        s.contains(
            "`# IPIs to watched CPU 1: N since the\nfirst sample (M at setup); W wake-ups of tasks there`"
        ),
        "docs/hands-off.md: {s}"
    );
    assert!(
        s.contains("`N IPI (+W wake-ups) to watched`"),
        "docs/hands-off.md: {s}"
    );
    // the file table it grows at start, as the page gives its size
    assert_eq!(noisetop::os::sys::fd_table_size(3), 2 * (64 + 4 * 3));
    assert!(s.contains("2 × (64 + 4 × CPUs) descriptors"), "{s}");
}

#[test]
fn the_owner_change_threshold_is_the_rules() {
    let text = docs::read("docs/verdicts.md");
    let at = text.find("### finding-owner-changed").unwrap();
    let s = &text[at..at + text[at..].find("\n### finding-csw").unwrap()];
    let pct = noisetop::noise::OWNER_MIN_PCT;
    assert!(
        s.contains(&format!("under {pct} % of the interval")),
        "docs/verdicts.md: {s}"
    );
}

// ------------------------------------------------------------ check rules

/// Each `check` rule's section in docs/check.md holds the text the man
/// page's CHECK RULES section prints, word for word, so a verdict's `see`
/// line leads an installed binary's user to the same explanation.
#[test]
fn check_rule_sections_are_the_man_page_texts() {
    let text = docs::read("docs/check.md");
    for (id, explained) in noisetop::check::explain::EXPLAIN {
        let head = format!("\n### check-{id}\n\n");
        let at = text
            .find(&head)
            .unwrap_or_else(|| panic!("docs/check.md has no section check-{id}"));
        let body = &text[at + head.len()..];
        // the paragraph, which the page's last section ends with the file
        let end = body.find("\n\n").unwrap_or(body.len());
        assert_eq!(body[..end].trim_end(), explained, "check-{id}");
    }
    let man = noisetop::cmd::help::man_page().unwrap();
    let rules = &man[man
        .find(".SH \"CHECK RULES\"")
        .expect("a CHECK RULES section")..];
    for id in noisetop::check::RULE_IDS {
        assert!(
            rules.contains(&format!(".TP\n\\fB{}\\fR\n", id.replace('-', "\\-"))),
            "{id} in CHECK RULES"
        );
    }
}

/// The documents' shell blocks run as written after `cargo install`:
/// sudo's `secure_path` leaves `~/.cargo/bin` out, so no block runs a bare
/// `sudo noisetop`.
#[test]
fn shell_blocks_give_sudo_the_path_of_noisetop() {
    for (path, text) in docs::all() {
        let mut in_sh = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                in_sh = line == "```sh";
                continue;
            }
            if in_sh {
                assert!(
                    !line.contains("sudo noisetop"),
                    "{path} line {}: {line}",
                    n + 1
                );
            }
        }
    }
}

/// The README opens with its two commands: the one that sets up and runs
/// noisetop, then the one that runs the tests, both before the first
/// picture and any other section.
#[test]
fn the_readme_gives_its_two_commands_first() {
    let text = readme();
    let sections: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .take(2)
        .collect();
    assert_eq!(sections, ["Run it", "Run the tests"]);
    let blocks: Vec<&str> = text
        .split("```sh\n")
        .skip(1)
        .take(2)
        .map(|b| b.split("```").next().unwrap().trim())
        .collect();
    assert!(
        blocks[0].contains("cargo install --locked --path .")
            && blocks[0].ends_with("sudo \"$(command -v noisetop)\""),
        "{}",
        blocks[0]
    );
    assert_eq!(blocks[1], "cargo test --no-fail-fast");
    let second = text.find(blocks[1]).unwrap();
    assert!(second < text.find("![").expect("a picture"));
}

/// CI runs the README's test command, word for word, and that command
/// runs every test binary even when one fails.
#[test]
fn ci_runs_the_readme_test_command() {
    let text = readme();
    let at = text
        .find("\n## Run the tests\n")
        .expect("a Run the tests section");
    let block = text[at..]
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    let command = block.trim();
    assert!(command.contains("--no-fail-fast"), "{command}");
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
        .expect(".ci/run");
    let last = ci
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap();
    assert_eq!(last.trim(), command);
}

/// The count of the tests ignored without the captures, in the README
/// and docs/testing.md, is the number of tests marked so.
#[test]
fn the_readme_counts_the_tests_that_need_the_captures() {
    fn marked(dir: &Path) -> usize {
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                n += marked(&p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                // split, so that this line is not one of them
                n += text
                    .matches(concat!("#[cfg_attr(no_", "captures, ignore = "))
                    .count();
            }
        }
        n
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let n = marked(&root.join("tests")) + marked(&root.join("src"));
    for page in ["README.md", "docs/testing.md"] {
        assert!(
            docs::read(page).contains(&format!("`../shared/captures` ({n} of them)")),
            "{page}: {n} tests are marked"
        );
    }
}

/// The README's table of commands names every subcommand `--help` lists,
/// and no other.
#[test]
fn the_readme_lists_every_subcommand() {
    use clap::CommandFactory as _;
    let text = readme();
    let at = text.find("\n## Commands\n").expect("a Commands section");
    let table = &text[at..at + 1 + text[at + 1..].find("\n## ").unwrap()];
    let listed: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `noisetop"))
        .flat_map(|l| {
            // the first cell: `noisetop X`, or two commands side by side
            let cell = l.split(" |").next().unwrap_or_default();
            cell.split("`noisetop")
                .filter_map(|c| c.split_whitespace().next())
                .map(|w| w.trim_matches(['`', ',']).to_string())
                .filter(|w| !w.is_empty() && !w.starts_with('-'))
                .collect::<Vec<_>>()
        })
        .collect();
    let commands: BTreeSet<String> = noisetop::cli::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    assert_eq!(listed, commands);
}

/// A heading as the anchor a link names it by (GitHub's rule: lower case,
/// spaces to `-`, other punctuation dropped).
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

/// Every link from one document to another file of the repository leads
/// to a file that is there, and to a heading of it where it names one.
#[test]
fn every_link_between_the_documents_leads_somewhere() {
    let mut links = 0;
    for (path, text) in docs::all() {
        let dir = Path::new(&path).parent().unwrap().to_path_buf();
        for part in text.split("](").skip(1) {
            let target = part.split(')').next().unwrap();
            if target.starts_with("http") {
                continue;
            }
            let (file, frag) = target.split_once('#').unwrap_or((target, ""));
            let at = if file.is_empty() {
                Path::new(&path).to_path_buf()
            } else {
                dir.join(file)
            };
            let full = docs::root().join(&at);
            assert!(full.exists(), "{path}: {target} leads nowhere");
            if !frag.is_empty() {
                let heads: Vec<String> = std::fs::read_to_string(&full)
                    .unwrap()
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .map(|l| anchor(l.trim_start_matches('#')))
                    .collect();
                assert!(
                    heads.iter().any(|h| h == frag),
                    "{path}: {target}: no heading {frag} in {heads:?}"
                );
            }
            links += 1;
        }
    }
    assert!(links > 30, "only {links} links");
}

/// Every test file or folder the documents name is there, and so is every
/// test binary their `cargo test --test NAME` commands run: a page that
/// names a test where it no longer is sends its reader nowhere.
#[test]
fn every_test_the_documents_name_is_there() {
    let mut named = 0;
    for (path, text) in docs::all() {
        for part in text.split("`tests/").skip(1) {
            let rel = format!("tests/{}", part.split('`').next().unwrap());
            assert!(
                docs::root().join(&rel).exists(),
                "{path}: {rel} is not there"
            );
            named += 1;
        }
        // a command the page wraps reads as one line
        for part in docs::flat(&text).split("cargo test").skip(1) {
            let mut words = part.split_whitespace();
            while let Some(w) = words.next() {
                if w == "--test" {
                    let bin = words.next().unwrap_or_default().trim_matches('`');
                    let root = docs::root().join("tests");
                    assert!(
                        root.join(bin).join("main.rs").is_file()
                            || root.join(format!("{bin}.rs")).is_file(),
                        "{path}: `cargo test --test {bin}`: no test binary {bin}"
                    );
                    named += 1;
                }
            }
        }
    }
    assert!(named > 30, "only {named} tests named");
}
