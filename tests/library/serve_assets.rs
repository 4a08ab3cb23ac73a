//! The exporter's documents agree with the code: docs/serve.md's metric list
//! is the catalogue's, its claims about the 1152-CPU scrape hold on the real
//! capture, and the `DaemonSet` validates against the Kubernetes schemas
//! bundled with `kubernetes-validate` (a broken copy is refused).

use std::path::Path;
use std::sync::Arc;

use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::pipeline::{Driver, Step};
use noisetop::sample::engine::Engine;
use noisetop::sample::sampler::Sampler;
use noisetop::serve::{Detail, Exporter, Shared, catalog};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `UPDATE_DOCS=1 cargo test --test library serve_assets::` writes the table anew.
#[test]
fn the_serve_page_lists_exactly_the_metrics_the_code_writes() {
    let path = root().join("docs/serve.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (open, close) = ("<!-- serve-metrics -->\n", "<!-- /serve-metrics -->");
    let a = readme
        .find(open)
        .expect("docs/serve.md has the serve-metrics markers")
        + open.len();
    let b = readme.find(close).unwrap();
    let table = catalog::markdown_table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let new = format!("{}{table}{}", &readme[..a], &readme[b..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &readme[a..b],
        table,
        "docs/serve.md's metric list is stale: UPDATE_DOCS=1 cargo test --test library serve_assets::"
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn a_scrape_of_the_real_1152_cpu_capture_fits_the_budget() {
    let tree = root().join("../shared/captures/pcp-1152cpu-x86_64");
    if !tree.is_dir() {
        eprintln!("{} absent: skipped", tree.display());
        return;
    }
    let hw = Captured {
        stamp: noisetop::os::hw::Stamp {
            mono_ns: 1_000_000_000,
            wall_ns: 1_000_000_000,
        },
        ..Captured::default()
    };
    let mut d = Driver::new(Engine::new(Sampler::new(Fs::new(Roots::under(&tree)), hw)))
        .watching(&[2, 3, 4, 5]);
    let shared = Arc::new(Shared::default());
    let m = d.engine.sampler.machine.clone();
    let mut ex = Exporter::new(Arc::clone(&shared), m, &[2, 3, 4, 5], Detail::Watched);
    d.step();
    d.engine.sampler.hw.stamp.mono_ns += 1_000_000_000;
    let Step::Sample(s) = d.step() else {
        panic!("no interval")
    };
    ex.observe(d.engine.last().unwrap());
    ex.publish(&s);
    let p = shared.latest().unwrap();
    let text = String::from_utf8(p.classic.to_vec()).unwrap();
    let busy = text
        .lines()
        .filter(|l| l.starts_with("noisetop_cpu_interrupts_total{"))
        .count();
    assert_eq!(busy, 1152, "every CPU has its interrupt counter");
    assert!(p.series < 10_000, "{} series", p.series);
    assert!(p.classic.len() < 1_000_000, "{} bytes", p.classic.len());
    // the per-device series exist for the watched CPUs only
    let devices = text
        .lines()
        .filter(|l| l.starts_with("noisetop_cpu_device_interrupts_total{"))
        .filter(|l| {
            !["\"2\"", "\"3\"", "\"4\"", "\"5\""]
                .iter()
                .any(|c| l.contains(&format!("cpu={c}")))
        })
        .count();
    assert_eq!(devices, 0);
    // 500 cgroups on every CPU: the watched CPUs' every task, the other
    // CPUs' 8 longest each, all in cgroups of their own; the per-class cap
    // keeps the family at 3 × 51 series and the whole within the budget
    let task = |pid: u32| noisetop::noise::traced::TracedTask {
        comm: "t".into(),
        pid,
        tid: pid,
        per_cpu_kthread: false,
        exited: false,
        cgroup: Some(format!("/kubepods/burstable/pod{pid}/c{pid}")),
    };
    let cpu = |cpu: u32, tasks: std::ops::Range<u32>| noisetop::noise::traced::TracedCpu {
        cpu,
        window_ns: 1_000_000_000,
        intruders: tasks
            .map(|p| noisetop::noise::traced::Intruder {
                task: task(p),
                ns: 1_000 + u64::from(p),
                slices: 1,
                charged_ns: None,
            })
            .collect(),
        ..noisetop::noise::traced::TracedCpu::default()
    };
    let mut many = (*s).clone();
    many.trace = Some(noisetop::noise::traced::Traced {
        cpus: [2, 3, 4, 5].iter().map(|&c| cpu(c, 0..500)).collect(),
        browsed: (0..1152u32)
            .filter(|c| !(2..=5).contains(c))
            .map(|c| cpu(c, (c % 500)..(c % 500 + 8)))
            .collect(),
        ..noisetop::noise::traced::Traced::default()
    });
    ex.publish(&many);
    let p = shared.latest().unwrap();
    let text = String::from_utf8(p.classic.to_vec()).unwrap();
    let cgroups = text
        .lines()
        .filter(|l| l.starts_with("noisetop_cgroup_cpu_seconds_total{"))
        .count();
    assert!(cgroups <= 3 * 51, "{cgroups} cgroup series");
    assert!(
        text.contains("noisetop_cgroup_cpu_seconds_total{cgroup=\"other\",cpus=\"watched\"}"),
        "the cgroups past the 50 longest are summed"
    );
    assert!(p.series < 10_000, "{} series with 500 cgroups", p.series);
    eprintln!(
        "1152 CPUs, 500 cgroups: {} series, {cgroups} of them by cgroup",
        p.series
    );
}

#[test]
fn the_daemonset_validates_against_the_kubernetes_schema() {
    let Some(v) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("kubernetes-validate"))
            .find(|f| f.is_file())
    }) else {
        eprintln!("kubernetes-validate not installed: skipped (.ci/run installs it with pip)");
        return;
    };
    let manifest = root().join("assets/kubernetes/noisetop-daemonset.yaml");
    let run = |f: &Path| {
        std::process::Command::new(&v)
            .args(["--strict", "-k", "1.31.0"])
            .arg(f)
            .output()
            .unwrap()
    };
    let out = run(&manifest);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("add: [\"PERFMON\", \"SYS_RAWIO\", \"BPF\"]"));
    assert!(text.contains("drop: [\"ALL\"]") && text.contains("hostPID: true"));
    // the validator can fail: a field the schema does not have is refused
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        text.replace("hostPID: true", "hostPID: true\n      hostPIDs: true"),
    )
    .unwrap();
    assert!(
        !run(&bad).status.success(),
        "a misspelt field must be refused"
    );
}
