//! `--batch --watch`: each interval's verdicts and findings follow its
//! table as `#` lines, and noisetop's own threads stay off the watched CPU.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn batch_watch_prints_verdicts_and_keeps_off_the_watched_cpu() {
    let _turn = crate::turn::take();
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("one CPU: nothing to keep off; skipped");
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["--batch", "--watch", "1", "-n", "3", "-i", "300ms"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    // every thread of noisetop, the sampler included, may run on CPU 0 only
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
    let mut seen = 0;
    for t in tasks {
        let status = std::fs::read_to_string(t.unwrap().path().join("status")).unwrap();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        assert_eq!(allowed, "0", "{status}");
        seen += 1;
    }
    assert!(
        seen >= 2,
        "the sampler thread and the signal thread at least"
    );
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let verdicts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("# verdict: "))
        .collect();
    assert_eq!(verdicts.len(), 3, "{text}");
    // CPU 1 is judged with the strict rules: quiet, noisy and marked
    // watched, or unknown with its reason (another task's time the kernel
    // did not show, beyond what /proc bounds): every honest verdict
    for v in verdicts {
        assert!(
            v.contains("noisy 1 (watched): ")
                || v.contains("quiet 0-1")
                || v.contains("quiet 1")
                || v.contains("unknown 1 (who ran for "),
            "{v}"
        );
    }
    // the watched CPU is not in isolated on this machine: the finding names it
    if std::fs::read_to_string("/sys/devices/system/cpu/isolated")
        .is_ok_and(|s| s.trim().is_empty())
    {
        assert!(
            text.contains("# INFO not-isolated: CPU 1 not in isolated → boot with isolcpus=domain,managed_irq,1 nohz_full=1 rcu_nocbs=1"),
            "{text}"
        );
    }
}
