//! `noisetop serve`: the pipeline as a Prometheus target. One more sink of
//! the driver: on each of noisetop's ticks it takes the kernel's counters
//! from the snapshot just read ([`Exporter::observe`]) and writes the
//! exposition of the judged interval in both formats ([`Exporter::publish`]);
//! a scrape only copies the latest text (gzipped once per interval when
//! asked), so ten scrapers cost what one does and none reads the kernel.

pub mod catalog;
pub(crate) mod cgroup_time;
pub(crate) mod expose;
pub mod http;
pub(crate) mod negotiate;
pub(crate) mod probe;
pub(crate) mod runq;
pub mod text;
pub(crate) mod totals;
pub mod webconfig;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::model::machine::Machine;
use crate::model::snapshot::Snapshot;
use crate::pipeline::{Sample, Sink};
use text::Format;
use totals::Totals;

/// Which CPUs get the per-state, per-mode and per-device series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Detail {
    /// Watched (`--watch`), isolated and `nohz_full` CPUs; sums per
    /// package and core type for the others.
    #[default]
    Watched,
    /// Every CPU (beware: hundreds of series per CPU on a large machine).
    All,
}

/// The CPUs that get the detailed series.
pub fn detail_cpus(detail: Detail, m: &Machine, watched: &[u32]) -> Vec<u32> {
    let mut cpus: Vec<u32> = match detail {
        Detail::All => m.online.clone(),
        Detail::Watched => {
            let mut c = watched.to_vec();
            c.extend(m.sets.isolated.iter().flatten());
            c.extend(m.sets.nohz_full.iter().flatten());
            c.retain(|x| m.online.contains(x));
            c
        }
    };
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// One interval's exposition in both formats, gzipped on first demand.
pub struct Published {
    /// Samples taken when it was written.
    pub samples: u64,
    /// Classic text.
    pub classic: Arc<[u8]>,
    /// `OpenMetrics` text.
    pub openmetrics: Arc<[u8]>,
    /// Series in it.
    pub series: usize,
    gzipped: Mutex<[Option<Arc<[u8]>>; 2]>,
}

impl Published {
    /// Returns the text in a format, gzipped when asked (compressed once
    /// per interval, whatever the number of scrapers).
    pub fn body(&self, f: Format, gzip: bool) -> Arc<[u8]> {
        let (plain, slot) = match f {
            Format::Classic => (&self.classic, 0),
            Format::OpenMetrics => (&self.openmetrics, 1),
        };
        if !gzip {
            return Arc::clone(plain);
        }
        let mut g = self
            .gzipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(g[slot].get_or_insert_with(|| gzip_bytes(plain)))
    }
}

fn gzip_bytes(b: &[u8]) -> Arc<[u8]> {
    let mut e = flate2::write::GzEncoder::new(
        Vec::with_capacity(b.len() / 8),
        flate2::Compression::default(),
    );
    // writing to a Vec cannot fail
    let _ = e.write_all(b);
    Arc::from(e.finish().unwrap_or_default())
}

/// What the sampler thread and the HTTP server share.
#[derive(Default)]
pub struct Shared {
    latest: RwLock<Option<Arc<Published>>>,
    scrapes: AtomicU64,
}

impl Shared {
    /// Returns the latest exposition, if an interval has been judged yet.
    pub fn latest(&self) -> Option<Arc<Published>> {
        self.latest
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Counts one `/metrics` request.
    pub fn count_scrape(&self) {
        self.scrapes.fetch_add(1, Ordering::Relaxed);
    }

    /// Returns how many `/metrics` requests were served.
    pub fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::Relaxed)
    }

    fn set(&self, p: Published) {
        *self
            .latest
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(p));
    }
}

/// The exporter's state on the sampler thread.
pub struct Exporter {
    shared: Arc<Shared>,
    machine: Machine,
    detail: Detail,
    detail_cpus: Vec<u32>,
    totals: Totals,
    energy: BTreeMap<(u32, String), f64>,
    samples: u64,
    /// The size of the last text, to write the next without regrowing.
    last_len: usize,
    /// The last probe's results, looked at on each tick.
    probe: probe::LastProbe,
    /// Run-queue waits of each watched CPU since start.
    runq: runq::PerCpu,
    /// CPU time by cgroup on the watched CPUs since start.
    cgroup_time: cgroup_time::CgroupTime,
}

impl Exporter {
    /// Starts an exporter for a machine and its watched CPUs.
    pub fn new(shared: Arc<Shared>, machine: Machine, watched: &[u32], detail: Detail) -> Self {
        let detail_cpus = detail_cpus(detail, &machine, watched);
        Exporter {
            shared,
            machine,
            detail,
            detail_cpus,
            totals: Totals::default(),
            energy: BTreeMap::new(),
            samples: 0,
            last_len: 0,
            probe: probe::LastProbe::default(),
            runq: runq::PerCpu::new(),
            cgroup_time: cgroup_time::CgroupTime::default(),
        }
    }

    /// Exports the probe results kept at `path` (`noisetop probe`'s last
    /// one), read on the tick when the file changed.
    pub fn follow_probe(&mut self, path: Option<std::path::PathBuf>) {
        self.probe = probe::LastProbe::at(path);
    }

    /// Takes the kernel's counters from the snapshot the driver just read.
    pub fn observe(&mut self, s: &Snapshot) {
        self.totals.observe(s, &self.detail_cpus);
    }

    /// Writes the exposition of a judged interval and makes it the latest.
    pub fn publish(&mut self, s: &Sample) {
        if let Some(m) = &s.machine {
            self.machine = (**m).clone();
            self.detail_cpus = detail_cpus(self.detail, &self.machine, &s.watched);
        }
        self.samples += 1;
        self.probe.refresh();
        runq::observe(&mut self.runq, s.trace.as_ref());
        self.cgroup_time.observe(
            s.trace.as_ref(),
            self.machine.sets.isolated.as_deref().unwrap_or(&[]),
        );
        for p in &s.interval.pkgs {
            for (domain, w) in &p.watts {
                if let Some(w) = w {
                    *self.energy.entry((p.package, domain.clone())).or_default() +=
                        w * s.interval.dt_s;
                }
            }
        }
        let p = self.render(s);
        self.last_len = p.classic.len().max(p.openmetrics.len());
        self.shared.set(p);
    }

    /// Writes both formats of the interval without publishing them.
    pub fn render(&self, s: &Sample) -> Published {
        let inp = expose::Input {
            sample: s,
            totals: &self.totals,
            machine: &self.machine,
            detail: &self.detail_cpus,
            energy: &self.energy,
            samples: self.samples,
            scrapes: self.shared.scrapes(),
            self_cpu_s: crate::os::sys::process_cpu_ns().map(|ns| ns as f64 / 1e9),
            probe: Some(&self.probe),
            runq: &self.runq,
            cgroup_time: &self.cgroup_time,
        };
        let cap = self.last_len + self.last_len / 8;
        let classic = expose::write(Format::Classic, &inp, cap);
        let om = expose::write(Format::OpenMetrics, &inp, cap);
        Published {
            samples: self.samples,
            classic: Arc::from(classic.text.into_bytes()),
            openmetrics: Arc::from(om.text.into_bytes()),
            series: classic.series,
            gzipped: Mutex::new([None, None]),
        }
    }

    /// Returns the CPUs with detailed series.
    pub fn detailed(&self) -> &[u32] {
        &self.detail_cpus
    }
}

/// The exporter as a sink of the driver; the same exporter's
/// [`Exporter::observe`] runs in the loop's hook just before.
pub struct ExportSink(pub Arc<Mutex<Exporter>>);

impl Sink for ExportSink {
    fn accept(&mut self, s: &Sample) -> Result<(), crate::pipeline::Note> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .publish(s);
        Ok(())
    }
}

/// Runs every instant of a capture through the driver into an exporter,
/// each interval published in turn (tests, and the sizes at 1152 CPUs).
pub fn replay(
    dir: &std::path::Path,
    detail: Detail,
    shared: Arc<Shared>,
) -> Result<Exporter, crate::pipeline::replay::ReplayError> {
    let mut r = crate::pipeline::replay::open(dir)?;
    let machine = r.driver.engine.sampler.machine.clone();
    let watched = r.driver.watched().to_vec();
    let mut ex = Exporter::new(shared, machine, &watched, detail);
    for (i, inst) in r.instants.iter().enumerate() {
        if i > 0 {
            crate::pipeline::replay::advance(&mut r.driver, inst)?;
        }
        let step = r.driver.step();
        if let Some(snap) = r.driver.engine.last() {
            ex.observe(snap);
        }
        if let crate::pipeline::Step::Sample(s) = step {
            ex.publish(&s);
        }
    }
    Ok(ex)
}
