//! The one pipeline driver: sample → interval → verdicts and findings.
//!
//! Every sink — the dashboard, `--batch`, `check`, `run`, the CSV recorder —
//! reads the same owned [`Sample`]s, made here and nowhere else. The live
//! loop (`live`) and the replay loop ([`replay`]) both call
//! [`Driver::step`]; they differ only in what sets the pace.

pub(crate) mod control;
pub mod in_kernel;
pub mod kept_trace;
pub(crate) mod live;
mod note;
mod owner;
pub mod replay;
pub(crate) mod sampled;
pub(crate) mod setup;
pub mod switches;
pub(crate) mod trace;
pub(crate) mod wrapped;

use control::Control;
pub use note::Note;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::base::{Cause, Unavailable};
use crate::model::interval::Interval;
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::noise::traced::Traced;
use crate::noise::{self, Judgement};
use crate::os::hw::Hardware;
use crate::os::switch_ring::SwitchCount;
use crate::sample::engine::Engine;
use crate::sample::ladder::Status;

/// How the watched CPUs' switches are counted with perf rings.
pub const COUNTING_RINGS: &str = "counting rings (context-switches and cpu-migrations values the \
                                  CPU writes into its own samples; no IPI)";

/// How they are counted by the BPF programs.
pub const IN_KERNEL_COUNTS: &str = "in-kernel counts (sched_switch, and each task's switch in on \
                                    another CPU than its last, counted on the CPU itself; read \
                                    by mmap, no IPI)";

/// Why no CPU is traced when none is watched, live or in a replay.
pub const NOTHING_WATCHED: &str = "no CPU is watched (--watch)";

/// Why a replay that watches CPUs has no one who ran there.
pub const NOT_KEPT: &str = "the capture kept no traced window (made without --watch)";

/// One interval and everything judged of it, owned by whoever receives it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// The interval.
    pub interval: Interval,
    /// Verdicts and findings of the interval.
    pub judgement: Judgement,
    /// The watched CPUs the judgement used, sorted.
    pub watched: Vec<u32>,
    /// Who ran on the traced CPUs and what interrupted them, when traced.
    pub trace: Option<Traced>,
    /// How each metric is obtained (or why not), as of this snapshot.
    pub statuses: Vec<Status>,
    /// New machine facts, when the online set changed and they were read again.
    pub machine: Option<Box<Machine>>,
    /// When the sampler takes its next snapshot (live only).
    pub next_at: Option<Instant>,
    /// How long taking and judging this sample took.
    pub took: Duration,
    /// Replay: this interval's number and how many the capture holds.
    pub position: Option<(usize, usize)>,
    /// What the driver and the other sinks said (who ran, a recorder's
    /// file and size, a write error), for the screen to show.
    pub notes: Vec<Note>,
    /// The IPIs noisetop itself sent to the watched CPUs, counted by the
    /// kernel's ipi tracepoints, or why they are not counted; `None` where
    /// there is no live kernel to count them (a replay).
    pub own_ipis: Option<Result<OwnIpis, Unavailable>>,
    /// Why who ran is not counted in the kernel, where it is not (sampled
    /// from /proc instead, or not known): BPF refused, `--no-trace`.
    pub trace_missing: Option<Unavailable>,
    /// How who ran is attributed (the traced CPUs, or why none is), when
    /// it changed since the last sample: the screen keeps the last word.
    pub who_ran: Option<String>,
}

/// The IPIs noisetop sent to watched CPUs (`source::ipi_count`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OwnIpis {
    /// The CPUs counted (the watched ones).
    pub cpus: Vec<u32>,
    /// Sent before the first snapshot: installing perf events on them.
    pub setup: u64,
    /// Sent since the first snapshot: the hands-off promise is 0.
    pub since_first: u64,
    /// Reschedule and wake-list IPIs since the first snapshot: a task
    /// noisetop woke (by writing to the terminal or a pipe whose reader the
    /// kernel placed there) ran on a watched CPU. Not in `since_first`.
    pub woke_since_first: u64,
}

impl OwnIpis {
    /// One line for the footer and the batch report.
    pub fn text(r: &Result<OwnIpis, Unavailable>) -> String {
        match r {
            Ok(o) if o.cpus.is_empty() => "IPIs to watched CPUs: none watched".into(),
            Ok(o) => {
                let list = crate::base::cpulist::format(&o.cpus);
                let mut t = format!(
                    "IPIs to watched CPU {list}: {} since the first sample ({} at setup); {} \
                     wake-ups of tasks there",
                    o.since_first, o.setup, o.woke_since_first
                );
                if o.woke_since_first > 0 {
                    let _ = write!(
                        t,
                        " (what noisetop wrote or closed woke a task the kernel ran on CPU \
                         {list}: the terminal's kworker or the output's reader; keep the \
                         reader off it with taskset, kworkers with \
                         /sys/devices/virtual/workqueue/cpumask)"
                    );
                }
                t
            }
            Err(why) => format!("IPIs to watched CPUs: unknown: {why}"),
        }
    }
}

/// What a loop tells the one consumer that owns the samples.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// The first snapshot is taken: the statuses are known, no interval yet.
    Ready {
        /// How each metric is obtained.
        statuses: Vec<Status>,
        /// When the first interval will be taken (live only).
        next_at: Option<Instant>,
    },
    /// A new interval.
    Sample(Box<Sample>),
    /// No more samples will come, and why.
    Ended(String),
}

/// Whether a loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Take the next sample.
    Continue,
    /// Stop: the consumer is gone or has seen enough.
    Stop,
}

/// A consumer of every sample besides the one that owns them (a CSV
/// recorder), run on the loop's thread before the owner gets the sample.
pub trait Sink: Send {
    /// Takes one sample. An error is shown to the user and sampling goes
    /// on (a full disk must not blind the live view).
    fn accept(&mut self, s: &Sample) -> Result<(), Note>;
    /// One line for the screen's footer (`rec run.csv 120 rows 48 kB`).
    fn status(&self) -> Option<Note> {
        None
    }
}

/// Who ran on the watched CPUs and what interrupted them: the tracepoint
/// reader, behind a trait so that tests and replays can do without it.
pub trait TraceSource: Send {
    /// Everything traced since the last call.
    fn drain(&mut self) -> Traced;
    /// Traces these CPUs from now on.
    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable>;
    /// The CPUs traced now.
    fn cpus(&self) -> Vec<u32>;
    /// What the kernel refused and tracing goes on without, one line each.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Makes these pids (and the processes they start) the owner of every
    /// traced CPU; empty: the task that ran longest in each window.
    fn set_owners(&mut self, _pids: Vec<u32>) {}
    /// The pids that own the traced CPUs (empty: the longest runners).
    fn owners(&self) -> Vec<u32> {
        Vec::new()
    }
    /// Whether the figures are sampled from /proc rather than traced.
    fn sampled(&self) -> bool {
        false
    }
    /// Per watched CPU, the tasks its counting ring saw leave it since the
    /// last window, given before the next [`drain`](Self::drain).
    fn seen_leaving(&mut self, _named: Vec<(u32, Vec<u32>)>) {}
    /// Whether the figures are counted in the kernel, on every CPU (the
    /// unwatched ones come as [`Traced::browsed`]).
    fn in_kernel(&self) -> bool {
        false
    }
}

/// Switch and migration counts of the watched CPUs, traced or not.
pub trait SwitchSource: Send {
    /// Each CPU's counts up to `cut_ns` (`CLOCK_MONOTONIC`).
    fn counts_at(&mut self, cut_ns: u64) -> Vec<SwitchCount>;
    /// Counts these CPUs from now on.
    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable>;
    /// Per CPU, the tasks its samples named since the last call.
    fn take_named(&mut self) -> Vec<(u32, Vec<u32>)> {
        Vec::new()
    }
    /// Whether it counts every CPU, watched or not, whatever `retarget`
    /// was given: then no CPU's switches are read through perf, and its
    /// counts never start again when the watched CPUs change.
    fn counts_every_cpu(&self) -> bool {
        false
    }
}

/// The engine, the watched CPUs, the thresholds and the tracer: what turns
/// one snapshot into a judged [`Sample`].
pub struct Driver<H: Hardware> {
    /// Sampler and previous snapshot.
    pub engine: Engine<H>,
    watched: Vec<u32>,
    config: NoiseConfig,
    tracer: Option<Box<dyn TraceSource>>,
    /// Why there is no tracer, for the statuses.
    trace_missing: Option<Unavailable>,
    /// What the last sample said of tracing, to say it again only when it changes.
    trace_said: Option<String>,
    online: Vec<u32>,
    /// Each traced CPU's longest runner of the last window, to tell when
    /// it changes.
    longest: Vec<(u32, crate::noise::traced::TracedTask)>,
    /// The tasks of one more CPU, sampled from /proc for the screen.
    browse: Option<sampled::SampledTrace>,
    /// Counting rings of the watched CPUs' switches and migrations.
    switches: Option<Box<dyn SwitchSource>>,
    /// Why the watched CPUs' switches are not counted, when they are not.
    switches_missing: Option<Unavailable>,
    /// Bumped each time the rings are reopened.
    ring_epoch: u64,
    filled: switches::Filled,
    /// The kernel's count of IPIs noisetop sends to the watched CPUs.
    own_ipis: Option<Result<crate::os::ipi_count::SelfIpis, Unavailable>>,
    /// Their count at the first snapshot: setup.
    ipis_at_first: Option<crate::os::ipi_count::IpiCount>,
    /// What the last sample said of them, to say it again only on a change.
    ipis_said: Option<String>,
}

/// What one step produced.
#[derive(Debug)]
pub enum Step {
    /// The first snapshot: no interval yet.
    Ready(Vec<Status>),
    /// An interval, judged.
    Sample(Box<Sample>),
}

impl<H: Hardware> Driver<H> {
    /// Wraps an engine with the default thresholds and nothing watched.
    pub fn new(engine: Engine<H>) -> Self {
        let online = engine.sampler.machine.online.clone();
        Driver {
            engine,
            watched: Vec::new(),
            config: NoiseConfig::default(),
            tracer: None,
            trace_missing: None,
            trace_said: None,
            online,
            longest: Vec::new(),
            browse: None,
            switches: None,
            switches_missing: None,
            ring_epoch: 0,
            filled: switches::Filled::default(),
            own_ipis: None,
            ipis_at_first: None,
            ipis_said: None,
        }
    }

    /// Uses these thresholds.
    #[must_use]
    pub fn with_config(mut self, config: NoiseConfig) -> Self {
        self.config = config;
        self
    }

    /// Watches these CPUs from the start (see [`Self::set_watched`]).
    #[must_use]
    pub fn watching(mut self, cpus: &[u32]) -> Self {
        self.set_watched(cpus);
        self
    }

    /// Returns the thresholds.
    pub fn config(&self) -> &NoiseConfig {
        &self.config
    }

    /// Holds these CPUs to the strict rules, reads their per-CPU files every
    /// sample, and traces them when a tracer is set.
    pub fn set_watched(&mut self, cpus: &[u32]) {
        let mut w = cpus.to_vec();
        w.sort_unstable();
        w.dedup();
        let changed = w != self.watched;
        // first, so that installing the events on newly watched CPUs is
        // counted, and as setup: the next sample starts the count again
        if let Some(Ok(c)) = &mut self.own_ipis
            && let Err(why) = c.retarget(&w)
        {
            self.own_ipis = Some(Err(Unavailable::new(why.cause(), why.to_string())));
        }
        if changed {
            self.ipis_at_first = None;
            self.ring_epoch += 1;
        }
        self.engine.sampler.set_always(&w);
        self.engine.sampler.set_hands_off(&w);
        if let Some(t) = &mut self.tracer
            && let Err(why) = t.retarget(&w)
        {
            // who ran is still told, sampled from each task's run time
            let sampled = sampled::SampledTrace::new(std::path::Path::new("/proc"), &w, t.owners());
            self.tracer = Some(Box::new(sampled));
            self.trace_missing = Some(why);
        }
        if let Some(s) = &mut self.switches
            && let Err(why) = s.retarget(&w)
        {
            self.switches_missing = Some(why);
        }
        self.watched = w;
    }

    /// Counts the IPIs noisetop sends to the watched CPUs with these
    /// counters (open them before any other perf event, so that setup
    /// counts too), or says why not.
    pub fn set_own_ipis(&mut self, c: Result<crate::os::ipi_count::SelfIpis, Unavailable>) {
        self.own_ipis = Some(c);
        let w = self.watched.clone();
        if let Some(Ok(c)) = &mut self.own_ipis
            && let Err(why) = c.retarget(&w)
        {
            self.own_ipis = Some(Err(Unavailable::new(why.cause(), why.to_string())));
        }
    }

    fn read_own_ipis(&mut self) -> Option<Result<OwnIpis, Unavailable>> {
        let c = match self.own_ipis.as_mut()? {
            Ok(c) => c,
            Err(e) => return Some(Err(e.clone())),
        };
        Some(Self::count_ipis(c, &mut self.ipis_at_first))
    }

    fn count_ipis(
        c: &mut crate::os::ipi_count::SelfIpis,
        at_first: &mut Option<crate::os::ipi_count::IpiCount>,
    ) -> Result<OwnIpis, Unavailable> {
        let n = c
            .read()
            .ok_or_else(|| Unavailable::new(Cause::Failed, "an ipi counter could not be read"))?;
        let first = *at_first.get_or_insert(n);
        Ok(OwnIpis {
            cpus: c.cpus().to_vec(),
            setup: first.total(),
            since_first: n.total() - first.total(),
            woke_since_first: n.woke - first.woke,
        })
    }

    /// Counts the watched CPUs' switches and migrations with these rings,
    /// traced or not; `missing`: why there are none.
    pub fn set_switches(&mut self, s: Option<Box<dyn SwitchSource>>, missing: Option<Unavailable>) {
        self.switches = s;
        self.switches_missing = missing;
        self.ring_epoch += 1;
        if let Some(s) = &mut self.switches
            && let Err(why) = s.retarget(&self.watched)
        {
            self.switches_missing = Some(why);
        }
    }

    /// Where the watched CPUs' switches and migrations are counted from,
    /// or why they are unknown.
    pub fn switch_plan(&self) -> Result<&'static str, Unavailable> {
        if self.switches.is_some() && self.switches_missing.is_none() {
            if self.tracer.as_ref().is_some_and(|t| t.in_kernel()) {
                return Ok(IN_KERNEL_COUNTS);
            }
            return Ok(COUNTING_RINGS);
        }
        Err(self
            .switches_missing
            .as_ref()
            .or(self.trace_missing.as_ref())
            .cloned()
            .unwrap_or_else(|| Unavailable::new(Cause::Failed, "no switch rings")))
    }

    /// Whether every CPU's switches and migrations come from the
    /// in-kernel counts, rather than perf's software counters.
    pub fn counts_every_cpu(&self) -> bool {
        self.switches_missing.is_none()
            && self.switches.as_ref().is_some_and(|s| s.counts_every_cpu())
    }

    /// Returns the watched CPUs, sorted.
    pub fn watched(&self) -> &[u32] {
        &self.watched
    }

    /// Attributes time on the watched CPUs with this tracer.
    pub fn set_tracer(
        &mut self,
        tracer: Option<Box<dyn TraceSource>>,
        missing: Option<Unavailable>,
    ) {
        self.tracer = tracer;
        self.trace_missing = missing;
    }

    /// Makes these pids the owner of the watched CPUs (`--owner`, the
    /// dashboard's `o`); empty: the longest runner of each window.
    pub fn set_owners(&mut self, pids: Vec<u32>) {
        if let Some(t) = &mut self.tracer {
            t.set_owners(pids);
        }
        self.longest.clear();
    }

    /// Samples the tasks of `cpu` from /proc for the screen (the detail
    /// view), unless the tracer covers it; `None`: no more.
    pub fn set_browse(&mut self, cpu: Option<u32>) {
        // the kernel's counts cover every CPU already
        if self.tracer.as_ref().is_some_and(|t| t.in_kernel()) {
            self.browse = None;
            return;
        }
        self.browse = cpu
            .map(|c| sampled::SampledTrace::new(std::path::Path::new("/proc"), &[c], Vec::new()));
    }

    /// Why tracing is off, when it is.
    pub fn trace_missing(&self) -> Option<&Unavailable> {
        self.trace_missing.as_ref()
    }

    /// One line on who-ran attribution, as the sinks note it.
    pub fn trace_status(&self) -> String {
        format!("who ran: {}", self.who_ran())
    }

    /// How who ran is attributed: the traced CPUs, or why none is.
    pub fn who_ran(&self) -> String {
        match (&self.tracer, &self.trace_missing) {
            (Some(t), Some(why)) if t.sampled() => format!(
                "{} on CPU {}: not traced: {why}",
                sampled::HOW,
                crate::base::cpulist::format(&t.cpus()),
            ),
            (_, Some(why)) => format!("not traced: {why}"),
            (Some(t), None) if t.in_kernel() => {
                let mut said = String::from("counted in the kernel (BPF) on every CPU");
                if !t.cpus().is_empty() {
                    let _ = write!(
                        said,
                        "; judged on watched CPU {}",
                        crate::base::cpulist::format(&t.cpus())
                    );
                }
                for n in t.notes() {
                    said.push_str("; ");
                    said.push_str(&n);
                }
                said
            }
            (Some(t), None) if !t.cpus().is_empty() => {
                let mut said = format!(
                    "kept windows on CPU {}",
                    crate::base::cpulist::format(&t.cpus()),
                );
                for n in t.notes() {
                    said.push_str("; ");
                    said.push_str(&n);
                }
                said
            }
            // one wording wherever nothing is watched, live or replayed
            (Some(_), None) => format!("not traced: {NOTHING_WATCHED}"),
            (None, None) if self.watched().is_empty() => {
                format!("not traced: {NOTHING_WATCHED}")
            }
            // only a replay has no tracer and nothing that says why
            (None, None) => format!("not traced: {NOT_KEPT}"),
        }
    }

    /// Takes a snapshot and, from the second on, returns the judged interval.
    pub fn step(&mut self) -> Step {
        let woke = Instant::now();
        let hands_off = self.engine.sampler.hands_off().to_vec();
        let every = self.counts_every_cpu();
        // the in-kernel counts go on through a change of the watched CPUs;
        // the rings' are new counts (ring_epoch is 1 from the first rings)
        let epoch = if every { 0 } else { self.ring_epoch };
        let (counting, filled) = (&mut self.switches, &mut self.filled);
        let iv = self.engine.step_with(|snap| {
            let cpus = if every { &snap.online } else { &hands_off };
            if cpus.is_empty() {
                return;
            }
            let cpus = cpus.clone();
            snap.switches_by_clock = every;
            let cut = snap.time.mono_ns;
            let counts = counting
                .as_mut()
                .map_or_else(Vec::new, |c| c.counts_at(cut));
            filled.fill(snap, &cpus, epoch, counts);
        });
        let own_ipis = self.read_own_ipis();
        // taken every step, traced or not, so that names never pile up
        let named = self.switches.as_mut().map(|c| c.take_named());
        if let (Some(named), Some(t)) = (named, &mut self.tracer) {
            t.seen_leaving(named);
        }
        let mut trace = self.tracer.as_mut().map(|t| t.drain());
        if let Some(t) = &mut trace {
            owner::note_longest_runner(&mut self.longest, t);
        }
        if let Some(b) = &mut self.browse {
            let seen = b.drain();
            let t = trace.get_or_insert_with(Traced::default);
            t.browsed = seen
                .cpus
                .into_iter()
                .filter(|c| t.cpus.iter().all(|x| x.cpu != c.cpu))
                .collect();
        }
        let mut statuses = self.engine.statuses();
        if every {
            crate::sample::ladder::counted_in_kernel(&mut statuses, IN_KERNEL_COUNTS);
        }
        let counting = self.engine.sampler.machine.package_leaders();
        crate::sample::hands_off::describe(
            &mut statuses,
            &hands_off,
            &counting,
            &self.switch_plan(),
        );
        let Some(interval) = iv else {
            return Step::Ready(statuses);
        };
        crate::sample::ladder::note_silent_power(&mut statuses, &interval);
        let machine = (self.engine.sampler.machine.online != self.online).then(|| {
            self.online.clone_from(&self.engine.sampler.machine.online);
            Box::new(self.engine.sampler.machine.clone())
        });
        let judgement = noise::judge(
            &interval,
            &noise::Context {
                machine: &self.engine.sampler.machine,
                watched: &self.watched,
                config: &self.config,
                trace: trace.as_ref(),
            },
        );
        let mut notes = Vec::new();
        let mut who_ran = None;
        let said = self.who_ran();
        if self.trace_said.as_ref() != Some(&said) {
            notes.push(Note::WhoRan(said.clone()));
            who_ran = Some(said.clone());
            self.trace_said = Some(said);
        }
        // said only while CPUs are watched: the claim is about them
        if let Some(ipis) = own_ipis.as_ref().filter(|_| !self.watched.is_empty()) {
            let said = OwnIpis::text(ipis);
            if self.ipis_said.as_ref() != Some(&said) {
                notes.push(Note::OwnIpis(ipis.clone()));
                self.ipis_said = Some(said);
            }
        }
        Step::Sample(Box::new(Sample {
            interval,
            judgement,
            watched: self.watched.clone(),
            trace,
            statuses,
            machine,
            next_at: None,
            took: woke.elapsed(),
            position: None,
            notes,
            own_ipis,
            trace_missing: self.trace_missing.clone(),
            who_ran,
        }))
    }
}

/// Runs every sink on a sample and notes what they said.
pub fn feed_sinks(sinks: &mut [Box<dyn Sink>], s: &mut Sample) {
    for k in sinks.iter_mut() {
        if let Err(e) = k.accept(s) {
            s.notes.push(e);
        }
        if let Some(st) = k.status() {
            s.notes.push(st);
        }
    }
}

#[cfg(test)]
mod tests;
