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
    let extra = cmd.get_after_long_help().map(ToString::to_string);
    // clap_mangen would print these sections as one filled paragraph, which
    // breaks their aligned columns and examples: they go in as their own
    // sections, unfilled, before the version.
    let man = clap_mangen::Man::new(cmd.clone().after_long_help(None::<&str>));
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    man.render_subcommands_section(&mut buf)?;
    if let Some(text) = extra {
        buf.write_all(unfilled_sections(&text).as_bytes())?;
    }
    man.render_version_section(&mut buf)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("noisetop-{}", sub.get_name());
        let sub = sub.clone().name(name);
        buf.write_all(b"\n")?;
        clap_mangen::Man::new(sub).render(&mut buf)?;
    }
    Ok(String::from_utf8(buf)?)
}

/// Turns help text made of `Heading (note):` lines, each followed by
/// indented lines, into man sections whose lines are kept as written.
fn unfilled_sections(text: &str) -> String {
    use roff::{Roff, roman};
    let mut doc = Roff::new();
    for line in text.lines() {
        let heading =
            (!line.starts_with(' ') && line.ends_with(':')).then(|| &line[..line.len() - 1]);
        if let Some(h) = heading {
            let (title, note) = match h.split_once(" (") {
                Some((t, n)) => (t, format!("({n}")),
                None => (h, String::new()),
            };
            doc.control("SH", [title.to_uppercase().as_str()]);
            doc.control("nf", []);
            if !note.is_empty() {
                doc.text([roman(note.as_str())]);
            }
        } else if !line.trim().is_empty() {
            doc.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
        }
    }
    doc.control("fi", []);
    doc.to_roff()
}

/// Prints the man page.
pub fn man() -> Result<()> {
    emit(&mut std::io::stdout().lock(), &man_page()?)?;
    Ok(())
}

/// Prints the help of the `help` command itself.
pub fn help_of_help() -> Result<()> {
    let mut cmd = Cli::command();
    cmd.build();
    match cmd.find_subcommand_mut("help") {
        Some(help) => help.print_long_help()?,
        None => cmd.print_long_help()?,
    }
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
