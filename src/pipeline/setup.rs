//! How a live command's driver is assembled: which tree is read (this
//! machine, a capture instant, another machine's files), the hardware that
//! goes with it, who ran and the switch counts, the counters of noisetop's
//! own IPIs, the sampler's file budget and the thresholds. Every command
//! builds its driver here, so the order that matters is code: the IPI
//! counters open before any other perf event, then who ran (whose
//! programs, where they load, count every CPU's switches, so that perf's
//! counters of them are not opened), then the hardware and the driver.

use std::path::{Path, PathBuf};

use crate::base::{Cause, Unavailable};
use crate::model::machine::Machine;
use crate::noise::config::NoiseConfig;
use crate::os::capture::{CaptureRecorder, Captured, LoadError};
use crate::os::fs::{Fs, Roots};
use crate::os::hw::Hardware;
use crate::os::ipi_count::SelfIpis;
use crate::os::live::{LiveHw, LiveOptions};
use crate::pipeline::kept_trace::{self, Kept};
use crate::pipeline::wrapped::Wrapped;
use crate::pipeline::{Driver, SwitchSource, TraceSource};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;

/// What a tree under `--root`/`--procfs` is, which decides where perf
/// counts, MSRs and the clock come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    /// This machine's kernel (`/`, or its /proc mounted elsewhere).
    Live,
    /// One instant of a capture: its own clock, perf and MSR tables.
    Instant(PathBuf),
    /// Another machine's files, or this one's from another boot: no live
    /// counter describes it, and one instant has no rates.
    Foreign(String),
}

/// The file that tells one boot of one machine from any other.
const BOOT_ID: &str = "sys/kernel/random/boot_id";

impl Tree {
    /// Tells a live tree from a capture instant and from a foreign tree.
    /// `root` is `--root`; `moved` says whether any of `--root`, `--procfs`
    /// and `--sysfs` was given (without them the tree is this machine's).
    pub fn detect(root: Option<&Path>, moved: bool, roots: &Roots) -> Tree {
        if !moved {
            return Tree::Live;
        }
        if let Some(r) = root
            && r.join("noisetop/clock").is_file()
        {
            return Tree::Instant(r.to_path_buf());
        }
        let read = |p: &Path| crate::os::read_small(p, 64).map(|t| t.trim().to_string());
        let here = read(&Path::new("/proc").join(BOOT_ID));
        let there = read(&roots.procfs.join(BOOT_ID));
        match (here, there) {
            (Ok(a), Ok(b)) if a == b && !a.is_empty() => Tree::Live,
            (Ok(_), Ok(_)) => Tree::Foreign(format!(
                "{} is another machine's, or another boot's (its boot_id differs): \
             live perf and MSR counts would describe this machine, and one \
             instant has no rates (use `noisetop replay` on a capture)",
                roots.procfs.display()
            )),
            (_, Err(e)) => Tree::Foreign(format!(
                "{} has no readable {BOOT_ID} ({e}): it cannot be told from another \
             machine's, so no live perf or MSR count is read, and one instant \
             has no rates",
                roots.procfs.display()
            )),
            (Err(e), _) => Tree::Foreign(format!(
                "this machine's /proc/{BOOT_ID} cannot be read ({e}): no live counter is mixed into {}",
                roots.procfs.display()
            )),
        }
    }
}

/// The hardware side (clock, perf, MSRs) of a tree.
pub type AnyHw = Box<dyn Hardware + Send>;

/// Opens the hardware that belongs with a tree: the live machine's perf
/// groups and MSRs, a capture instant's tables, or nothing (a frozen clock)
/// for a foreign tree.
pub fn open_hw(
    tree: &Tree,
    roots: &Roots,
    m: &Machine,
    o: LiveOptions,
) -> Result<AnyHw, LoadError> {
    Ok(match tree {
        Tree::Live => Box::new(LiveHw::open(&m.hw_targets(), roots, o)),
        Tree::Instant(dir) => Box::new(Captured::load(dir)?),
        Tree::Foreign(why) => Box::new(Captured::foreign(why)),
    })
}

/// How who ran is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceHow {
    /// Counted in the kernel by BPF programs on every CPU; where they
    /// cannot load, sampled from /proc, with the reason.
    #[default]
    Best,
    /// `--no-trace` (`--no-bpf`): sampled from /proc.
    Sampled,
}

impl TraceHow {
    /// From the `--no-trace` flag.
    pub fn from_flag(no_trace: bool) -> TraceHow {
        if no_trace {
            TraceHow::Sampled
        } else {
            TraceHow::Best
        }
    }
}

/// What finds who ran: the source, why it is not the best one (or none),
/// and the counts of switches it brings along, when it does.
struct TraceChoice {
    /// The source.
    source: Option<Box<dyn TraceSource>>,
    /// Why it is not exact tracing (or there is none).
    missing: Option<Unavailable>,
    /// Switch and migration counts from the same programs.
    switches: Option<Box<dyn SwitchSource>>,
}

/// The reader of who ran for a live tree, or why there is none (a tree
/// that is not this machine, `--no-trace`, permissions or the kernel
/// missing something). `owners`: the pids that own the CPUs, when known.
fn tracer_for(
    tree: &Tree,
    roots: &Roots,
    watched: &[u32],
    how: TraceHow,
    owners: Vec<u32>,
) -> TraceChoice {
    if *tree != Tree::Live {
        return TraceChoice {
            source: None,
            missing: Some(Unavailable::new(
                Cause::NotLive,
                "the tree is not this machine's live kernel",
            )),
            switches: None,
        };
    }
    let sampled = |owners: Vec<u32>| -> Box<dyn TraceSource> {
        Box::new(crate::pipeline::sampled::SampledTrace::new(
            &roots.procfs,
            watched,
            owners,
        ))
    };
    // the counters of noisetop's own IPIs may have mounted tracefs: said
    // on the who-ran line, whichever way who ran is found
    let noted = |inner: Box<dyn TraceSource>| -> Box<dyn TraceSource> {
        match mount_tracefs(&roots.sysfs) {
            Some(Ok(note)) => Box::new(Wrapped { inner, add: note }),
            _ => inner,
        }
    };
    if how == TraceHow::Sampled {
        return TraceChoice {
            source: Some(noted(sampled(owners))),
            missing: Some(Unavailable::new(Cause::RefusedByUser, "--no-trace")),
            switches: None,
        };
    }
    match crate::pipeline::in_kernel::open(&roots.sysfs, &roots.procfs, watched, owners.clone()) {
        Ok((t, s)) => TraceChoice {
            source: Some(noted(Box::new(t))),
            missing: None,
            switches: Some(Box::new(s)),
        },
        // who ran is still told, sampled from each task's run time
        Err(why) => TraceChoice {
            source: Some(noted(sampled(owners))),
            missing: Some(why.unavailable()),
            switches: None,
        },
    }
}

/// Mounts tracefs where the kernel documents it, as perf does, when it is
/// mounted nowhere and the tree is this machine's `/sys`: `None` when there
/// was nothing to do, else what was done or why it could not be. Tried
/// once: the counters of noisetop's own IPIs, opened first, need it as the
/// tracer does, and the tracer still says what was done.
fn mount_tracefs(sysfs: &Path) -> Option<Result<String, Unavailable>> {
    static ONCE: std::sync::OnceLock<Option<Result<String, Unavailable>>> =
        std::sync::OnceLock::new();
    if sysfs != Path::new("/sys") {
        return None;
    }
    ONCE.get_or_init(|| mount_tracefs_now(sysfs)).clone()
}

fn mount_tracefs_now(sysfs: &Path) -> Option<Result<String, Unavailable>> {
    if crate::os::tracepoint::find_tracefs(sysfs).is_some() {
        return None;
    }
    let at = sysfs.join("kernel/tracing");
    if !crate::os::sys::is_root() {
        return Some(Err(Unavailable::new(
            Cause::Permission,
            format!("noisetop mounts tracefs at {} only as root", at.display()),
        )));
    }
    Some(match crate::os::sys::mount_tracefs(&at) {
        Ok(()) => Ok(format!(
            "tracefs was not mounted: noisetop mounted it at {} (as perf does)",
            at.display()
        )),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) => {
            Err(Unavailable::new(
                Cause::Permission,
                format!(
                    "mounting tracefs at {} was refused: {e} (mounting needs CAP_SYS_ADMIN)",
                    at.display()
                ),
            ))
        }
        Err(e) => Err(Unavailable::new(
            Cause::Failed,
            format!("mounting tracefs at {} failed: {e}", at.display()),
        )),
    })
}

/// The kernel's counters of the IPIs noisetop sends to watched CPUs, on a
/// live tree with tracefs; opened first, so that setup counts too.
fn own_ipis(tree: &Tree, roots: &Roots, watched: &[u32]) -> Result<SelfIpis, Unavailable> {
    if *tree != Tree::Live {
        return Err(Unavailable::new(
            Cause::NotLive,
            "the tree is not this machine's live kernel",
        ));
    }
    let mounted = mount_tracefs(&roots.sysfs);
    let tracefs = crate::os::tracepoint::find_tracefs(&roots.sysfs).ok_or_else(|| {
        let why = format!(
            "tracefs is not mounted at {}/kernel/tracing",
            roots.sysfs.display()
        );
        match mounted {
            Some(Err(e)) => Unavailable::new(e.cause, format!("{why} ({e})")),
            _ => Unavailable::new(Cause::Failed, why),
        }
    })?;
    SelfIpis::open(&tracefs, watched).map_err(|e| Unavailable::new(e.cause(), e.to_string()))
}

/// What a live command's driver is made of; [`DriverBuilder::build`]
/// opens it all in the one order that keeps noisetop's own IPIs counted.
#[derive(Debug, Clone)]
pub struct DriverBuilder {
    roots: Roots,
    tree: Tree,
    live: LiveOptions,
    watched: Vec<u32>,
    owners: Vec<u32>,
    how: TraceHow,
    budget: Option<usize>,
    config: NoiseConfig,
}

impl DriverBuilder {
    /// A driver of `tree` read under `roots`, watching nothing, with the
    /// built-in thresholds, every hardware rung and the best way to find
    /// who ran.
    pub fn new(roots: Roots, tree: Tree) -> Self {
        DriverBuilder {
            roots,
            tree,
            live: LiveOptions::default(),
            watched: Vec::new(),
            owners: Vec::new(),
            how: TraceHow::Best,
            budget: None,
            config: NoiseConfig::default(),
        }
    }

    /// The tree it reads.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Which hardware rungs may be opened (`--no-perf`, `--no-msr`).
    #[must_use]
    pub fn live_options(mut self, o: LiveOptions) -> Self {
        self.live = o;
        self
    }

    /// The CPUs watched: judged strictly, their IPIs from noisetop counted.
    #[must_use]
    pub fn watching(mut self, cpus: &[u32]) -> Self {
        self.watched = cpus.to_vec();
        self
    }

    /// The pids that own the watched CPUs, when the user named them.
    #[must_use]
    pub fn owners(mut self, pids: Vec<u32>) -> Self {
        self.owners = pids;
        self
    }

    /// How who ran is found.
    #[must_use]
    pub fn trace(mut self, how: TraceHow) -> Self {
        self.how = how;
        self
    }

    /// The most files the sampler keeps open (`--budget`).
    #[must_use]
    pub fn budget(mut self, files: Option<usize>) -> Self {
        self.budget = files;
        self
    }

    /// The thresholds of the noise rules.
    #[must_use]
    pub fn config(mut self, c: NoiseConfig) -> Self {
        self.config = c;
        self
    }

    /// The driver of a live command: who ran and the watched CPUs' switch
    /// counts attached, and the kernel's count of noisetop's own IPIs.
    pub fn build(self, fs: Fs, machine: Machine) -> Result<Driver<AnyHw>, LoadError> {
        let own_ipis = own_ipis(&self.tree, &self.roots, &self.watched);
        // who ran before the hardware: where the programs load, they count
        // every CPU's switches and migrations, and perf's counters of them
        // are not opened
        let choice = tracer_for(
            &self.tree,
            &self.roots,
            &self.watched,
            self.how,
            self.owners.clone(),
        );
        let live = LiveOptions {
            switches_counted: choice
                .switches
                .as_ref()
                .is_some_and(|s| s.counts_every_cpu()),
            ..self.live
        };
        let mut driver = self.open_with(fs, machine, own_ipis, live, |hw| hw)?;
        driver.set_tracer(choice.source, choice.missing);
        // on a live tree only: with the in-kernel counts where they
        // loaded, else with counting rings
        if self.tree == Tree::Live {
            let s = choice
                .switches
                .unwrap_or_else(|| Box::new(crate::pipeline::switches::CountingRings::default()));
            driver.set_switches(Some(s), None);
        }
        Ok(driver)
    }

    /// The driver of a capture: the hardware's reads kept for each
    /// instant's tables, and who ran on the watched CPUs kept for each
    /// instant (`None` when nothing is watched).
    pub fn build_capture(
        self,
        fs: Fs,
        machine: Machine,
    ) -> Result<(Driver<CaptureRecorder<AnyHw>>, Option<Kept>), LoadError> {
        let mut driver = self.open(fs, machine, CaptureRecorder::new)?;
        if self.watched.is_empty() {
            return Ok((driver, None));
        }
        let choice = tracer_for(
            &self.tree,
            &self.roots,
            &self.watched,
            self.how,
            self.owners,
        );
        let Some(t) = choice.source else {
            driver.set_tracer(None, choice.missing);
            return Ok((driver, None));
        };
        let (keeper, kept) = kept_trace::keeper(t);
        driver.set_tracer(Some(Box::new(keeper)), choice.missing);
        Ok((driver, Some(kept)))
    }

    /// The IPI counters first (so that installing every later perf event
    /// is counted too), then the hardware, then the engine and driver.
    fn open<H: Hardware>(
        &self,
        fs: Fs,
        machine: Machine,
        wrap: impl FnOnce(AnyHw) -> H,
    ) -> Result<Driver<H>, LoadError> {
        let own_ipis = own_ipis(&self.tree, &self.roots, &self.watched);
        self.open_with(fs, machine, own_ipis, self.live, wrap)
    }

    /// The hardware, with `live`'s rungs, then the engine and driver,
    /// counting noisetop's IPIs with `own_ipis`, opened before.
    fn open_with<H: Hardware>(
        &self,
        fs: Fs,
        machine: Machine,
        own_ipis: Result<SelfIpis, Unavailable>,
        live: LiveOptions,
        wrap: impl FnOnce(AnyHw) -> H,
    ) -> Result<Driver<H>, LoadError> {
        let hw = wrap(open_hw(&self.tree, &self.roots, &machine, live)?);
        let mut engine = Engine::new(Sampler::with_machine(fs, machine, hw));
        if let Some(files) = self.budget {
            engine.sampler.set_budget(files);
        }
        let mut driver = Driver::new(engine)
            .with_config(self.config.clone())
            .watching(&self.watched);
        driver.set_own_ipis(own_ipis);
        Ok(driver)
    }
}
