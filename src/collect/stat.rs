//! Parses `/proc/stat`: per-CPU time counters (in `USER_HZ` ticks, as the
//! file prints them) and the system-wide counters (context switches,
//! interrupts, softirqs, forks, boot time).
//!
//! CPU lines are keyed by the id in `cpuN`, since offline CPUs are simply
//! absent. Older kernels print fewer columns (no `guest_nice` before 2.6.33,
//! no `guest` before 2.6.24, ...); a missing column is `None`. A last line
//! without its newline is a cut-off read and is ignored.

use crate::base::cpu_map::CpuMap;
use serde::Serialize;

use super::ParseError;
use super::interrupts::{is_blank, parse_u64, whole_lines};

const FILE: &str = "/proc/stat";

/// Time one CPU (or all of them) spent in each mode, in `USER_HZ` ticks.
///
/// `user` and `nice` include `guest` and `guest_nice`, as the kernel counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    /// Normal processes in user mode.
    pub user: u64,
    /// Niced processes in user mode.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle task.
    pub idle: u64,
    /// Idle with I/O outstanding (absent before Linux 2.5.41).
    pub iowait: Option<u64>,
    /// Servicing hard interrupts.
    pub irq: Option<u64>,
    /// Servicing softirqs.
    pub softirq: Option<u64>,
    /// Stolen by the hypervisor for other guests (absent before 2.6.11).
    pub steal: Option<u64>,
    /// Running a guest vCPU (absent before 2.6.24).
    pub guest: Option<u64>,
    /// Running a niced guest vCPU (absent before 2.6.33).
    pub guest_nice: Option<u64>,
}

/// The parts of `/proc/stat` noisetop uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    /// The aggregate `cpu` line.
    pub total: Option<CpuTimes>,
    /// The `cpuN` lines, by CPU id.
    pub cpus: CpuMap<CpuTimes>,
    /// `ctxt`: context switches since boot.
    pub ctxt: Option<u64>,
    /// First number of `intr`: interrupts serviced since boot.
    pub intr_total: Option<u64>,
    /// First number of `softirq`: softirqs serviced since boot.
    pub softirq_total: Option<u64>,
    /// The per-vector numbers after the `softirq` total, in kernel vector
    /// order (`HI TIMER NET_TX NET_RX BLOCK IRQ_POLL TASKLET SCHED HRTIMER RCU`).
    pub softirq_vectors: Option<Vec<u64>>,
    /// `btime`: boot time, seconds since the epoch.
    pub btime: Option<u64>,
    /// `processes`: forks since boot.
    pub processes: Option<u64>,
    /// `procs_running`: runnable tasks now.
    pub procs_running: Option<u64>,
    /// `procs_blocked`: tasks blocked on I/O now.
    pub procs_blocked: Option<u64>,
}

/// Parses `/proc/stat`.
///
/// Errors: no `cpu`/`cpuN` line at all, a CPU line with a bad id, fewer than
/// four numbers or a non-number, and the same `cpuN` twice. A malformed
/// system-wide line leaves its field `None`.
pub fn parse(text: &str) -> Result<Stat, ParseError> {
    let mut stat = Stat::default();
    let mut saw_cpu = false;
    for (i, line) in whole_lines(text).enumerate() {
        let no = i + 1;
        if is_blank(line) {
            continue;
        }
        let mut fields = line.split_ascii_whitespace();
        let Some(key) = fields.next() else { continue };
        if let Some(id) = key.strip_prefix("cpu") {
            saw_cpu = true;
            let line_error = |m: LineError| ParseError::new(FILE, no, m.to_string());
            let times = cpu_times(fields).map_err(line_error)?;
            add_cpu(&mut stat, id, times).map_err(line_error)?;
            continue;
        }
        let first = fields.next().and_then(parse_u64);
        match key {
            "ctxt" => stat.ctxt = first,
            "intr" => stat.intr_total = first,
            "btime" => stat.btime = first,
            "processes" => stat.processes = first,
            "procs_running" => stat.procs_running = first,
            "procs_blocked" => stat.procs_blocked = first,
            "softirq" => {
                stat.softirq_total = first;
                stat.softirq_vectors = first.and_then(|_| numbers(fields));
            }
            _ => {}
        }
    }
    if !saw_cpu {
        return Err(ParseError::new(FILE, 0, "no cpu line"));
    }
    Ok(stat)
}

/// The per-IRQ numbers of the `intr` line, after its total.
///
/// Kept out of [`Stat`] because the line holds thousands of mostly-zero
/// numbers and is rarely needed. `counts[n]` is IRQ `n`.
pub fn parse_intr_counts(text: &str) -> Result<Vec<u64>, ParseError> {
    for (i, line) in whole_lines(text).enumerate() {
        let mut fields = line.split_ascii_whitespace();
        if fields.next() != Some("intr") {
            continue;
        }
        if fields.next().and_then(parse_u64).is_none() {
            return Err(ParseError::new(FILE, i + 1, "intr line has no total"));
        }
        return numbers(fields)
            .ok_or_else(|| ParseError::new(FILE, i + 1, "intr line holds a non-number"));
    }
    Err(ParseError::new(FILE, 0, "no intr line"))
}

/// What is wrong with one `cpu` line of `/proc/stat`.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
enum LineError {
    #[error("cpu total line appears twice")]
    TotalTwice,
    #[error("bad CPU id in \"cpu{0}\"")]
    BadId(String),
    #[error("cpu{0} appears twice")]
    CpuTwice(u32),
    #[error("{0:?} is not a tick count")]
    NotTicks(String),
    #[error("cpu line has {0} numbers, expected at least 4")]
    TooFew(usize),
}

fn add_cpu(stat: &mut Stat, id: &str, times: CpuTimes) -> Result<(), LineError> {
    if id.is_empty() {
        if stat.total.replace(times).is_some() {
            return Err(LineError::TotalTwice);
        }
        return Ok(());
    }
    let n = parse_u64(id)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| LineError::BadId(id.to_string()))?;
    if stat.cpus.insert(n, times).is_some() {
        return Err(LineError::CpuTwice(n));
    }
    Ok(())
}

fn cpu_times<'a>(fields: impl Iterator<Item = &'a str>) -> Result<CpuTimes, LineError> {
    let mut v = [None; 10];
    let mut n = 0;
    for field in fields {
        let value = parse_u64(field).ok_or_else(|| LineError::NotTicks(field.to_string()))?;
        // Columns a future kernel appends are not known to us yet.
        if let Some(slot) = v.get_mut(n) {
            *slot = Some(value);
        }
        n += 1;
    }
    let [
        Some(user),
        Some(nice),
        Some(system),
        Some(idle),
        iowait,
        irq,
        softirq,
        steal,
        guest,
        guest_nice,
    ] = v
    else {
        return Err(LineError::TooFew(n));
    };
    Ok(CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
        guest,
        guest_nice,
    })
}

fn numbers<'a>(fields: impl Iterator<Item = &'a str>) -> Option<Vec<u64>> {
    fields.map(parse_u64).collect()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    // node_exporter-fixtures/proc/stat, shortened intr line.
    const NODE: &str = "cpu  301854 612 111922 8979004 3552 2 3944 0 44 36
cpu0 44490 19 21045 1087069 220 1 3410 0 2 1
cpu7 29098 268 10164 1139282 555 0 31 0 9 8
intr 8885917 17 0 0 0 0 0 0 0 1 79281
ctxt 38014093
btime 1418183276
processes 26442
procs_running 2
procs_blocked 0
softirq 5057579 250191 1481983 1647 211099 186066 0 1783454 622196 12499 508444
";

    #[test]
    fn full_file() {
        let s = parse(NODE).unwrap();
        assert_eq!(
            s.total,
            Some(CpuTimes {
                user: 301_854,
                nice: 612,
                system: 111_922,
                idle: 8_979_004,
                iowait: Some(3552),
                irq: Some(2),
                softirq: Some(3944),
                steal: Some(0),
                guest: Some(44),
                guest_nice: Some(36),
            })
        );
        assert_eq!(s.cpus.keys().collect::<Vec<_>>(), vec![0, 7]);
        assert_eq!(s.cpus[&7].softirq, Some(31));
        assert_eq!(s.cpus[&7].guest_nice, Some(8));
        assert_eq!(s.intr_total, Some(8_885_917));
        assert_eq!(s.ctxt, Some(38_014_093));
        assert_eq!(s.btime, Some(1_418_183_276));
        assert_eq!(s.processes, Some(26442));
        assert_eq!(s.procs_running, Some(2));
        assert_eq!(s.procs_blocked, Some(0));
        assert_eq!(s.softirq_total, Some(5_057_579));
        let v = s.softirq_vectors.unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!((v[0], v[9]), (250_191, 508_444));
        assert_eq!(
            parse_intr_counts(NODE).unwrap(),
            vec![17, 0, 0, 0, 0, 0, 0, 0, 1, 79281]
        );
    }

    #[test]
    fn offline_cpus_are_absent_not_zero() {
        let s = parse("cpu  1 2 3 4\ncpu0 1 1 1 1\ncpu2 0 1 2 2\n").unwrap();
        assert_eq!(s.cpus.keys().collect::<Vec<_>>(), vec![0, 2]);
        assert!(!s.cpus.contains_key(&1));
    }

    #[test]
    fn nine_columns_next_to_ten() {
        // pcp-hpbl920gen8 has 9 numbers per cpu line (no guest_nice); older
        // kernels print even fewer.
        let s = parse("cpu  17330 3269 120465 869208946 2311 1 1144 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\ncpu1 1 2 3 4\ncpu2 1 2 3 4 5 6 7\n").unwrap();
        let t = s.total.unwrap();
        assert_eq!((t.guest, t.guest_nice), (Some(0), None));
        assert_eq!(s.cpus[&0].guest_nice, Some(10));
        assert_eq!(s.cpus[&1].iowait, None);
        assert_eq!(s.cpus[&1].idle, 4);
        assert_eq!((s.cpus[&2].softirq, s.cpus[&2].steal), (Some(7), None));
    }

    #[test]
    fn extra_future_columns_are_ignored() {
        let s = parse("cpu0 1 2 3 4 5 6 7 8 9 10 11 12\n").unwrap();
        assert_eq!(s.cpus[&0].guest_nice, Some(10));
        assert_eq!(s.total, None);
    }

    #[test]
    fn counters_above_2_pow_32() {
        // pcp-sysdev-002: intr 7458781179.
        let s = parse("cpu  1 2 3 4\nintr 7458781179 8 15\n").unwrap();
        assert_eq!(s.intr_total, Some(7_458_781_179));
    }

    #[test]
    fn garbage_cpu_lines_are_errors() {
        let e = parse("cpu  1 2 3\n").unwrap_err();
        assert_eq!((e.file, e.line), ("/proc/stat", 1));
        assert!(e.msg.contains("3 numbers"), "{e}");
        let e = parse("cpu  1 2 3 4\ncpu1 1 2 x 4\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("cpuX 1 2 3 4\n").unwrap_err();
        assert!(e.msg.contains("bad CPU id"), "{e}");
        let e = parse("cpu99999999999 1 2 3 4\n").unwrap_err();
        assert!(e.msg.contains("bad CPU id"), "{e}");
        let e = parse("cpu3 1 2 3 4\ncpu3 1 2 3 4\n").unwrap_err();
        assert!(e.msg.contains("twice"), "{e}");
        let e = parse("cpu -1 2 3 4\n").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn empty_or_no_cpu_line_is_an_error() {
        assert_eq!(parse("").unwrap_err().line, 0);
        assert_eq!(parse("\n\n").unwrap_err().line, 0);
        assert_eq!(parse("ctxt 5\nbtime 6\n").unwrap_err().msg, "no cpu line");
        assert!(parse("\u{0}\u{1}garbage é\n").is_err());
    }

    #[test]
    fn malformed_system_lines_are_unknown() {
        let s = parse(
            "cpu 1 2 3 4\nctxt\nbtime x\nsoftirq 5 1 x\nprocs_running 18446744073709551616\n",
        )
        .unwrap();
        assert_eq!(s.ctxt, None);
        assert_eq!(s.btime, None);
        assert_eq!(s.procs_running, None);
        assert_eq!(s.softirq_total, Some(5));
        assert_eq!(s.softirq_vectors, None);
        assert!(parse_intr_counts("cpu 1 2 3 4\n").is_err());
        assert!(parse_intr_counts("intr x 1\n").is_err());
        assert!(parse_intr_counts("intr 5 1 y\n").is_err());
    }

    #[test]
    fn truncated_mid_line() {
        let cut = &NODE[..NODE.find("ctxt 380").unwrap() + 8];
        let s = parse(cut).unwrap();
        // The cut ctxt line ("ctxt 380") would be a made-up value: ignored.
        assert_eq!(s.ctxt, None);
        assert_eq!(s.intr_total, Some(8_885_917));
        // Cut inside the first cpu line: nothing is known.
        assert!(parse("cpu  301854 61").is_err());
    }

    #[test]
    fn cpu_line_with_256_plus_cpus() {
        let mut text = String::from("cpu  1 2 3 4 5 6 7 8 9 10\n");
        for c in 0..300 {
            writeln!(text, "cpu{c} {c} 0 0 1 0 0 0 0 0 0").unwrap();
        }
        let s = parse(&text).unwrap();
        assert_eq!(s.cpus.len(), 300);
        assert_eq!(s.cpus[&299].user, 299);
        assert_eq!(s.cpus[&256].user, 256);
    }
}
