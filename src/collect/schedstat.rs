//! Parses `/proc/schedstat`: per CPU, the run queue's time counters.
//!
//! The file starts with `version N` and `timestamp J`, then one `cpuN`
//! line per online CPU, each followed (on SMP kernels) by its `domainK`
//! lines. From version 15 on a `cpuN` line holds nine numbers; the last
//! three are the time tasks ran on the CPU and the time they waited on its
//! run queue, both in nanoseconds, and the number of time slices run. The
//! version moves with the domain lines (16 reordered their idle types, 17
//! added fields), never yet with the `cpuN` line, so a later version is
//! read as long as its `cpuN` lines keep the nine numbers. Version 14 and
//! earlier had twelve numbers, times that were jiffies on kernels before
//! 2.6.23, and are refused.
//!
//! The file exists only on kernels built with `CONFIG_SCHEDSTATS`; the
//! run-queue times in it are counted whatever `kernel.sched_schedstats`
//! says (that switch covers the other fields).

use serde::Serialize;

use super::ParseError;
use super::interrupts::{is_blank, parse_u64, whole_lines};
use crate::base::cpu_map::CpuMap;

const FILE: &str = "/proc/schedstat";

/// The first version whose `cpuN` lines this reads.
pub const FIRST_VERSION: u32 = 15;

/// The run-queue counters of one CPU since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunQueue {
    /// Time tasks ran on the CPU, ns (field 7).
    pub run_ns: u64,
    /// Time tasks waited on the CPU's run queue before running, ns (field
    /// 8): credited when a task gets the CPU, for the whole wait.
    pub wait_ns: u64,
    /// Time slices run (field 9).
    pub slices: u64,
}

/// The parts of `/proc/schedstat` noisetop uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SchedStat {
    /// The format's version.
    pub version: u32,
    /// The `cpuN` lines, by CPU id.
    pub cpus: CpuMap<RunQueue>,
}

/// Parses `/proc/schedstat`.
///
/// Errors: no `version` line first, a version before
/// [`FIRST_VERSION`], a `cpuN` line without nine numbers or with a bad id,
/// the same CPU twice, and no `cpuN` line at all. A last line without its
/// newline is a cut-off read and is ignored.
pub fn parse(text: &str) -> Result<SchedStat, ParseError> {
    let mut lines = whole_lines(text).enumerate().filter(|(_, l)| !is_blank(l));
    let version = match lines.next() {
        Some((_, l)) => l
            .strip_prefix("version ")
            .and_then(|v| parse_u64(v.trim()))
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| ParseError::new(FILE, 1, format!("not a version line: {l:?}")))?,
        None => return Err(ParseError::new(FILE, 0, "empty")),
    };
    if version < FIRST_VERSION {
        return Err(ParseError::new(
            FILE,
            1,
            format!(
                "version {version}: its cpu lines are read from version {FIRST_VERSION} on \
                 (before, twelve numbers, and times in jiffies on old kernels)"
            ),
        ));
    }
    let mut out = SchedStat {
        version,
        cpus: CpuMap::new(),
    };
    for (i, line) in lines {
        // the domain lines are most of the file on a big machine: only
        // the first bytes of each are looked at
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let no = i + 1;
        let (id, numbers) = rest.split_once(' ').unwrap_or((rest, ""));
        let cpu = parse_u64(id)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| ParseError::new(FILE, no, format!("bad CPU id {id:?}")))?;
        let mut n = [0u64; 9];
        let mut count = 0;
        for f in numbers.split_ascii_whitespace() {
            let v = parse_u64(f)
                .ok_or_else(|| ParseError::new(FILE, no, format!("not a number: {f:?}")))?;
            if let Some(slot) = n.get_mut(count) {
                *slot = v;
            }
            count += 1;
        }
        if count != n.len() {
            return Err(ParseError::new(
                FILE,
                no,
                format!("cpu{cpu} has {count} numbers, not the 9 of version {FIRST_VERSION}"),
            ));
        }
        let rq = RunQueue {
            run_ns: n[6],
            wait_ns: n[7],
            slices: n[8],
        };
        if out.cpus.insert(cpu, rq).is_some() {
            return Err(ParseError::new(FILE, no, format!("cpu{cpu} appears twice")));
        }
    }
    if out.cpus.is_empty() {
        return Err(ParseError::new(FILE, 0, "no cpu line"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `procfs-fixtures/proc/schedstat` (a 2-CPU x86 machine, version 15),
    /// as the kernel prints it.
    const V15: &str = "version 15\n\
timestamp 15819019232\n\
cpu0 498494191 0 3533438552 2553969831 3853684107 2465731542 2045936778163039 343796328169361 4767485306\n\
domain0 00000000,00000003 212499247 210112015 1861015 1860405436 536440 369895 32599 210079416 25368550 24241256 384652 927363878 807233 6366 1647 24239609 2122447165 1886868564 121112060 2848625533 125678146 241025 1032026 1885836538 2545 12 2533 0 0 0 0 0 0 1387952561 21076581 0\n\
cpu1 518377256 0 4155211005 2778589869 10466382 2867629021 1904686152592476 364107263788241 5145567945\n\
domain0 00000000,00000003 217653037 215526982 1577949 1580427380 557469 393576 28538 215498444 28721913 27662819 371153 870843407 745912 5523 1639 27661180 2331056874 2107732788 111442342 652402556 123615235 196159 1045245 2106687543 2400 3 2397 0 0 0 0 0 0 1437804657 26220076 0\n";

    #[test]
    fn version_15_gives_each_cpus_run_and_wait_time_in_ns() {
        let s = parse(V15).unwrap();
        assert_eq!(s.version, 15);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(
            s.cpus.get(&0),
            Some(&RunQueue {
                run_ns: 2_045_936_778_163_039,
                wait_ns: 343_796_328_169_361,
                slices: 4_767_485_306,
            })
        );
        assert_eq!(s.cpus.get(&1).map(|r| r.wait_ns), Some(364_107_263_788_241));
    }

    #[test]
    fn later_versions_with_the_same_cpu_line_are_read() {
        // version 17 (Linux 6.15) changed only the domain lines
        let v17 = V15.replacen("version 15", "version 17", 1);
        assert_eq!(
            parse(&v17).unwrap().cpus.get(&1),
            parse(V15).unwrap().cpus.get(&1)
        );
    }

    #[test]
    fn older_versions_and_other_cpu_lines_are_refused_with_the_reason() {
        // version 14 (2.6.25): twelve numbers, run_delay the 11th
        let v14 = "version 14\ntimestamp 4294937296\ncpu0 0 0 0 0 23 17 5 12 9 101 56 7\n";
        let e = parse(v14).unwrap_err();
        assert_eq!((e.file, e.line), ("/proc/schedstat", 1));
        assert!(e.msg.starts_with("version 14: "), "{e}");
        let later = "version 18\ntimestamp 1\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        let e = parse(later).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.msg, "cpu0 has 10 numbers, not the 9 of version 15");
        let e = parse("timestamp 1\ncpu0 1 2 3 4 5 6 7 8 9\n").unwrap_err();
        assert_eq!(e.msg, "not a version line: \"timestamp 1\"");
        let e = parse("version 15\ntimestamp 1\n").unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (0, "no cpu line"));
        let e = parse("version 15\ncpu0 1 2 3 4 5 6 7 8 9\ncpu0 1 2 3 4 5 6 7 8 9\n").unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (3, "cpu0 appears twice"));
        let e = parse("version 15\ncpuX 1 2 3 4 5 6 7 8 9\n").unwrap_err();
        assert_eq!(e.msg, "bad CPU id \"X\"");
        let e = parse("version 15\ncpu0 1 2 3 4 5 6 -7 8 9\n").unwrap_err();
        assert_eq!(e.msg, "not a number: \"-7\"");
        assert_eq!(parse("").unwrap_err().msg, "empty");
    }

    #[test]
    fn a_cut_off_last_line_is_left_out() {
        let cut = "version 15\ncpu0 1 2 3 4 5 6 7 8 9\ncpu1 1 2 3";
        let s = parse(cut).unwrap();
        assert_eq!(s.cpus.keys().collect::<Vec<_>>(), [0]);
    }
}
