//! `noisetop report FILE.csv`: what a recording saw, and its plot.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::record::digest::{Format, Report};

/// Options of `report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The recording (`--record FILE.csv`).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw frequency, C-state residency and interrupts over time
    /// (`.svg` or `.png`).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// The plot's colour scales: from this file's figures, or fixed
    /// (0–6000 MHz, 1–100 000 interrupts/s) so plots of several files
    /// compare by colour.
    #[arg(long, value_enum, default_value_t = crate::record::plot::Scale::Auto, requires = "plot")]
    pub scale: crate::record::plot::Scale,
}

/// Prints the report (and writes the plot).
pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    // a plot it cannot draw is said before the report, not after it
    if let Some(out) = &args.plot {
        crate::record::plot::check_name(out)
            .with_context(|| format!("cannot draw {}", out.display()))?;
    }
    let report = Report::build(&args.file)?;
    crate::cmd::out::emit(&mut std::io::stdout().lock(), &report.render(args.format))?;
    if let Some(out) = &args.plot {
        crate::record::plot::plot_with(&args.file, out, args.scale)
            .with_context(|| format!("cannot draw {}", out.display()))?;
        eprintln!("plot written to {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
