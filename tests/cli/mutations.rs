//! Damaged copies of real captures, run through the real binary: each case
//! copies a captured tree (or a synthetic capture, for replay) to a temp
//! folder, damages a few of its files (emptied, truncated, garbage, huge
//! numbers, columns dropped or added, a directory or a symlink loop in a
//! file's place, a FIFO, a link to /dev/zero), and runs
//! `snapshot --json --root`, `--batch --root X --count 1` and
//! `replay --batch` on it. Each must end on its own within the deadline,
//! without a panic, and a failure must say why on stderr.
//!
//! The cases are drawn from a fixed seed, so CI runs the same sample every
//! time. More: `NOISETOP_MUTATIONS=500 NOISETOP_MUTATION_SEED=7 cargo test
//! --release --test cli mutations::`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use noisetop::testkit::synth::{self, Flavor, Spec};

const DEADLINE: Duration = Duration::from_secs(30);

/// xorshift64*: a few lines, so the sample needs no crate and is the same
/// on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures")
}

/// Copies a tree, links as links, skipping files over 4 MiB and the CPU
/// directories past cpu7 (the rest repeat them).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let Ok(rd) = std::fs::read_dir(from) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name
            .strip_prefix("cpu")
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 8)
        {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let Ok(meta) = std::fs::symlink_metadata(&src) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if let Ok(t) = std::fs::read_link(&src) {
                let _ = std::os::unix::fs::symlink(t, &dst);
            }
        } else if meta.is_dir() {
            copy_tree(&src, &dst);
        } else if meta.len() <= 4 << 20 {
            let _ = std::fs::copy(&src, &dst);
        }
    }
}

/// Regular files under `dir`, sorted (so that the draw is deterministic).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

const MUTATIONS: [&str; 11] = [
    "empty",
    "truncated",
    "garbage",
    "huge numbers",
    "fewer columns",
    "more columns",
    "directory",
    "symlink loop",
    "fifo",
    "dev zero",
    "removed",
];

/// Damages one file; returns what was done, for the failure message.
fn mutate(rng: &mut Rng, path: &Path) -> String {
    // a file drawn twice may be a /dev/zero link by now: read regular files only
    let text = std::fs::symlink_metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .and_then(|_| std::fs::read(path).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let kind = MUTATIONS[rng.below(MUTATIONS.len())];
    let lines: Vec<&str> = text.lines().collect();
    let rewrite = |f: &dyn Fn(&str, usize) -> String| {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| f(l, i) + "\n")
            .collect::<String>()
    };
    let new: Option<String> = match kind {
        "empty" => Some(String::new()),
        "truncated" => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            Some(text[..cut].to_string())
        }
        "garbage" => {
            let n = rng.below(200) + 1;
            Some(
                (0..n)
                    .map(|_| char::from(32 + rng.below(95) as u8))
                    .collect(),
            )
        }
        "huge numbers" => Some(rewrite(&|l, i| {
            l.split_whitespace()
                .map(|t| {
                    if t.bytes().all(|b| b.is_ascii_digit()) {
                        [
                            "18446744073709551615",
                            "99999999999999999999999",
                            "4294967296",
                        ][i % 3]
                            .to_string()
                    } else {
                        t.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })),
        "fewer columns" => Some(rewrite(&|l, _| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t[..t.len().saturating_sub(1 + t.len() / 3)].join(" ")
        })),
        "more columns" => Some(rewrite(&|l, i| format!("{l} {i} 7 x"))),
        _ => None,
    };
    // a file drawn twice may be a directory or a link by now
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
    let _ = match (kind, new) {
        (_, Some(t)) => std::fs::write(path, t),
        ("directory", _) => std::fs::create_dir_all(path),
        ("symlink loop", _) => std::os::unix::fs::symlink(path.file_name().unwrap(), path),
        ("fifo", _) => Command::new("mkfifo").arg(path).status().map(|_| ()),
        ("dev zero", _) => std::os::unix::fs::symlink("/dev/zero", path),
        _ => Ok(()),
    };
    format!("{kind}: {}", path.display())
}

fn run(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + DEADLINE;
    // drain the pipes while waiting: a JSON snapshot can exceed their buffer
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Output {
                status,
                stdout: t_out.join().unwrap(),
                stderr: t_err.join().unwrap(),
            };
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("noisetop {args:?} still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn judge(out: &Output, args: &[&str], done: &[String]) {
    use std::os::unix::process::ExitStatusExt;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.signal().is_none(),
        "{args:?} killed by signal {:?} after {done:?}\n{err}",
        out.status.signal()
    );
    assert!(
        !err.contains("panicked"),
        "{args:?} panicked after {done:?}:\n{err}"
    );
    if !out.status.success() {
        assert!(
            err.trim().len() > 10,
            "{args:?} failed without a reason after {done:?}: {err:?}"
        );
    }
}

/// The real trees a case may start from; each has /proc or /sys files.
const TREES: [&str; 8] = [
    "node_exporter-fixtures",
    "procfs-fixtures",
    "pcp-sysdev-001-i3-4005u-4cpu",
    "pcp-hpbl920gen8-480cpu",
    "node_exporter-aarch64-graviton-8cpu",
    "pcp-16cpu-s390x",
    "sosreport-rhcos-hyperv-2cpu",
    "util-linux-tigerlake-linux6.2-8cpu",
];

#[test]
fn damaged_captures_never_panic_hang_or_fail_silently() {
    let cases = env_num("NOISETOP_MUTATIONS", 12);
    let mut rng = Rng(env_num("NOISETOP_MUTATION_SEED", 0x6e6f_6973_6574_6f70) | 1);
    let present: Vec<&str> = TREES
        .iter()
        .copied()
        .filter(|t| captures().join(t).exists())
        .collect();
    if present.is_empty() {
        eprintln!(
            "{} absent: the real trees are skipped",
            captures().display()
        );
    }
    let mut ran = 0;
    for case in 0..cases {
        let dir = tempfile::tempdir().unwrap();
        // a live-style tree for --root: a real capture, else a synthetic instant
        let root = dir.path().join("root");
        if present.is_empty() {
            synth::write_capture(&dir.path().join("s"), &Spec::new(Flavor::IntelServer, 4))
                .unwrap();
            copy_tree(&dir.path().join("s/0000"), &root);
        } else {
            copy_tree(&captures().join(present[rng.below(present.len())]), &root);
        }
        // a capture for replay
        let cap = dir.path().join("cap");
        let flavor = [Flavor::IntelLaptop, Flavor::AmdServer, Flavor::Vm][rng.below(3)];
        synth::write_capture(
            &cap,
            &Spec {
                instants: 3,
                ..Spec::new(flavor, 4)
            },
        )
        .unwrap();
        let mut done = Vec::new();
        for tree in [&root, &cap] {
            let all = files(tree);
            for _ in 0..=rng.below(3) {
                if !all.is_empty() {
                    let pick = rng.below(all.len());
                    done.push(mutate(&mut rng, &all[pick]));
                }
            }
        }
        let r = root.to_str().unwrap();
        let c = cap.to_str().unwrap();
        for args in [
            &["snapshot", "--json", "--root", r][..],
            &["--batch", "--root", r, "--count", "1", "-i", "50ms"][..],
            &["replay", "--batch", c][..],
        ] {
            let out = run(args);
            judge(&out, args, &done);
            ran += 1;
        }
        eprintln!("case {case}: {done:?}");
    }
    assert_eq!(ran, cases * 3);
}
