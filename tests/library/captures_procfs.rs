//! Runs the procfs parsers (`/proc/interrupts`, `/proc/softirqs`,
//! `/proc/stat`, `/proc/cpuinfo`) over the real captures in
//! `../shared/captures` and checks them against the peer tools' answers in
//! each tree's `EXPECTED.txt` (PCP, `node_exporter`, prometheus/procfs, lscpu).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisetop::collect::cpuinfo::{self, CpuInfo};
use noisetop::collect::interrupts::{IrqKind, IrqTable, parse_interrupts, parse_interrupts_into};
use noisetop::collect::softirqs::parse_softirqs;
use noisetop::collect::stat::{self, CpuTimes, Stat};

fn captures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("../shared/captures absent: skipped");
        None
    }
}

/// A capture file as text; `None` when the tree does not have it.
fn read(tree: &Path, rel: &str) -> Option<String> {
    let bytes = std::fs::read(tree.join(rel)).ok()?;
    // EXPECTED.txt of node_exporter holds a battery name with invalid UTF-8.
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn must_read(tree: &Path, rel: &str) -> String {
    read(tree, rel).unwrap_or_else(|| panic!("{} lacks {rel}", tree.display()))
}

fn trees(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn interrupts_of(tree: &Path) -> IrqTable {
    parse_interrupts(&must_read(tree, "proc/interrupts")).unwrap()
}

fn softirqs_of(tree: &Path) -> IrqTable {
    parse_softirqs(&must_read(tree, "proc/softirqs")).unwrap()
}

fn stat_of(tree: &Path) -> Stat {
    stat::parse(&must_read(tree, "proc/stat")).unwrap()
}

fn cpuinfo_of(tree: &Path) -> CpuInfo {
    cpuinfo::parse(&must_read(tree, "proc/cpuinfo"))
}

fn cpu_id(name: &str) -> u32 {
    name.strip_prefix("cpu")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a cpuN instance: {name:?}"))
}

/// A Prometheus sample value that is a whole number, as an integer.
fn exact(value: f64) -> Option<u64> {
    (value.fract() == 0.0 && value >= 0.0).then_some(value as u64)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn every_procfs_capture_parses() {
    let Some(root) = captures() else { return };
    let mut seen = BTreeMap::<&str, usize>::new();
    for tree in trees(&root) {
        let name = tree.display().to_string();
        if let Some(text) = read(&tree, "proc/interrupts") {
            let t = parse_interrupts(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!t.cpus.is_empty() && !t.rows.is_empty(), "{name}");
            assert!(
                t.rows.iter().all(|r| r.counts.len() <= t.cpus.len()),
                "{name}"
            );
            for &cpu in &t.cpus {
                assert!(t.cpu_total(cpu).is_some(), "{name} cpu{cpu}");
            }
            *seen.entry("interrupts").or_default() += 1;
        }
        if let Some(text) = read(&tree, "proc/softirqs") {
            let t = parse_softirqs(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            // Every softirq row has a value for every CPU.
            assert!(
                t.rows.iter().all(|r| r.counts.len() == t.cpus.len()),
                "{name}"
            );
            assert!(t.rows.iter().any(|r| r.label == "TIMER"), "{name}");
            *seen.entry("softirqs").or_default() += 1;
        }
        let stat = read(&tree, "proc/stat").map(|text| {
            let s = stat::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(s.total.is_some() && !s.cpus.is_empty(), "{name}");
            assert!(
                s.ctxt.is_some() && s.intr_total.is_some() && s.btime.is_some(),
                "{name}"
            );
            assert_eq!(s.softirq_vectors.as_ref().map(Vec::len), Some(10), "{name}");
            assert!(stat::parse_intr_counts(&text).is_ok(), "{name}");
            *seen.entry("stat").or_default() += 1;
            s
        });
        let info = read(&tree, "proc/cpuinfo").map(|text| {
            let c = cpuinfo::parse(&text);
            assert!(!c.processors.is_empty(), "{name}");
            assert!(c.vendor.is_some(), "{name}");
            *seen.entry("cpuinfo").or_default() += 1;
            c
        });
        if let (Some(s), Some(c)) = (stat, info) {
            // Both files list the online CPUs.
            assert_eq!(s.cpus.keys().collect::<Vec<_>>(), c.processors, "{name}");
        }
    }
    // Counted with ls: the loop really visited every capture of each file.
    let want = [
        ("cpuinfo", 13),
        ("interrupts", 9),
        ("softirqs", 6),
        ("stat", 7),
    ];
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), want);
}

// ---------------------------------------------------------------- PCP

/// One value printed by a PCP QA test: metric, instance name, value.
#[derive(Debug)]
struct PcpValue {
    metric: String,
    inst: String,
    /// As printed: an integer for counters, a float for clocks in MHz.
    value: String,
}

impl PcpValue {
    fn int(&self) -> u64 {
        self.value.parse().unwrap_or_else(|_| {
            panic!(
                "{} {}: not an integer: {}",
                self.metric, self.inst, self.value
            )
        })
    }
}

/// Reads every value line of a PCP `qa/*.out` dump, in its three layouts:
/// `pm*InDom: ... iname=<X> ... value: V` (886), `inst [N or "X"] value V`
/// (857), `"X" V` and `value V` (747).
fn pcp_values(text: &str) -> Vec<PcpValue> {
    let mut out = Vec::new();
    let mut metric = String::new();
    for line in text.lines() {
        if line.starts_with("kernel.") || line.starts_with("hinv.") {
            metric = line.trim().trim_end_matches(':').to_string();
            continue;
        }
        let t = line.trim();
        let parsed = if let Some(rest) = t.strip_prefix("pm*InDom:") {
            let inst = between(rest, '<', '>');
            let value = rest.rsplit_once("value:").map(|(_, v)| v.trim());
            inst.zip(value)
        } else if let Some(rest) = t.strip_prefix("inst [") {
            let inst = between(rest, '"', '"');
            let value = rest.rsplit_once("] value ").map(|(_, v)| v.trim());
            inst.zip(value)
        } else if t.starts_with('"') {
            let inst = between(t, '"', '"');
            let value = t.rsplit_once('"').map(|(_, v)| v.trim());
            inst.zip(value)
        } else {
            t.strip_prefix("value ").map(|v| ("", v.trim()))
        };
        if let Some((inst, value)) = parsed {
            let value = value
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}"));
            out.push(PcpValue {
                metric: metric.clone(),
                inst: inst.to_string(),
                value,
            });
        }
    }
    out
}

fn between(s: &str, open: char, close: char) -> Option<&str> {
    let start = s.find(open)? + open.len_utf8();
    let len = s[start..].find(close)?;
    Some(&s[start..start + len])
}

/// `ROW::cpuN` -> (row label, cpu id).
fn row_cpu(inst: &str) -> (&str, u32) {
    let (row, cpu) = inst.split_once("::").unwrap();
    (row, cpu_id(cpu))
}

fn table_cell(t: &IrqTable, row: &str, cpu: u32) -> Option<u64> {
    t.cell(t.row_index(row)?, cpu)
}

/// Checks PCP's per-CPU interrupt and softirq metrics; returns how many
/// values were compared, per metric.
fn check_pcp_tables(tree: &Path, values: &[PcpValue]) -> BTreeMap<String, usize> {
    let irq = read(tree, "proc/interrupts").map(|t| parse_interrupts(&t).unwrap());
    let sirq = read(tree, "proc/softirqs").map(|t| parse_softirqs(&t).unwrap());
    let mut checked = BTreeMap::new();
    for v in values {
        let got = match v.metric.as_str() {
            "kernel.percpu.intr" => irq.as_ref().unwrap().cpu_total(cpu_id(&v.inst)),
            "kernel.percpu.sirq" => sirq.as_ref().unwrap().cpu_total(cpu_id(&v.inst)),
            "kernel.percpu.interrupts" => {
                let (row, cpu) = row_cpu(&v.inst);
                table_cell(irq.as_ref().unwrap(), row, cpu)
            }
            "kernel.percpu.softirqs" => {
                let (row, cpu) = row_cpu(&v.inst);
                table_cell(sirq.as_ref().unwrap(), row, cpu)
            }
            _ => continue,
        };
        assert_eq!(
            got,
            Some(v.int()),
            "{} {} {}",
            tree.display(),
            v.metric,
            v.inst
        );
        *checked.entry(v.metric.clone()).or_default() += 1;
    }
    checked
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_percpu_interrupts_and_softirqs() {
    let Some(root) = captures() else { return };
    // Value lines per metric, counted in each EXPECTED.txt with grep.
    let cases: [(&str, &[(&str, usize)]); 5] = [
        (
            "pcp-1152cpu-x86_64",
            &[
                ("kernel.percpu.interrupts", 11),
                ("kernel.percpu.intr", 11),
                ("kernel.percpu.softirqs", 11),
            ],
        ),
        (
            "pcp-16cpu-s390x",
            &[("kernel.percpu.interrupts", 11), ("kernel.percpu.intr", 11)],
        ),
        (
            "pcp-2cpu-s390x",
            &[("kernel.percpu.interrupts", 4), ("kernel.percpu.intr", 2)],
        ),
        (
            "pcp-1cpu-i686",
            &[
                ("kernel.percpu.interrupts", 11 + 31),
                ("kernel.percpu.intr", 1 + 1),
                ("kernel.percpu.sirq", 1),
                ("kernel.percpu.softirqs", 10 + 10),
            ],
        ),
        (
            "pcp-8cpu-x86_64-laptop",
            &[
                ("kernel.percpu.interrupts", 11 + 8 * 36),
                ("kernel.percpu.intr", 8 + 8),
                ("kernel.percpu.sirq", 8),
                ("kernel.percpu.softirqs", 11 + 8 * 10),
            ],
        ),
    ];
    for (name, want) in cases {
        let tree = root.join(name);
        let values = pcp_values(&must_read(&tree, "EXPECTED.txt"));
        let checked = check_pcp_tables(&tree, &values);
        let want: BTreeMap<String, usize> = want.iter().map(|&(m, n)| (m.to_string(), n)).collect();
        assert_eq!(checked, want, "{name}");
    }
}

/// qa/857 dumps every instance: the set of `ROW::cpuN` it prints must be
/// exactly our cells, minus the single-value ERR/MIS rows PCP leaves out.
#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_full_dump_covers_every_cell() {
    let Some(root) = captures() else { return };
    for name in ["pcp-8cpu-x86_64-laptop", "pcp-1cpu-i686"] {
        let tree = root.join(name);
        let values = pcp_values(&must_read(&tree, "EXPECTED.txt"));
        let insts = |metric: &str| -> BTreeSet<String> {
            values
                .iter()
                .filter(|v| v.metric == metric)
                .map(|v| v.inst.clone())
                .collect()
        };
        let cells = |t: &IrqTable, skip: &[&str]| -> BTreeSet<String> {
            t.rows
                .iter()
                .filter(|r| !skip.contains(&r.label.as_str()))
                .flat_map(|r| {
                    r.counts
                        .iter()
                        .zip(&t.cpus)
                        .map(|(_, c)| format!("{}::cpu{c}", r.label))
                })
                .collect()
        };
        let irq = interrupts_of(&tree);
        let sirq = softirqs_of(&tree);
        assert_eq!(
            insts("kernel.percpu.interrupts"),
            cells(&irq, &["ERR", "MIS"]),
            "{name}"
        );
        assert_eq!(insts("kernel.percpu.softirqs"), cells(&sirq, &[]), "{name}");
        let cpus: BTreeSet<String> = irq.cpus.iter().map(|c| format!("cpu{c}")).collect();
        assert_eq!(insts("kernel.percpu.intr"), cpus, "{name}");
        assert_eq!(insts("kernel.percpu.sirq"), cpus, "{name}");
        // The rows PCP skips do exist, with one value each.
        assert_eq!(irq.row("ERR").unwrap().counts, vec![0]);
        assert_eq!(irq.row("MIS").unwrap().counts, vec![0]);
    }
}

/// PCP's kernel.{all,percpu,pernode}.cpu.* in milliseconds (ticks x 10).
fn pcp_cpu_ms(t: &CpuTimes, metric: &str) -> u64 {
    let ticks = match metric {
        "user" => t.user,
        "nice" => t.nice,
        "sys" => t.system,
        "idle" => t.idle,
        "wait.total" => t.iowait.unwrap(),
        "irq.hard" => t.irq.unwrap(),
        "irq.soft" => t.softirq.unwrap(),
        "intr" => t.irq.unwrap() + t.softirq.unwrap(),
        "steal" => t.steal.unwrap(),
        "guest" => t.guest.unwrap(),
        "guest_nice" => t.guest_nice.unwrap(),
        "vuser" => t.user - t.guest.unwrap(),
        "vnice" => t.nice - t.guest_nice.unwrap(),
        _ => panic!("unmapped PCP cpu metric {metric}"),
    };
    ticks * 10
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_sysdev_cpu_times() {
    let Some(root) = captures() else { return };
    for (name, ncpu) in [
        ("pcp-sysdev-001-i3-4005u-4cpu", 4),
        ("pcp-sysdev-002-i7-4810mq-8cpu", 8),
    ] {
        let tree = root.join(name);
        let s = stat_of(&tree);
        assert_eq!(s.cpus.len(), ncpu);
        let total = s.total.unwrap();
        let mut checked = 0;
        for v in pcp_values(&must_read(&tree, "EXPECTED.txt")) {
            let got = if let Some(m) = v.metric.strip_prefix("kernel.all.cpu.") {
                pcp_cpu_ms(&total, m)
            } else if let Some(m) = v.metric.strip_prefix("kernel.percpu.cpu.") {
                pcp_cpu_ms(&s.cpus[&cpu_id(&v.inst)], m)
            } else if let Some(m) = v.metric.strip_prefix("kernel.pernode.cpu.") {
                // One node holding every CPU: the sum of the per-CPU lines.
                assert_eq!(v.inst, "node0");
                s.cpus.values().map(|t| pcp_cpu_ms(t, m)).sum()
            } else {
                continue;
            };
            assert_eq!(got, v.int(), "{name} {} {}", v.metric, v.inst);
            checked += 1;
        }
        // 13 metrics x (1 aggregate + N CPUs + 1 node).
        assert_eq!(checked, 13 * (ncpu + 2), "{name}");
    }
    // The maintainers' QA edit: cpu0 steal/guest/guest_nice = 1 2 3.
    let s = stat_of(&root.join("pcp-sysdev-001-i3-4005u-4cpu"));
    let c0 = s.cpus[&0];
    assert_eq!(
        (c0.steal, c0.guest, c0.guest_nice),
        (Some(1), Some(2), Some(3))
    );
    // sysdev-002: an intr total above 2^32.
    assert_eq!(
        stat_of(&root.join("pcp-sysdev-002-i7-4810mq-8cpu")).intr_total,
        Some(7_458_781_179)
    );
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_1152_cpus() {
    let Some(root) = captures() else { return };
    let tree = root.join("pcp-1152cpu-x86_64");
    let t = interrupts_of(&tree);
    assert_eq!(t.cpus, (0..1152).collect::<Vec<u32>>());
    // SOURCES.md: 1056 rows, 1034 numbered.
    assert_eq!(t.rows.len(), 1056);
    assert_eq!(
        t.rows.iter().filter(|r| r.kind == IrqKind::Device).count(),
        1034
    );
    let named: Vec<&str> = t.rows.iter().skip(1034).map(|r| r.label.as_str()).collect();
    let want =
        "NMI LOC SPU PMI IWI RTR RES CAL TLB TRM THR DFR MCE MCP HYP HRE HVS ERR MIS PIN NPI PIW";
    assert_eq!(named, want.split(' ').collect::<Vec<_>>());
    // Sampled by PCP qa/886 (EXPECTED.txt): per-CPU sums and cells.
    assert_eq!(t.cpu_total(0), Some(14_375_370));
    assert_eq!(t.cpu_total(1035), Some(1_485_470));
    assert_eq!(t.cpu_total(1151), Some(1_245_475));
    assert_eq!(table_cell(&t, "0", 0), Some(844));
    assert_eq!(table_cell(&t, "PIW", 1151), Some(0));
    // Rows wider than any header-bound buffer: every numbered row is full.
    assert!(t.rows[..1034].iter().all(|r| r.counts.len() == 1152));
    let pme = t
        .rows
        .iter()
        .find(|r| r.desc.ends_with("PCIe PME"))
        .unwrap();
    assert_eq!(pme.kind, IrqKind::Device);
    // Refilling a table that held another machine's file gives the same result.
    let mut reused = interrupts_of(&root.join("pcp-8cpu-x86_64-laptop"));
    parse_interrupts_into(&must_read(&tree, "proc/interrupts"), &mut reused).unwrap();
    assert!(reused == t);

    let s = softirqs_of(&tree);
    assert_eq!(s.cpus.len(), 1152);
    assert_eq!(s.rows.len(), 10);
    assert_eq!(table_cell(&s, "TIMER", 1151), Some(28403));
    assert_eq!(table_cell(&s, "SCHED", 1151), Some(9257));
    assert_eq!(table_cell(&s, "RCU", 1151), Some(2706));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_s390x_layouts() {
    let Some(root) = captures() else { return };
    let t = interrupts_of(&root.join("pcp-16cpu-s390x"));
    assert_eq!(t.cpus.len(), 16);
    assert_eq!(
        t.rows[..3]
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>(),
        ["EXT", "I/O", "AIO"]
    );
    assert_eq!(t.row("I/O").unwrap().counts[..3], [675, 559, 764]);
    let clk = t.row("CLK").unwrap();
    assert_eq!(
        (clk.kind, clk.desc.as_str()),
        (IrqKind::LocalTimer, "[EXT] Clock Comparator")
    );
    assert_eq!(
        t.row("3").unwrap().desc,
        "PCI-MSI mlx5_async@pci:0002:00:00.0"
    );
    assert_eq!(t.cpu_total(0), Some(62206));

    let t = interrupts_of(&root.join("pcp-2cpu-s390x"));
    assert_eq!(t.rows.len(), 2);
    assert!(
        t.rows
            .iter()
            .all(|r| r.desc.is_empty() && r.counts.len() == 2)
    );
    assert_eq!(t.cpu_total(0), Some(38892));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn pcp_hpbl920_480_cpu_stat() {
    let Some(root) = captures() else { return };
    let tree = root.join("pcp-hpbl920gen8-480cpu");
    let s = stat_of(&tree);
    assert_eq!(
        s.cpus.keys().collect::<Vec<_>>(),
        (0..480).collect::<Vec<u32>>()
    );
    // 9 numbers per line: no guest_nice column on this kernel.
    let line = |user, nice, system, idle, iowait, irq, softirq| CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait: Some(iowait),
        irq: Some(irq),
        softirq: Some(softirq),
        steal: Some(0),
        guest: Some(0),
        guest_nice: None,
    };
    // proc/stat lines 1, 2 and 481: "cpu  17330 3269 120465 869208946 2311 1 1144 0 0",
    // "cpu0 516 27 21355 1784436 37 1 25 0 0", "cpu479 0 0 9 1807845 0 0 1 0 0".
    assert_eq!(
        s.total,
        Some(line(17330, 3269, 120_465, 869_208_946, 2311, 1, 1144))
    );
    assert_eq!(s.cpus[&0], line(516, 27, 21355, 1_784_436, 37, 1, 25));
    assert_eq!(s.cpus[&479], line(0, 0, 9, 1_807_845, 0, 0, 1));
    assert_eq!(s.intr_total, Some(112_101_525));
    assert_eq!(s.ctxt, Some(18_908_765));
    assert_eq!(s.softirq_total, Some(279_372_541));
    let info = cpuinfo_of(&tree);
    assert_eq!(info.processors.len(), 480);
    assert_eq!(
        info.model_name.as_deref(),
        Some("Intel(R) Xeon(R) CPU E7-2890 v2 @ 2.80GHz")
    );
    assert_eq!(
        (info.family, info.model, info.stepping),
        (Some(6), Some(62), Some(7))
    );
}

// ------------------------------------------------------- node_exporter

/// One Prometheus sample: metric name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the sample lines of a Prometheus text exposition.
fn prom_samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| l.starts_with("node_"))
        .map(|line| {
            let (head, value) = line.rsplit_once(' ').unwrap();
            let value: f64 = value.parse().unwrap();
            let Some((name, labels)) = head.split_once('{') else {
                return (head.to_string(), BTreeMap::new(), value);
            };
            (
                name.to_string(),
                prom_labels(labels.strip_suffix('}').unwrap()),
                value,
            )
        })
        .collect()
}

/// `a="x",b="y, z"` -> map; values may hold commas and spaces.
fn prom_labels(mut s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    while let Some((key, rest)) = s.split_once("=\"") {
        let end = rest.find('"').unwrap();
        out.insert(key.to_string(), rest[..end].to_string());
        s = rest[end + 1..].trim_start_matches(',');
    }
    out
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn node_exporter_fixtures() {
    let Some(root) = captures() else { return };
    let tree = root.join("node_exporter-fixtures");
    let irq = interrupts_of(&tree);
    let sirq = softirqs_of(&tree);
    let s = stat_of(&tree);
    let info = cpuinfo_of(&tree);
    let vectors = s.softirq_vectors.clone().unwrap();
    let order = [
        "hi",
        "timer",
        "net_tx",
        "net_rx",
        "block",
        "block_iopoll",
        "tasklet",
        "sched",
        "hrtimer",
        "rcu",
    ];
    let mut checked = BTreeMap::<String, usize>::new();
    for (name, labels, value) in prom_samples(&must_read(&tree, "EXPECTED.txt")) {
        let label = |k: &str| labels[k].as_str();
        let cpu = || label("cpu").parse::<u32>().unwrap();
        let ok = match name.as_str() {
            "node_interrupts_total" => {
                let row = irq.row(label("type")).unwrap();
                // node_exporter splits the description into chip (info) and devices.
                let desc = match label("devices") {
                    "" => label("info").to_string(),
                    devices => format!("{} {devices}", label("info")),
                };
                row.desc == desc
                    && irq.cell(irq.row_index(&row.label).unwrap(), cpu()) == exact(value)
            }
            "node_softirqs_functions_total" => {
                table_cell(&sirq, label("type"), cpu()) == exact(value)
            }
            "node_softirqs_total" => {
                let i = order.iter().position(|v| *v == label("vector")).unwrap();
                Some(vectors[i]) == exact(value)
            }
            "node_cpu_seconds_total" => {
                let t = &s.cpus[&cpu()];
                let ticks = match label("mode") {
                    "user" => t.user,
                    "nice" => t.nice,
                    "system" => t.system,
                    "idle" => t.idle,
                    "iowait" => t.iowait.unwrap(),
                    "irq" => t.irq.unwrap(),
                    "softirq" => t.softirq.unwrap(),
                    "steal" => t.steal.unwrap(),
                    m => panic!("mode {m}"),
                };
                // USER_HZ = 100; user is raw, guest not subtracted.
                close(ticks as f64 / 100.0, value)
            }
            "node_cpu_guest_seconds_total" => {
                let t = &s.cpus[&cpu()];
                let ticks = if label("mode") == "user" {
                    t.guest
                } else {
                    t.guest_nice
                };
                close(ticks.unwrap() as f64 / 100.0, value)
            }
            "node_cpu_frequency_hertz" => close(info.mhz[&cpu()] * 1e6, value),
            "node_intr_total" => s.intr_total == exact(value),
            "node_context_switches_total" => s.ctxt == exact(value),
            "node_boot_time_seconds" => s.btime == exact(value),
            "node_forks_total" => s.processes == exact(value),
            "node_procs_running" => s.procs_running == exact(value),
            "node_procs_blocked" => s.procs_blocked == exact(value),
            _ => continue,
        };
        assert!(ok, "{name} {labels:?} {value}");
        *checked.entry(name).or_default() += 1;
    }
    let want = [
        ("node_boot_time_seconds", 1),
        ("node_context_switches_total", 1),
        ("node_cpu_frequency_hertz", 8),
        ("node_cpu_guest_seconds_total", 16),
        ("node_cpu_seconds_total", 64),
        ("node_forks_total", 1),
        // 4 CPUs x 28 rows: every row but the single-value ERR and MIS.
        ("node_interrupts_total", 4 * (irq.rows.len() - 2)),
        ("node_intr_total", 1),
        ("node_procs_blocked", 1),
        ("node_procs_running", 1),
        ("node_softirqs_functions_total", 2 * 10),
        ("node_softirqs_total", 10),
    ];
    assert_eq!(irq.rows.len(), 30);
    let want: BTreeMap<String, usize> = want.iter().map(|&(m, n)| (m.to_string(), n)).collect();
    assert_eq!(checked, want);
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn node_exporter_aarch64_interrupts() {
    use IrqKind::{FunctionCall, IrqWork, OtherIpi, Reschedule};
    let Some(root) = captures() else { return };
    let t = interrupts_of(&root.join("node_exporter-aarch64-graviton-8cpu"));
    assert_eq!(t.cpus, (0..8).collect::<Vec<u32>>());
    // Peer assertion: the glued `IPI0:2768808080 ...` row is parsed, with 8 values.
    let ipi0 = t.row("IPI0").unwrap();
    assert_eq!(
        ipi0.counts,
        [
            2_768_808_080,
            2_844_211_768,
            2_878_602_432,
            2_730_576_120,
            2_723_524_623,
            3_349_096_412,
            2_717_389_879,
            2_154_252_810
        ]
    );
    assert_eq!(
        (ipi0.kind, ipi0.desc.as_str()),
        (IrqKind::Reschedule, "Rescheduling interrupts")
    );
    let kinds: Vec<IrqKind> = (0..=6)
        .map(|n| t.row(&format!("IPI{n}")).unwrap().kind)
        .collect();
    assert_eq!(
        kinds,
        [
            Reschedule,
            FunctionCall,
            OtherIpi,
            OtherIpi,
            OtherIpi,
            IrqWork,
            OtherIpi
        ]
    );
    assert_eq!(
        t.row("IPI3").unwrap().desc,
        "CPU stop (for crash dump) interrupts"
    );
    // The tick: GICv3 PPI 27, above 2^31 on cpu5.
    let timer = t.row("10").unwrap();
    assert_eq!(
        (timer.kind, timer.desc.as_str()),
        (IrqKind::LocalTimer, "GICv3 27 Level arch_timer")
    );
    assert_eq!(table_cell(&t, "10", 5), Some(3_641_875_466));
    assert_eq!(
        t.row("57").unwrap().desc,
        "ITS-MSI 81920 Edge ena-mgmnt@pci:0000:00:05.0"
    );
    assert_eq!(t.row("Err").unwrap().counts, [0]);
    // The trailing whitespace-only line adds no row: Err is last.
    assert_eq!(t.rows.last().unwrap().label, "Err");
}

// ------------------------------------------------------ prometheus/procfs

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn procfs_fixtures() {
    let Some(root) = captures() else { return };
    let tree = root.join("procfs-fixtures");
    // EXPECTED.txt "## /proc/stat".
    let text = must_read(&tree, "proc/stat");
    let s = stat::parse(&text).unwrap();
    assert_eq!(s.total.unwrap().user, 301_854);
    assert_eq!(s.cpus[&7].softirq, Some(31));
    assert_eq!(s.intr_total, Some(73_777_505));
    assert_eq!(stat::parse_intr_counts(&text).unwrap()[8], 1);
    assert_eq!(s.ctxt, Some(38_014_093));
    assert_eq!(s.btime, Some(1_418_183_276));
    assert_eq!(s.processes, Some(26442));
    assert_eq!(s.procs_running, Some(2));
    assert_eq!(s.procs_blocked, Some(1));
    assert_eq!(s.softirq_total, Some(5_057_579));
    assert_eq!(s.softirq_vectors.unwrap()[9], 508_444);

    // "## /proc/softirqs": [row][cpu index].
    let t = softirqs_of(&tree);
    let want = [
        ("HI", 0, 3),
        ("TIMER", 1, 247_490),
        ("NET_TX", 0, 2419),
        ("NET_RX", 1, 28694),
        ("BLOCK", 1, 262_755),
        ("IRQ_POLL", 0, 0),
        ("TASKLET", 0, 209),
        ("SCHED", 0, 2_278_692),
        ("HRTIMER", 0, 1281),
        ("RCU", 1, 532_783),
    ];
    for (row, col, value) in want {
        assert_eq!(t.row(row).unwrap().counts[col], value, "{row}[{col}]");
    }

    // "## /proc/interrupts": 47 rows, the blank line between MIS and PIN ignored.
    let t = interrupts_of(&tree);
    assert_eq!(t.rows.len(), 47);
    let row = |l: &str| t.row(l).unwrap();
    assert_eq!(row("0").desc, "IO-APIC 2-edge timer");
    assert_eq!(row("0").counts, [49, 0, 0, 0]);
    assert_eq!(row("PIW").desc, "Posted-interrupt wakeup event");
    assert_eq!(row("PIW").counts, [0, 0, 0, 0]);
    assert_eq!(row("LOC").desc, "Local timer interrupts");
    assert_eq!(row("LOC").counts, [10196, 7429, 8542, 8229]);
    assert_eq!(row("ERR").desc, "");
    assert_eq!(row("ERR").counts, [0]);
    assert_eq!(row("29").desc, "PCI-MSI 512000-edge ahci[0000:00:1f.2]");
    let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
    let mis = labels.iter().position(|l| *l == "MIS").unwrap();
    assert_eq!(labels[mis + 1], "PIN");
}

// ------------------------------------------------------------- cpuinfo

/// The first section of an lscpu listing: `Key:   value` -> value.
fn lscpu_fields(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.contains(',') || key.starts_with(' ') {
            continue;
        }
        // First occurrence wins: later sections describe other core types.
        out.entry(key.to_string())
            .or_insert_with(|| value.trim().to_string());
    }
    out
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuinfo_matches_lscpu() {
    let Some(root) = captures() else { return };
    let trees = [
        "util-linux-arm64-qcom-8cpu",
        "util-linux-dell-e4310-4cpu",
        "util-linux-epyc7451-2s-96cpu",
        "util-linux-nehalem-64cpu",
        "util-linux-riscv64-sg2042-64cpu",
        "util-linux-tigerlake-linux6.2-8cpu",
        "sosreport-rhcos-hyperv-2cpu",
    ];
    for name in trees {
        let tree = root.join(name);
        let c = cpuinfo_of(&tree);
        let f = lscpu_fields(&must_read(&tree, "EXPECTED.txt"));
        let num = |k: &str| f.get(k).and_then(|v| v.parse::<u32>().ok());
        assert_eq!(
            c.vendor.as_deref(),
            f.get("Vendor ID").map(String::as_str),
            "{name}"
        );
        let model_name = f
            .get("Model name")
            .map(String::as_str)
            .filter(|m| *m != "-");
        if c.arm_implementer.is_none() {
            // lscpu names ARM cores from its part table; x86 prints cpuinfo's text.
            assert_eq!(c.model_name.as_deref(), model_name, "{name}");
            assert_eq!(c.family, num("CPU family"), "{name}");
            assert_eq!(c.stepping, num("Stepping"), "{name}");
        }
        if c.family.is_some() {
            assert_eq!(c.model, num("Model"), "{name}");
        }
        if let Some(flags) = f.get("Flags") {
            assert_eq!(c.flags.join(" "), *flags, "{name}");
        }
        assert_eq!(c.processors.len() as u32, num("CPU(s)").unwrap(), "{name}");
        assert_eq!(c.hypervisor, f.contains_key("Hypervisor vendor"), "{name}");
        if let Some(mhz) = f.get("CPU MHz") {
            assert!(close(c.mhz[&0], mhz.parse().unwrap()), "{name}");
        }
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn cpuinfo_arm64_parts_and_frequencies() {
    let Some(root) = captures() else { return };
    // Snapdragon, in CPU order: 3x Cortex-A510 (0xd46), 2x A715 (0xd4d), 2x A710 (0xd47), 1x X3 (0xd4e).
    let c = cpuinfo_of(&root.join("util-linux-arm64-qcom-8cpu"));
    let parts: Vec<u32> = c.arm_parts.values().copied().collect();
    assert_eq!(
        parts,
        [0xd46, 0xd46, 0xd46, 0xd4d, 0xd4d, 0xd47, 0xd47, 0xd4e]
    );
    assert_eq!((c.arm_implementer, c.arm_part), (Some(0x41), Some(0xd46)));
    assert!(c.mhz.is_empty());
    // Apple: implementer 0x61, no "cpu MHz" at all (PCP falls back to sysfs).
    let c = cpuinfo_of(&root.join("pcp-cpufreq-apple-arm64-8cpu"));
    assert_eq!(c.vendor.as_deref(), Some("Apple"));
    assert_eq!(c.processors, (0..8).collect::<Vec<u32>>());
    assert!(c.mhz.is_empty());
    assert!(c.flags.iter().any(|f| f == "asimd"));
    // x86 "cpu MHz" per processor: epyc processor 95 is the last block.
    let c = cpuinfo_of(&root.join("util-linux-epyc7451-2s-96cpu"));
    assert_eq!(c.mhz.len(), 96);
    assert!(close(c.mhz[&0], 2894.214));
}
