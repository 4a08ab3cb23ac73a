//! `noisetop compare A.csv B.csv`: two recordings side by side.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::base::cpulist::CpuList;
use crate::record::diff::Comparison;
use crate::record::digest::Format;

/// Options of `compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The first recording (A).
    pub a: PathBuf,
    /// The second recording (B).
    pub b: PathBuf,
    /// CPUs to compare one by one and to explain (`0-3,8`); all by default.
    #[arg(long, value_parser = crate::base::cpulist::parse_cpus)]
    pub cpus: Option<CpuList>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Prints the comparison.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    if let Some(text) = probes(args)? {
        crate::cmd::out::emit(&mut std::io::stdout().lock(), &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let cmp = Comparison::build(&args.a, &args.b, args.cpus.as_ref().map(|c| c.0.as_slice()))?;
    if let Some(c) = &args.cpus
        && cmp.compared_cpus.is_empty()
    {
        return Err(crate::cmd::UsageError(format!(
            "--cpus {}: no such CPU in both recordings",
            crate::base::cpulist::format(&c.0)
        ))
        .into());
    }
    let text = with_probes(cmp.render(args.format), args)?;
    crate::cmd::out::emit(&mut std::io::stdout().lock(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// Adds to an ordinary comparison what the probes recorded with each side
/// measured (a `probes` object in JSON); says which side lacks one.
fn with_probes(text: String, args: &CompareArgs) -> Result<String> {
    use crate::record::sidecar::Sidecar;
    let probe = |p: &std::path::Path| Sidecar::read(p).ok().flatten().and_then(|s| s.probe);
    let (a, b) = (probe(&args.a), probe(&args.b));
    let note = match (&a, &b) {
        (None, None) => return Ok(text),
        (Some(_), None) => Some("A carries a probe and B does not: no wake-up measured on B"),
        (None, Some(_)) => Some("B carries a probe and A does not: no wake-up measured on A"),
        (Some(_), Some(_)) => None,
    };
    if args.format == Format::Json {
        let mut v: serde_json::Value = serde_json::from_str(&text)?;
        if let Some(o) = v.as_object_mut() {
            let probes = match (&a, &b) {
                (Some(a), Some(b)) => crate::probe::wakeup_diff::json(a, b),
                _ => serde_json::json!({ "note": note }),
            };
            o.insert("probes".into(), probes);
        }
        return Ok(serde_json::to_string_pretty(&v)? + "\n");
    }
    let body = match (&a, &b) {
        (Some(a), Some(b)) => crate::probe::wakeup_diff::render(a, b),
        _ => format!("{}\n", note.unwrap_or_default()),
    };
    Ok(if args.format == Format::Md {
        format!("{text}\n## Probes recorded with each side\n\n```\n{body}```\n")
    } else {
        format!("{text}\nProbes recorded with each side:\n{body}")
    })
}

/// Two probe recordings (`noisetop probe --record`) compare by their
/// measured wake-ups; `None` when neither is one.
fn probes(args: &CompareArgs) -> Result<Option<String>> {
    use crate::probe::sinks::read_recording;
    let a = read_recording(&args.a)?;
    let b = read_recording(&args.b)?;
    match (a, b) {
        (Some(a), Some(b)) => Ok(Some(match args.format {
            Format::Json => {
                serde_json::to_string_pretty(&crate::probe::wakeup_diff::json(&a, &b))? + "\n"
            }
            _ => crate::probe::wakeup_diff::render(&a, &b),
        })),
        (None, None) => Ok(None),
        (a, _) => Err(crate::cmd::UsageError(format!(
            "{} is a probe recording and {} is not: compare two probes, or two recordings",
            if a.is_some() {
                args.a.display()
            } else {
                args.b.display()
            },
            if a.is_some() {
                args.b.display()
            } else {
                args.a.display()
            },
        ))
        .into()),
    }
}
