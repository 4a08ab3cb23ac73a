//! `noisetop serve`: the live pipeline as a Prometheus target. The driver
//! samples on noisetop's own tick; the exporter sink writes each judged
//! interval's exposition; the HTTP thread hands out the latest one.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::cli::{RecordArgs, SampleArgs, SourceArgs, WatchArgs};
use crate::cmd::UsageError;
use crate::model::machine::Machine;
use crate::os::fs::Fs;
use crate::os::stop::Stop;
use crate::pipeline::control::Control;
use crate::pipeline::live::{self, End, HookError, Live, Phase};
use crate::pipeline::setup::{AnyHw, TraceHow};
use crate::pipeline::{Driver, Flow};
use crate::serve::http::{self, Limits};
use crate::serve::webconfig::{self, WebConfig};
use crate::serve::{Detail, ExportSink, Exporter, Shared};

/// `noisetop serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to serve /metrics on (loopback unless told;
    /// `:PORT` is every address).
    #[arg(long, default_value = "127.0.0.1:9877", value_name = "ADDR:PORT", value_parser = parse_listen)]
    pub listen: String,
    /// TLS and basic auth, in the exporter toolkit's YAML format (as for
    /// `node_exporter`'s `--web.config.file`).
    #[arg(long, value_name = "FILE")]
    pub web_config: Option<PathBuf>,
    /// Which CPUs get per-mode, per-state and per-device series: watched,
    /// isolated and `nohz_full` ones (the rest summed per package), or all.
    #[arg(long, value_enum, default_value_t = Detail::Watched)]
    pub detail: Detail,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub record: RecordArgs,
    #[command(flatten)]
    pub summary: crate::cli::SummaryArgs,
}

/// Parses `--listen`: `:PORT`, `HOST:PORT` or `[IPv6]:PORT`, the port a
/// number up to 65535; the host is resolved when noisetop binds.
pub fn parse_listen(s: &str) -> Result<String, String> {
    let bad = || format!("{s:?} is not ADDR:PORT (try 127.0.0.1:9877, [::1]:9877 or :9877)");
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    if port.parse::<u16>().is_err() {
        return Err(bad());
    }
    let v6 = host.starts_with('[') && host.ends_with(']');
    if host.contains(':') && !v6 || host.contains(char::is_whitespace) {
        return Err(bad());
    }
    Ok(s.to_string())
}

/// Serves until SIGTERM, SIGINT or SIGHUP (or `--count` intervals).
pub fn run(a: &ServeArgs) -> Result<()> {
    let web = match &a.web_config {
        Some(p) => webconfig::load(p).map_err(|e| UsageError(format!("--web-config {e}")))?,
        None => WebConfig::default(),
    };
    let watched = a
        .watch
        .watch
        .as_ref()
        .map(|w| w.0.clone())
        .unwrap_or_default();
    if let Some(cpu) = a.watch.pin {
        crate::os::sys::pin_to(&[cpu])
            .with_context(|| format!("--pin {cpu}: cannot run on CPU {cpu}"))?;
    }
    // the sampler and the HTTP thread both stay off the benchmark
    crate::cmd::keep_off(&watched, a.watch.pin.is_some())?;
    let roots = crate::cmd::roots(&a.source);
    let mut fs = Fs::new(roots.clone());
    let machine = Machine::read(&mut fs);
    crate::cmd::check_cpus("--watch", &watched, &machine)?;
    let config = crate::cmd::load_config(a.watch.config.as_deref())?;
    let server = http::bind(&a.listen, &web, Limits::default())?;
    let shared = Arc::new(Shared::default());
    let mut ex = Exporter::new(Arc::clone(&shared), machine.clone(), &watched, a.detail);
    ex.follow_probe(crate::probe::sinks::last_path());
    let exporter = Arc::new(Mutex::new(ex));
    let mut sinks = crate::cmd::batch::sinks(&a.record, &machine, a.sample.interval, &watched)?;
    sinks.push(Box::new(ExportSink(Arc::clone(&exporter))));
    let mut driver: Driver<AnyHw> = crate::cmd::driver_for(&a.source)
        .watching(&watched)
        .owners(a.watch.owner.clone())
        .trace(TraceHow::from_flag(a.watch.no_trace))
        .budget(a.sample.budget)
        .config(config)
        .build(fs, machine)
        .map_err(anyhow::Error::msg)?;
    let stop = Stop::on_signals().context("cannot install signal handlers")?;
    let handle = server
        .spawn(Arc::clone(&shared))
        .context("cannot start the HTTP thread")?;
    let scheme = if web.tls.is_some() { "https" } else { "http" };
    eprintln!("noisetop: serving {scheme}://{}/metrics", handle.addr());
    let live = Live {
        control: Arc::new(Control::new(a.sample.interval)),
        stop,
        count: Some(a.sample.count.unwrap_or(u64::MAX)),
    };
    let mut hook = |p: Phase, d: &mut Driver<AnyHw>| -> Result<(), HookError> {
        if let (Phase::After(_), Some(snap)) = (p, d.engine.last()) {
            exporter
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .observe(snap);
        }
        Ok(())
    };
    let end = live::run(&mut driver, &live, &mut sinks, Some(&mut hook), &mut |_| {
        Flow::Continue
    });
    handle.stop();
    // closes the recording (flushed) before its summary
    drop(sinks);
    crate::cmd::record_sink::print_summary(&a.record, a.summary.quiet, true);
    match end {
        End::Failed(e) => bail!(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_listen;

    #[test]
    fn listen_addresses_need_a_port() {
        for ok in [
            "127.0.0.1:9877",
            ":9877",
            "[::1]:9877",
            "[::]:0",
            "localhost:80",
        ] {
            assert_eq!(parse_listen(ok).as_deref(), Ok(ok), "{ok}");
        }
        for bad in [
            "bogus",
            "9877",
            "host:",
            "host:http",
            "1.2.3.4:70000",
            "::1:80",
            "a b:1",
        ] {
            let e = parse_listen(bad).unwrap_err();
            assert!(e.contains("is not ADDR:PORT"), "{bad}: {e}");
        }
    }
}
