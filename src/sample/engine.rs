//! Turns a sampler into a stream of intervals: sample, then delta with the
//! previous snapshot. `pipeline::Driver` judges each interval and hands it
//! to the sinks.

use std::sync::Arc;

use crate::base::counter::{Width, delta};
use crate::base::cpu_map::CpuMap;
use crate::collect::cpuidle::IdleCounters;
use crate::model::interval::{self, CpuFileFigures, IdleRate, Interval};
use crate::model::snapshot::Snapshot;
use crate::os::hw::Hardware;
use crate::os::hw::Stamp;
use crate::sample::ladder::{self, Metric, Status};
use crate::sample::sampler::Sampler;

/// A sampler plus the previous snapshot.
pub struct Engine<H: Hardware> {
    /// The sampler.
    pub sampler: Sampler<H>,
    prev: Option<Snapshot>,
    rounds: Rounds,
}

/// Per-CPU counter figures when the sampler reads the files in rounds:
/// each CPU's last read, and the figures between its last two reads, which
/// stand until its next read.
#[derive(Debug, Default)]
struct Rounds {
    last: CpuMap<LastRead>,
    figures: CpuMap<Figures>,
    /// The online CPUs of the last update, to drop those that went.
    online: Vec<u32>,
}

#[derive(Debug, Default)]
struct LastRead {
    at: Stamp,
    idle: Option<Vec<IdleCounters>>,
    throttle: Option<u64>,
}

#[derive(Debug)]
struct Figures {
    window_s: f64,
    idle: Arc<[IdleRate]>,
    throttle: Option<u64>,
}

impl Rounds {
    /// Takes in the CPUs the last sample read and writes every CPU's
    /// latest figures into `iv`.
    fn update(
        &mut self,
        m: &crate::model::machine::Machine,
        read: &[u32],
        cur: &Snapshot,
        iv: Option<&mut Interval>,
    ) {
        if self.online != cur.online {
            let mut sorted = cur.online.clone();
            sorted.sort_unstable();
            let online = |c: u32| sorted.binary_search(&c).is_ok();
            self.last.retain(|c, _| online(c));
            self.figures.retain(|c, _| online(c));
            self.online.clone_from(&cur.online);
        }
        for &cpu in read {
            let f = cur.files.get(&cpu);
            let idle = f.and_then(|f| f.idle.as_deref());
            let throttle = f.and_then(|f| f.throttle.as_ref()).and_then(|t| t.core);
            if let Some(before) = self.last.get(&cpu) {
                let dt_ns = cur.time.mono_ns.saturating_sub(before.at.mono_ns);
                let window_s = dt_ns as f64 / 1e9;
                let idle = m.idle_states.get(&cpu).map_or_else(Vec::new, |states| {
                    interval::idle_rates(states, before.idle.as_deref(), idle, window_s)
                });
                let idle = Arc::from(idle);
                let throttle = match (before.throttle, throttle) {
                    (Some(a), Some(b)) if dt_ns > 0 => delta(a, b, Width::Bits64),
                    _ => None,
                };
                self.figures.insert(
                    cpu,
                    Figures {
                        window_s,
                        idle,
                        throttle,
                    },
                );
            }
            // in place: no allocation once every CPU has been read
            let last = self.last.get_or_default(cpu);
            last.at = cur.time;
            last.throttle = throttle;
            match (idle, &mut last.idle) {
                (Some(now), Some(kept)) => {
                    kept.clear();
                    kept.extend_from_slice(now);
                }
                (now, kept) => *kept = now.map(<[IdleCounters]>::to_vec),
            }
        }
        let Some(iv) = iv else { return };
        for r in &mut iv.cpus {
            if let Some(f) = self.figures.get(&r.cpu) {
                r.idle = Arc::clone(&f.idle);
                r.throttle = f.throttle;
                r.window_s = Some(f.window_s);
            } else if let Some(states) = m.idle_states.get(&r.cpu) {
                // not read twice yet: its states are unknown, not absent
                r.idle = interval::idle_rates(states, None, None, 0.0).into();
            }
        }
    }
}

impl<H: Hardware> Engine<H> {
    /// Wraps a sampler.
    pub fn new(sampler: Sampler<H>) -> Self {
        Engine {
            sampler,
            prev: None,
            rounds: Rounds::default(),
        }
    }

    /// Takes a snapshot; returns the interval since the previous one, if any.
    pub fn step(&mut self) -> Option<Interval> {
        self.step_with(|_| {})
    }

    /// Takes a snapshot, lets `fill` add what is counted outside the
    /// sampler (a watched CPU's switches, from its own ring, up to the
    /// snapshot's stamp), and returns the interval since the previous one.
    pub fn step_with(&mut self, fill: impl FnOnce(&mut Snapshot)) -> Option<Interval> {
        let mut cur = self.sampler.sample();
        fill(&mut cur);
        let in_rounds = self.sampler.rounds() > 1;
        let files = if in_rounds {
            CpuFileFigures::Caller
        } else {
            CpuFileFigures::FromSnapshots
        };
        let mut iv = self.prev.as_ref().map(|prev| {
            interval::delta_with(
                &self.sampler.machine,
                self.sampler.freq_source(),
                prev,
                &cur,
                files,
            )
        });
        if in_rounds {
            let read = self.sampler.last_round();
            self.rounds
                .update(&self.sampler.machine, read, &cur, iv.as_mut());
        } else if !self.rounds.last.is_empty() {
            self.rounds = Rounds::default();
        }
        if let Some(old) = self.prev.replace(cur) {
            self.sampler.recycle(old);
        }
        iv
    }

    /// Returns the latest snapshot.
    pub fn last(&self) -> Option<&Snapshot> {
        self.prev.as_ref()
    }

    /// Describes each metric's source, from the latest snapshot.
    pub fn statuses(&self) -> Vec<Status> {
        let mut out = match &self.prev {
            Some(s) => ladder::statuses(
                &self.sampler.machine,
                self.sampler.hw.probe(),
                self.sampler.chosen(),
                s,
            ),
            None => Vec::new(),
        };
        let rounds = self.sampler.rounds();
        if rounds > 1 {
            let says = format!(
                "{} files a CPU, read in {rounds} rounds to stay within --budget {} \
                 files a sample: each CPU's figures cover its last {rounds} intervals",
                self.sampler.files_per_cpu(),
                self.sampler.budget()
            );
            for st in &mut out {
                if matches!(st.metric, Metric::OsCstates | Metric::Throttle) && st.source.is_some()
                {
                    st.note = Some(match st.note.take() {
                        Some(n) => format!("{n}; {says}"),
                        None => says.clone(),
                    });
                }
            }
        }
        out
    }
}

/// Builds an engine over the live machine (or `--root`): reads the facts,
/// opens perf groups and probes the MSRs.
pub fn open_live(
    fs: crate::os::fs::Fs,
    opts: crate::os::live::LiveOptions,
) -> Engine<crate::os::live::LiveHw> {
    let mut fs = fs;
    let machine = crate::model::machine::Machine::read(&mut fs);
    let roots = fs.roots().clone();
    let hw = crate::os::live::LiveHw::open(&machine.hw_targets(), &roots, opts);
    Engine::new(Sampler::with_machine(fs, machine, hw))
}
