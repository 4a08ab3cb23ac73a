//! Turns a sampler into a stream of intervals: sample, delta with the
//! previous snapshot, hand the interval to the sinks.

use crate::interval::{self, Interval};
use crate::ladder::{self, Status};
use crate::sampler::{Hardware, Sampler};
use crate::snapshot::Snapshot;

/// A sampler plus the previous snapshot.
pub struct Engine<H: Hardware> {
    /// The sampler.
    pub sampler: Sampler<H>,
    prev: Option<Snapshot>,
}

impl<H: Hardware> Engine<H> {
    /// Wraps a sampler.
    pub fn new(sampler: Sampler<H>) -> Self {
        Engine {
            sampler,
            prev: None,
        }
    }

    /// Takes a snapshot; returns the interval since the previous one, if any.
    pub fn step(&mut self) -> Option<Interval> {
        let cur = self.sampler.sample();
        let iv = self.prev.as_ref().map(|prev| {
            interval::delta_of(
                &self.sampler.machine,
                self.sampler.freq_source(),
                prev,
                &cur,
            )
        });
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
        match &self.prev {
            Some(s) => ladder::statuses(
                &self.sampler.machine,
                self.sampler.hw.probe(),
                self.sampler.freq_source(),
                s,
            ),
            None => Vec::new(),
        }
    }
}

/// Builds an engine over the live machine (or `--root`): reads the facts,
/// opens perf groups and probes the MSRs.
pub fn open_live(
    fs: crate::source::fs::Fs,
    opts: crate::source::live::LiveOptions,
) -> Engine<crate::source::live::LiveHw> {
    let mut fs = fs;
    let machine = crate::machine::Machine::read(&mut fs);
    let roots = fs.roots().clone();
    let hw = crate::source::live::LiveHw::open(&machine, &roots, opts);
    Engine::new(Sampler::with_machine(fs, machine, hw))
}
