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
