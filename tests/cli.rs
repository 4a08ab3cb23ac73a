//! The command line as a user meets it: every help text, the man page and
//! the completions are snapshots (so a change to them is seen in review),
//! misplaced options and CPUs that are not online exit 2 with a message
//! that says what is wrong.

use std::process::Command;

fn noisetop(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_of_noisetop_and_of_each_subcommand() {
    let (code, out, _) = noisetop(&["--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("help", out);
    for sub in [
        "snapshot",
        "capture",
        "replay",
        "check",
        "run",
        "report",
        "compare",
        "probe",
        "serve",
        "man",
        "completions",
    ] {
        let (code, out, err) = noisetop(&[sub, "--help"]);
        assert_eq!(code, 0, "{sub}: {err}");
        insta::assert_snapshot!(format!("help_{sub}"), out);
    }
}

#[test]
fn man_page_and_completions_come_from_the_same_definitions() {
    let man = noisetop::cmd::help::man_page().unwrap();
    assert!(man.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{}", &man[..80]);
    for sub in ["noisetop-run", "noisetop-check", "noisetop-replay"] {
        assert!(man.contains(&format!(".TH {sub}")), "{sub} missing");
    }
    insta::assert_snapshot!("man", man);
    let bash = noisetop::cmd::help::completion_script(clap_complete::Shell::Bash).unwrap();
    assert!(bash.contains("--watch"));
    insta::assert_snapshot!("completions_bash", bash);
    let (code, out, _) = noisetop(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("#compdef noisetop"), "{out}");
}

#[test]
fn options_of_another_command_are_usage_errors() {
    for (args, says) in [
        (
            &["snapshot", "--batch"][..],
            "unexpected argument '--batch'",
        ),
        (&["snapshot", "-n", "3"], "unexpected argument '-n'"),
        (
            &["capture", "d", "--capture", "e"],
            "unexpected argument '--capture'",
        ),
        (
            &["replay", "d", "--root", "/"],
            "unexpected argument '--root'",
        ),
        (&["--capture", "d"], "--batch"),
    ] {
        let (code, _, err) = noisetop(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn cpus_that_are_not_online_are_refused_naming_the_online_list() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .unwrap()
        .trim()
        .to_string();
    for args in [
        &["--batch", "--cpus", "4095", "-n", "1"][..],
        &["--batch", "--watch", "4095", "-n", "1"],
    ] {
        let (code, out, err) = noisetop(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "nothing printed: {out}");
        let flag = args[1];
        assert_eq!(
            err.trim_end(),
            format!("noisetop: {flag} 4095: CPU 4095 is not online (online: {online})")
        );
    }
}

#[test]
fn every_usage_error_exits_2_with_one_message() {
    let empty = tempfile::tempdir().unwrap();
    let empty = empty.path().to_str().unwrap();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let first = noisetop::collect::cpulist::parse(&online).unwrap()[0].to_string();
    let cases: [(&[&str], &str); 10] = [
        (&["--batch", "--interval", "61m"], "between 10ms and 1h"),
        (&["--batch", "--interval", "1x"], "is not a duration"),
        (
            &["--batch", "--pin", "4095", "-n", "1"],
            "--pin 4095: CPU 4095 is not one noisetop may run on (allowed: ",
        ),
        (
            &["--batch", "--watch", &first, "--pin", &first, "-n", "1"],
            "is watched (--watch",
        ),
        (
            &["--batch", "--root", "/nonexistent", "-n", "1"],
            "--root /nonexistent: no such folder",
        ),
        (
            &["--batch", "--root", empty, "-n", "1"],
            "holds neither proc/ nor sys/",
        ),
        (
            &["--batch", "--count", "0"],
            "the count must be at least 1 interval",
        ),
        (
            &["snapshot", "--sysfs", "/nonexistent"],
            "--sysfs /nonexistent: no such folder",
        ),
        (
            &["--batch", "--budget", "0", "-n", "1"],
            "at least one file a sample",
        ),
        // the dashboard's columns: the batch table has them all
        (
            &["--batch", "--show", "IRQ", "-n", "1"],
            "'--batch' cannot be used with '--show <LIST>'",
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = noisetop(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
        let errors = err.matches("error:").count() + err.matches("noisetop: ").count();
        assert_eq!(errors, 1, "{args:?}: one message: {err}");
    }
    // 1h is the longest interval, and a duration like 61m
    let cli =
        <noisetop::cli::Cli as clap::Parser>::try_parse_from(["noisetop", "--interval", "1h"])
            .unwrap();
    assert_eq!(
        cli.live.sample.interval,
        std::time::Duration::from_secs(3600)
    );
    for args in [&["help", "--help"][..], &["help", "-h"], &["help"]] {
        let (code, out, err) = noisetop(args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert!(out.contains("Usage: noisetop"), "{args:?}: {out}");
    }
}

/// The man page as `man` shows it: the sections written as lines (columns,
/// examples, privileges) keep their lines at 80 columns.
#[test]
fn man_page_renders_its_own_sections_line_for_line() {
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("man (man-db) is needed: .ci/run installs it");
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("noisetop.1");
    std::fs::write(&page, noisetop::cmd::help::man_page().unwrap()).unwrap();
    let out = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("LC_ALL", "C.UTF-8")
        .env_remove("MAN_KEEP_FORMATTING")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.find("\nCOLUMNS\n").expect("a COLUMNS section");
    let end = text[first..]
        .find("\nVERSION\n")
        .expect("VERSION after them")
        + first;
    insta::assert_snapshot!("man_rendered_sections", &text[first + 1..end]);
}
