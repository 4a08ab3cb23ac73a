//! Reads which CPUs exist and how they are laid out: the kernel's CPU sets
//! (`devices/system/cpu/{online,offline,possible,present,isolated,nohz_full}`),
//! per-CPU topology (`cpuN/topology/*`), NUMA nodes and hybrid core types.
//!
//! It also holds the small sysfs helpers the other machine readers share:
//! optional values, and [`resolve`] for links that a capture stored as plain
//! files holding the link target.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::Serialize;

use crate::base::cpulist;
use crate::os::fs::{Base, Fs, ReadError};

/// Directory of the CPU devices, relative to sysfs.
pub const CPU_DIR: &str = "devices/system/cpu";

/// Directory of the NUMA nodes, relative to sysfs.
const NODE_DIR: &str = "devices/system/node";

/// How many link files [`resolve`] follows before giving up (a loop).
const MAX_HOPS: usize = 32;

/// The kernel's CPU sets; `None` = file absent, unreadable or not a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CpuSets {
    /// CPUs online now (`online`).
    pub online: Option<Vec<u32>>,
    /// CPUs present or possible but offline (`offline`).
    pub offline: Option<Vec<u32>>,
    /// CPUs that could ever be brought up (`possible`).
    pub possible: Option<Vec<u32>>,
    /// CPUs physically present (`present`).
    pub present: Option<Vec<u32>>,
    /// CPUs taken from the scheduler by `isolcpus=` (`isolated`).
    pub isolated: Option<Vec<u32>>,
    /// CPUs running without the periodic tick (`nohz_full`; `(null)` is empty).
    pub nohz_full: Option<Vec<u32>>,
}

/// Where one CPU sits: package, die, cluster, core, SMT siblings, node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuTopology {
    /// The logical CPU number.
    pub cpu: u32,
    /// Raw `physical_package_id` (on big.LITTLE phones this is the cluster).
    pub package: Option<u32>,
    /// Raw `die_id` (`-1` on arm64 is `None`).
    pub die: Option<u32>,
    /// Raw `cluster_id` (on x86 the L2 cache id).
    pub cluster: Option<u32>,
    /// Raw `core_id`: unique within a package only, not contiguous.
    pub core: Option<u32>,
    /// The CPUs sharing this core (`thread_siblings_list`, else
    /// `core_cpus_list`), this CPU included; empty when unknown.
    pub siblings: Vec<u32>,
    /// `"P"` or `"E"` on Intel hybrid parts, from the `cpu_core`/`cpu_atom` PMUs.
    pub core_type: Option<String>,
    /// The NUMA node holding this CPU.
    pub node: Option<u32>,
}

/// Reads the six CPU set files; each one missing or bad is `None`.
pub fn read_cpu_sets(fs: &mut Fs) -> CpuSets {
    CpuSets {
        online: read_set(fs, "online"),
        offline: read_set(fs, "offline"),
        possible: read_set(fs, "possible"),
        present: read_set(fs, "present"),
        isolated: read_set(fs, "isolated"),
        nohz_full: read_set(fs, "nohz_full"),
    }
}

fn read_set(fs: &mut Fs, name: &str) -> Option<Vec<u32>> {
    let text = fs.read(Base::Sys, &format!("{CPU_DIR}/{name}")).ok()?;
    cpulist::parse(text).ok()
}

/// Returns the online CPUs from the `online` file, or, when that file is
/// missing, from the `cpuN` directories whose `cpuN/online` is not `0`
/// (cpu0 often has no `online` file: it cannot be unplugged).
pub fn online_cpus(fs: &mut Fs) -> Result<Vec<u32>, ReadError> {
    let rel = format!("{CPU_DIR}/online");
    let path = fs.roots().path(Base::Sys, &rel);
    // read every interval: kept open
    let id = fs.file_id(Base::Sys, &rel);
    let first = match fs.read_id(id) {
        Ok(text) => {
            return cpulist::parse(text).map_err(|e| ReadError::Io(path, e.to_string()));
        }
        Err(e) => e,
    };
    let Ok(dirs) = cpu_dirs(fs) else {
        return Err(first);
    };
    if dirs.is_empty() {
        return Err(first);
    }
    Ok(dirs
        .into_iter()
        .filter(|&cpu| cpu_online(fs, cpu) != Some(false))
        .collect())
}

/// Reads `cpuN/online`: `None` when absent or neither `0` nor `1`.
pub fn cpu_online(fs: &mut Fs, cpu: u32) -> Option<bool> {
    match fs
        .read(Base::Sys, &format!("{CPU_DIR}/cpu{cpu}/online"))
        .ok()?
        .trim()
    {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Lists the numbers of the `cpuN` entries under `devices/system/cpu`, sorted.
pub fn cpu_dirs(fs: &mut Fs) -> Result<Vec<u32>, ReadError> {
    let mut cpus: Vec<u32> = fs
        .list(Base::Sys, CPU_DIR)?
        .iter()
        .filter_map(|name| numbered(name, "cpu"))
        .collect();
    cpus.sort_unstable();
    Ok(cpus)
}

/// Parses `<prefix><decimal>` names such as `cpu12` or `node3`.
pub(crate) fn numbered(name: &str, prefix: &str) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Reads the topology of each CPU in `cpus`; a CPU without a `topology`
/// directory gets `None` ids and no siblings.
pub fn read_topology(fs: &mut Fs, cpus: &[u32]) -> Vec<CpuTopology> {
    let core_types = hybrid_core_types(fs);
    let nodes = node_map(fs);
    cpus.iter()
        .map(|&cpu| {
            let node = nodes.get(&cpu).copied().or_else(|| node_link(fs, cpu));
            let core_type = core_types.get(&cpu).map(|t| (*t).to_string());
            read_one(fs, cpu, node, core_type)
        })
        .collect()
}

fn read_one(fs: &mut Fs, cpu: u32, node: Option<u32>, core_type: Option<String>) -> CpuTopology {
    let dir = format!("{CPU_DIR}/cpu{cpu}/topology");
    let siblings = ["thread_siblings_list", "core_cpus_list"]
        .iter()
        .find_map(|f| {
            let text = fs.read(Base::Sys, &format!("{dir}/{f}")).ok()?;
            cpulist::parse(text).ok()
        })
        .unwrap_or_default();
    CpuTopology {
        cpu,
        package: opt_id(fs, &format!("{dir}/physical_package_id")),
        die: opt_id(fs, &format!("{dir}/die_id")),
        cluster: opt_id(fs, &format!("{dir}/cluster_id")),
        core: opt_id(fs, &format!("{dir}/core_id")),
        siblings,
        core_type,
        node,
    }
}

/// Maps CPUs to `"P"`/`"E"` from `devices/cpu_core/cpus` and
/// `devices/cpu_atom/cpus`, which only Intel hybrid parts have.
fn hybrid_core_types(fs: &mut Fs) -> BTreeMap<u32, &'static str> {
    let mut map = BTreeMap::new();
    for (pmu, kind) in [("cpu_core", "P"), ("cpu_atom", "E")] {
        let Ok(text) = fs.read(Base::Sys, &format!("devices/{pmu}/cpus")) else {
            continue;
        };
        for cpu in cpulist::parse(text).unwrap_or_default() {
            map.insert(cpu, kind);
        }
    }
    map
}

/// Maps CPUs to NUMA nodes from `nodeM/cpulist`, or `nodeM/cpumap` where a
/// dump kept only the mask (util-linux dumps do).
fn node_map(fs: &mut Fs) -> BTreeMap<u32, u32> {
    let mut map = BTreeMap::new();
    let Ok(names) = fs.list(Base::Sys, NODE_DIR) else {
        return map;
    };
    for (node, name) in names.iter().filter_map(|n| Some((numbered(n, "node")?, n))) {
        let list = fs
            .read(Base::Sys, &format!("{NODE_DIR}/{name}/cpulist"))
            .ok()
            .and_then(|t| cpulist::parse(t).ok());
        let cpus = list.or_else(|| {
            let text = fs
                .read(Base::Sys, &format!("{NODE_DIR}/{name}/cpumap"))
                .ok()?;
            parse_cpumask(text).ok()
        });
        for cpu in cpus.unwrap_or_default() {
            map.insert(cpu, node);
        }
    }
    map
}

/// Finds the `nodeM` entry (a link) inside `cpuN`.
fn node_link(fs: &mut Fs, cpu: u32) -> Option<u32> {
    let names = fs.list(Base::Sys, &format!("{CPU_DIR}/cpu{cpu}")).ok()?;
    names.iter().find_map(|n| numbered(n, "node"))
}

/// Why a hex CPU mask does not parse.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CpumaskError {
    /// More digits than any kernel's CPU count needs.
    #[error("CPU mask too long")]
    TooLong,
    /// A character that is not a hex digit or a comma.
    #[error("not a hex CPU mask: {0:?}")]
    NotHex(char),
}

/// Parses a kernel hex CPU mask (`0000,55555555,55555555`, most significant
/// 32-bit word first) into CPU numbers.
pub fn parse_cpumask(text: &str) -> Result<Vec<u32>, CpumaskError> {
    let digits: Vec<char> = text
        .trim()
        .trim_matches('\0')
        .chars()
        .filter(|&c| c != ',')
        .collect();
    if digits.len() > 1 << 16 {
        return Err(CpumaskError::TooLong);
    }
    let mut cpus = Vec::new();
    for (i, c) in digits.iter().rev().enumerate() {
        let nibble = c.to_digit(16).ok_or(CpumaskError::NotHex(*c))?;
        for bit in 0..4 {
            if nibble & (1 << bit) != 0 {
                cpus.push(i as u32 * 4 + bit);
            }
        }
    }
    Ok(cpus)
}

/// Reads a small id file; negative (`-1` = unknown) or garbage is `None`.
pub(crate) fn opt_id(fs: &mut Fs, rel: &str) -> Option<u32> {
    let v = fs.read_i64(Base::Sys, rel).ok()?;
    u32::try_from(v).ok()
}

/// Reads an unsigned sysfs number; missing or garbage is `None`.
pub(crate) fn opt_u64(fs: &mut Fs, rel: &str) -> Option<u64> {
    fs.read_u64(Base::Sys, rel).ok()
}

/// Reads a one-line text file, trimmed; missing or empty is `None`.
pub(crate) fn opt_text(fs: &mut Fs, base: Base, rel: &str) -> Option<String> {
    let text = fs.read_trimmed(base, rel).ok()?;
    (!text.is_empty()).then_some(text)
}

/// Reads a `0`/`1` flag file; anything else is `None`.
pub(crate) fn opt_flag(fs: &mut Fs, base: Base, rel: &str) -> Option<bool> {
    match fs.read(base, rel).ok()?.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Returns `rel` with every link followed, inside the tree's root: real
/// symbolic links (live sysfs, or a capture packed with `tar` or `cp -a`)
/// and links stored as plain files holding their target (`cpu0/cpufreq`
/// containing `../cpufreq/policy0`), as copies without symlink support
/// have them. A loop, a target that climbs above the root, or an absolute
/// target outside the root gives `rel` back unchanged.
pub fn resolve(fs: &Fs, base: Base, rel: &str) -> String {
    let root = fs.roots().base(base);
    let mut done: Vec<String> = Vec::new();
    let mut todo: VecDeque<String> = split(rel).collect();
    let mut hops = 0;
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "." => {}
            ".." => {
                if done.pop().is_none() {
                    return rel.to_string();
                }
            }
            _ => {
                done.push(part);
                let Some(link) = link_target(root, &done) else {
                    continue;
                };
                hops += 1;
                if hops > MAX_HOPS {
                    return rel.to_string();
                }
                done.pop();
                let target = match link {
                    Link::Relative(t) => t,
                    Link::Absolute(t) => {
                        // Only a target under this same root stays inside the tree.
                        let Ok(inside) = Path::new(&t).strip_prefix(root) else {
                            return rel.to_string();
                        };
                        done.clear();
                        inside.to_string_lossy().into_owned()
                    }
                };
                for p in split(&target).rev() {
                    todo.push_front(p);
                }
            }
        }
    }
    done.join("/")
}

/// What a link points at, as its text says.
enum Link {
    Relative(String),
    Absolute(String),
}

/// Returns the target of a real symbolic link, or of a link file.
fn link_target(root: &Path, parts: &[String]) -> Option<Link> {
    let path = root.join(parts.join("/"));
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path).ok()?;
        let text = target.to_str()?.to_string();
        return Some(if target.is_absolute() {
            Link::Absolute(text)
        } else {
            Link::Relative(text)
        });
    }
    link_file_target(root, parts, &meta).map(Link::Relative)
}

fn split(path: &str) -> impl DoubleEndedIterator<Item = String> + '_ {
    path.split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// Returns the target held by a small regular file that reads like a
/// relative link (one word with a `/`) and whose target exists.
fn link_file_target(root: &Path, parts: &[String], meta: &std::fs::Metadata) -> Option<String> {
    let path = root.join(parts.join("/"));
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = crate::os::fs::read_capped(&path, 4096).ok()?;
    let target = text.trim_end_matches(['\n', '\0']);
    let looks_like_link = !target.is_empty()
        && !target.starts_with('/')
        && target.contains('/')
        && !target.contains(char::is_whitespace);
    if !looks_like_link {
        return None;
    }
    // A data file may hold a slash; only a target that exists is a link.
    let mut probe: Vec<&str> = parts[..parts.len() - 1]
        .iter()
        .map(String::as_str)
        .collect();
    for p in target.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if p == ".." {
            probe.pop()?;
        } else {
            probe.push(p);
        }
    }
    root.join(probe.join("/"))
        .exists()
        .then(|| target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::fs::Roots;

    fn tree() -> (tempfile::TempDir, Fs) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR)).unwrap();
        let mut fs = Fs::new(Roots::under(dir.path()));
        fs.set_keep_open(false);
        (dir, fs)
    }

    fn put(dir: &tempfile::TempDir, rel: &str, text: &str) {
        let p = dir.path().join("sys").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn sets_missing_garbage_and_null() {
        let (dir, mut fs) = tree();
        put(&dir, &format!("{CPU_DIR}/online"), "0-3\n");
        put(&dir, &format!("{CPU_DIR}/offline"), "\n");
        put(&dir, &format!("{CPU_DIR}/possible"), "0-x\n");
        put(&dir, &format!("{CPU_DIR}/nohz_full"), "  (null)\n");
        let sets = read_cpu_sets(&mut fs);
        assert_eq!(sets.online, Some(vec![0, 1, 2, 3]));
        assert_eq!(sets.offline, Some(vec![]));
        assert_eq!(sets.possible, None, "garbage is unknown, not empty");
        assert_eq!(sets.present, None);
        assert_eq!(sets.isolated, None);
        assert_eq!(sets.nohz_full, Some(vec![]));
    }

    #[test]
    fn online_falls_back_to_cpu_dirs() {
        let (dir, mut fs) = tree();
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR).join("cpu0")).unwrap();
        put(&dir, &format!("{CPU_DIR}/cpu1/online"), "0\n");
        put(&dir, &format!("{CPU_DIR}/cpu2/online"), "1");
        put(&dir, &format!("{CPU_DIR}/cpu10/online"), "garbage");
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR).join("cpufreq")).unwrap();
        assert_eq!(online_cpus(&mut fs).unwrap(), [0, 2, 10]);
        assert_eq!(cpu_online(&mut fs, 0), None);
        assert_eq!(cpu_online(&mut fs, 1), Some(false));
    }

    #[test]
    fn online_without_file_or_dirs_is_an_error() {
        let (_dir, mut fs) = tree();
        assert!(matches!(online_cpus(&mut fs), Err(ReadError::Missing(_))));
    }

    #[test]
    fn garbage_online_file_is_an_error_with_the_path() {
        let (dir, mut fs) = tree();
        put(&dir, &format!("{CPU_DIR}/online"), "zero\n");
        let err = online_cpus(&mut fs).unwrap_err();
        assert!(err.to_string().contains("online"), "{err}");
    }

    #[test]
    fn unreadable_online_file_falls_back() {
        let (dir, mut fs) = tree();
        let cpu = dir.path().join("sys").join(CPU_DIR);
        // A link loop cannot be opened even by root.
        std::os::unix::fs::symlink("online", cpu.join("online")).unwrap();
        std::fs::create_dir_all(cpu.join("cpu0")).unwrap();
        assert_eq!(online_cpus(&mut fs).unwrap(), [0]);
        assert_eq!(read_cpu_sets(&mut fs).online, None);
    }

    #[test]
    fn cpu_dir_without_topology_has_no_ids() {
        let (dir, mut fs) = tree();
        std::fs::create_dir_all(dir.path().join("sys").join(CPU_DIR).join("cpu0")).unwrap();
        let topo = read_topology(&mut fs, &[0]);
        assert_eq!(
            topo,
            [CpuTopology {
                cpu: 0,
                package: None,
                die: None,
                cluster: None,
                core: None,
                siblings: vec![],
                core_type: None,
                node: None
            }]
        );
    }

    #[test]
    fn negative_and_garbage_ids_are_none() {
        let (dir, mut fs) = tree();
        let t = format!("{CPU_DIR}/cpu0/topology");
        put(&dir, &format!("{t}/die_id"), "-1\n");
        put(&dir, &format!("{t}/core_id"), "x\n");
        put(&dir, &format!("{t}/physical_package_id"), "99999999999\n");
        put(&dir, &format!("{t}/cluster_id"), "65535\n");
        put(&dir, &format!("{t}/core_cpus_list"), "0,4\n");
        let topo = &read_topology(&mut fs, &[0])[0];
        assert_eq!((topo.die, topo.core, topo.package), (None, None, None));
        assert_eq!(topo.cluster, Some(65535));
        assert_eq!(
            topo.siblings,
            [0, 4],
            "core_cpus_list when no thread_siblings_list"
        );
    }

    #[test]
    fn hybrid_types_and_node_links() {
        let (dir, mut fs) = tree();
        put(&dir, "devices/cpu_core/cpus", "0-3\n");
        put(&dir, "devices/cpu_atom/cpus", "4-5\n");
        for cpu in 0..6 {
            std::fs::create_dir_all(
                dir.path()
                    .join(format!("sys/{CPU_DIR}/cpu{cpu}/node{}", cpu / 3)),
            )
            .unwrap();
        }
        let topo = read_topology(&mut fs, &[0, 3, 4, 6]);
        let types: Vec<_> = topo.iter().map(|t| t.core_type.as_deref()).collect();
        assert_eq!(types, [Some("P"), Some("P"), Some("E"), None]);
        let nodes: Vec<_> = topo.iter().map(|t| t.node).collect();
        assert_eq!(nodes, [Some(0), Some(1), Some(1), None]);
    }

    #[test]
    fn node_dir_cpumap_is_used() {
        let (dir, mut fs) = tree();
        put(
            &dir,
            &format!("{NODE_DIR}/node2/cpumap"),
            "0000,22222222,22222222\n",
        );
        put(&dir, &format!("{NODE_DIR}/node0/cpulist"), "0\n");
        put(&dir, &format!("{NODE_DIR}/has_cpu"), "0-63\n");
        let topo = read_topology(&mut fs, &[0, 1, 61, 62]);
        let nodes: Vec<_> = topo.iter().map(|t| t.node).collect();
        assert_eq!(nodes, [Some(0), Some(2), Some(2), None]);
    }

    #[test]
    fn cpumask_parsing() {
        assert_eq!(parse_cpumask("0f\n").unwrap(), [0, 1, 2, 3]);
        assert_eq!(parse_cpumask("00000001,00000000").unwrap(), [32]);
        assert_eq!(parse_cpumask("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_cpumask("0x1").unwrap_err(), CpumaskError::NotHex('x'));
        assert_eq!(
            parse_cpumask("0x1").unwrap_err().to_string(),
            "not a hex CPU mask: 'x'"
        );
    }

    #[test]
    fn three_hundred_cpus() {
        let (dir, mut fs) = tree();
        put(&dir, &format!("{CPU_DIR}/online"), "0-299\n");
        for cpu in 0..300 {
            let t = format!("{CPU_DIR}/cpu{cpu}/topology");
            put(&dir, &format!("{t}/core_id"), &format!("{}\n", cpu % 150));
            put(
                &dir,
                &format!("{t}/physical_package_id"),
                &format!("{}\n", cpu / 150),
            );
            put(
                &dir,
                &format!("{t}/thread_siblings_list"),
                &format!("{},{}\n", cpu % 150, cpu % 150 + 150),
            );
        }
        let online = online_cpus(&mut fs).unwrap();
        assert_eq!(online.len(), 300);
        assert_eq!(cpu_dirs(&mut fs).unwrap(), online);
        let topo = read_topology(&mut fs, &online);
        assert_eq!(topo[299].core, Some(149));
        assert_eq!(topo[299].package, Some(1));
        assert_eq!(topo[299].siblings, [149, 299]);
        assert_eq!(topo[256].cpu, 256);
    }

    #[test]
    fn resolve_follows_link_files() {
        let (dir, fs) = tree();
        put(
            &dir,
            &format!("{CPU_DIR}/cpufreq/policy0/scaling_cur_freq"),
            "1000\n",
        );
        put(
            &dir,
            &format!("{CPU_DIR}/cpu0/cpufreq"),
            "../cpufreq/policy0",
        );
        put(&dir, "class/x/a", "../../devices/system/cpu/cpu0/\n");
        assert_eq!(
            resolve(
                &fs,
                Base::Sys,
                &format!("{CPU_DIR}/cpu0/cpufreq/scaling_cur_freq")
            ),
            format!("{CPU_DIR}/cpufreq/policy0/scaling_cur_freq")
        );
        assert_eq!(
            resolve(&fs, Base::Sys, "class/x/a/cpufreq"),
            format!("{CPU_DIR}/cpufreq/policy0")
        );
    }

    #[test]
    fn resolve_leaves_data_loops_and_escapes_alone() {
        let (dir, fs) = tree();
        put(&dir, "a/b", "I/O\n");
        put(&dir, "a/loop1", "../a/loop2");
        put(&dir, "a/loop2", "../a/loop1");
        put(&dir, "a/up", "../../../../etc");
        assert_eq!(resolve(&fs, Base::Sys, "a/b"), "a/b");
        assert_eq!(resolve(&fs, Base::Sys, "a/loop1/x"), "a/loop1/x");
        assert_eq!(resolve(&fs, Base::Sys, "a/up"), "a/up");
        assert_eq!(resolve(&fs, Base::Sys, "../x"), "../x");
    }

    #[test]
    fn resolve_follows_real_links_inside_the_root_only() {
        let (dir, fs) = tree();
        let sys = dir.path().join("sys");
        let link = |target: &str, at: &str| {
            let p = sys.join(at);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, p).unwrap();
        };
        put(
            &dir,
            "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj",
            "7\n",
        );
        put(
            &dir,
            &format!("{CPU_DIR}/cpufreq/policy2/scaling_cur_freq"),
            "1\n",
        );
        link("../cpufreq/policy2", &format!("{CPU_DIR}/cpu2/cpufreq"));
        link(
            "../../devices/virtual/powercap/intel-rapl/intel-rapl:0",
            "class/powercap/intel-rapl:0",
        );
        // a link file pointing at a real link, and the other way round
        put(&dir, "class/x/cpu2", "../../devices/system/cpu/cpu2");
        link("../x/cpu2", "class/y/cpu2");
        let abs_inside = sys.join(format!("{CPU_DIR}/cpufreq/policy2"));
        link(abs_inside.to_str().unwrap(), "class/abs/inside");
        link("/etc", "class/abs/outside");
        link("../../../../../etc", "class/up");
        link("loop2", "class/loop1");
        link("loop1", "class/loop2");
        assert_eq!(
            resolve(&fs, Base::Sys, &format!("{CPU_DIR}/cpu2/cpufreq")),
            format!("{CPU_DIR}/cpufreq/policy2")
        );
        assert_eq!(
            resolve(&fs, Base::Sys, "class/powercap/intel-rapl:0/energy_uj"),
            "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj"
        );
        assert_eq!(
            resolve(&fs, Base::Sys, "class/y/cpu2/cpufreq/scaling_cur_freq"),
            format!("{CPU_DIR}/cpufreq/policy2/scaling_cur_freq")
        );
        assert_eq!(
            resolve(&fs, Base::Sys, "class/abs/inside"),
            format!("{CPU_DIR}/cpufreq/policy2")
        );
        for escape in ["class/abs/outside", "class/up/passwd", "class/loop1/x"] {
            assert_eq!(resolve(&fs, Base::Sys, escape), escape);
        }
    }
}
