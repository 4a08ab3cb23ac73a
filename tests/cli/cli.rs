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
    let first = noisetop::base::cpulist::parse(&online).unwrap()[0].to_string();
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

/// One mistake, one answer: an existing recording, a listen address
/// without a port, a capture into a full folder and a replay of a folder
/// that is not there are usage errors (exit 2), said before anything runs
/// — before the dashboard asks for a terminal too.
#[test]
fn the_same_mistake_gets_exit_2_and_the_same_words_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("old.csv");
    std::fs::write(&rec, "x\n").unwrap();
    let rec = rec.to_str().unwrap();
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("f"), "").unwrap();
    let full = full.to_str().unwrap();
    let exists = format!("--record {rec}: the file exists (--force overwrites it");
    let cases: [(&[&str], String); 7] = [
        (&["--batch", "-n", "1", "--record", rec], exists.clone()),
        // the dashboard: said although stdout is no terminal
        (&["-n", "1", "--record", rec], exists.clone()),
        (
            &["probe", "--record", rec, "--duration", "1s"],
            exists.clone(),
        ),
        (
            &["serve", "--listen", "bogus"],
            "\"bogus\" is not ADDR:PORT".to_string(),
        ),
        (
            &["capture", full, "-n", "1"],
            format!("capture {full}: the folder is not empty"),
        ),
        (
            &["replay", "/nonexistent"],
            "replay /nonexistent: no such folder".to_string(),
        ),
        (
            &["replay", "/nonexistent", "--batch"],
            "replay /nonexistent: no such folder".to_string(),
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = noisetop(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert!(err.contains(&says), "{args:?}: {err}");
        assert!(!err.contains("terminal"), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(rec).unwrap(),
        "x\n",
        "left as it was"
    );
}

/// `run`'s command is an argument, listed as `report` and `compare` list
/// theirs, and the man page's synopsis names each option's value.
#[test]
fn run_help_lists_its_command_under_arguments_and_the_synopsis_names_values() {
    let (code, out, err) = noisetop(&["run", "--help"]);
    assert_eq!(code, 0, "{err}");
    let args = out.find("\nArguments:\n").expect("an Arguments section");
    let cmd = out.find("  <CMD>...").expect("<CMD>... listed");
    let options = out.find("\nOptions:\n").expect("an Options section");
    assert!(args < cmd && cmd < options, "{out}");
    let man = noisetop::cmd::help::man_page().unwrap();
    let synopses: Vec<&str> = man
        .split(".SH SYNOPSIS\n")
        .skip(1)
        .map(|s| s.lines().next().unwrap())
        .collect();
    assert_eq!(synopses.len(), 12, "one per page");
    assert!(
        synopses[0].contains(r"[\fB\-\-cpus\fR \fILIST\fR]"),
        "{}",
        synopses[0]
    );
    assert!(synopses[0].contains(r"[\fB\-i\fR|\fB\-\-interval\fR \fIINTERVAL\fR]"));
    assert!(
        synopses[0].contains(r"[\fB\-\-batch\fR]"),
        "a flag has no value"
    );
    let run = synopses
        .iter()
        .find(|s| s.contains("noisetop\\-run"))
        .unwrap();
    assert!(run.ends_with(r"\-\- <\fICMD\fR>... "), "{run}");
}

/// `snapshot` prints JSON whatever it is given: its help lists no `--json`
/// that would do nothing, and scripts that pass it still work.
#[test]
fn snapshot_offers_no_option_that_does_nothing() {
    let (code, out, _) = noisetop(&["snapshot", "--help"]);
    assert_eq!(code, 0);
    assert!(!out.contains("--json"), "{out}");
    assert!(out.contains("as JSON"), "{out}");
    let (code, out, err) = noisetop(&["snapshot", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with('{'), "{out}");
}
