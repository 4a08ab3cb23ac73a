//! The driver's word on tracing, over a tree with no files and a tracer
//! that returns fixed windows.

use super::{Driver, Step, TraceSource};
use crate::base::Unavailable;
use crate::noise::traced::Traced;
use crate::os::capture::Captured;
use crate::os::fs::{Fs, Roots};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;

/// Gives the same window every time.
struct Fixed(Traced, Vec<String>);

impl TraceSource for Fixed {
    fn drain(&mut self) -> Traced {
        self.0.clone()
    }
    fn notes(&self) -> Vec<String> {
        self.1.clone()
    }
    fn retarget(&mut self, _: &[u32]) -> Result<(), Unavailable> {
        Ok(())
    }
    fn cpus(&self) -> Vec<u32> {
        vec![1]
    }
}

fn driver(dir: &std::path::Path) -> Driver<Captured> {
    let e = Engine::new(Sampler::new(
        Fs::new(Roots::under(dir)),
        Captured::default(),
    ));
    let mut d = Driver::new(e);
    d.set_tracer(Some(Box::new(Fixed(Traced::default(), Vec::new()))), None);
    d
}

fn sample(d: &mut Driver<Captured>) -> super::Sample {
    d.engine.sampler.hw.stamp.mono_ns += 1_000_000_000;
    match d.step() {
        Step::Sample(s) => *s,
        Step::Ready(_) => panic!("an interval"),
    }
}

fn notes(d: &mut Driver<Captured>) -> Vec<String> {
    sample(d).notes.iter().map(ToString::to_string).collect()
}

const KEPT: &str = "who ran: kept windows on CPU 1";

#[test]
fn the_status_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    assert!(matches!(d.step(), Step::Ready(_)));
    assert_eq!(notes(&mut d), [KEPT]);
    assert_eq!(notes(&mut d), Vec::<String>::new(), "said once");
}

/// The screen keeps the status from a field of its own, not from the
/// wording of a note: it comes with the note, once, without its label.
#[test]
fn the_status_comes_in_its_own_field_beside_the_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    assert!(matches!(d.step(), Step::Ready(_)));
    let first = sample(&mut d);
    assert_eq!(first.who_ran.as_deref(), Some("kept windows on CPU 1"));
    assert_eq!(
        first.notes,
        [super::Note::WhoRan("kept windows on CPU 1".into())]
    );
    assert_eq!(first.notes[0].to_string(), KEPT);
    assert_eq!(sample(&mut d).who_ran, None, "said once");
}

/// A source that says it counts in the kernel.
struct InKernel;

impl TraceSource for InKernel {
    fn drain(&mut self) -> Traced {
        Traced::default()
    }
    fn retarget(&mut self, _: &[u32]) -> Result<(), Unavailable> {
        Ok(())
    }
    fn cpus(&self) -> Vec<u32> {
        vec![1, 3]
    }
    fn notes(&self) -> Vec<String> {
        vec!["this kernel has no tracepoint thermal_apic_entry: nothing is counted there".into()]
    }
    fn in_kernel(&self) -> bool {
        true
    }
}

#[test]
fn in_kernel_counts_say_so_with_the_cpus_judged_and_what_the_kernel_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = driver(dir.path());
    d.set_tracer(Some(Box::new(InKernel)), None);
    assert_eq!(
        d.trace_status(),
        "who ran: counted in the kernel (BPF) on every CPU; judged on watched CPU 1,3; this \
         kernel has no tracepoint thermal_apic_entry: nothing is counted there"
    );
}

#[test]
fn what_the_kernel_refused_the_tracer_is_said_in_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::new(Sampler::new(
        Fs::new(Roots::under(dir.path())),
        Captured::default(),
    ));
    let mut d = Driver::new(e);
    let refused = "a kept window cannot be read: gone";
    d.set_tracer(
        Some(Box::new(Fixed(
            Traced::default(),
            vec![refused.to_string()],
        ))),
        None,
    );
    assert_eq!(d.trace_status(), format!("{KEPT}; {refused}"));
}

#[test]
fn the_interrupts_that_hit_the_owner_are_its_tasks_own_and_no_one_elses() {
    use crate::trace::{CpuTrace, TaskId, TaskTime};
    let task = |tid: u32, pid: u32, owner: bool, ns: u64, irq_ns: u64| TaskTime {
        task: TaskId {
            pid: Some(pid),
            tid,
            comm: Some(format!("t{tid}")),
        },
        ns,
        slices: 1,
        carried: 0,
        max_ns: ns,
        owner,
        charged_ns: None,
        irq_ns,
        cgroup: None,
    };
    let c = CpuTrace {
        cpu: 1,
        start_ns: 0,
        window_ns: 1_000_000_000,
        owner: Some(TaskId {
            pid: Some(40),
            tid: 40,
            comm: Some("t40".into()),
        }),
        owner_given: true,
        owner_ns: 700_000_000,
        idle_ns: 0,
        unknown_ns: 0,
        // the owner's two threads, and a loop that was interrupted too
        tasks: vec![
            task(40, 40, true, 500_000_000, 3_000_000),
            task(41, 40, true, 200_000_000, 1_500_000),
            task(99, 99, false, 290_000_000, 2_000_000),
        ],
        sources: Vec::new(),
        records: 0,
        unmatched: 0,
        idle_edge_ns: 0,
        kernel: None,
    };
    let t = super::trace::cpu_with(&c, usize::MAX, &mut |t, _| {
        crate::noise::traced::TracedTask {
            comm: t.comm.clone().unwrap_or_default(),
            pid: t.pid.unwrap_or(t.tid),
            tid: t.tid,
            ..crate::noise::traced::TracedTask::default()
        }
    });
    assert_eq!((t.owner_ns, t.owner_irq_ns), (700_000_000, 4_500_000));
    assert_eq!(t.intruders.len(), 1);
}

/// Counts every CPU: each read adds 10 switches and 1 migration.
struct EveryCpu(u64);

impl super::SwitchSource for EveryCpu {
    fn counts_at(&mut self, _: u64) -> Vec<crate::os::switch_ring::SwitchCount> {
        self.0 += 10;
        (0..2)
            .map(|cpu| crate::os::switch_ring::SwitchCount {
                cpu,
                switches: self.0,
                migrations: self.0 / 10,
            })
            .collect()
    }
    fn retarget(&mut self, _: &[u32]) -> Result<(), Unavailable> {
        Ok(())
    }
    fn counts_every_cpu(&self) -> bool {
        true
    }
}

#[test]
fn counts_of_every_cpu_fill_every_cpu_and_go_on_when_the_watched_change() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = dir.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("online"), "0-1\n").unwrap();
    let mut d = driver(dir.path());
    d.set_switches(Some(Box::new(EveryCpu(0))), None);
    assert!(d.counts_every_cpu());
    assert!(matches!(d.step(), Step::Ready(_)));
    let rates = |s: &super::Sample| {
        (0..2)
            .map(|c| {
                let r = s.interval.cpu(c).unwrap();
                (r.csw_per_s, r.mig_per_s)
            })
            .collect::<Vec<_>>()
    };
    let s = sample(&mut d);
    assert_eq!(rates(&s), vec![(Some(10.0), Some(1.0)); 2]);
    let scheduler = s
        .statuses
        .iter()
        .find(|st| st.metric == crate::sample::ladder::Metric::Scheduler)
        .unwrap();
    assert_eq!(scheduler.source.as_deref(), Some(super::IN_KERNEL_COUNTS));
    // newly watched: the counts go on, no interval is lost
    d.set_watched(&[1]);
    let s = sample(&mut d);
    assert_eq!(rates(&s), vec![(Some(10.0), Some(1.0)); 2]);
}
