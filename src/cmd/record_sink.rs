//! `--record` as a pipeline sink, opened and closed from the command line's options: every judged sample becomes one interval
//! of rows, tagged with each CPU's verdict and finding ids.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::cli::RecordArgs;
use crate::model::machine::Machine;
use crate::noise::VerdictState;
use crate::pipeline::{Note, Sample, Sink};
use crate::record::sidecar::RecordMeta;
use crate::record::sidecar::lost_ranges_text;
use crate::record::writer::{OpenMode, RecordError, Recorder, RowTags};

/// Intervals sampled but not written, over the process: one recording at
/// most per run, and the command that started it reads this at its end.
static LOST: AtomicU64 = AtomicU64::new(0);

/// Set while a dashboard owns the terminal: a failed write is then said in
/// its footer, and on stderr only once the screen is gone.
static ON_SCREEN: AtomicBool = AtomicBool::new(false);

/// The recorder, fed by the pipeline.
pub struct RecordSink {
    rec: Recorder,
    /// Whether the first failed write was said.
    told: bool,
    /// Whether the metrics' sources went to the sidecar.
    sourced: bool,
    /// Whether an interval of no length was said to be left out.
    told_empty: bool,
    /// The run of a series the intervals belong to now.
    repetition: Option<u32>,
}

/// Opens the recorder `--record` asks for (none without it); an existing
/// file without `--force`/`--append`, or a place that cannot be written,
/// is an error here, before sampling starts.
pub fn open(
    args: &RecordArgs,
    machine: &Machine,
    interval: Duration,
    watched: &[u32],
) -> Result<Option<RecordSink>, RecordError> {
    open_with(args, machine, interval, watched, false)
}

/// [`open`] for a series of runs: each interval is tagged with its run
/// ([`RecordSink::set_repetition`]) in a `repetition` column.
pub fn open_series(
    args: &RecordArgs,
    machine: &Machine,
    interval: Duration,
    watched: &[u32],
) -> Result<Option<RecordSink>, RecordError> {
    open_with(args, machine, interval, watched, true)
}

fn open_with(
    args: &RecordArgs,
    machine: &Machine,
    interval: Duration,
    watched: &[u32],
    series: bool,
) -> Result<Option<RecordSink>, RecordError> {
    let Some(path) = &args.record else {
        return Ok(None);
    };
    let mode = if args.force {
        OpenMode::Force
    } else if args.append {
        OpenMode::Append
    } else {
        OpenMode::New
    };
    let meta = RecordMeta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        interval_s: interval.as_secs_f64(),
        watched: watched.to_vec(),
        command_line: std::env::args().collect(),
    };
    LOST.store(0, Ordering::Relaxed);
    let mut schema = crate::record::columns::Schema::for_machine(machine);
    if series {
        schema = schema.with_repetition();
    }
    Ok(Some(RecordSink {
        rec: Recorder::create_with(path, mode, machine, &meta, schema)?,
        told: false,
        sourced: false,
        told_empty: false,
        repetition: None,
    }))
}

/// The verdict and finding ids of every row of a sample.
pub fn tags(s: &Sample) -> Vec<RowTags> {
    let j = &s.judgement;
    let mut out: Vec<RowTags> = s
        .interval
        .cpus
        .iter()
        .map(|r| {
            let v = j.verdict(r.cpu);
            RowTags {
                cpu: Some(r.cpu),
                verdict: v.map_or("", |v| v.state.label()).to_string(),
                findings: j.ids_of(r.cpu).into_iter().map(str::to_string).collect(),
                why: v.map(why).unwrap_or_default(),
                intruders: intruders(s, r.cpu),
                intruder_cgroups: intruder_cgroups(s, r.cpu),
                repetition: None,
            }
        })
        .collect();
    // the machine: noisy when a CPU is, unknown when none could be judged
    let states: Vec<VerdictState> = j.verdicts.iter().map(|v| v.state).collect();
    let machine = if states.contains(&VerdictState::Noisy) {
        VerdictState::Noisy.label()
    } else if states.contains(&VerdictState::Quiet) {
        VerdictState::Quiet.label()
    } else {
        VerdictState::Unknown.label()
    };
    let mut wide: Vec<String> = j
        .findings
        .iter()
        .filter(|f| f.cpus.is_empty())
        .map(|f| f.kind.tag().to_string())
        .collect();
    wide.dedup();
    out.push(RowTags {
        cpu: None,
        verdict: machine.to_string(),
        findings: wide,
        ..RowTags::default()
    });
    out
}

/// The verdict's causes (`IRQ eth0 402/s; CSW 1487/s`), or why it is
/// unknown; empty when quiet.
fn why(v: &crate::noise::CpuVerdict) -> String {
    match v.state {
        VerdictState::Quiet => String::new(),
        VerdictState::Noisy => v
            .causes
            .iter()
            .map(crate::noise::Cause::text)
            .collect::<Vec<_>>()
            .join("; "),
        VerdictState::Unknown => v.reason.clone().unwrap_or_else(|| "no reading".into()),
    }
}

/// How many intruders a row names.
const INTRUDERS: usize = 3;

/// The tasks other than the owner that ran longest on a watched, traced
/// CPU, up to [`INTRUDERS`].
fn named(s: &Sample, cpu: u32) -> &[crate::noise::traced::Intruder] {
    if !s.watched.contains(&cpu) {
        return &[];
    }
    s.trace
        .as_ref()
        .and_then(|t| t.cpu(cpu))
        .map_or(&[], |t| &t.intruders[..t.intruders.len().min(INTRUDERS)])
}

/// `comm[pid]:ms` of each of them.
fn intruders(s: &Sample, cpu: u32) -> Vec<String> {
    named(s, cpu)
        .iter()
        .map(|i| format!("{}[{}]:{:.2}", i.task.comm, i.task.pid, i.ns as f64 / 1e6))
        .collect()
}

/// The cgroup path of each of them, in the same order.
fn intruder_cgroups(s: &Sample, cpu: u32) -> Vec<String> {
    named(s, cpu)
        .iter()
        .map(|i| i.task.cgroup.clone().unwrap_or_default())
        .collect()
}

/// Prints the one-screen summary of the recording, if there is one, when
/// the session ends (to stderr when stdout carries the tables).
pub fn print_summary(args: &RecordArgs, quiet: bool, to_stderr: bool) {
    let Some(path) = &args.record else { return };
    if quiet {
        return;
    }
    if !path.exists() {
        return;
    }
    let text = crate::record::digest::summary(path);
    if to_stderr {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
}

impl RecordSink {
    /// Tags the intervals from now on with this run of a series.
    pub fn set_repetition(&mut self, run: Option<u32>) {
        self.repetition = run;
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        self.rec.path()
    }
}

impl Sink for RecordSink {
    fn accept(&mut self, s: &Sample) -> Result<(), Note> {
        if !self.sourced && !s.statuses.is_empty() {
            self.sourced = true;
            self.rec.set_sources(
                s.statuses
                    .iter()
                    .map(|st| crate::record::sidecar::MetricSource {
                        metric: st.metric.label().to_string(),
                        source: st.source.clone(),
                        note: st.note.clone(),
                    })
                    .collect(),
            );
        }
        if s.interval.dt_s <= 0.0 {
            // no time passed on the tree's clock (a static tree under
            // --root): no rate, and a row would say t_s 0 while time goes on
            if self.told_empty {
                return Ok(());
            }
            self.told_empty = true;
            return Err(Note::NoLengthNotRecorded {
                path: self.rec.path().to_path_buf(),
            });
        }
        let mut tags = tags(s);
        for t in &mut tags {
            t.repetition = self.repetition;
        }
        let Err(e) = self.rec.write(&s.interval, &tags) else {
            return Ok(());
        };
        LOST.fetch_add(1, Ordering::Relaxed);
        if self.told {
            // said once; the footer and the end of the run give the count
            return Ok(());
        }
        self.told = true;
        let note = Note::RecordingFailed {
            path: self.rec.path().to_path_buf(),
            error: e.to_string(),
        };
        if !ON_SCREEN.load(Ordering::Relaxed) {
            eprintln!("noisetop: {note}");
        }
        Err(note)
    }

    fn status(&self) -> Option<Note> {
        let file = self
            .rec
            .path()
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Some(Note::Recording {
            file,
            rows: self.rec.rows(),
            bytes: self.rec.bytes(),
            lost: self.rec.lost().iter().map(|r| r.intervals).sum(),
        })
    }
}

impl Drop for RecordSink {
    fn drop(&mut self) {
        if let Err(e) = self.rec.save_lost() {
            eprintln!(
                "noisetop: cannot list the lost intervals in {}: {e}",
                crate::os::fs::sidecar_path(self.rec.path()).display()
            );
        }
    }
}

/// Makes a failed write wait for the end of the session to be said on
/// stderr, while a dashboard owns the terminal.
pub fn hold_errors_until_end() {
    ON_SCREEN.store(true, Ordering::Relaxed);
}

/// How many intervals the recording of this run could not write.
pub fn lost_intervals() -> u64 {
    LOST.load(Ordering::Relaxed)
}

/// Says what the recording lost, once the recorder is closed: an error
/// (a non-zero exit) naming the lost time ranges.
pub fn finish(args: &RecordArgs) -> anyhow::Result<()> {
    let n = lost_intervals();
    let Some(path) = &args.record else {
        return Ok(());
    };
    if n == 0 {
        return Ok(());
    }
    let ranges = crate::record::sidecar::Sidecar::read(path)
        .ok()
        .flatten()
        .map(|s| lost_ranges_text(&s.lost))
        .unwrap_or_default();
    anyhow::bail!(
        "recording to {} lost {n} intervals{ranges}: writes failed (a full disk?); {} lists them",
        path.display(),
        crate::os::fs::sidecar_path(path).display()
    )
}

#[cfg(test)]
mod tags_tests {

    use super::tags;
    use crate::model::interval::{CpuRates, Interval};
    use crate::noise::traced::Intruder;
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::noise::traced::TracedTask;
    use crate::noise::{Cause, CauseClass, CpuVerdict, Judgement, VerdictState};
    use crate::pipeline::Sample;

    fn task(comm: &str, pid: u32, ms: f64) -> Intruder {
        Intruder {
            task: TracedTask {
                comm: comm.into(),
                pid,
                tid: pid,
                per_cpu_kthread: false,
                exited: false,
                cgroup: None,
            },
            ns: (ms * 1e6) as u64,
            charged_ns: None,
            slices: 1,
        }
    }

    fn verdict(
        cpu: u32,
        state: VerdictState,
        causes: Vec<Cause>,
        reason: Option<&str>,
    ) -> CpuVerdict {
        CpuVerdict {
            cpu,
            watched: cpu != 0,
            state,
            causes,
            reason: reason.map(str::to_string),
            probe_ns: None,
        }
    }

    #[test]
    fn rows_say_why_and_who_on_watched_traced_cpus() {
        let cause = |label: &str, value: f64, unit| Cause {
            class: CauseClass::DeviceIrq,
            label: label.into(),
            value,
            limit: 10.0,
            unit,
        };
        let s = Sample {
            interval: Interval {
                dt_s: 1.0,
                cpus: (0..3)
                    .map(|cpu| CpuRates {
                        cpu,
                        ..CpuRates::default()
                    })
                    .collect(),
                ..Interval::default()
            },
            judgement: Judgement {
                findings: Vec::new(),
                verdicts: vec![
                    verdict(0, VerdictState::Quiet, Vec::new(), None),
                    verdict(
                        1,
                        VerdictState::Noisy,
                        vec![cause("IRQ eth0", 402.0, "/s"), cause("steal", 3.06, "%")],
                        None,
                    ),
                    verdict(
                        2,
                        VerdictState::Unknown,
                        Vec::new(),
                        Some("no interval yet"),
                    ),
                ],
            },
            watched: vec![1, 2],
            trace: Some(Traced {
                cpus: vec![TracedCpu {
                    cpu: 1,
                    window_ns: 1_000_000_000,
                    intruders: vec![
                        task("kworker/1:1", 77, 12.345),
                        {
                            let mut t = task("sshd", 900, 3.0);
                            t.task.cgroup = Some("/system.slice/ssh.service".into());
                            t
                        },
                        task("rcu_sched", 15, 0.094),
                        task("bash", 1000, 0.01),
                    ],
                    ..TracedCpu::default()
                }],
                ..Traced::default()
            }),
            ..Sample::default()
        };
        let t = tags(&s);
        // each named task's cgroup in the same order, empty where unknown
        assert_eq!(t[1].intruder_cgroups, ["", "/system.slice/ssh.service", ""]);
        assert!(t[0].intruder_cgroups.is_empty());
        let got: Vec<(&str, String)> = t
            .iter()
            .map(|r| (r.why.as_str(), r.intruders.join(";")))
            .collect();
        assert_eq!(
            got,
            [
                ("", String::new()),
                (
                    "IRQ eth0 402/s; steal 3.1 %",
                    "kworker/1:1[77]:12.35;sshd[900]:3.00;rcu_sched[15]:0.09".to_string()
                ),
                ("no interval yet", String::new()),
                ("", String::new()),
            ]
        );
    }
}
