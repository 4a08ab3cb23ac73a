//! `noisetop probe`: wake-up latency per CPU and idle state, and the cost
//! of a context switch, measured here.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::base::cpulist;
use crate::base::cpulist::CpuList;
use crate::base::cpulist::parse_cpus;
use crate::cmd::UsageError;
use crate::collect::topology;
use crate::os::fs::{Fs, Roots};
use crate::probe::runner::{self, Kinds, Opts};

/// Options of `probe`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// CPUs to probe (`1-3`) [default: every online CPU but the first, or
    /// but `--pin`'s]
    #[arg(long, value_parser = parse_cpus, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// How long the wake-up measurements take, shared between timer and
    /// remote wake-ups (`10s`, `500ms`).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Print the report, with histograms, as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write one CSV row per CPU × kind × state to FILE.csv, and the whole
    /// report with its histograms to FILE.csv.json.
    #[arg(long, value_name = "FILE.csv")]
    pub record: Option<PathBuf>,
    /// Overwrite an existing recording.
    #[arg(long, requires = "record")]
    pub force: bool,
    /// Run noisetop itself and the wakers on this CPU [default: every
    /// online CPU not probed]
    #[arg(long, value_name = "CPU")]
    pub pin: Option<u32>,
    /// Timer deadlines on a fixed grid this far apart (`1ms`), as
    /// cyclictest's `-i`, instead of random gaps of 0–4 ms.
    #[arg(long, value_parser = parse_timer_interval, value_name = "DURATION")]
    pub timer_interval: Option<Duration>,
    /// Only these measurements: `timer`, `remote`, `ctx` (comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = ["timer", "remote", "ctx"])]
    pub kinds: Vec<String>,
    /// Tag every wake-up from the cpuidle usage counters alone, without
    /// tracing `power:cpu_idle`.
    #[arg(long)]
    pub no_trace: bool,
}

/// Parses `--duration`: above 0, at most an hour.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.trim_end_matches(['s', 'm']).trim().parse::<f64>() == Ok(0.0) {
        return Err(format!("{s:?}: the probe needs time to measure (try 10s)"));
    }
    crate::cli::parse_interval(s)
}

/// Parses `--timer-interval`: 50 µs to 1 s.
fn parse_timer_interval(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1e-6)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 1ms, 500us)"))?;
    let secs = v * scale;
    if !(50e-6..=1.0).contains(&secs) {
        return Err(format!(
            "{s:?}: the timer interval must be between 50us and 1s"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Works out the probed and housekeeping CPUs; usage errors for CPUs that
/// are not online or that noisetop itself is pinned to.
pub fn plan(
    online: &[u32],
    cpus: Option<&[u32]>,
    pin: Option<u32>,
) -> Result<(Vec<u32>, Vec<u32>), UsageError> {
    let list = |c: &[u32]| cpulist::format(c);
    if let Some(p) = pin
        && !online.contains(&p)
    {
        return Err(UsageError(format!(
            "--pin {p}: CPU {p} is not online (online: {})",
            list(online)
        )));
    }
    let probed: Vec<u32> = if let Some(c) = cpus {
        let off: Vec<u32> = c.iter().copied().filter(|x| !online.contains(x)).collect();
        if !off.is_empty() {
            return Err(UsageError(format!(
                "--cpus {}: CPU {} not online (online: {})",
                list(c),
                list(&off),
                list(online)
            )));
        }
        if let Some(p) = pin
            && c.contains(&p)
        {
            return Err(UsageError(format!(
                "--cpus {}: CPU {p} is noisetop's own (--pin {p}); probe other CPUs or pin \
                     noisetop elsewhere",
                list(c)
            )));
        }
        c.to_vec()
    } else {
        let hk = pin.or_else(|| online.first().copied());
        online.iter().copied().filter(|&x| Some(x) != hk).collect()
    };
    if probed.is_empty() {
        return Err(UsageError(format!(
            "nothing to probe: CPU {} is the only online CPU, and noisetop keeps off the CPUs it probes",
            list(online)
        )));
    }
    let hk: Vec<u32> = match pin {
        Some(p) => vec![p],
        None => online
            .iter()
            .copied()
            .filter(|x| !probed.contains(x))
            .collect(),
    };
    if hk.is_empty() {
        return Err(UsageError(format!(
            "--cpus {}: every online CPU is probed, which leaves none for noisetop itself and \
             the wakers; leave one out (e.g. --cpus {})",
            list(&probed),
            list(&probed[1..])
        )));
    }
    Ok((probed, hk))
}

/// Runs the probe and prints or records it.
pub fn run(args: &ProbeArgs) -> Result<ExitCode> {
    let roots = Roots::default();
    let mut fs = Fs::new(roots.clone());
    let online = topology::online_cpus(&mut fs).context("cannot read the online CPUs")?;
    let (cpus, housekeeping) = plan(
        &online,
        args.cpus.as_ref().map(|c| c.0.as_slice()),
        args.pin,
    )?;
    if let Some(path) = &args.record
        && !args.force
        && path.exists()
    {
        return Err(UsageError(format!(
            "--record {}: the file exists (--force overwrites it)",
            path.display()
        ))
        .into());
    }
    crate::os::sys::pin_to(&housekeeping).with_context(|| {
        format!(
            "cannot run noisetop on CPU {}",
            cpulist::format(&housekeeping)
        )
    })?;
    let want = |k: &str| args.kinds.is_empty() || args.kinds.iter().any(|x| x == k);
    let opts = Opts {
        cpus,
        housekeeping,
        duration: args.duration,
        timer_interval: args.timer_interval,
        kinds: Kinds {
            timer: want("timer"),
            remote: want("remote"),
            ctx: want("ctx"),
        },
        roots,
        no_trace: args.no_trace,
        ctx_rounds: runner::CTX_ROUNDS,
        stop: crate::os::stop::Stop::on_signals().context("cannot install the signal handlers")?,
    };
    // says, while it runs, which process and CPUs are the probe's, so a
    // dashboard or `run` watching them does not call its wake-ups noise
    let running = crate::probe::running::path().and_then(|p| {
        crate::probe::running::Guard::write(&p, &opts.cpus)
            .map_err(|e| {
                eprintln!(
                    "noisetop: cannot write {}: {e}; a dashboard watching these CPUs knows the                      probe only by its threads' name",
                    p.display()
                );
            })
            .ok()
    });
    let rep = runner::run(&opts);
    drop(running);
    // kept for the dashboard's CPU detail; a home that cannot take it
    // loses only that
    if let Some(path) = crate::probe::sinks::last_path()
        && let Err(e) = crate::probe::sinks::save_last(&rep, &path)
    {
        eprintln!(
            "noisetop: the dashboard will not show this probe: cannot write {}: {e}",
            path.display()
        );
    }
    if let Some(path) = &args.record {
        crate::probe::sinks::write_recording(&rep, path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let out = if args.json {
        serde_json::to_string_pretty(&rep)? + "\n"
    } else {
        crate::probe::sinks::text(&rep)
    };
    crate::cmd::out::emit(&mut std::io::stdout().lock(), &out)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_keeps_noisetop_off_the_probed_cpus() {
        assert_eq!(
            plan(&[0, 1, 2, 3], None, None).unwrap(),
            (vec![1, 2, 3], vec![0])
        );
        assert_eq!(
            plan(&[0, 1, 2, 3], None, Some(2)).unwrap(),
            (vec![0, 1, 3], vec![2])
        );
        assert_eq!(
            plan(&[0, 1, 2, 3], Some(&[2]), None).unwrap(),
            (vec![2], vec![0, 1, 3])
        );
        assert_eq!(
            plan(&[0, 1], Some(&[7]), None).unwrap_err().0,
            "--cpus 7: CPU 7 not online (online: 0-1)"
        );
        assert_eq!(
            plan(&[0, 1], Some(&[1]), Some(1)).unwrap_err().0,
            "--cpus 1: CPU 1 is noisetop's own (--pin 1); probe other CPUs or pin noisetop elsewhere"
        );
        assert_eq!(
            plan(&[0, 1], Some(&[0, 1]), None).unwrap_err().0,
            "--cpus 0-1: every online CPU is probed, which leaves none for noisetop itself and \
             the wakers; leave one out (e.g. --cpus 1)"
        );
        assert_eq!(
            plan(&[0, 1], None, Some(5)).unwrap_err().0,
            "--pin 5: CPU 5 is not online (online: 0-1)"
        );
        assert!(
            plan(&[0], None, None)
                .unwrap_err()
                .0
                .starts_with("nothing to probe")
        );
    }

    #[test]
    fn durations_must_be_above_zero() {
        for z in ["0", "0s", "0ms", " 0.0 "] {
            assert_eq!(
                parse_duration(z).unwrap_err(),
                format!("{z:?}: the probe needs time to measure (try 10s)")
            );
        }
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(
            parse_timer_interval("1ms").unwrap(),
            Duration::from_millis(1)
        );
        assert_eq!(
            parse_timer_interval("500us").unwrap(),
            Duration::from_micros(500)
        );
        assert!(parse_timer_interval("10us").is_err());
    }
}
