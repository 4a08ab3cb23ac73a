//! x86 model tables against real machines: the vendor, family and model of
//! each captured `/proc/cpuinfo` (../shared/captures) must map to the
//! residency and RAPL registers turbostat lists for that CPU, and what the
//! tree itself shows (`intel_idle` states, powercap zones) must agree.

use std::path::{Path, PathBuf};

use noisetop::base::Vendor;
use noisetop::collect::x86::{cstate_regs, platform_name, rapl_regs};

fn captures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("../shared/captures absent: skipped");
        None
    }
}

/// Vendor, family and model of the first processor in a tree's cpuinfo.
fn cpu_id(root: &Path, tree: &str) -> (Vendor, u32, u32) {
    let text = std::fs::read_to_string(root.join(tree).join("proc/cpuinfo")).unwrap();
    let field = |name: &str| -> Option<String> {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
    };
    let vendor = field("vendor_id").map_or(Vendor::Other, |v| Vendor::from_vendor_id(&v));
    let num = |name| field(name).and_then(|v| v.parse().ok()).unwrap_or(0);
    (vendor, num("cpu family"), num("model"))
}

fn names(regs: &[(&'static str, u32)]) -> Vec<&'static str> {
    regs.iter().map(|(n, _)| *n).collect()
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn haswell_ult_laptop_has_deep_package_states() {
    let Some(root) = captures() else { return };
    // i3-4005U: cpu family 6, model 69 (0x45, HASWELL_L)
    let tree = "pcp-sysdev-001-i3-4005u-4cpu";
    assert_eq!(cpu_id(&root, tree), (Vendor::Intel, 6, 69));
    assert_eq!(platform_name(Vendor::Intel, 6, 69), Some("hswl"));
    let c = cstate_regs(Vendor::Intel, 6, 69);
    assert_eq!(names(&c.core), ["C3", "C6", "C7"]);
    assert_eq!(
        names(&c.pkg),
        ["PC2", "PC3", "PC6", "PC7", "PC8", "PC9", "PC10"]
    );
    // intel_idle on this machine offers C8/C9/C10, which only exist with PC8..PC10
    let state8 = root
        .join(tree)
        .join("sys/devices/system/cpu/cpu0/cpuidle/state8/name");
    assert_eq!(std::fs::read_to_string(state8).unwrap().trim(), "C10-HSW");
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn haswell_desktop_stops_at_pc7() {
    let Some(root) = captures() else { return };
    // i7-4810MQ: model 60 (0x3C, HASWELL)
    assert_eq!(
        cpu_id(&root, "pcp-sysdev-002-i7-4810mq-8cpu"),
        (Vendor::Intel, 6, 60)
    );
    let c = cstate_regs(Vendor::Intel, 6, 60);
    assert_eq!(
        c.pkg,
        [
            ("PC2", 0x60D),
            ("PC3", 0x3F8),
            ("PC6", 0x3F9),
            ("PC7", 0x3FA)
        ]
    );
    let r = rapl_regs(Vendor::Intel, 6, 60).unwrap();
    assert_eq!(names(&r.domains), ["pkg", "cores", "gpu"]);
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn kaby_lake_rapl_covers_its_powercap_zones() {
    let Some(root) = captures() else { return };
    for tree in ["node_exporter-fixtures", "procfs-fixtures"] {
        // i7-8650U: model 142 (0x8E, KABYLAKE_L)
        assert_eq!(cpu_id(&root, tree), (Vendor::Intel, 6, 142), "{tree}");
        let r = rapl_regs(Vendor::Intel, 6, 142).unwrap();
        assert_eq!(names(&r.domains), ["pkg", "cores", "ram", "gpu", "psys"]);
        // every powercap zone of the tree names a domain the table has
        let zone = root
            .join(tree)
            .join("sys/class/powercap/intel-rapl:0:0/name");
        assert_eq!(std::fs::read_to_string(zone).unwrap().trim(), "core");
        assert!(names(&r.domains).contains(&"cores"));
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn servers_and_old_parts() {
    let Some(root) = captures() else { return };
    // Xeon E7-2890 v2: model 62 (0x3E, IVYBRIDGE_X): DRAM domain, no GPU
    assert_eq!(
        cpu_id(&root, "pcp-hpbl920gen8-480cpu"),
        (Vendor::Intel, 6, 62)
    );
    let ivx = rapl_regs(Vendor::Intel, 6, 62).unwrap();
    assert_eq!(
        ivx.domains,
        [("pkg", 0x611), ("cores", 0x639), ("ram", 0x619)]
    );
    // Xeon W-2155 (under Hyper-V): model 85 (0x55, SKYLAKE_X)
    assert_eq!(
        cpu_id(&root, "sosreport-rhcos-hyperv-2cpu"),
        (Vendor::Intel, 6, 85)
    );
    assert_eq!(cstate_regs(Vendor::Intel, 6, 85).core, [("C6", 0x3FD)]);
    // Core i5 M 560: model 37 (0x25, WESTMERE) and Xeon X7550: model 46 (0x2E, NEHALEM_EX)
    assert_eq!(
        cpu_id(&root, "util-linux-dell-e4310-4cpu"),
        (Vendor::Intel, 6, 37)
    );
    assert_eq!(
        cpu_id(&root, "util-linux-nehalem-64cpu"),
        (Vendor::Intel, 6, 46)
    );
    for model in [37, 46] {
        let c = cstate_regs(Vendor::Intel, 6, model);
        assert_eq!(names(&c.core), ["C3", "C6"]);
        assert_eq!(names(&c.pkg), ["PC3", "PC6"]);
        assert_eq!(rapl_regs(Vendor::Intel, 6, model), None);
    }
    // i7-1165G7: model 140 (0x8C, TIGERLAKE_L) reads C1 from MSR_CORE_C1_RES
    assert_eq!(
        cpu_id(&root, "util-linux-tigerlake-linux6.2-8cpu"),
        (Vendor::Intel, 6, 140)
    );
    assert_eq!(cstate_regs(Vendor::Intel, 6, 140).core[0], ("C1", 0x660));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn epyc_and_non_x86_have_no_residency_msrs() {
    let Some(root) = captures() else { return };
    // EPYC 7451: AuthenticAMD family 23 (0x17) model 1
    let (v, f, m) = cpu_id(&root, "util-linux-epyc7451-2s-96cpu");
    assert_eq!((v, f, m), (Vendor::Amd, 23, 1));
    let c = cstate_regs(v, f, m);
    assert!(c.core.is_empty() && c.pkg.is_empty());
    assert_eq!(rapl_regs(v, f, m).unwrap().domains[0], ("pkg", 0xC001_029B));
    for tree in [
        "util-linux-arm64-qcom-8cpu",
        "util-linux-riscv64-sg2042-64cpu",
    ] {
        let (v, f, m) = cpu_id(&root, tree);
        assert_eq!(v, Vendor::Other, "{tree}");
        assert_eq!(rapl_regs(v, f, m), None);
        assert!(cstate_regs(v, f, m).core.is_empty());
    }
}
