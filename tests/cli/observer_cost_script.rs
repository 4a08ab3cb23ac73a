//! `scripts/observer_cost.py --exact` reads the kernel's IPI trace: its
//! parser is checked on lines as Linux 6.18 writes them (a sender whose
//! tgid the trace shows as dashes, one sent from a hardirq on noisetop's
//! time, a cpumask send), so the measurement cannot fail halfway through
//! a 60 s run.

use std::process::Command;

#[test]
fn the_ipi_trace_parser_of_the_observer_script_passes_its_selftest() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/observer_cost.py");
    let out = match Command::new("python3")
        .args([script, "--selftest"])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: python3 cannot run here: {e}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.trim(), "selftest ok");
}
