//! Edges as properties: every parser and reader, fed mutations of real
//! kernel files (the captures under `../shared/captures` and synthetic
//! captures of each machine flavour), never panics and never yields NaN,
//! infinity or a negative figure; what it cannot know is `None`.
//!
//! CI runs a bounded number of cases (the whole file stays well under a
//! minute in a debug build). The long run takes the case count from the
//! environment:
//!
//! ```text
//! PROPTEST_CASES=100000 cargo test --release --test library properties:: -- --skip mutated_tree
//! PROPTEST_CASES=3000 cargo test --release --test library mutated_tree
//! ```
//!
//! (a mutated tree is written to disk and read whole, about a thousand
//! times slower than a parse: its properties take the smaller count).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use noisetop::base::cpu_map::CpuMap;
use noisetop::base::cpulist;
use noisetop::collect::{
    cpufreq, cpuidle, cpuinfo, hwmon, interrupts, powercap, softirqs, stat, topology,
};
use noisetop::model::interval::FreqSource;
use noisetop::model::interval::{self, CpuRates, Interval};
use noisetop::model::machine::Machine;
use noisetop::model::snapshot::{CpuHw, Snapshot};
use noisetop::os::capture::Captured;
use noisetop::os::fs::{Fs, Roots};
use noisetop::os::hw::Stamp;
use noisetop::os::{msr, perf};
use noisetop::sample::engine::Engine;
use noisetop::sample::sampler::Sampler;
use noisetop::testkit::synth::{self, Flavor, Spec};

// ---------------------------------------------------------------- config

/// Cases per property: `PROPTEST_CASES` when set (the long run), else
/// `ci` (sized so that the file runs in well under 60 s in debug).
fn config(ci: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci);
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    }
}

// ---------------------------------------------------------------- corpora

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures")
}

/// Largest seed file taken into a corpus: mutating the 13 MB interrupts
/// of 1 152 CPUs case after case would be the whole time budget.
const SEED_MAX_BYTES: u64 = 2 << 20;

/// Synthetic captures of every flavour: they hold the files real dumps
/// lack (perf, MSR and clock tables, cpuidle counters, powercap, hwmon).
fn synth_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for (i, flavor) in [
            Flavor::IntelLaptop,
            Flavor::IntelServer,
            Flavor::AmdServer,
            Flavor::Vm,
            Flavor::Arm64,
        ]
        .into_iter()
        .enumerate()
        {
            let spec = Spec {
                instants: 2,
                ..Spec::new(flavor, 4)
            };
            synth::write_capture(&dir.path().join(format!("f{i}")), &spec).unwrap();
        }
        dir
    })
    .path()
}

/// Every real and synthetic copy of `rel` (e.g. `proc/interrupts`).
fn corpus(rel: &str) -> Vec<String> {
    let mut roots: Vec<PathBuf> = std::fs::read_dir(captures())
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    if roots.is_empty() {
        eprintln!("captures absent: corpus of {rel} from synthetic captures only");
    }
    for f in std::fs::read_dir(synth_dir())
        .unwrap()
        .filter_map(Result::ok)
    {
        roots.push(f.path().join("0000"));
        roots.push(f.path().join("0001"));
    }
    roots.sort();
    let mut out: Vec<String> = roots
        .iter()
        .map(|r| r.join(rel))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= SEED_MAX_BYTES))
        .filter_map(|p| std::fs::read(p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    out.dedup();
    if out.is_empty() && rel.ends_with("/core_cpus") {
        // the synthetic trees write the lists, not the masks: masks as
        // the kernel prints them (32-bit hex words, comma separated)
        eprintln!("no capture holds {rel}: seeded with kernel-format masks");
        out = vec!["3\n".into(), "00000000,00010001\n".into()];
    }
    assert!(!out.is_empty(), "no seed for {rel}");
    out
}

fn cached(rel: &'static str, slot: &'static OnceLock<Vec<String>>) -> &'static [String] {
    slot.get_or_init(|| corpus(rel))
}

macro_rules! seeds {
    ($rel:expr) => {{
        static S: OnceLock<Vec<String>> = OnceLock::new();
        cached($rel, &S)
    }};
}

// ---------------------------------------------------------------- mutations

/// One edit of a text file, with indices taken modulo what is there.
#[derive(Debug, Clone)]
enum Edit {
    Truncate(usize),
    DropLine(usize),
    DupLine(usize),
    SwapLines(usize, usize),
    SetToken(usize, usize, String),
    DropToken(usize, usize),
    AddToken(usize, String),
    InsertLine(usize, String),
    Byte(usize, u8),
}

fn odd_token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("4294967295".to_string()),
        Just("-1".to_string()),
        Just(String::new()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("1e308".to_string()),
        Just("0x7fffffff".to_string()),
        Just("(null)".to_string()),
        Just("0-4294967295".to_string()),
        Just("cpu4294967295".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<u32>().prop_map(|v| v.to_string()),
        proptest::collection::vec(32u8..127, 0..12)
            .prop_map(|b| String::from_utf8(b).unwrap_or_default()),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    let i = any::<usize>();
    prop_oneof![
        i.prop_map(Edit::Truncate),
        i.prop_map(Edit::DropLine),
        i.prop_map(Edit::DupLine),
        (i, i).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (i, i, odd_token()).prop_map(|(a, b, t)| Edit::SetToken(a, b, t)),
        (i, i, odd_token()).prop_map(|(a, b, t)| Edit::SetToken(a, b, t)),
        (i, i).prop_map(|(a, b)| Edit::DropToken(a, b)),
        (i, odd_token()).prop_map(|(a, t)| Edit::AddToken(a, t)),
        (i, odd_token()).prop_map(|(a, t)| Edit::InsertLine(a, t)),
        (i, any::<u8>()).prop_map(|(a, b)| Edit::Byte(a, b)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    for e in edits {
        let n = lines.len().max(1);
        match e {
            Edit::Truncate(at) => {
                let s: String = lines.concat();
                let mut cut = at % (s.len() + 1);
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines = s[..cut].split_inclusive('\n').map(str::to_string).collect();
            }
            Edit::DropLine(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Edit::DupLine(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Edit::SetToken(l, t, v) if !lines.is_empty() => {
                lines[l % n] = retoken(&lines[l % n], |toks| {
                    if !toks.is_empty() {
                        let k = t % toks.len();
                        toks[k].clone_from(v);
                    }
                });
            }
            Edit::DropToken(l, t) if !lines.is_empty() => {
                lines[l % n] = retoken(&lines[l % n], |toks| {
                    if !toks.is_empty() {
                        toks.remove(t % toks.len());
                    }
                });
            }
            Edit::AddToken(l, v) if !lines.is_empty() => {
                lines[l % n] = retoken(&lines[l % n], |toks| toks.push(v.clone()));
            }
            Edit::InsertLine(i, v) => lines.insert(i % (lines.len() + 1), format!("{v}\n")),
            Edit::Byte(i, b) => {
                let mut bytes = lines.concat().into_bytes();
                if !bytes.is_empty() {
                    let k = i % bytes.len();
                    bytes[k] = *b;
                }
                lines = String::from_utf8_lossy(&bytes)
                    .split_inclusive('\n')
                    .map(str::to_string)
                    .collect();
            }
            _ => {}
        }
    }
    lines.concat()
}

/// Rewrites a line's white-space separated tokens, keeping its newline.
fn retoken(line: &str, f: impl FnOnce(&mut Vec<String>)) -> String {
    let nl = line.ends_with('\n');
    let mut toks: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    f(&mut toks);
    let mut s = toks.join(" ");
    if nl {
        s.push('\n');
    }
    s
}

/// A seed of `seeds`, mutated.
fn mutated(seeds: &'static [String]) -> impl Strategy<Value = String> {
    (0..seeds.len(), proptest::collection::vec(edit(), 0..6))
        .prop_map(move |(i, edits)| apply(&seeds[i], &edits))
}

// ---------------------------------------------------------------- checks

fn finite_non_negative(what: &str, v: Option<f64>) -> Result<(), TestCaseError> {
    if let Some(x) = v {
        prop_assert!(x.is_finite() && x >= 0.0, "{what} = {x}");
    }
    Ok(())
}

fn percent(what: &str, v: Option<f64>) -> Result<(), TestCaseError> {
    finite_non_negative(what, v)?;
    if let Some(x) = v {
        prop_assert!(x <= 100.0 + 1e-9, "{what} = {x} %");
    }
    Ok(())
}

fn check_cpu(r: &CpuRates) -> Result<(), TestCaseError> {
    let c = r.cpu;
    for (name, v) in [
        ("avg_mhz", r.avg_mhz),
        ("bzy_mhz", r.bzy_mhz),
        ("tsc_mhz", r.tsc_mhz),
        ("window_s", r.window_s),
        ("irq_per_s", r.irq_per_s),
        ("loc_per_s", r.loc_per_s),
        ("res_per_s", r.res_per_s),
        ("cal_per_s", r.cal_per_s),
        ("tlb_per_s", r.tlb_per_s),
        ("ipi_per_s", r.ipi_per_s),
        ("dev_per_s", r.dev_per_s),
        ("nmi_per_s", r.nmi_per_s),
        ("softirq_per_s", r.softirq_per_s),
        ("csw_per_s", r.csw_per_s),
        ("mig_per_s", r.mig_per_s),
        ("core_watt", r.core_watt),
    ] {
        finite_non_negative(&format!("cpu{c} {name}"), v)?;
    }
    percent(&format!("cpu{c} busy"), r.busy_pct)?;
    if let Some(t) = r.temp_c {
        prop_assert!(t.is_finite(), "cpu{c} temp {t}");
    }
    for (n, v) in &r.hw_cstates {
        percent(&format!("cpu{c} {n}"), *v)?;
    }
    for s in r.idle.iter() {
        percent(&format!("cpu{c} {} %", s.name), s.pct)?;
        finite_non_negative("idle per_s", s.per_s)?;
        finite_non_negative("idle above", s.above_per_s)?;
        finite_non_negative("idle below", s.below_per_s)?;
    }
    if let Some(t) = &r.time {
        for (n, v) in [
            ("user", t.user),
            ("nice", t.nice),
            ("system", t.system),
            ("idle", t.idle),
            ("iowait", t.iowait),
            ("irq", t.irq),
            ("softirq", t.softirq),
            ("steal", t.steal),
            ("busy", t.busy()),
        ] {
            percent(&format!("cpu{c} {n}"), v)?;
        }
    }
    Ok(())
}

fn check_interval(iv: &Interval) -> Result<(), TestCaseError> {
    prop_assert!(iv.dt_s.is_finite() && iv.dt_s >= 0.0, "dt {}", iv.dt_s);
    for r in &iv.cpus {
        check_cpu(r)?;
    }
    for p in &iv.pkgs {
        for (d, w) in &p.watts {
            finite_non_negative(&format!("pkg{} {d} W", p.package), *w)?;
        }
        for (n, v) in &p.cstates {
            percent(&format!("pkg{} {n}", p.package), *v)?;
        }
    }
    for s in iv.irqs.iter().chain(&iv.softirqs) {
        prop_assert!(
            s.total.is_finite() && s.total >= 0.0,
            "{} total {}",
            s.label,
            s.total
        );
        for v in &s.per_cpu {
            finite_non_negative(&s.label, *v)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- text parsers

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn interrupts_parse_or_say_why(text in mutated(seeds!("proc/interrupts"))) {
        if let Ok(t) = interrupts::parse_interrupts(&text) {
            for row in &t.rows {
                prop_assert!(row.counts.len() <= t.cpus.len(), "{} has more cells than CPUs", row.label);
            }
            for &c in &t.cpus {
                let _ = t.cpu_total(c);
            }
        }
    }

    #[test]
    fn softirqs_parse_or_say_why(text in mutated(seeds!("proc/softirqs"))) {
        if let Ok(t) = softirqs::parse_softirqs(&text) {
            for row in &t.rows {
                prop_assert!(row.counts.len() <= t.cpus.len());
            }
        }
    }

    #[test]
    fn stat_parses_or_says_why(text in mutated(seeds!("proc/stat"))) {
        let _ = stat::parse(&text);
        let _ = stat::parse_intr_counts(&text);
    }

    #[test]
    fn cpuinfo_never_fails_and_mhz_is_a_frequency(text in mutated(seeds!("proc/cpuinfo"))) {
        let c = cpuinfo::parse(&text);
        for (cpu, mhz) in &c.mhz {
            prop_assert!(mhz.is_finite() && *mhz >= 0.0, "cpu{cpu} {mhz} MHz");
        }
        prop_assert!(c.processors.windows(2).all(|w| w[0] < w[1]), "processors sorted, once each");
    }

    #[test]
    fn cpu_lists_parse_or_say_why(
        text in mutated(seeds!("sys/devices/system/cpu/online")),
        mask in mutated(seeds!("sys/devices/system/cpu/cpu0/topology/core_cpus"))
    ) {
        if let Ok(l) = cpulist::parse(&text) {
            prop_assert!(l.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(cpulist::parse(&cpulist::format(&l)).unwrap(), l);
        }
        let _ = topology::parse_cpumask(&mask);
    }

    #[test]
    fn capture_tables_parse_or_say_why(
        perf_text in mutated(seeds!("noisetop/perf")),
        msr_text in mutated(seeds!("noisetop/msr")),
    ) {
        if let Ok(counts) = perf::parse_table(&perf_text) {
            // what parses writes back to the same counts
            prop_assert_eq!(perf::parse_table(&perf::write_table(&counts)).unwrap(), counts);
        }
        let _ = msr::parse_table(&msr_text);
    }

    #[test]
    fn interrupt_rates_are_finite_and_non_negative(
        a in mutated(seeds!("proc/interrupts")),
        b in mutated(seeds!("proc/interrupts")),
        dt in prop_oneof![Just(0.0), Just(-1.0), Just(f64::NAN), Just(1e-9), 0.001f64..100.0],
    ) {
        let (Ok(a), Ok(b)) = (interrupts::parse_interrupts(&a), interrupts::parse_interrupts(&b)) else {
            return Ok(());
        };
        let order = b.cpus.clone();
        let r = noisetop::model::irq_rates::rates(&a, &b, &order, dt);
        prop_assert_eq!(r.per_cpu.len(), order.len());
        for c in &r.per_cpu {
            for v in [c.all, c.loc, c.res, c.cal, c.tlb, c.ipi, c.dev, c.nmi] {
                finite_non_negative("class rate", v)?;
                if dt.is_nan() || dt <= 0.0 {
                    prop_assert!(v.is_none(), "a rate over dt = {dt}");
                }
            }
        }
        for s in &r.sources {
            prop_assert!(s.total.is_finite() && s.total >= 0.0);
        }
    }
}

// ---------------------------------------------------------------- trees

/// One entry of a seed tree, relative to its root.
#[derive(Debug, Clone)]
enum Entry {
    File(String),
    Link(PathBuf),
    Dir,
}

/// What a mutation does to one entry of a tree.
#[derive(Debug, Clone)]
enum FileOp {
    Text(Vec<Edit>),
    Empty,
    Remove,
    MakeDir,
    LinkLoop,
    DevZero,
    Fifo,
}

fn file_op() -> impl Strategy<Value = FileOp> {
    prop_oneof![
        6 => proptest::collection::vec(edit(), 1..4).prop_map(FileOp::Text),
        1 => Just(FileOp::Empty),
        1 => Just(FileOp::Remove),
        1 => Just(FileOp::MakeDir),
        1 => Just(FileOp::LinkLoop),
        1 => Just(FileOp::DevZero),
        1 => Just(FileOp::Fifo),
    ]
}

/// Reads a tree into memory: files up to 256 KiB, links as links, and
/// only the first four `cpuN` directories (the rest repeat them).
fn load_tree(root: &Path) -> Vec<(String, Entry)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Entry)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok())
                && n >= 4
            {
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(t) = std::fs::read_link(&p) {
                    out.push((rel, Entry::Link(t)));
                }
            } else if meta.is_dir() {
                out.push((rel, Entry::Dir));
                walk(root, &p, out);
            } else if meta.len() <= 256 << 10
                && let Ok(b) = std::fs::read(&p)
            {
                out.push((rel, Entry::File(String::from_utf8_lossy(&b).into_owned())));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// Seed trees: synthetic instants of every flavour and the real dumps
/// that have sysfs trees for cpuidle, cpufreq, topology, hwmon, powercap.
fn trees() -> &'static [Vec<(String, Entry)>] {
    static T: OnceLock<Vec<Vec<(String, Entry)>>> = OnceLock::new();
    T.get_or_init(|| {
        let mut roots: Vec<PathBuf> = (0..5)
            .map(|i| synth_dir().join(format!("f{i}/0000")))
            .collect();
        for real in [
            "node_exporter-fixtures",
            "pcp-sysdev-001-i3-4005u-4cpu",
            "util-linux-tigerlake-linux6.2-8cpu",
            "pcp-denki-bigsystem-2pkg-32cpu",
            "pcp-hpbl920gen8-480cpu",
            "util-linux-arm64-qcom-8cpu",
        ] {
            let p = captures().join(real);
            if p.exists() {
                roots.push(p);
            }
        }
        roots.iter().map(|r| load_tree(r)).collect()
    })
}

fn write_tree(dir: &Path, tree: &[(String, Entry)], ops: &[(usize, FileOp)]) {
    let files: Vec<usize> = (0..tree.len())
        .filter(|&i| matches!(tree[i].1, Entry::File(_)))
        .collect();
    let mut op_of = std::collections::HashMap::new();
    for (k, op) in ops {
        if !files.is_empty() {
            op_of.insert(files[k % files.len()], op.clone());
        }
    }
    for (i, (rel, entry)) in tree.iter().enumerate() {
        let p = dir.join(rel);
        match entry {
            Entry::Dir => {
                let _ = std::fs::create_dir_all(&p);
            }
            Entry::Link(t) => {
                let _ = std::os::unix::fs::symlink(t, &p);
            }
            Entry::File(text) => match op_of.get(&i) {
                None => {
                    let _ = std::fs::write(&p, text);
                }
                Some(FileOp::Text(edits)) => {
                    let _ = std::fs::write(&p, apply(text, edits));
                }
                Some(FileOp::Empty) => {
                    let _ = std::fs::write(&p, "");
                }
                Some(FileOp::Remove) => {}
                Some(FileOp::MakeDir) => {
                    let _ = std::fs::create_dir_all(&p);
                }
                Some(FileOp::LinkLoop) => {
                    let _ = std::os::unix::fs::symlink(p.file_name().unwrap(), &p);
                }
                Some(FileOp::DevZero) => {
                    let _ = std::os::unix::fs::symlink("/dev/zero", &p);
                }
                Some(FileOp::Fifo) => {
                    let _ = std::process::Command::new("mkfifo").arg(&p).status();
                }
            },
        }
    }
}

fn tree_case() -> impl Strategy<Value = (usize, Vec<(usize, FileOp)>)> {
    (
        0..trees().len(),
        proptest::collection::vec((any::<usize>(), file_op()), 1..8),
    )
}

proptest! {
    #![proptest_config(config(48))]

    /// The whole start-up and two samples over a mutated tree: topology,
    /// cpufreq, cpuidle, hwmon, powercap, /proc files, through the sampler
    /// and the delta exactly as `--root` runs them.
    #[test]
    fn machine_and_samples_of_a_mutated_tree((t, ops) in tree_case()) {
        let dir = tempfile::tempdir().unwrap();
        write_tree(dir.path(), &trees()[t], &ops);
        let mut fs = Fs::new(Roots::under(dir.path()));
        fs.set_keep_open(false);
        let m = Machine::read(&mut fs);
        if let Some((f, _)) = &m.base_mhz {
            prop_assert!(f.is_finite() && *f > 0.0);
        }
        if let Some(f) = m.max_mhz {
            prop_assert!(f.is_finite() && f >= 0.0);
        }
        let hw = Captured::load(dir.path()).unwrap_or_default();
        let mut engine = Engine::new(Sampler::new(fs, hw));
        let _ = engine.step();
        if let Some(iv) = engine.step() {
            check_interval(&iv)?;
        }
    }

    /// The readers one by one, on a mutated tree.
    #[test]
    fn readers_of_a_mutated_tree((t, ops) in tree_case()) {
        let dir = tempfile::tempdir().unwrap();
        write_tree(dir.path(), &trees()[t], &ops);
        let mut fs = Fs::new(Roots::under(dir.path()));
        let cpus = topology::online_cpus(&mut fs).unwrap_or_default();
        let _ = topology::read_cpu_sets(&mut fs);
        let _ = topology::read_topology(&mut fs, &cpus[..cpus.len().min(4)]);
        for &cpu in cpus.iter().take(4) {
            if let Ok(states) = cpuidle::read_states(&mut fs, cpu) {
                let _ = cpuidle::read_counters(&mut fs, cpu, &states);
            }
            if let Ok(info) = cpufreq::read_info(&mut fs, cpu) {
                let _ = cpufreq::read_cur_khz_from(&mut fs, &info);
            }
            let _ = hwmon::read_throttle(&mut fs, cpu);
        }
        let _ = cpuidle::read_idle_driver(&mut fs);
        let _ = cpufreq::read_boost(&mut fs);
        let sensors = hwmon::discover_temps(&mut fs);
        let _ = hwmon::read_temps(&mut fs, &sensors);
        for z in powercap::discover_zones(&mut fs) {
            let _ = powercap::read_energy_uj(&mut fs, &z);
        }
        let _ = Captured::load(dir.path());
    }
}

// ---------------------------------------------------------------- the delta

/// The machine the delta properties run on: a 4-CPU laptop with cpuidle,
/// perf hardware counters and packages.
fn laptop() -> &'static Machine {
    static M: OnceLock<Machine> = OnceLock::new();
    M.get_or_init(|| Machine::read(&mut Fs::new(Roots::under(&synth_dir().join("f0/0000")))))
}

/// How one counter moves from one snapshot to the next.
#[derive(Debug, Clone, Copy)]
enum Step {
    Add(u64),
    Same,
    Reset(u64),
    NearWrap,
    Missing,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u64..1 << 40).prop_map(Step::Add),
        1 => Just(Step::Same),
        1 => (0u64..1000).prop_map(Step::Reset),
        1 => Just(Step::NearWrap),
        1 => Just(Step::Missing),
    ]
}

fn next(prev: Option<u64>, s: Step) -> Option<u64> {
    match s {
        Step::Add(d) => Some(prev.unwrap_or(0).wrapping_add(d)),
        Step::Same => prev,
        Step::Reset(v) => Some(v),
        Step::NearWrap => Some(u64::MAX - 5),
        Step::Missing => None,
    }
}

/// One snapshot's changes: the clock step (ns, may go back), which CPUs
/// are online, and a step for each counter of each CPU.
#[derive(Debug, Clone)]
struct Move {
    clock: i64,
    online: Vec<bool>,
    steps: Vec<[Step; 12]>,
}

fn a_move() -> impl Strategy<Value = Move> {
    (
        prop_oneof![
            Just(0i64),
            Just(-90_000_000_000),
            Just(i64::MAX / 2),
            1i64..10_000_000_000
        ],
        proptest::collection::vec(prop_oneof![9 => Just(true), 1 => Just(false)], 4),
        proptest::collection::vec(proptest::array::uniform12(step()), 4),
    )
        .prop_map(|(clock, online, steps)| Move {
            clock,
            online,
            steps,
        })
}

/// Applies a move to the previous snapshot.
fn advance(m: &Machine, prev: &Snapshot, mv: &Move) -> Snapshot {
    let mut s = prev.clone();
    s.time.mono_ns = prev.time.mono_ns.saturating_add_signed(mv.clock);
    s.time.wall_ns = s.time.mono_ns;
    s.online = (0..4u32).filter(|&c| mv.online[c as usize]).collect();
    for cpu in 0..4u32 {
        let st = &mv.steps[cpu as usize];
        let hw = s.hw.get_or_default(cpu);
        hw.tsc = next(hw.tsc, st[0]);
        hw.aperf = next(hw.aperf, st[1]);
        hw.mperf = next(hw.mperf, st[2]);
        let pt = hw.perf_time.unwrap_or((0, 0));
        let e = next(Some(pt.0), st[3]);
        let r = next(Some(pt.1), st[4]);
        hw.perf_time = e.zip(r);
        let c6 = hw.cstates.first().map(|x| x.1);
        hw.cstates = next(c6, st[5]).map(|v| vec![("C6", v)]).unwrap_or_default();
        match next(s.csw.get(&cpu).copied(), st[6]) {
            Some(v) => s.csw.insert(cpu, v),
            None => s.csw.remove(&cpu),
        };
        if let Ok(stat) = &mut s.stat
            && let Some(t) = stat.cpus.get_mut(&cpu)
        {
            t.user = next(Some(t.user), st[7]).unwrap_or(0);
            t.idle = next(Some(t.idle), st[8]).unwrap_or(0);
            t.steal = next(t.steal, st[9]);
        }
        if let Some(f) = s.files.get_mut(&cpu)
            && let Some(idle) = &mut f.idle
        {
            for c in idle.iter_mut() {
                c.time_us = next(Some(c.time_us), st[10]).unwrap_or(0);
                c.usage = next(Some(c.usage), st[11]).unwrap_or(0);
            }
        }
    }
    let _ = m;
    s
}

/// A starting snapshot read from the laptop capture, so that every table
/// (stat, interrupts, cpuidle files, packages) has its real shape.
fn start() -> &'static Snapshot {
    static S: OnceLock<Snapshot> = OnceLock::new();
    S.get_or_init(|| {
        let dir = synth_dir().join("f0/0000");
        let hw = Captured::load(&dir).unwrap();
        let mut fs = Fs::new(Roots::under(&dir));
        fs.set_keep_open(false);
        let mut s = Sampler::new(fs, hw);
        let mut snap = s.sample();
        for cpu in 0..4 {
            snap.hw.get_or_default(cpu);
        }
        snap
    })
}

proptest! {
    #![proptest_config(config(512))]

    /// Random counter sequences with wraps, resets, hotplug, missing
    /// values and clocks that stand still, go back or jump: every figure
    /// is finite and non-negative, a counter that went back gives no rate,
    /// and an interval without time gives no rate at all.
    #[test]
    fn the_delta_of_any_counter_sequence(moves in proptest::collection::vec(a_move(), 1..5)) {
        let m = laptop();
        let mut prev = start().clone();
        for mv in &moves {
            let cur = advance(m, &prev, mv);
            for freq in [None, Some(FreqSource::PerfMsr), Some(FreqSource::DevMsr), Some(FreqSource::Cpufreq), Some(FreqSource::Cpuinfo)] {
                let iv = interval::delta_of(m, freq, &prev, &cur);
                check_interval(&iv)?;
                let no_time = interval::clock_note(prev.time, cur.time).is_some();
                for r in &iv.cpus {
                    if no_time {
                        prop_assert!(r.tsc_mhz.is_none() && r.csw_per_s.is_none() && r.busy_pct.is_none() && r.irq_per_s.is_none(), "rates without an interval: {r:?}");
                    }
                    let tsc = |s: &Snapshot| s.hw.get(&r.cpu).and_then(|h| h.tsc);
                    if let (Some(a), Some(b)) = (tsc(&prev), tsc(&cur))
                        && b < a
                    {
                        prop_assert!(r.tsc_mhz.is_none(), "TSC went back and has a rate");
                    }
                    let csw = |s: &Snapshot| s.csw.get(&r.cpu).copied();
                    if let (Some(a), Some(b)) = (csw(&prev), csw(&cur))
                        && b < a
                    {
                        prop_assert!(r.csw_per_s.is_none(), "csw went back and has a rate");
                    }
                }
            }
            prev = cur;
        }
    }
}

#[test]
fn the_delta_start_has_every_table() {
    let s = start();
    assert!(s.stat.is_ok() && s.interrupts.is_ok() && s.softirqs.is_ok());
    assert!(
        s.files.iter().any(|(_, f)| f.idle.is_some()),
        "cpuidle counters"
    );
    let _ = (CpuMap::<u8>::new(), CpuHw::default(), Stamp::default());
}
