//! `noisetop man` and `noisetop completions SHELL`: generated from the
//! same clap definitions as `--help`, so they cannot drift from it.

use std::io::Write as _;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::cmd::out::emit;

/// Renders the man page (roff) of noisetop and its subcommands.
pub fn man_page() -> Result<String> {
    let cmd = Cli::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("noisetop-{}", sub.get_name());
        let sub = sub.clone().name(name);
        buf.write_all(b"\n")?;
        clap_mangen::Man::new(sub).render(&mut buf)?;
    }
    Ok(String::from_utf8(buf)?)
}

/// Prints the man page.
pub fn man() -> Result<()> {
    emit(&mut std::io::stdout().lock(), &man_page()?)?;
    Ok(())
}

/// Renders the completion script of one shell.
pub fn completion_script(shell: clap_complete::Shell) -> Result<String> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "noisetop", &mut buf);
    Ok(String::from_utf8(buf)?)
}

/// Prints the completion script of one shell.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    emit(&mut std::io::stdout().lock(), &completion_script(shell)?)?;
    Ok(())
}
