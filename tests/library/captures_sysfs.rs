//! Runs the sysfs/procfs machine readers (topology, cpuidle, cpufreq,
//! hwmon, powercap, facts) over every tree in ../shared/captures that has a
//! `sys/` directory, and checks them against the raw files and against the
//! peer tools' answers in each tree's EXPECTED.txt.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisetop::base::cpulist;
use noisetop::collect::cpufreq::{self, CpuFreqInfo};
use noisetop::collect::cpuidle::{self, IdleCounters, IdleStateInfo};
use noisetop::collect::hwmon::{self, TempScope};
use noisetop::collect::{facts, powercap, topology};
use noisetop::os::fs::{Fs, ReadError, Roots};

/// Every capture tree that has `sys/`; a new one must be added to the tests.
const SYS_TREES: [&str; 16] = [
    "node_exporter-fixtures",
    "pcp-cpufreq-apple-arm64-8cpu",
    "pcp-denki-apple-silicon-macbook",
    "pcp-denki-bigsystem-2pkg-32cpu",
    "pcp-denki-thinkpad-l480",
    "pcp-denki-thinkpad-t460s",
    "pcp-sysdev-001-i3-4005u-4cpu",
    "pcp-sysdev-002-i7-4810mq-8cpu",
    "procfs-fixtures",
    "sosreport-rhcos-hyperv-2cpu",
    "util-linux-arm64-qcom-8cpu",
    "util-linux-dell-e4310-4cpu",
    "util-linux-epyc7451-2s-96cpu",
    "util-linux-nehalem-64cpu",
    "util-linux-riscv64-sg2042-64cpu",
    "util-linux-tigerlake-linux6.2-8cpu",
];

fn captures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("../shared/captures absent: skipped");
        None
    }
}

/// The ways a capture can hold its links: as stored in ../shared/captures,
/// every link a real symbolic link (`tar`, `cp -a`, live sysfs), and every
/// link a plain file holding its target (copies without symlink support).
/// The readers must give the same answers on all three.
fn link_forms(caps: &Path) -> [PathBuf; 3] {
    static FORMS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let top = FORMS.get_or_init(|| {
        let top = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capture-link-forms");
        let _ = std::fs::remove_dir_all(&top);
        for tree in SYS_TREES {
            copy_tree(&caps.join(tree), &top.join("real").join(tree), true);
            copy_tree(&caps.join(tree), &top.join("files").join(tree), false);
        }
        top
    });
    [caps.to_path_buf(), top.join("real"), top.join("files")]
}

/// Copies a tree (hard links where it can), turning every link into a real
/// symbolic link (`real`) or into a link file.
fn copy_tree(from: &Path, to: &Path, real: bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        let target = if kind.is_symlink() {
            Some(std::fs::read_link(&src).unwrap())
        } else if kind.is_file() {
            stored_link_target(&src)
        } else {
            None
        };
        match target {
            Some(t) if real => std::os::unix::fs::symlink(&t, &dst).unwrap(),
            Some(t) => std::fs::write(&dst, t.to_str().unwrap()).unwrap(),
            None if kind.is_dir() => copy_tree(&src, &dst, real),
            None => {
                if std::fs::hard_link(&src, &dst).is_err() {
                    std::fs::copy(&src, &dst).unwrap();
                }
            }
        }
    }
}

/// The target of a file that a capture stored in place of a link: one
/// relative path with a `/`, naming something that exists beside it.
fn stored_link_target(file: &Path) -> Option<PathBuf> {
    if std::fs::metadata(file).ok()?.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let t = text.trim_end_matches(['\n', '\0']);
    let link =
        !t.is_empty() && !t.starts_with('/') && t.contains('/') && !t.contains(char::is_whitespace);
    (link && file.parent()?.join(t).exists()).then(|| PathBuf::from(t))
}

fn open(caps: &Path, tree: &str) -> Fs {
    Fs::new(Roots::under(&caps.join(tree)))
}

fn expected(caps: &Path, tree: &str) -> String {
    std::fs::read_to_string(caps.join(tree).join("EXPECTED.txt")).unwrap()
}

fn list(cpus: &[u32]) -> String {
    cpulist::format(cpus)
}

fn online(fs: &mut Fs) -> Vec<u32> {
    topology::online_cpus(fs).unwrap()
}

/// Returns the `"cpuN" V` lines under one metric of a PCP qa output.
fn pcp_values(text: &str, metric: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines().skip_while(|l| l.trim() != metric).skip(1);
    while let Some(line) = lines.next().filter(|l| l.trim_start().starts_with('"')) {
        let mut parts = line.split_whitespace();
        let inst = parts.next().unwrap().trim_matches('"').to_string();
        out.insert(inst, parts.next().unwrap().to_string());
    }
    out
}

/// Returns the value of a Prometheus line `name{labels} value` with exactly these labels.
fn prom(text: &str, name: &str, labels: &str) -> f64 {
    let key = format!("{name}{{{labels}}} ");
    let line = text
        .lines()
        .find(|l| l.starts_with(&key))
        .unwrap_or_else(|| panic!("{key}"));
    line[key.len()..].parse().unwrap()
}

/// A tree and its six CPU sets as cpulist text.
type SetsRow<'a> = (&'a str, [Option<&'a str>; 6]);

/// One `lscpu --parse --physical` line: CPU, core, socket, node.
type LscpuRow = (u32, Option<u32>, Option<u32>, Option<u32>);

/// Returns a Prometheus value times `scale`, rounded to an integer.
fn prom_int(text: &str, name: &str, labels: &str, scale: f64) -> i64 {
    (prom(text, name, labels) * scale).round() as i64
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn every_tree_with_sys_is_covered() {
    let Some(caps) = captures() else { return };
    let mut found: Vec<String> = std::fs::read_dir(&caps)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("sys").is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    found.sort();
    assert_eq!(found, SYS_TREES);
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpu_sets_of_every_tree() {
    let Some(caps) = captures() else { return };
    // (tree, online, offline, possible, present, isolated, nohz_full), from the files.
    let none = [None; 6];
    let rows: [SetsRow; 16] = [
        // isolated '1,3-5,9' with 4 CPUs: a hand-made composite; offline is empty.
        (
            "node_exporter-fixtures",
            [Some("0-3"), Some(""), None, None, Some("1,3-5,9"), None],
        ),
        ("pcp-cpufreq-apple-arm64-8cpu", none),
        ("pcp-denki-apple-silicon-macbook", none),
        ("pcp-denki-bigsystem-2pkg-32cpu", none),
        ("pcp-denki-thinkpad-l480", none),
        ("pcp-denki-thinkpad-t460s", none),
        (
            "pcp-sysdev-001-i3-4005u-4cpu",
            [
                Some("0-3"),
                Some("4-7"),
                Some("0-7"),
                Some("0-3"),
                None,
                None,
            ],
        ),
        // nohz_full is "  (null)".
        (
            "pcp-sysdev-002-i7-4810mq-8cpu",
            [
                Some("0-7"),
                Some(""),
                Some("0-7"),
                Some("0-7"),
                Some(""),
                Some(""),
            ],
        ),
        (
            "procfs-fixtures",
            [None, Some("2"), None, None, Some("1-7,9"), None],
        ),
        (
            "sosreport-rhcos-hyperv-2cpu",
            [
                Some("0-1"),
                Some(""),
                Some("0-1"),
                Some("0-1"),
                Some(""),
                Some(""),
            ],
        ),
        (
            "util-linux-arm64-qcom-8cpu",
            [
                Some("0-7"),
                Some(""),
                Some("0-7"),
                Some("0-7"),
                Some(""),
                None,
            ],
        ),
        (
            "util-linux-dell-e4310-4cpu",
            [
                Some("0-3"),
                Some("4-7"),
                Some("0-7"),
                Some("0-3"),
                None,
                None,
            ],
        ),
        // nohz_full is 90 spaces then "(null)".
        (
            "util-linux-epyc7451-2s-96cpu",
            [
                Some("0-95"),
                Some(""),
                Some("0-95"),
                Some("0-95"),
                Some(""),
                Some(""),
            ],
        ),
        (
            "util-linux-nehalem-64cpu",
            [
                Some("0-63"),
                Some("64-79"),
                Some("0-79"),
                Some("0-63"),
                None,
                None,
            ],
        ),
        (
            "util-linux-riscv64-sg2042-64cpu",
            [
                Some("0-63"),
                Some(""),
                Some("0-63"),
                Some("0-63"),
                Some(""),
                None,
            ],
        ),
        // nohz_full is an empty line.
        (
            "util-linux-tigerlake-linux6.2-8cpu",
            [
                Some("0-7"),
                Some(""),
                Some("0-7"),
                Some("0-7"),
                Some(""),
                Some(""),
            ],
        ),
    ];
    assert_eq!(rows.map(|r| r.0), SYS_TREES);
    for (tree, want) in rows {
        let s = topology::read_cpu_sets(&mut open(&caps, tree));
        let got = [
            &s.online,
            &s.offline,
            &s.possible,
            &s.present,
            &s.isolated,
            &s.nohz_full,
        ]
        .map(|v| v.as_deref().map(list));
        assert_eq!(got, want.map(|w| w.map(str::to_string)), "{tree}");
    }
    // node_exporter e2e: node_cpu_isolated for cpus 1,3,4,5,9.
    let text = expected(&caps, "node_exporter-fixtures");
    let iso = topology::read_cpu_sets(&mut open(&caps, "node_exporter-fixtures"))
        .isolated
        .unwrap();
    for cpu in &iso {
        let labels = format!("cpu=\"{cpu}\"");
        assert_eq!(prom_int(&text, "node_cpu_isolated", &labels, 1.0), 1);
    }
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("node_cpu_isolated{"))
            .count(),
        iso.len()
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn online_cpus_with_and_without_the_online_file() {
    let Some(caps) = captures() else { return };
    let rows = [
        // No `online` file: cpu0 has online=1, cpu1 has none (so online).
        ("procfs-fixtures", "0-1"),
        // No `online` file, no cpuN/online: every cpuN dir.
        ("pcp-cpufreq-apple-arm64-8cpu", "0-7"),
        ("pcp-denki-bigsystem-2pkg-32cpu", "0-31"),
        ("pcp-denki-thinkpad-l480", "0-3"),
        // The file says 0-3 although cpu2/online is 0 (a PCP QA edit).
        ("pcp-sysdev-001-i3-4005u-4cpu", "0-3"),
        ("util-linux-nehalem-64cpu", "0-63"),
    ];
    for (tree, want) in rows {
        assert_eq!(list(&online(&mut open(&caps, tree))), want, "{tree}");
    }
    let err =
        topology::online_cpus(&mut open(&caps, "pcp-denki-apple-silicon-macbook")).unwrap_err();
    assert!(matches!(err, ReadError::Missing(_)), "{err}");

    // PCP qa/747 hinv.cpu.online: cpu0 has no online file and counts as online.
    let text = expected(&caps, "pcp-sysdev-001-i3-4005u-4cpu");
    let want = pcp_values(&text, "hinv.cpu.online");
    assert_eq!(want.len(), 4);
    let mut fs = open(&caps, "pcp-sysdev-001-i3-4005u-4cpu");
    assert_eq!(topology::cpu_online(&mut fs, 0), None);
    for (inst, v) in want {
        let cpu: u32 = inst.trim_start_matches("cpu").parse().unwrap();
        let on = topology::cpu_online(&mut fs, cpu).unwrap_or(true);
        assert_eq!(u8::from(on).to_string(), v, "{inst}");
    }
}

/// Parses the `lscpu --parse --physical` block: (cpu, core, socket, node), raw ids.
fn lscpu_physical(text: &str) -> Vec<LscpuRow> {
    let blocks: Vec<&str> = text.split("# CPU,Core,Socket,Node").collect();
    assert_eq!(blocks.len(), 3, "--parse and --parse --physical blocks");
    let field = |s: &str| {
        if s.is_empty() || s == "-" {
            None
        } else {
            Some(s.parse().unwrap())
        }
    };
    blocks[2]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), field(f[1]), field(f[2]), field(f[3]))
        })
        .collect()
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn topology_matches_lscpu_physical_for_every_cpu() {
    let Some(caps) = captures() else { return };
    let trees = [
        ("util-linux-epyc7451-2s-96cpu", 96),
        ("util-linux-nehalem-64cpu", 64),
        ("util-linux-riscv64-sg2042-64cpu", 64),
        ("util-linux-arm64-qcom-8cpu", 8),
        ("util-linux-tigerlake-linux6.2-8cpu", 8),
        ("util-linux-dell-e4310-4cpu", 4),
    ];
    for (tree, n) in trees {
        let want = lscpu_physical(&expected(&caps, tree));
        let mut fs = open(&caps, tree);
        let cpus = online(&mut fs);
        let got: Vec<_> = topology::read_topology(&mut fs, &cpus)
            .iter()
            .map(|t| (t.cpu, t.core, t.package, t.node))
            .collect();
        assert_eq!(got.len(), n, "{tree}");
        assert_eq!(got, want, "{tree}");
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn topology_details_from_the_files() {
    let Some(caps) = captures() else { return };
    let topo = |tree: &str| {
        let mut fs = open(&caps, tree);
        let cpus = online(&mut fs);
        topology::read_topology(&mut fs, &cpus)
    };
    // epyc: core_id is not contiguous (cpu3 is core 4); siblings are N,N+48.
    let t = topo("util-linux-epyc7451-2s-96cpu");
    assert_eq!((t[3].core, t[3].siblings.clone()), (Some(4), vec![3, 51]));
    assert_eq!(
        (t[95].package, t[95].node, t[95].siblings.clone()),
        (Some(1), Some(7), vec![47, 95])
    );
    // nehalem: no cpuN/nodeM links; node0/2/3 cpumaps only (no node1).
    let t = topo("util-linux-nehalem-64cpu");
    assert_eq!((t[1].package, t[1].node), (Some(2), Some(2)));
    assert_eq!((t[2].package, t[2].node), (Some(1), Some(0)));
    // riscv: cpu0 has core_id 1; clusters of 4.
    let t = topo("util-linux-riscv64-sg2042-64cpu");
    assert_eq!(
        (t[0].core, t[0].cluster, t[7].core, t[7].cluster),
        (Some(1), Some(0), Some(3), Some(1))
    );
    assert_eq!(t[63].siblings, [63]);
    // qcom: die_id is -1; each cluster is a "package".
    let t = topo("util-linux-arm64-qcom-8cpu");
    assert!(t.iter().all(|c| c.die.is_none() && c.cluster.is_none()));
    assert_eq!(
        t.iter().map(|c| c.package.unwrap()).collect::<Vec<_>>(),
        [0, 0, 0, 1, 1, 1, 1, 2]
    );
    // tigerlake: cluster_id is the L2 id.
    let t = topo("util-linux-tigerlake-linux6.2-8cpu");
    assert_eq!(
        t.iter().map(|c| c.cluster.unwrap()).collect::<Vec<_>>(),
        [0, 2, 4, 6, 0, 2, 4, 6]
    );
    assert!(t.iter().all(|c| c.die == Some(0) && c.core_type.is_none()));
    // sosreport (lscpu: 2 threads per core, 1 core, 1 socket).
    let t = topo("sosreport-rhcos-hyperv-2cpu");
    for c in &t {
        assert_eq!(
            (c.core, c.package, c.siblings.clone(), c.node),
            (Some(0), Some(0), vec![0, 1], Some(0))
        );
    }
    // sysdev-001: node0/cpulist 0-3.
    let t = topo("pcp-sysdev-001-i3-4005u-4cpu");
    let got: Vec<_> = t
        .iter()
        .map(|c| (c.core, c.siblings.clone(), c.node))
        .collect();
    assert_eq!(
        got,
        [
            (Some(0), vec![0, 1], Some(0)),
            (Some(0), vec![0, 1], Some(0)),
            (Some(1), vec![2, 3], Some(0)),
            (Some(1), vec![2, 3], Some(0))
        ]
    );
    // sysdev-002: no topology dir at all; node from the cpuN/node0 link.
    for c in topo("pcp-sysdev-002-i7-4810mq-8cpu") {
        assert_eq!(
            (c.package, c.core, c.siblings.len(), c.node),
            (None, None, 0, Some(0))
        );
    }
    // node_exporter: (core, package) as keyed in node_cpu_core_throttles_total.
    let t = topo("node_exporter-fixtures");
    let got: Vec<_> = t
        .iter()
        .map(|c| (c.core.unwrap(), c.package.unwrap()))
        .collect();
    assert_eq!(got, [(0, 0), (1, 0), (0, 1), (1, 1)]);
    // procfs (system_cpu_test.go): cpu0 core 0 siblings 0,4; cpu1 package 0 siblings 1,5.
    let t = topo("procfs-fixtures");
    assert_eq!((t[0].core, t[0].siblings.clone()), (Some(0), vec![0, 4]));
    assert_eq!((t[1].package, t[1].siblings.clone()), (Some(0), vec![1, 5]));
    // denki bigsystem: 16 CPUs per package, interleaved as captured.
    let t = topo("pcp-denki-bigsystem-2pkg-32cpu");
    let pkg1: Vec<u32> = t
        .iter()
        .filter(|c| c.package == Some(1))
        .map(|c| c.cpu)
        .collect();
    assert_eq!(list(&pkg1), "8-16,25-31");
    assert_eq!(t.iter().filter(|c| c.package == Some(0)).count(), 16);
    // Apple arm64 tree: cpuN dirs hold only cpufreq.
    for c in topo("pcp-cpufreq-apple-arm64-8cpu") {
        assert_eq!(
            (c.package, c.core, c.siblings.len(), c.node),
            (None, None, 0, None)
        );
    }
}

fn states_of(fs: &mut Fs, cpu: u32) -> Vec<IdleStateInfo> {
    cpuidle::read_states(fs, cpu).unwrap()
}

fn names(states: &[IdleStateInfo]) -> Vec<&str> {
    states.iter().map(|s| s.name.as_str()).collect()
}

fn latencies(states: &[IdleStateInfo]) -> Vec<Option<u64>> {
    states.iter().map(|s| s.latency_us).collect()
}

fn residencies(states: &[IdleStateInfo]) -> Vec<Option<u64>> {
    states.iter().map(|s| s.residency_us).collect()
}

fn time_usage(fs: &mut Fs, cpu: u32) -> Vec<(u64, u64)> {
    let states = states_of(fs, cpu);
    cpuidle::read_counters(fs, cpu, &states)
        .unwrap()
        .iter()
        .map(|c| (c.time_us, c.usage))
        .collect()
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_haswell_intel_idle_nine_states() {
    let Some(caps) = captures() else { return };
    let mut fs = open(&caps, "pcp-sysdev-001-i3-4005u-4cpu");
    let d = cpuidle::read_idle_driver(&mut fs);
    assert_eq!(
        (d.driver.as_deref(), d.governor.as_deref()),
        (Some("intel_idle"), Some("menu"))
    );
    for cpu in 0..4 {
        let s = states_of(&mut fs, cpu);
        assert_eq!(
            names(&s),
            [
                "POLL", "C1-HSW", "C1E-HSW", "C3-HSW", "C6-HSW", "C7s-HSW", "C8-HSW", "C9-HSW",
                "C10-HSW"
            ]
        );
        let lat = [0, 2, 10, 33, 133, 166, 300, 600, 2600].map(Some);
        let res = [0, 2, 20, 100, 400, 500, 900, 1800, 7700].map(Some);
        assert_eq!(
            (latencies(&s), residencies(&s)),
            (lat.to_vec(), res.to_vec())
        );
        assert_eq!(s[4].desc, "MWAIT 0x20");
        assert!(
            s.iter()
                .all(|s| s.disabled == Some(false) && !s.has_above_below && !s.has_rejected)
        );
    }
    let cpu0 = [
        (1_663_613, 751),
        (19_206_845, 112_133),
        (38_377_471, 124_846),
        (162_014_378, 274_007),
        (47_650_963, 58_714),
        (126_343_992, 134_812),
        (220_450_374, 81_557),
        (832_732_677, 188_547),
        (285_020_582_514, 1_402_385),
    ];
    assert_eq!(time_usage(&mut fs, 0), cpu0);
    let cpu3 = [
        (11_370_932, 258),
        (9_183_979, 45_934),
        (21_598_600, 60_420),
        (97_599_890, 166_432),
        (34_759_750, 46_785),
        (118_869_699, 136_355),
        (194_241_175, 98_422),
        (474_105_362, 116_441),
        (285_333_941_914, 1_010_997),
    ];
    assert_eq!(time_usage(&mut fs, 3), cpu3);
    let states = states_of(&mut fs, 3);
    assert!(
        cpuidle::read_counters(&mut fs, 3, &states)
            .unwrap()
            .iter()
            .all(|c| c.above.is_none())
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_epyc_acpi_idle_with_null_desc() {
    let Some(caps) = captures() else { return };
    let mut fs = open(&caps, "util-linux-epyc7451-2s-96cpu");
    let d = cpuidle::read_idle_driver(&mut fs);
    assert_eq!(
        (d.driver.as_deref(), d.governor.as_deref()),
        (Some("acpi_idle"), Some("menu"))
    );
    for cpu in 0..96 {
        let s = states_of(&mut fs, cpu);
        assert_eq!(names(&s), ["POLL", "C1", "C2"], "cpu{cpu}");
        let desc: Vec<&str> = s.iter().map(|s| s.desc.as_str()).collect();
        assert_eq!(desc, ["CPUIDLE CORE POLL IDLE", "ACPI HLT", "<null>"]);
        assert_eq!(latencies(&s), [Some(0), Some(0), Some(100)]);
        assert_eq!(residencies(&s), [Some(0), Some(0), Some(200)]);
    }
    let cpu0 = [
        (0, 0),
        (278_659_843, 1_402_060),
        (649_512_255_968, 867_552_191),
    ];
    assert_eq!(time_usage(&mut fs, 0), cpu0);
    let cpu3 = [
        (0, 0),
        (1_410_700_471, 4_820_503),
        (672_427_038_465, 896_396_665),
    ];
    assert_eq!(time_usage(&mut fs, 3), cpu3);
    let cpu95 = [
        (0, 0),
        (55_752_735, 115_301),
        (674_541_633_167, 1_413_219_163),
    ];
    assert_eq!(time_usage(&mut fs, 95), cpu95);
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_tigerlake_above_below_rejected() {
    let Some(caps) = captures() else { return };
    let mut fs = open(&caps, "util-linux-tigerlake-linux6.2-8cpu");
    let d = cpuidle::read_idle_driver(&mut fs);
    assert_eq!(
        (d.driver.as_deref(), d.governor.as_deref()),
        (Some("intel_idle"), Some("menu"))
    );
    for cpu in 0..8 {
        let s = states_of(&mut fs, cpu);
        assert_eq!(names(&s), ["POLL", "C1_ACPI", "C2_ACPI", "C3_ACPI"]);
        assert_eq!(latencies(&s), [0, 1, 253, 1048].map(Some));
        assert_eq!(residencies(&s), [0, 1, 759, 3144].map(Some));
        assert!(s.iter().all(|s| s.has_above_below && s.has_rejected));
    }
    let c = |t, u, a, b| IdleCounters {
        time_us: t,
        usage: u,
        above: Some(a),
        below: Some(b),
    };
    let states = states_of(&mut fs, 0);
    assert_eq!(
        cpuidle::read_counters(&mut fs, 0, &states).unwrap(),
        [
            c(721_582, 29_996, 0, 24_606),
            c(492_834_086, 1_250_007, 12_917, 161_901),
            c(3_300_474_808, 1_792_228, 87_292, 3_771),
            c(1_728_483_433, 278_681, 86_076, 0),
        ]
    );
    assert_eq!(
        cpuidle::read_counters(&mut fs, 7, &states).unwrap(),
        [
            c(656_636, 25_963, 0, 21_212),
            c(600_026_169, 1_533_571, 11_802, 213_726),
            c(3_023_783_783, 1_669_836, 87_140, 3_302),
            c(1_822_658_376, 232_051, 76_716, 0),
        ]
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_old_kernels_without_residency_or_disable() {
    let Some(caps) = captures() else { return };
    let mut fs = open(&caps, "util-linux-nehalem-64cpu");
    for cpu in 0..64 {
        let s = states_of(&mut fs, cpu);
        assert_eq!(
            names(&s),
            ["C0", "NHM-C1", "NHM-C3"],
            "state0 is named C0 here"
        );
        assert_eq!(latencies(&s), [0, 3, 20].map(Some));
        assert_eq!(residencies(&s), [None; 3]);
        assert!(s.iter().all(|s| s.disabled.is_none()));
    }
    let cpu63 = [(3_830, 4), (288_686, 383), (17_910_706_461, 102_779)];
    assert_eq!(time_usage(&mut fs, 63), cpu63);

    let mut fs = open(&caps, "util-linux-dell-e4310-4cpu");
    for cpu in 0..4 {
        let s = states_of(&mut fs, cpu);
        assert_eq!(names(&s), ["POLL", "NHM-C1", "NHM-C3", "NHM-C6"]);
        assert_eq!(latencies(&s), [0, 3, 20, 200].map(Some));
        assert_eq!(residencies(&s), [None; 4]);
        assert!(s.iter().all(|s| s.disabled.is_none()));
    }
    let cpu0 = [
        (652_770, 110),
        (3_606_268, 30_611),
        (103_032_151, 113_399),
        (2_908_438_463, 236_134),
    ];
    assert_eq!(time_usage(&mut fs, 0), cpu0);
    let cpu3 = [
        (595_963, 35),
        (2_155_603, 10_172),
        (67_628_279, 27_555),
        (2_998_049_475, 207_711),
    ];
    assert_eq!(time_usage(&mut fs, 3), cpu3);
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_arm64_psci_per_cpu_driver() {
    let Some(caps) = captures() else { return };
    let mut fs = open(&caps, "util-linux-arm64-qcom-8cpu");
    let d = cpuidle::read_idle_driver(&mut fs);
    assert_eq!(
        (d.driver.as_deref(), d.governor.as_deref()),
        (Some("psci_idle"), Some("qcom-cpu-lpm"))
    );
    let deep = [
        "silver-c4",
        "silver-c4",
        "silver-c4",
        "gold-c4",
        "gold-c4",
        "gold-c4",
        "gold-c4",
        "gold-plus-c4",
    ];
    let lat_res = [
        (1300, 6700),
        (1300, 6700),
        (1300, 6700),
        (1900, 8136),
        (1900, 8136),
        (1900, 8136),
        (1900, 8136),
        (1850, 7480),
    ];
    for cpu in 0..8u32 {
        let i = cpu as usize;
        assert_eq!(
            cpuidle::read_cpu_idle_driver(&mut fs, cpu).as_deref(),
            Some("psci_idle")
        );
        let s = states_of(&mut fs, cpu);
        assert_eq!(names(&s), ["WFI", deep[i]]);
        assert_eq!(
            (s[0].desc.as_str(), s[1].desc.as_str()),
            ("ARM WFI", "rail-pc")
        );
        assert_eq!(
            (s[1].latency_us, s[1].residency_us),
            (Some(lat_res[i].0), Some(lat_res[i].1))
        );
    }
    let c = |t, u, a, b, _rejected: u64| IdleCounters {
        time_us: t,
        usage: u,
        above: Some(a),
        below: Some(b),
    };
    let states = states_of(&mut fs, 7);
    assert_eq!(
        cpuidle::read_counters(&mut fs, 7, &states).unwrap(),
        [
            c(11_238_518_531, 8_238_879, 0, 340_523, 0),
            c(211_047_254_491, 622_867, 170_813, 0, 5_756)
        ]
    );
    let states = states_of(&mut fs, 0);
    assert_eq!(
        cpuidle::read_counters(&mut fs, 0, &states).unwrap(),
        [
            c(104_496_448_097, 130_478_702, 0, 1_698_152, 0),
            c(5_087_556_655, 557_934, 254_426, 0, 3_719)
        ]
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuidle_absent_or_no_driver() {
    let Some(caps) = captures() else { return };
    // Hyper-V guest: current_driver is "none" and there is no cpuN/cpuidle.
    let mut fs = open(&caps, "sosreport-rhcos-hyperv-2cpu");
    let d = cpuidle::read_idle_driver(&mut fs);
    assert_eq!(
        (d.driver.as_deref(), d.governor.as_deref()),
        (Some("none"), Some("menu"))
    );
    assert!(matches!(
        cpuidle::read_states(&mut fs, 0),
        Err(ReadError::Missing(_))
    ));
    for tree in [
        "node_exporter-fixtures",
        "pcp-cpufreq-apple-arm64-8cpu",
        "pcp-denki-bigsystem-2pkg-32cpu",
        "pcp-sysdev-002-i7-4810mq-8cpu",
        "procfs-fixtures",
        "util-linux-riscv64-sg2042-64cpu",
    ] {
        let mut fs = open(&caps, tree);
        assert_eq!(
            cpuidle::read_idle_driver(&mut fs),
            cpuidle::IdleDriver::default(),
            "{tree}"
        );
        assert!(
            matches!(cpuidle::read_states(&mut fs, 0), Err(ReadError::Missing(_))),
            "{tree}"
        );
    }
}

fn infos(fs: &mut Fs) -> Vec<CpuFreqInfo> {
    let cpus = online(fs);
    cpus.iter()
        .map(|&c| cpufreq::read_info(fs, c).unwrap())
        .collect()
}

/// lscpu's "CPU(s) scaling MHz", "CPU max MHz" and "CPU min MHz" over a group of CPUs.
fn lscpu_freq(infos: &[&CpuFreqInfo]) -> (String, String, String) {
    let both: Vec<_> = infos
        .iter()
        .filter_map(|i| Some((i.cur_khz?, i.cpuinfo_max_khz?)))
        .filter(|&(c, m)| c > 0 && m > 0)
        .collect();
    let cur: u64 = both.iter().map(|b| b.0).sum();
    let max: u64 = both.iter().map(|b| b.1).sum();
    let hi = infos
        .iter()
        .filter_map(|i| i.cpuinfo_max_khz)
        .max()
        .unwrap();
    let lo = infos
        .iter()
        .filter_map(|i| i.cpuinfo_min_khz)
        .min()
        .unwrap();
    (
        format!("{:.0}%", cur as f64 / max as f64 * 100.0),
        format!("{:.4}", hi as f64 / 1000.0),
        format!("{:.4}", lo as f64 / 1000.0),
    )
}

fn lscpu_lines(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(key))
        .map(|v| v.trim().to_string())
        .collect()
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_matches_lscpu_scaling_and_limits() {
    let Some(caps) = captures() else { return };
    let rows: [(&str, &[&[u32]]); 5] = [
        ("util-linux-epyc7451-2s-96cpu", &[&[]]),
        ("util-linux-nehalem-64cpu", &[&[]]),
        ("util-linux-dell-e4310-4cpu", &[&[]]),
        ("util-linux-tigerlake-linux6.2-8cpu", &[&[]]),
        // One lscpu section per core type: A510, A710, A715, X3.
        (
            "util-linux-arm64-qcom-8cpu",
            &[&[0, 1, 2], &[3, 4], &[5, 6], &[7]],
        ),
    ];
    for (tree, groups) in rows {
        let text = expected(&caps, tree);
        let scaling = lscpu_lines(&text, "CPU(s) scaling MHz:");
        let max = lscpu_lines(&text, "CPU max MHz:");
        let min = lscpu_lines(&text, "CPU min MHz:");
        assert_eq!(scaling.len(), groups.len(), "{tree}");
        let all = infos(&mut open(&caps, tree));
        for (g, cpus) in groups.iter().enumerate() {
            let members: Vec<&CpuFreqInfo> = all
                .iter()
                .filter(|i| cpus.is_empty() || cpus.contains(&i.cpu))
                .collect();
            let want = (scaling[g].clone(), max[g].clone(), min[g].clone());
            assert_eq!(lscpu_freq(&members), want, "{tree} group {g}");
        }
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_epyc_acpi_cpufreq_above_max_with_boost() {
    let Some(caps) = captures() else { return };
    for form in link_forms(&caps) {
        cpufreq_epyc_acpi_cpufreq_above_max_with_boost_in(&form);
    }
}

fn cpufreq_epyc_acpi_cpufreq_above_max_with_boost_in(caps: &Path) {
    let mut fs = open(caps, "util-linux-epyc7451-2s-96cpu");
    let all = infos(&mut fs);
    assert_eq!(all.len(), 96);
    for i in &all {
        assert!(
            i.cur_khz.unwrap() > i.cpuinfo_max_khz.unwrap(),
            "cpu{} boosts above max",
            i.cpu
        );
        assert_eq!(i.dir, format!("devices/system/cpu/cpufreq/policy{}", i.cpu));
        assert_eq!(
            (i.driver.as_deref(), i.governor.as_deref()),
            (Some("acpi-cpufreq"), Some("performance"))
        );
    }
    assert_eq!(
        (all[0].cur_khz, all[0].cpuinfo_max_khz),
        (Some(2_893_313), Some(2_300_000))
    );
    let b = cpufreq::read_boost(&mut fs);
    assert_eq!(
        (b.cpufreq_boost, b.intel_no_turbo, b.turbo_allowed()),
        (Some(true), None, Some(true))
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_sysdev_002_policy_links_match_pcp() {
    let Some(caps) = captures() else { return };
    for form in link_forms(&caps) {
        cpufreq_sysdev_002_policy_links_match_pcp_in(&form);
    }
}

fn cpufreq_sysdev_002_policy_links_match_pcp_in(caps: &Path) {
    let tree = "pcp-sysdev-002-i7-4810mq-8cpu";
    let text = expected(caps, tree);
    let current = pcp_values(&text, "hinv.cpu.frequency_scaling.current");
    let count = pcp_values(&text, "hinv.cpu.frequency_scaling.count");
    let max = pcp_values(&text, "hinv.cpu.frequency_scaling.max");
    let min = pcp_values(&text, "hinv.cpu.frequency_scaling.min");
    assert_eq!(current.len(), 8);
    let mut fs = open(caps, tree);
    for i in infos(&mut fs) {
        let key = format!("cpu{}", i.cpu);
        let cur = i.cur_khz.unwrap();
        // PCP prints the MHz value as a 32-bit float (2830.9041 for 2830904 kHz).
        let mhz: f64 = current[&key].parse().unwrap();
        assert!(
            (cur as f64 / 1000.0 - mhz).abs() < 0.001,
            "{key}: {cur} vs {mhz}"
        );
        assert_eq!((cur / 1000).to_string(), count[&key]);
        assert_eq!((i.cpuinfo_max_khz.unwrap() / 1000).to_string(), max[&key]);
        assert_eq!((i.cpuinfo_min_khz.unwrap() / 1000).to_string(), min[&key]);
        assert_eq!(i.dir, format!("devices/system/cpu/cpufreq/policy{}", i.cpu));
        assert_eq!(
            (i.driver.as_deref(), i.governor.as_deref()),
            (Some("intel_cpufreq"), Some("schedutil"))
        );
        assert_eq!(
            cpufreq::read_cur_khz(&mut fs, i.cpu).unwrap(),
            cur,
            "through the link file"
        );
        assert_eq!(cpufreq::read_cur_khz_from(&mut fs, &i).unwrap(), cur);
    }
    let b = cpufreq::read_boost(&mut fs);
    assert_eq!(
        (b.intel_no_turbo, b.intel_pstate_status.as_deref()),
        (Some(false), Some("passive"))
    );
    assert_eq!(b.turbo_allowed(), Some(true));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_sysdev_001_cpuinfo_cur_freq_only() {
    let Some(caps) = captures() else { return };
    let tree = "pcp-sysdev-001-i3-4005u-4cpu";
    let text = expected(&caps, tree);
    let max = pcp_values(&text, "hinv.cpu.frequency_scaling.max");
    let min = pcp_values(&text, "hinv.cpu.frequency_scaling.min");
    assert_eq!(max.len(), 4);
    let mut fs = open(&caps, tree);
    let all = infos(&mut fs);
    for i in &all {
        let key = format!("cpu{}", i.cpu);
        assert_eq!((i.cpuinfo_max_khz.unwrap() / 1000).to_string(), max[&key]);
        assert_eq!((i.cpuinfo_min_khz.unwrap() / 1000).to_string(), min[&key]);
        assert!(
            i.cur_path
                .as_deref()
                .unwrap()
                .ends_with("/cpuinfo_cur_freq")
        );
        assert_eq!(
            cpufreq::read_cur_khz(&mut fs, i.cpu).unwrap(),
            i.cur_khz.unwrap()
        );
    }
    assert_eq!(
        (all[0].cur_khz, all[1].cur_khz),
        (Some(876_164), Some(1_298_308))
    );
    assert_eq!(
        (all[0].driver.as_deref(), all[0].governor.as_deref()),
        (Some("intel_pstate"), Some("powersave"))
    );
    let b = cpufreq::read_boost(&mut fs);
    assert_eq!(
        (b.intel_no_turbo, b.intel_pstate_status.clone()),
        (Some(true), None)
    );
    assert_eq!(b.turbo_allowed(), Some(false));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_node_exporter_and_apple_match_their_peers() {
    let Some(caps) = captures() else { return };
    let text = expected(&caps, "node_exporter-fixtures");
    let mut fs = open(&caps, "node_exporter-fixtures");
    for i in infos(&mut fs) {
        let label = format!("cpu=\"{}\"", i.cpu);
        let khz = |name| u64::try_from(prom_int(&text, name, &label, 1e-3)).unwrap();
        assert_eq!(i.cur_khz, Some(khz("node_cpu_scaling_frequency_hertz")));
        assert_eq!(
            i.scaling_max_khz,
            Some(khz("node_cpu_scaling_frequency_max_hertz"))
        );
        assert_eq!(
            i.scaling_min_khz,
            Some(khz("node_cpu_scaling_frequency_min_hertz"))
        );
        let gov = format!("cpu=\"{}\",governor=\"powersave\"", i.cpu);
        assert_eq!(prom_int(&text, "node_cpu_scaling_governor", &gov, 1.0), 1);
        assert_eq!(i.governor.as_deref(), Some("powersave"));
    }
    // PCP qa/1963: hinv.cpu.clock = scaling_cur_freq / 1000; no other cpufreq file.
    let text = expected(&caps, "pcp-cpufreq-apple-arm64-8cpu");
    let mut fs = open(&caps, "pcp-cpufreq-apple-arm64-8cpu");
    let all = infos(&mut fs);
    let clock: Vec<String> = text
        .lines()
        .filter(|l| l.contains("inst [N or \"cpu"))
        .map(|l| l.rsplit(' ').next().unwrap().to_string())
        .collect();
    let got: Vec<String> = all
        .iter()
        .map(|i| (i.cur_khz.unwrap() / 1000).to_string())
        .collect();
    assert_eq!(got, clock);
    assert!(
        all.iter()
            .all(|i| i.driver.is_none() && i.cpuinfo_max_khz.is_none())
    );
    assert_eq!(cpufreq::read_boost(&mut fs), cpufreq::Boost::default());
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpufreq_layouts_policies_and_absence() {
    let Some(caps) = captures() else { return };
    for form in link_forms(&caps) {
        cpufreq_layouts_policies_and_absence_in(&form);
    }
}

fn cpufreq_layouts_policies_and_absence_in(caps: &Path) {
    // procfs: cpu0/cpufreq links to policy0; cpu1/cpufreq is a real dir without scaling_cur_freq.
    let all = infos(&mut open(caps, "procfs-fixtures"));
    assert_eq!(all[0].dir, "devices/system/cpu/cpufreq/policy0");
    assert_eq!(
        (
            all[0].cur_khz,
            all[0].cpuinfo_min_khz,
            all[0].cpuinfo_max_khz
        ),
        (Some(1_219_917), Some(800_000), Some(2_400_000))
    );
    assert_eq!(all[1].dir, "devices/system/cpu/cpu1/cpufreq");
    assert!(
        all[1]
            .cur_path
            .as_deref()
            .unwrap()
            .ends_with("cpu1/cpufreq/cpuinfo_cur_freq")
    );
    assert_eq!(
        (
            all[1].cur_khz,
            all[1].cpuinfo_min_khz,
            all[1].cpuinfo_max_khz
        ),
        (Some(1_200_195), Some(1_200_000), Some(3_300_000))
    );
    assert!(
        all.iter()
            .all(|i| i.driver.as_deref() == Some("intel_pstate"))
    );
    // qcom: three policies shared by their CPUs.
    let mut fs = open(caps, "util-linux-arm64-qcom-8cpu");
    let all = infos(&mut fs);
    let policy: Vec<&str> = all
        .iter()
        .map(|i| i.dir.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        policy,
        [
            "policy0", "policy0", "policy0", "policy3", "policy3", "policy3", "policy3", "policy7"
        ]
    );
    assert!(
        all.iter()
            .all(|i| i.driver.as_deref() == Some("qcom-cpufreq-hw")
                && i.governor.as_deref() == Some("walt"))
    );
    assert_eq!(cpufreq::read_boost(&mut fs).cpufreq_boost, Some(true));
    // tigerlake: intel_pstate active with EPP and base_frequency.
    let mut fs = open(caps, "util-linux-tigerlake-linux6.2-8cpu");
    let all = infos(&mut fs);
    assert!(
        all.iter()
            .all(|i| i.epp.as_deref() == Some("balance_power") && i.base_khz == Some(1_200_000))
    );
    let b = cpufreq::read_boost(&mut fs);
    assert_eq!(
        (b.intel_no_turbo, b.intel_pstate_status.as_deref()),
        (Some(false), Some("active"))
    );
    // nehalem and dell: real cpufreq dirs, acpi-cpufreq ondemand.
    for tree in ["util-linux-nehalem-64cpu", "util-linux-dell-e4310-4cpu"] {
        let all = infos(&mut open(caps, tree));
        assert!(
            all.iter()
                .all(|i| i.dir.ends_with(&format!("cpu{}/cpufreq", i.cpu))),
            "{tree}"
        );
        assert!(
            all.iter()
                .all(|i| i.governor.as_deref() == Some("ondemand")),
            "{tree}"
        );
    }
    // No cpufreq at all.
    for tree in [
        "sosreport-rhcos-hyperv-2cpu",
        "util-linux-riscv64-sg2042-64cpu",
        "pcp-denki-bigsystem-2pkg-32cpu",
    ] {
        let mut fs = open(caps, tree);
        assert!(
            matches!(cpufreq::read_info(&mut fs, 0), Err(ReadError::Missing(_))),
            "{tree}"
        );
        assert!(cpufreq::read_cur_khz(&mut fs, 0).is_err(), "{tree}");
    }
    // The per-interval read gives what discovery saw, everywhere.
    for tree in SYS_TREES {
        let mut fs = open(caps, tree);
        let Ok(cpus) = topology::online_cpus(&mut fs) else {
            continue;
        };
        for cpu in cpus {
            if let Ok(info) = cpufreq::read_info(&mut fs, cpu) {
                assert_eq!(
                    cpufreq::read_cur_khz_from(&mut fs, &info).ok(),
                    info.cur_khz,
                    "{tree} cpu{cpu}"
                );
            }
        }
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn thermal_throttle_counts_match_peers() {
    let Some(caps) = captures() else { return };
    for tree in [
        "pcp-sysdev-001-i3-4005u-4cpu",
        "pcp-sysdev-002-i7-4810mq-8cpu",
    ] {
        let text = expected(&caps, tree);
        let core = pcp_values(&text, "hinv.cpu.thermal_throttle.core.count");
        let pkg = pcp_values(&text, "hinv.cpu.thermal_throttle.package.count");
        let mut fs = open(&caps, tree);
        let cpus = online(&mut fs);
        assert_eq!(core.len(), cpus.len(), "{tree}");
        for cpu in cpus {
            let t = hwmon::read_throttle(&mut fs, cpu);
            let key = format!("cpu{cpu}");
            assert_eq!(t.core.unwrap().to_string(), core[&key], "{tree} {key}");
            assert_eq!(t.package.unwrap().to_string(), pkg[&key], "{tree} {key}");
        }
    }
    // node_exporter keys the counts by topology core/package.
    let text = expected(&caps, "node_exporter-fixtures");
    let mut fs = open(&caps, "node_exporter-fixtures");
    for t in topology::read_topology(&mut fs, &[0, 1, 2, 3]) {
        let (core, pkg) = (t.core.unwrap(), t.package.unwrap());
        let th = hwmon::read_throttle(&mut fs, t.cpu);
        let labels = format!("core=\"{core}\",package=\"{pkg}\"");
        let want = prom_int(&text, "node_cpu_core_throttles_total", &labels, 1.0);
        assert_eq!(th.core.unwrap(), u64::try_from(want).unwrap());
        let labels = format!("package=\"{pkg}\"");
        let want = prom_int(&text, "node_cpu_package_throttles_total", &labels, 1.0);
        assert_eq!(th.package.unwrap(), u64::try_from(want).unwrap());
    }
    // procfs system_cpu_test.go.
    let mut fs = open(&caps, "procfs-fixtures");
    assert_eq!(hwmon::read_throttle(&mut fs, 0).package, Some(34_818));
    assert_eq!(hwmon::read_throttle(&mut fs, 1).core, Some(523));
    // tigerlake from the files; nehalem has no package count; epyc has no thermal_throttle.
    let mut fs = open(&caps, "util-linux-tigerlake-linux6.2-8cpu");
    let got: Vec<_> = (0..8).map(|c| hwmon::read_throttle(&mut fs, c)).collect();
    assert_eq!(
        got.iter().map(|t| t.core.unwrap()).collect::<Vec<_>>(),
        [49, 0, 99, 8, 49, 0, 99, 8]
    );
    assert!(got.iter().all(|t| t.package == Some(156)));
    let mut fs = open(&caps, "util-linux-nehalem-64cpu");
    assert!((0..64).all(|c| hwmon::read_throttle(&mut fs, c)
        == hwmon::ThrottleCounts {
            core: Some(0),
            package: None
        }));
    let mut fs = open(&caps, "util-linux-epyc7451-2s-96cpu");
    assert_eq!(
        hwmon::read_throttle(&mut fs, 0),
        hwmon::ThrottleCounts::default()
    );
}

/// Reads each zone in joules under the name pmdadenki gives it:
/// `<top index>-<name>` when several package zones exist, else the name;
/// psys is not reported.
fn denki_joules(fs: &mut Fs, zones: &[powercap::RaplZone]) -> BTreeMap<String, u64> {
    let packages = zones
        .iter()
        .filter(|z| z.name.starts_with("package-"))
        .count();
    zones
        .iter()
        .filter(|z| z.name != "psys")
        .map(|z| {
            let top = powercap::zone_index(&z.id).unwrap()[0];
            let name = if packages > 1 {
                format!("{top}-{}", z.name)
            } else {
                z.name.clone()
            };
            (name, powercap::read_energy_uj(fs, z).unwrap() / 1_000_000)
        })
        .collect()
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn rapl_denki_joules_match_pmdadenki() {
    let Some(caps) = captures() else { return };
    for tree in [
        "pcp-denki-bigsystem-2pkg-32cpu",
        "pcp-denki-thinkpad-l480",
        "pcp-denki-thinkpad-t460s",
        "pcp-denki-apple-silicon-macbook",
    ] {
        let text = expected(&caps, tree);
        // Only the denki.rapl.sysfs block: `inst [N or "NAME"] value V`.
        let block = text.rsplit("\ndenki.rapl.sysfs\n").next().unwrap();
        let block = block.split("denki.rapl.msr").next().unwrap();
        let want: BTreeMap<String, u64> = block
            .lines()
            .filter_map(|l| {
                let name = l.split('"').nth(1)?;
                Some((name.to_string(), l.rsplit(' ').next()?.parse().ok()?))
            })
            .collect();
        let mut fs = open(&caps, tree);
        let zones = powercap::discover_zones(&mut fs);
        assert_eq!(denki_joules(&mut fs, &zones), want, "{tree}");
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn rapl_zone_layouts() {
    let Some(caps) = captures() else { return };
    for form in link_forms(&caps) {
        rapl_zone_layouts_in(&form);
    }
}

fn rapl_zone_layouts_in(caps: &Path) {
    let ids = |zones: &[powercap::RaplZone]| zones.iter().map(|z| z.id.clone()).collect::<Vec<_>>();
    // bigsystem: nested dirs plus flat link files; intel-rapl:0 is package-1.
    let z = powercap::discover_zones(&mut open(caps, "pcp-denki-bigsystem-2pkg-32cpu"));
    assert_eq!(
        ids(&z),
        [
            "intel-rapl:0",
            "intel-rapl:0:0",
            "intel-rapl:1",
            "intel-rapl:1:0"
        ]
    );
    let pk: Vec<_> = z.iter().map(|z| (z.name.as_str(), z.package)).collect();
    assert_eq!(
        pk,
        [
            ("package-1", Some(1)),
            ("core", Some(1)),
            ("package-0", Some(0)),
            ("core", Some(0))
        ]
    );
    assert_eq!(z[0].path, "class/powercap/intel-rapl/intel-rapl:0");
    // ThinkPad: psys is its own top zone with no package.
    let z = powercap::discover_zones(&mut open(caps, "pcp-denki-thinkpad-l480"));
    let names: Vec<_> = z.iter().map(|z| (z.name.as_str(), z.package)).collect();
    assert_eq!(
        names,
        [
            ("package-0", Some(0)),
            ("core", Some(0)),
            ("uncore", Some(0)),
            ("dram", Some(0)),
            ("psys", None)
        ]
    );
    // node_exporter e2e: node_rapl_*_joules_total = energy_uj / 1e6.
    let text = expected(caps, "node_exporter-fixtures");
    let mut fs = open(caps, "node_exporter-fixtures");
    let z = powercap::discover_zones(&mut fs);
    assert_eq!(ids(&z), ["intel-rapl:0", "intel-rapl:0:0"]);
    for (zone, metric) in z.iter().zip([
        "node_rapl_package_joules_total",
        "node_rapl_core_joules_total",
    ]) {
        let labels = format!(
            "index=\"0\",path=\"collector/fixtures/sys/class/powercap/{}\"",
            zone.id
        );
        let uj = powercap::read_energy_uj(&mut fs, zone).unwrap();
        assert_eq!(
            uj,
            u64::try_from(prom_int(&text, metric, &labels, 1e6)).unwrap()
        );
        assert_eq!(zone.max_energy_range_uj, Some(262_143_328_850));
    }
    // procfs class_powercap_test.go: 3 zones, zone[2] is the hex index 10.
    let mut fs = open(caps, "procfs-fixtures");
    let z = powercap::discover_zones(&mut fs);
    assert_eq!(ids(&z), ["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:a"]);
    assert_eq!(
        powercap::read_energy_uj(&mut fs, &z[0]).unwrap(),
        240_422_366_267
    );
    assert_eq!(powercap::zone_index(&z[2].id), Some(vec![10]));
    assert_eq!((z[2].name.as_str(), z[2].package), ("package-10", Some(10)));
    // No powercap class.
    for tree in [
        "util-linux-epyc7451-2s-96cpu",
        "pcp-denki-apple-silicon-macbook",
    ] {
        assert_eq!(
            powercap::discover_zones(&mut open(caps, tree)),
            [],
            "{tree}"
        );
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn hwmon_temps_match_node_exporter() {
    let Some(caps) = captures() else { return };
    let text = expected(&caps, "node_exporter-fixtures");
    let mut fs = open(&caps, "node_exporter-fixtures");
    let sensors = hwmon::discover_temps(&mut fs);
    // node_exporter names chips after their device path; ours keep hwmonN.
    let dir_of = [
        ("platform_coretemp_0", "hwmon0"),
        ("platform_coretemp_1", "hwmon1"),
        ("hwmon4", "hwmon4"),
        ("ieee80211_phy0_mt7996_phy0_0", "hwmon8"),
        ("ieee80211_phy0_mt7996_phy0_1", "hwmon9"),
        ("ieee80211_phy0_mt7996_phy0_2", "hwmon10"),
    ];
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("node_hwmon_temp_celsius{"))
        .collect();
    assert_eq!((lines.len(), sensors.len()), (15, 15));
    for line in lines {
        let chip = line.split('"').nth(1).unwrap();
        let index: u32 = line
            .split("sensor=\"temp")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let celsius: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        let millidegrees = (celsius * 1000.0).round() as i64;
        let dir = dir_of.iter().find(|d| d.0 == chip).unwrap().1;
        let s = sensors
            .iter()
            .find(|s| s.dir == dir && s.index == index)
            .unwrap();
        assert_eq!(
            hwmon::read_temp(&mut fs, s).unwrap(),
            millidegrees,
            "{line}"
        );
    }
    let chips: Vec<_> = sensors.iter().map(|s| s.chip.as_str()).collect();
    assert_eq!(chips[..10], ["coretemp"; 10]);
    assert_eq!(
        chips[10..],
        [
            "hwmon4",
            "hwmon4",
            "mt7996_phy0_0",
            "mt7996_phy0_1",
            "mt7996_phy0_2"
        ]
    );
    assert_eq!(sensors[1].label.as_deref(), Some("Core 0"));
    assert_eq!(sensors[10].label.as_deref(), Some("foosensor"));
    assert_eq!(sensors[12].label, None);
    let all = hwmon::read_temps(&mut fs, &sensors);
    assert!(all.iter().all(Result::is_ok));
    assert_eq!(all[14].as_ref().unwrap().millidegrees, 57_000);

    // Both coretemp chips of this composite say "Physical id 0": package 1 has none.
    let topo = topology::read_topology(&mut fs, &[0, 1, 2, 3]);
    let pick = |t: &topology::CpuTopology| hwmon::core_temp_for(&sensors, t.package, t.core);
    let t0 = pick(&topo[0]).unwrap();
    assert_eq!(
        (t0.sensor.dir.as_str(), t0.sensor.index, t0.scope),
        ("hwmon0", 2, TempScope::Core)
    );
    let t1 = pick(&topo[1]).unwrap();
    assert_eq!(
        (t1.sensor.label.as_deref(), t1.scope),
        (Some("Core 1"), TempScope::Core)
    );
    assert_eq!(pick(&topo[2]), None);
    assert_eq!(
        hwmon::package_temp_for(&sensors, Some(0))
            .unwrap()
            .label
            .as_deref(),
        Some("Physical id 0")
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn hwmon_absent_in_other_trees() {
    let Some(caps) = captures() else { return };
    for tree in SYS_TREES.iter().filter(|t| **t != "node_exporter-fixtures") {
        assert_eq!(hwmon::discover_temps(&mut open(&caps, tree)), [], "{tree}");
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn kernel_facts_and_cmdline() {
    let Some(caps) = captures() else { return };
    // sosreport: ASLR 2, two console= arguments, SMT on; a Hyper-V guest
    // whose DMI was not captured, so the hypervisor is unknown here.
    let f = facts::read_kernel_facts(&mut open(&caps, "sosreport-rhcos-hyperv-2cpu"));
    assert_eq!(f.aslr, Some(2));
    assert_eq!(
        (f.smt_control.as_deref(), f.smt_active),
        (Some("on"), Some(true))
    );
    assert_eq!(f.hypervisor, None);
    let cmd = f.cmdline.unwrap();
    assert_eq!(
        facts::cmdline_param(&cmd, "console"),
        Some("ttyS0,115200n8")
    );
    assert_eq!(facts::cmdline_param(&cmd, "rw"), Some(""));
    assert_eq!(
        facts::cmdline_param(&cmd, "root="),
        Some("UUID=9213770d-ddd3-40f9-aeba-d6e8c6fec4c8")
    );
    assert_eq!(facts::cmdline_param(&cmd, "isolcpus"), None);
    // procfs cmdline_test.go: the whitespace-split tokens.
    let f = facts::read_kernel_facts(&mut open(&caps, "procfs-fixtures"));
    let cmd = f.cmdline.unwrap();
    let want = [
        "BOOT_IMAGE=/vmlinuz-5.11.0-22-generic",
        "root=UUID=456a0345-450d-4f7b-b7c9-43e3241d99ad",
        "ro",
        "quiet",
        "splash",
        "vt.handoff=7",
    ];
    assert_eq!(cmd.split_whitespace().collect::<Vec<_>>(), want);
    assert_eq!(facts::cmdline_param(&cmd, "vt.handoff"), Some("7"));
    assert_eq!(facts::cmdline_param(&cmd, "splash"), Some(""));
    assert_eq!(f.aslr, None);
    // smt/control values.
    let smt = |tree| {
        let f = facts::read_kernel_facts(&mut open(&caps, tree));
        (f.smt_control, f.smt_active)
    };
    assert_eq!(
        smt("util-linux-arm64-qcom-8cpu"),
        (Some("notimplemented".into()), Some(false))
    );
    assert_eq!(
        smt("util-linux-riscv64-sg2042-64cpu"),
        (Some("notimplemented".into()), Some(false))
    );
    assert_eq!(
        smt("util-linux-tigerlake-linux6.2-8cpu"),
        (Some("on".into()), Some(true))
    );
    assert_eq!(smt("util-linux-nehalem-64cpu"), (None, None));
}
