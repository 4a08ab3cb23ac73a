//! `noisetop snapshot --json`: the raw counters of one instant and the
//! machine facts, for scripts and tests.

use anyhow::Result;
use serde::Serialize;

use crate::cli::SourceArgs;
use crate::cmd::out::emit;
use crate::model::machine::Machine;
use crate::model::snapshot::Snapshot;
use crate::os::fs::Fs;
use crate::os::hw::Hardware;
use crate::os::hw::Probe;
use crate::sample::engine::Engine;
use crate::sample::ladder::Status;
use crate::sample::sampler::Sampler;

/// The JSON document `snapshot --json` prints.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Schema version; bumped on incompatible changes.
    pub schema: u32,
    /// Machine facts.
    pub machine: &'a Machine,
    /// What the perf and MSR probes found.
    pub probe: &'a Probe,
    /// How each metric is obtained, or why not.
    pub sources: Vec<Status>,
    /// The raw counters.
    pub snapshot: &'a Snapshot,
}

/// Prints one snapshot of the live machine (or `--root`) as JSON.
pub fn run(source: &SourceArgs) -> Result<()> {
    let roots = crate::cmd::roots(source);
    let mut fs = Fs::new(roots.clone());
    let machine = Machine::read(&mut fs);
    let tree = crate::cmd::tree_kind(source, &roots);
    let hw =
        crate::pipeline::setup::open_hw(&tree, &roots, &machine, crate::cmd::live_options(source))
            .map_err(anyhow::Error::msg)?;
    let mut engine = Engine::new(Sampler::with_machine(fs, machine, hw));
    // one instant for scripts: every CPU's files, whatever the machine size
    engine.sampler.set_budget(usize::MAX);
    engine.step();
    let sources = engine.statuses();
    let snap = engine.last().expect("a snapshot was just taken");
    let doc = Document {
        schema: 2,
        machine: &engine.sampler.machine,
        probe: engine.sampler.hw.probe(),
        sources,
        snapshot: snap,
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    emit(&mut std::io::stdout().lock(), &text)?;
    Ok(())
}
