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
    buf.write_all(synopsis(&cmd).as_bytes())?;
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
        let man = clap_mangen::Man::new(sub.clone());
        man.render_title(&mut buf)?;
        man.render_name_section(&mut buf)?;
        buf.write_all(synopsis(&sub).as_bytes())?;
        man.render_description_section(&mut buf)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut buf)?;
        }
        if sub.get_after_long_help().is_some() || sub.get_after_help().is_some() {
            man.render_extra_section(&mut buf)?;
        }
        if sub.get_name() == "noisetop-check" {
            buf.write_all(check_rules().as_bytes())?;
        }
    }
    // each piece rendered on its own repeats roff's quote-mark preamble:
    // the page defines it once, on top
    let page = String::from_utf8(buf)?.replace(AQ, "");
    Ok(format!("{AQ}{page}"))
}

/// The preamble `roff` starts each document with (a portable `'`).
const AQ: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// The SYNOPSIS section with each option's value, as `--help`'s usage
/// names it (`[--cpus LIST]`, `[-i|--interval INTERVAL]`), the positional
/// arguments last (`-- <CMD>...` for the ones after `--`); `clap_mangen`'s
/// own leaves the values out.
fn synopsis(cmd: &clap::Command) -> String {
    use roff::{Roff, bold, italic, roman};
    let mut cmd = cmd.clone();
    cmd.build();
    let mut line = vec![bold(cmd.get_name().to_string()), roman(" ")];
    let mut opts: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    opts.sort_by_key(|a| a.get_display_order());
    let value = |a: &clap::Arg| -> String {
        a.get_value_names().map_or_else(
            || a.get_id().as_str().to_uppercase(),
            |v| {
                v.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            },
        )
    };
    for a in opts {
        let (lhs, rhs) = if a.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(lhs));
        match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => {
                line.push(bold(format!("-{s}")));
                line.push(roman("|"));
                line.push(bold(format!("--{l}")));
            }
            (Some(s), None) => line.push(bold(format!("-{s}"))),
            (None, Some(l)) => line.push(bold(format!("--{l}"))),
            (None, None) => continue,
        }
        if a.get_num_args().is_some_and(|n| n.takes_values()) {
            line.push(roman(" "));
            line.push(italic(value(a)));
        }
        line.push(roman(rhs));
        line.push(roman(" "));
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let (lhs, rhs) = if a.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        if a.is_last_set() {
            line.push(roman("-- "));
        }
        line.push(roman(lhs));
        line.push(italic(value(a)));
        line.push(roman(rhs));
        if a.get_num_args().is_some_and(|n| n.max_values() > 1) {
            line.push(roman("..."));
        }
        line.push(roman(" "));
    }
    if cmd.has_subcommands() {
        line.push(roman("["));
        line.push(italic("subcommands"));
        line.push(roman("]"));
    }
    let mut doc = Roff::new();
    doc.control("SH", ["SYNOPSIS"]);
    doc.text(line);
    doc.to_roff()
}

/// The CHECK RULES section: what each rule of `check` judges and why,
/// under its id, which every verdict's `see` line names.
fn check_rules() -> String {
    use roff::{Roff, bold, roman};
    let mut doc = Roff::new();
    doc.control("SH", ["CHECK RULES"]);
    for (id, text) in crate::check::explain::EXPLAIN {
        doc.control("TP", []);
        doc.text([bold(id)]);
        doc.text([roman(text.replace('\n', " "))]);
    }
    doc.to_roff()
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
