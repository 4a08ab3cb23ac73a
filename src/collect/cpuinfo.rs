//! Parses `/proc/cpuinfo` in its x86, arm64, s390x and riscv layouts into
//! machine facts: vendor, model, flags, per-CPU "cpu MHz" and the list of
//! processors.
//!
//! Identity fields are taken from the first processor that prints them (on
//! a hybrid part later processors may differ; `arm_parts` keeps the per-CPU
//! ARM part numbers). A last line without its newline is a cut-off read and
//! is ignored.

use std::collections::BTreeMap;

use serde::Serialize;

use super::interrupts::{is_blank, whole_lines};

/// Facts read from `/proc/cpuinfo`; a field the file does not print is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CpuInfo {
    /// `vendor_id` (x86, s390x), the ARM implementer's name, or riscv `mvendorid`.
    pub vendor: Option<String>,
    /// `model name`, outer white space trimmed, inner spacing kept.
    pub model_name: Option<String>,
    /// x86 `cpu family`.
    pub family: Option<u32>,
    /// x86 `model`.
    pub model: Option<u32>,
    /// x86 `stepping`.
    pub stepping: Option<u32>,
    /// x86 `flags`, arm64 `Features` or s390x `features`, of the first processor.
    pub flags: Vec<String>,
    /// `cpu MHz` per CPU id (s390x: `cpu MHz dynamic`); absent on most ARM.
    pub mhz: BTreeMap<u32, f64>,
    /// CPU ids the file lists, ascending.
    pub processors: Vec<u32>,
    /// The x86 `hypervisor` flag is set (running as a guest).
    pub hypervisor: bool,
    /// ARM `CPU implementer` of the first processor (0x41 = Arm, 0x61 = Apple).
    pub arm_implementer: Option<u32>,
    /// ARM `CPU part` of the first processor.
    pub arm_part: Option<u32>,
    /// ARM `CPU part` per CPU id, to tell big.LITTLE clusters apart.
    pub arm_parts: BTreeMap<u32, u32>,
    /// x86 `physical id`, `core id`, `siblings` and `cpu cores` per CPU id:
    /// the topology of kernels (or dumps) without sysfs topology files.
    pub places: BTreeMap<u32, CpuPlace>,
}

/// Where x86 `/proc/cpuinfo` puts one CPU; a field it does not print is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuPlace {
    /// `physical id`: the package.
    pub physical_id: Option<u32>,
    /// `core id`: the core within the package.
    pub core_id: Option<u32>,
    /// `siblings`: logical CPUs in the package.
    pub siblings: Option<u32>,
    /// `cpu cores`: cores in the package.
    pub cpu_cores: Option<u32>,
}

/// Parses `/proc/cpuinfo`; never fails, unknown or malformed fields stay `None`.
pub fn parse(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    // The CPU whose block we are in; a blank line ends a block.
    let mut current: Option<u32> = None;
    for line in whole_lines(text) {
        if is_blank(line) {
            current = None;
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" | "cpu number" => {
                current = value.parse().ok();
                info.processors.extend(current);
            }
            _ => apply_field(&mut info, current, key, value),
        }
    }
    finish(&mut info);
    info
}

fn apply_field(info: &mut CpuInfo, current: Option<u32>, key: &str, value: &str) {
    match key {
        // riscv has no vendor_id; lscpu shows its mvendorid as the vendor.
        "vendor_id" | "mvendorid" => set_once(&mut info.vendor, non_empty(value)),
        "model name" => set_once(&mut info.model_name, non_empty(value)),
        "cpu family" => set_once(&mut info.family, value.parse().ok()),
        "model" => set_once(&mut info.model, value.parse().ok()),
        "stepping" => set_once(&mut info.stepping, value.parse().ok()),
        "flags" | "Features" | "features" if info.flags.is_empty() => {
            info.flags = value.split_ascii_whitespace().map(str::to_string).collect();
        }
        "cpu MHz" | "CPU MHz" | "cpu MHz dynamic" => {
            if let (Some(cpu), Some(mhz)) = (current, parse_mhz(value)) {
                info.mhz.insert(cpu, mhz);
            }
        }
        "physical id" | "core id" | "siblings" | "cpu cores" => {
            let (Some(cpu), Ok(v)) = (current, value.parse::<u32>()) else {
                return;
            };
            let place = info.places.entry(cpu).or_default();
            let slot = match key {
                "physical id" => &mut place.physical_id,
                "core id" => &mut place.core_id,
                "siblings" => &mut place.siblings,
                _ => &mut place.cpu_cores,
            };
            *slot = Some(v);
        }
        "CPU implementer" => set_once(&mut info.arm_implementer, parse_hex(value)),
        "CPU part" => {
            let part = parse_hex(value);
            set_once(&mut info.arm_part, part);
            if let (Some(cpu), Some(part)) = (current, part) {
                info.arm_parts.insert(cpu, part);
            }
        }
        // s390x summary: "processor 0: version = FF,  identification = ..."
        _ => {
            if let Some(cpu) = key
                .strip_prefix("processor ")
                .and_then(|n| n.trim().parse().ok())
            {
                info.processors.push(cpu);
            }
        }
    }
}

fn finish(info: &mut CpuInfo) {
    info.processors.sort_unstable();
    info.processors.dedup();
    info.hypervisor = info.flags.iter().any(|f| f == "hypervisor");
    if info.vendor.is_none() {
        info.vendor = info
            .arm_implementer
            .and_then(arm_vendor)
            .map(str::to_string);
    }
}

/// Vendor name of an ARM `CPU implementer` code (the table lscpu uses).
pub fn arm_vendor(implementer: u32) -> Option<&'static str> {
    Some(match implementer {
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x44 => "DEC",
        0x46 => "FUJITSU",
        0x48 => "HiSilicon",
        0x49 => "Infineon",
        0x4d => "Motorola/Freescale",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x53 => "Samsung",
        0x56 => "Marvell",
        0x61 => "Apple",
        0x66 => "Faraday",
        0x69 => "Intel",
        0x6d => "Microsoft",
        0x70 => "Phytium",
        0xc0 => "Ampere",
        _ => return None,
    })
}

fn set_once<T>(slot: &mut Option<T>, value: Option<T>) {
    if slot.is_none() {
        *slot = value;
    }
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

fn parse_hex(value: &str) -> Option<u32> {
    let digits = value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))?;
    u32::from_str_radix(digits, 16).ok()
}

fn parse_mhz(value: &str) -> Option<f64> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    // node_exporter-fixtures/proc/cpuinfo, first processor, flags shortened.
    const X86: &str = "processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 142
model name\t: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz
stepping\t: 10
microcode\t: 0xb4
cpu MHz\t\t: 799.998
flags\t\t: fpu vme de pse
vmx flags\t: vnmi preemption_timer
power management:

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Other name
cpu MHz\t\t: 800.037
flags\t\t: other

";

    #[test]
    fn x86_layout() {
        let c = parse(X86);
        assert_eq!(c.vendor.as_deref(), Some("GenuineIntel"));
        assert_eq!(
            c.model_name.as_deref(),
            Some("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz")
        );
        assert_eq!(
            (c.family, c.model, c.stepping),
            (Some(6), Some(142), Some(10))
        );
        assert_eq!(c.flags, vec!["fpu", "vme", "de", "pse"]);
        assert_eq!(c.processors, vec![0, 1]);
        assert_eq!(c.mhz.get(&0), Some(&799.998));
        assert_eq!(c.mhz.get(&1), Some(&800.037));
        assert!(!c.hypervisor);
        assert_eq!((c.arm_implementer, c.arm_part), (None, None));
    }

    #[test]
    fn inner_spacing_of_model_name_kept() {
        // util-linux-nehalem-64cpu: lscpu prints it the same way.
        let c = parse(
            "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU           X7550  @ 2.00GHz  \n",
        );
        assert_eq!(
            c.model_name.as_deref(),
            Some("Intel(R) Xeon(R) CPU           X7550  @ 2.00GHz")
        );
    }

    #[test]
    fn hypervisor_flag() {
        let c = parse("processor\t: 0\nflags\t\t: fpu rdrand hypervisor lahf_lm\n");
        assert!(c.hypervisor);
    }

    #[test]
    fn arm64_layout() {
        // util-linux-arm64-qcom-8cpu, processors 0 and 7.
        let text = "processor\t: 0
BogoMIPS\t: 38.40
Features\t: fp asimd evtstrm
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd46
CPU revision\t: 1

processor\t: 7
BogoMIPS\t: 38.40
Features\t: fp asimd evtstrm
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd4e
CPU revision\t: 0

";
        let c = parse(text);
        assert_eq!(c.vendor.as_deref(), Some("ARM"));
        assert_eq!(c.model_name, None);
        assert_eq!((c.family, c.model, c.stepping), (None, None, None));
        assert_eq!(c.flags, vec!["fp", "asimd", "evtstrm"]);
        assert_eq!(c.processors, vec![0, 7]);
        assert!(c.mhz.is_empty());
        assert_eq!((c.arm_implementer, c.arm_part), (Some(0x41), Some(0xd46)));
        assert_eq!(
            c.arm_parts.into_iter().collect::<Vec<_>>(),
            vec![(0, 0xd46), (7, 0xd4e)]
        );
    }

    #[test]
    fn s390x_layout() {
        // Shape printed by arch/s390/kernel/processor.c (summary, then one
        // "cpu number" block per CPU).
        let text = "vendor_id       : IBM/S390
# processors    : 2
bogomips per cpu: 3033.00
features\t: esan3 zarch stfle msa ldisp
processor 0: version = FF,  identification = 0123C8,  machine = 2964
processor 1: version = FF,  identification = 0123C8,  machine = 2964

cpu number      : 0
cpu MHz dynamic : 5000
cpu MHz static  : 5000

cpu number      : 1
cpu MHz dynamic : 4000
cpu MHz static  : 5000
";
        let c = parse(text);
        assert_eq!(c.vendor.as_deref(), Some("IBM/S390"));
        assert_eq!(c.processors, vec![0, 1]);
        assert_eq!(c.flags, vec!["esan3", "zarch", "stfle", "msa", "ldisp"]);
        assert_eq!(
            c.mhz.into_iter().collect::<Vec<_>>(),
            vec![(0, 5000.0), (1, 4000.0)]
        );
        assert_eq!(c.family, None);
    }

    #[test]
    fn riscv_layout() {
        // util-linux-riscv64-sg2042-64cpu: hart id differs from processor id.
        let text = "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdcv\nmmu\t\t: sv39\nmvendorid\t: 0x5b7\nmarchid\t\t: 0x0\n\n\
                    processor\t: 1\nhart\t\t: 0\n";
        let c = parse(text);
        assert_eq!(c.processors, vec![0, 1]);
        assert_eq!(c.vendor.as_deref(), Some("0x5b7"));
        assert_eq!(c.model_name, None);
        assert!(c.flags.is_empty());
    }

    #[test]
    fn mhz_outside_a_processor_block_is_not_attributed() {
        // A blank line ends the block: a trailer must not land on the last CPU.
        let c = parse("processor : 3\ncpu MHz : 100.0\n\ncpu MHz : 999\n");
        assert_eq!(c.mhz.into_iter().collect::<Vec<_>>(), vec![(3, 100.0)]);
    }

    #[test]
    fn garbage_empty_and_truncated() {
        assert_eq!(parse(""), CpuInfo::default());
        assert_eq!(
            parse("\u{0}\u{1}é:ñ\n:::\nprocessor : x\ncpu MHz : NaN\n"),
            CpuInfo::default()
        );
        let c = parse("processor\t: 0\ncpu MHz\t: inf\nCPU part\t: 0xzz\ncpu family : -6\n");
        assert_eq!(c.processors, vec![0]);
        assert!(c.mhz.is_empty());
        assert_eq!((c.arm_part, c.family), (None, None));
        // Cut inside "model name": the partial name is not reported.
        let c = parse("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Co");
        assert_eq!(c.model_name, None);
        assert_eq!(c.vendor.as_deref(), Some("GenuineIntel"));
    }

    #[test]
    fn many_processors() {
        let mut text = String::new();
        for c in 0..300 {
            write!(text, "processor\t: {c}\ncpu MHz\t\t: {c}.5\n\n").unwrap();
        }
        let c = parse(&text);
        assert_eq!(c.processors.len(), 300);
        assert_eq!(c.mhz.get(&299), Some(&299.5));
    }

    #[test]
    fn x86_places() {
        let text = "processor\t: 0\nphysical id\t: 1\nsiblings\t: 30\ncore id\t\t: 14\ncpu cores\t: 15\n\n\
                    processor\t: 1\nphysical id\t: x\ncore id\t\t: 3\n\n";
        let c = parse(text);
        assert_eq!(
            c.places[&0],
            CpuPlace {
                physical_id: Some(1),
                core_id: Some(14),
                siblings: Some(30),
                cpu_cores: Some(15)
            }
        );
        assert_eq!(
            c.places[&1],
            CpuPlace {
                core_id: Some(3),
                ..CpuPlace::default()
            }
        );
    }

    #[test]
    fn arm_vendor_table() {
        assert_eq!(arm_vendor(0x61), Some("Apple"));
        assert_eq!(arm_vendor(0xc0), Some("Ampere"));
        assert_eq!(arm_vendor(0x99), None);
    }
}
