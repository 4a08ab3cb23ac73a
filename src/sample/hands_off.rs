//! The hands-off plan: which way each figure of a watched CPU is read, said
//! in the metric statuses. A watched CPU is never read from another CPU
//! (a perf group read or an MSR read there is a function-call IPI, and some
//! cpufreq drivers IPI for `scaling_cur_freq`); its switches and migrations
//! are counted from records it writes itself, its /proc and sysfs files
//! cost it nothing, and the rest is unknown with the reason.

use crate::base::Unavailable;
use crate::base::cpulist;
use crate::model::snapshot::Rung;
use crate::sample::ladder::{Metric, Status};

/// The reason a figure of watched CPUs is not read.
pub fn not_read(cpus: &[u32]) -> String {
    let (s, list) = (
        if cpus.len() == 1 { "" } else { "s" },
        cpulist::format(cpus),
    );
    format!("not read: reading it would interrupt watched CPU{s} {list}")
}

/// Adds to each status how the `hands_off` CPUs get that figure: `counts`
/// says where their switches are counted from, or why they are not.
/// `counting`: the CPUs package-wide counters are read on.
pub fn describe(
    statuses: &mut [Status],
    hands_off: &[u32],
    counting: &[u32],
    counts: &Result<&str, Unavailable>,
) {
    if hands_off.is_empty() {
        return;
    }
    let list = cpulist::format(hands_off);
    let cpu = if hands_off.len() == 1 { "CPU" } else { "CPUs" };
    for st in statuses.iter_mut() {
        let says = match (st.metric, st.rung) {
            (Metric::Scheduler, _) => match counts {
                // counted the way every CPU is: nothing to add
                Ok(from) if st.source.as_deref() == Some(*from) => None,
                Ok(from) => Some(format!("watched {cpu} {list}: counted from {from}")),
                Err(why) => Some(format!(
                    "watched {cpu} {list}: {}; {why}",
                    not_read(hands_off)
                )),
            },
            (
                Metric::Frequency | Metric::Ipc | Metric::HwCstates | Metric::Smi,
                Some(Rung::Perf | Rung::Msr),
            )
            | (Metric::Temperature, Some(Rung::Msr)) => {
                Some(format!("watched {cpu} {list}: {}", not_read(hands_off)))
            }
            // scaling_cur_freq: some drivers IPI the CPU for it
            (Metric::Frequency, Some(Rung::Kernel))
                if st
                    .source
                    .as_deref()
                    .is_some_and(|s| s.contains("scaling_cur_freq")) =>
            {
                Some(format!(
                    "watched {cpu} {list}: MHz {}; Busy% from /proc/stat",
                    not_read(hands_off)
                ))
            }
            (Metric::Power, Some(Rung::Perf | Rung::Msr)) => {
                let watched: Vec<u32> = counting
                    .iter()
                    .copied()
                    .filter(|c| hands_off.contains(c))
                    .collect();
                (!watched.is_empty()).then(|| {
                    format!(
                        "the package counted on watched CPU {}: {}",
                        cpulist::format(&watched),
                        not_read(&watched)
                    )
                })
            }
            _ => None,
        };
        if let Some(says) = says {
            st.note = Some(match st.note.take() {
                Some(n) => format!("{n}; {says}"),
                None => says,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(metric: Metric, rung: Option<Rung>, source: &str) -> Status {
        Status {
            metric,
            rung,
            source: Some(source.into()),
            note: None,
        }
    }

    #[test]
    fn each_figure_of_a_watched_cpu_says_how_it_is_read() {
        let mut st = vec![
            status(
                Metric::Scheduler,
                Some(Rung::Perf),
                "perf software context-switches, cpu-migrations",
            ),
            status(
                Metric::Frequency,
                Some(Rung::Perf),
                "perf msr aperf/mperf/tsc",
            ),
            status(Metric::OsCstates, Some(Rung::Kernel), "cpuidle sysfs"),
            status(
                Metric::Ipc,
                Some(Rung::Perf),
                "perf hardware instructions/cycles",
            ),
        ];
        // the words the pipeline passes for counting rings
        let how = "counting rings (context-switches and cpu-migrations values the CPU writes \
                   into its own samples; no IPI)";
        describe(&mut st, &[1], &[0], &Ok(how));
        assert_eq!(
            st[0].note.as_deref(),
            Some(
                "watched CPU 1: counted from counting rings (context-switches and \
                 cpu-migrations values the CPU writes into its own samples; no IPI)"
            )
        );
        assert_eq!(
            st[1].note.as_deref(),
            Some("watched CPU 1: not read: reading it would interrupt watched CPU 1")
        );
        assert_eq!(st[2].note, None, "sysfs costs the CPU nothing");
        assert_eq!(
            st[3].note.as_deref(),
            Some("watched CPU 1: not read: reading it would interrupt watched CPU 1")
        );
        let mut st = vec![status(Metric::Scheduler, Some(Rung::Perf), "perf")];
        describe(
            &mut st,
            &[1, 2, 3],
            &[0],
            &Err(Unavailable::new(
                crate::base::Cause::Permission,
                "perf_event_open: permission denied",
            )),
        );
        assert_eq!(
            st[0].note.as_deref(),
            Some(
                "watched CPUs 1-3: not read: reading it would interrupt watched CPUs 1-3; \
                 perf_event_open: permission denied"
            )
        );
        // every CPU counted in the kernel: the source says it already
        let mut st = vec![status(Metric::Scheduler, Some(Rung::Kernel), "in-kernel")];
        describe(&mut st, &[1], &[0], &Ok("in-kernel"));
        assert_eq!(st[0].note, None, "said once, in the source");
        let mut st = vec![status(Metric::Scheduler, Some(Rung::Perf), "perf")];
        describe(&mut st, &[], &[0], &Ok("x"));
        assert_eq!(st[0].note, None, "nothing watched: nothing to say");
    }
}
