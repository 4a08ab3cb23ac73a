//! Subcommands: each arm of the one dispatch in `run`.

pub mod batch;
pub mod compare;
pub mod dashboard;
pub mod report;
pub mod snapshot;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;

use crate::cli::{Cli, Command, Opts};
use crate::source::fs::Roots;

/// Parses the command line and runs the chosen mode.
pub fn run() -> Result<()> {
    let cli = Cli::parse();
    crate::sys::raise_fd_limit();
    crate::sys::keep_freed_memory();
    if let Some(cpu) = cli.opts.pin {
        crate::sys::pin_to(&[cpu])
            .with_context(|| format!("--pin {cpu}: cannot run on CPU {cpu}"))?;
    }
    match cli.command {
        Some(Command::Snapshot { json: _ }) => snapshot::run(&cli.opts),
        Some(Command::Capture { dir }) => {
            let mut opts = cli.opts.clone();
            opts.capture = Some(dir);
            batch::live(&opts, false)
        }
        Some(Command::Replay { dir }) if cli.opts.batch => batch::replay(&cli.opts, &dir),
        Some(Command::Replay { dir }) => dashboard::replay(&cli.opts, &dir),
        None if cli.opts.batch => batch::live(&cli.opts, true),
        None => dashboard::live(&cli.opts),
    }
}

/// Says which rungs of the source ladder the options allow.
pub fn live_options(opts: &Opts) -> crate::source::live::LiveOptions {
    crate::source::live::LiveOptions {
        no_perf: opts.no_perf,
        no_msr: opts.no_msr,
    }
}

/// Works out the kernel roots from `--root`, `--procfs`, `--sysfs`.
pub fn roots(opts: &Opts) -> Roots {
    let base = opts.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut r = Roots::under(&base);
    if let Some(p) = &opts.procfs {
        r.procfs.clone_from(p);
    }
    if let Some(s) = &opts.sysfs {
        r.sysfs.clone_from(s);
    }
    r
}
