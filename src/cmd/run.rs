//! `noisetop run -- CMD`: runs a command, watches the CPUs it runs on and
//! reports the noise it met.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::RunArgs;

/// Runs CMD and prints the report.
pub fn run(_args: &RunArgs) -> Result<ExitCode> {
    anyhow::bail!("run is not built yet")
}
