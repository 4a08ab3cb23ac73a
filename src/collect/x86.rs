//! x86 model knowledge: which MSRs a CPU model has (core and package
//! C-state residency, RAPL energy domains), and pure decoders for the RAPL
//! unit, `TjMax` and thermal status registers.
//!
//! The tables follow turbostat's `turbostat_pdata[]` / `platform_features`
//! (Linux `tools/power/x86/turbostat/turbostat.c`, version 2025) and the
//! model numbers of `arch/x86/include/asm/intel-family.h`. A model missing
//! from the table has no registers here: reading unlisted residency MSRs
//! gives EIO on real hardware, and guessing would show made-up numbers.

use crate::base::Vendor;
use serde::Serialize;

/// `IA32_TIME_STAMP_COUNTER`.
pub const MSR_TSC: u32 = 0x10;
/// `MSR_SMI_COUNT` (Intel, 32-bit).
pub const MSR_SMI_COUNT: u32 = 0x34;
/// `MSR_PLATFORM_INFO`: base ratio in bits 15:8.
pub const MSR_PLATFORM_INFO: u32 = 0xCE;
/// `MSR_PKG_CST_CONFIG_CONTROL`: package C-state limit in bits 3:0.
pub const MSR_PKG_CST_CONFIG_CONTROL: u32 = 0xE2;
/// `IA32_MPERF`: reference cycles in C0.
pub const MSR_MPERF: u32 = 0xE7;
/// `IA32_APERF`: actual cycles in C0.
pub const MSR_APERF: u32 = 0xE8;
/// `IA32_THERM_STATUS` (per core).
pub const MSR_THERM_STATUS: u32 = 0x19C;
/// `IA32_MISC_ENABLE`: turbo disable is bit 38.
pub const MSR_MISC_ENABLE: u32 = 0x1A0;
/// `MSR_IA32_TEMPERATURE_TARGET`: `TjMax` in bits 23:16.
pub const MSR_TEMPERATURE_TARGET: u32 = 0x1A2;
/// `IA32_PACKAGE_THERM_STATUS`.
pub const MSR_PACKAGE_THERM_STATUS: u32 = 0x1B1;
/// `MSR_PKG_C3_RESIDENCY`.
pub const MSR_PKG_C3_RESIDENCY: u32 = 0x3F8;
/// `MSR_PKG_C6_RESIDENCY`.
pub const MSR_PKG_C6_RESIDENCY: u32 = 0x3F9;
/// `MSR_PKG_C7_RESIDENCY`; also package C6 on Silvermont (`MSR_ATOM_PKG_C6_RESIDENCY`).
pub const MSR_PKG_C7_RESIDENCY: u32 = 0x3FA;
/// `MSR_CORE_C3_RESIDENCY`.
pub const MSR_CORE_C3_RESIDENCY: u32 = 0x3FC;
/// `MSR_CORE_C6_RESIDENCY`.
pub const MSR_CORE_C6_RESIDENCY: u32 = 0x3FD;
/// `MSR_CORE_C7_RESIDENCY`.
pub const MSR_CORE_C7_RESIDENCY: u32 = 0x3FE;
/// `MSR_KNL_CORE_C6_RESIDENCY` (Xeon Phi).
pub const MSR_KNL_CORE_C6_RESIDENCY: u32 = 0x3FF;
/// `MSR_RAPL_POWER_UNIT` (Intel).
pub const MSR_RAPL_POWER_UNIT: u32 = 0x606;
/// `MSR_PKG_C2_RESIDENCY`.
pub const MSR_PKG_C2_RESIDENCY: u32 = 0x60D;
/// `MSR_PKG_ENERGY_STATUS` (32-bit counter).
pub const MSR_PKG_ENERGY_STATUS: u32 = 0x611;
/// `MSR_DRAM_ENERGY_STATUS` (32-bit counter).
pub const MSR_DRAM_ENERGY_STATUS: u32 = 0x619;
/// `MSR_PKG_C8_RESIDENCY`.
pub const MSR_PKG_C8_RESIDENCY: u32 = 0x630;
/// `MSR_PKG_C9_RESIDENCY`.
pub const MSR_PKG_C9_RESIDENCY: u32 = 0x631;
/// `MSR_PKG_C10_RESIDENCY`.
pub const MSR_PKG_C10_RESIDENCY: u32 = 0x632;
/// `MSR_PP0_ENERGY_STATUS`: cores domain (32-bit counter).
pub const MSR_PP0_ENERGY_STATUS: u32 = 0x639;
/// `MSR_PP1_ENERGY_STATUS`: graphics domain (32-bit counter).
pub const MSR_PP1_ENERGY_STATUS: u32 = 0x641;
/// `MSR_PLATFORM_ENERGY_STATUS`: psys domain (32-bit counter).
pub const MSR_PLATFORM_ENERGY_STATUS: u32 = 0x64D;
/// `MSR_CORE_C1_RES` (only where the model table says so).
pub const MSR_CORE_C1_RES: u32 = 0x660;
/// `MSR_MODULE_C6_RES_MS`: module C6 on Silvermont and Crestmont servers.
pub const MSR_MODULE_C6_RES_MS: u32 = 0x664;
/// AMD IRPERF: retired instructions (fam 17h+).
pub const MSR_AMD_IRPERF: u32 = 0xC000_00E9;
/// AMD HWCR: bit 25 `CpbDis` (boost disabled).
pub const MSR_AMD_HWCR: u32 = 0xC001_0015;
/// AMD RAPL power unit (fam 17h+).
pub const MSR_AMD_RAPL_POWER_UNIT: u32 = 0xC001_0299;
/// AMD per-core energy status (32 bits used).
pub const MSR_AMD_CORE_ENERGY_STATUS: u32 = 0xC001_029A;
/// AMD package energy status.
pub const MSR_AMD_PKG_ENERGY_STATUS: u32 = 0xC001_029B;

/// Residency MSRs a model has, each with turbostat's column name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CstateRegs {
    /// Core-scope residencies: `("C3", 0x3FC)`, `("C6", 0x3FD)`, …
    pub core: Vec<(&'static str, u32)>,
    /// Module-scope residencies (`("MC6", 0x664)` on Silvermont, SRF, GRR).
    pub module: Vec<(&'static str, u32)>,
    /// Package-scope residencies: `("PC2", 0x60D)`, `("PC6", 0x3F9)`, …
    pub pkg: Vec<(&'static str, u32)>,
}

/// RAPL registers of a model: the unit MSR and one energy MSR per domain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaplRegs {
    /// The power-unit MSR (0x606, or 0xC0010299 on AMD).
    pub unit: u32,
    /// Energy status MSRs by domain: `pkg`, `cores`, `ram`, `gpu`, `psys`, AMD `core`.
    pub domains: Vec<(&'static str, u32)>,
    /// Domains read on every core rather than once per package (AMD `core`).
    pub per_core: Vec<&'static str>,
    /// DRAM energy unit fixed at 15.3 µJ whatever the unit MSR says (HSX, BDX, SKX, ICX, KNL).
    pub fixed_dram_unit_j: Option<f64>,
    /// Psys energy unit fixed at 1 J (SPR, EMR, GNR).
    pub fixed_psys_unit_j: Option<f64>,
    /// Silvermont encodes the energy unit as 2^bits µJ instead of 1/2^bits J.
    pub silvermont_unit: bool,
}

impl RaplRegs {
    /// Joules per count of one domain, given the raw unit MSR value.
    pub fn domain_unit_joules(&self, domain: &str, unit_msr: u64) -> f64 {
        match (domain, self.fixed_dram_unit_j, self.fixed_psys_unit_j) {
            ("ram", Some(j), _) | ("psys", _, Some(j)) => j,
            _ if self.silvermont_unit => f64::from(1u32 << energy_bits(unit_msr)) / 1e6,
            _ => energy_unit_joules(unit_msr),
        }
    }
}

// turbostat's `enum cstates` bits.
const CC1: u16 = 1 << 0;
const CC3: u16 = 1 << 1;
const CC6: u16 = 1 << 2;
const CC7: u16 = 1 << 3;
const PC2: u16 = 1 << 4;
const PC3: u16 = 1 << 5;
const PC6: u16 = 1 << 6;
const PC7: u16 = 1 << 7;
const PC8: u16 = 1 << 8;
const PC9: u16 = 1 << 9;
const PC10: u16 = 1 << 10;

// RAPL domain bits (ours, one per energy counter).
const R_PKG: u8 = 1 << 0;
const R_CORES: u8 = 1 << 1;
const R_RAM: u8 = 1 << 2;
const R_GPU: u8 = 1 << 3;
const R_PSYS: u8 = 1 << 4;

/// One turbostat `platform_features` entry, reduced to what noisetop reads.
#[derive(Debug, Clone, Copy)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "mirrors turbostat's has_* feature flags one for one"
)]
struct Platform {
    name: &'static str,
    cstates: u16,
    core_c1_msr: bool,
    module_c6_msr: bool,
    atom_pkg_c6: bool,
    knl_core_c6: bool,
    rapl: u8,
    fixed_dram_unit: bool,
    fixed_psys_unit: bool,
    silvermont_unit: bool,
}

const fn plat(name: &'static str, cstates: u16, rapl: u8) -> Platform {
    Platform {
        name,
        cstates,
        core_c1_msr: false,
        module_c6_msr: false,
        atom_pkg_c6: false,
        knl_core_c6: false,
        rapl,
        fixed_dram_unit: false,
        fixed_psys_unit: false,
        silvermont_unit: false,
    }
}

const CLIENT_C: u16 = CC1 | CC3 | CC6 | CC7 | PC2 | PC3 | PC6 | PC7;
const CLIENT_DEEP_C: u16 = CLIENT_C | PC8 | PC9 | PC10;
const CNL_C: u16 = CC1 | CC6 | CC7 | PC2 | PC3 | PC6 | PC7 | PC8 | PC9 | PC10;
const SERVER_C: u16 = CC1 | CC6 | PC2 | PC6;
const CLIENT_RAPL: u8 = R_PKG | R_CORES | R_GPU;
const SKL_RAPL: u8 = R_PKG | R_CORES | R_RAM | R_GPU | R_PSYS;

const NHM: Platform = plat("nhm", CC1 | CC3 | CC6 | PC3 | PC6, 0);
const NHX: Platform = plat("nhx", CC1 | CC3 | CC6 | PC3 | PC6, 0);
const SNB: Platform = plat("snb", CLIENT_C, CLIENT_RAPL);
const SNX: Platform = plat("snx", CLIENT_C, R_PKG | R_CORES | R_RAM);
const IVB: Platform = plat("ivb", CLIENT_C, CLIENT_RAPL);
const IVX: Platform = plat("ivx", CLIENT_C, R_PKG | R_CORES | R_RAM);
const HSW: Platform = plat("hsw", CLIENT_C, CLIENT_RAPL);
const HSX: Platform = Platform {
    fixed_dram_unit: true,
    ..plat("hsx", CLIENT_C, R_PKG | R_RAM)
};
const HSWL: Platform = plat("hswl", CLIENT_DEEP_C, CLIENT_RAPL);
const HSWG: Platform = plat("hswg", CLIENT_C, CLIENT_RAPL);
const BDW: Platform = plat("bdw", CLIENT_DEEP_C, CLIENT_RAPL);
const BDWG: Platform = plat("bdwg", CLIENT_C, CLIENT_RAPL);
const BDX: Platform = Platform {
    fixed_dram_unit: true,
    ..plat("bdx", CC1 | CC3 | CC6 | PC2 | PC3 | PC6, R_PKG | R_RAM)
};
const SKL: Platform = plat("skl", CLIENT_DEEP_C, SKL_RAPL);
const CNL: Platform = Platform {
    core_c1_msr: true,
    ..plat("cnl", CNL_C, SKL_RAPL)
};
const ADL: Platform = Platform {
    core_c1_msr: true,
    ..plat(
        "adl",
        CC1 | CC6 | CC7 | PC2 | PC3 | PC6 | PC8 | PC10,
        SKL_RAPL,
    )
};
const LNL: Platform = Platform {
    core_c1_msr: true,
    ..plat("lnl", CC1 | CC6 | CC7 | PC2 | PC6 | PC10, SKL_RAPL)
};
const SKX: Platform = Platform {
    fixed_dram_unit: true,
    ..plat("skx", SERVER_C, R_PKG | R_RAM)
};
const ICX: Platform = Platform {
    core_c1_msr: true,
    fixed_dram_unit: true,
    ..plat("icx", SERVER_C, R_PKG | R_RAM | R_PSYS)
};
const SPR: Platform = Platform {
    core_c1_msr: true,
    fixed_psys_unit: true,
    ..plat("spr", SERVER_C, R_PKG | R_RAM | R_PSYS)
};
const DMR: Platform = Platform {
    core_c1_msr: true,
    module_c6_msr: true,
    ..plat("dmr", SERVER_C, 0)
};
const SRF: Platform = Platform {
    core_c1_msr: true,
    module_c6_msr: true,
    ..plat("srf", SERVER_C, R_PKG | R_RAM | R_PSYS)
};
const GRR: Platform = Platform {
    core_c1_msr: true,
    module_c6_msr: true,
    ..plat("grr", CC1 | CC6, R_PKG | R_RAM | R_PSYS)
};
const SLV: Platform = Platform {
    core_c1_msr: true,
    module_c6_msr: true,
    atom_pkg_c6: true,
    silvermont_unit: true,
    ..plat("slv", CC1 | CC6 | PC6, R_PKG | R_CORES)
};
const SLVD: Platform = Platform {
    atom_pkg_c6: true,
    ..plat("slvd", CC1 | CC6 | PC3 | PC6, R_PKG | R_CORES)
};
const AMT: Platform = plat("amt", CC1 | CC3 | CC6 | PC3 | PC6, 0);
const GMT: Platform = plat("gmt", CLIENT_DEEP_C, R_PKG);
const GMTD: Platform = Platform {
    core_c1_msr: true,
    ..plat("gmtd", SERVER_C, R_PKG | R_RAM | R_CORES)
};
const GMTP: Platform = plat("gmtp", CLIENT_DEEP_C, R_PKG);
const TMT: Platform = plat("tmt", CNL_C, R_PKG | R_CORES | R_RAM | R_GPU);
const TMTD: Platform = plat("tmtd", CC1 | CC6, R_PKG);
const KNL: Platform = Platform {
    knl_core_c6: true,
    fixed_dram_unit: true,
    ..plat("knl", CC1 | CC6 | PC3 | PC6, R_PKG | R_RAM)
};

/// (family, model) → platform, in `turbostat_pdata[]` order.
const INTEL_MODELS: &[(u32, u32, Platform)] = &[
    (6, 0x1E, NHM),  // NEHALEM
    (6, 0x1F, NHM),  // NEHALEM_G
    (6, 0x1A, NHM),  // NEHALEM_EP
    (6, 0x2E, NHX),  // NEHALEM_EX
    (6, 0x25, NHM),  // WESTMERE
    (6, 0x2C, NHM),  // WESTMERE_EP
    (6, 0x2F, NHX),  // WESTMERE_EX
    (6, 0x2A, SNB),  // SANDYBRIDGE
    (6, 0x2D, SNX),  // SANDYBRIDGE_X
    (6, 0x3A, IVB),  // IVYBRIDGE
    (6, 0x3E, IVX),  // IVYBRIDGE_X
    (6, 0x3C, HSW),  // HASWELL
    (6, 0x3F, HSX),  // HASWELL_X
    (6, 0x45, HSWL), // HASWELL_L
    (6, 0x46, HSWG), // HASWELL_G
    (6, 0x3D, BDW),  // BROADWELL
    (6, 0x47, BDWG), // BROADWELL_G
    (6, 0x4F, BDX),  // BROADWELL_X
    (6, 0x56, BDX),  // BROADWELL_D
    (6, 0x4E, SKL),  // SKYLAKE_L
    (6, 0x5E, SKL),  // SKYLAKE
    (6, 0x55, SKX),  // SKYLAKE_X
    (6, 0x8E, SKL),  // KABYLAKE_L
    (6, 0x9E, SKL),  // KABYLAKE
    (6, 0xA5, SKL),  // COMETLAKE
    (6, 0xA6, SKL),  // COMETLAKE_L
    (6, 0x66, CNL),  // CANNONLAKE_L
    (6, 0x6A, ICX),  // ICELAKE_X
    (6, 0x6C, ICX),  // ICELAKE_D
    (6, 0x7E, CNL),  // ICELAKE_L
    (6, 0x9D, CNL),  // ICELAKE_NNPI
    (6, 0xA7, CNL),  // ROCKETLAKE
    (6, 0x8C, CNL),  // TIGERLAKE_L
    (6, 0x8D, CNL),  // TIGERLAKE
    (6, 0x8F, SPR),  // SAPPHIRERAPIDS_X
    (6, 0xCF, SPR),  // EMERALDRAPIDS_X
    (6, 0xAD, SPR),  // GRANITERAPIDS_X
    (6, 0xAE, SPR),  // GRANITERAPIDS_D
    (19, 0x01, DMR), // DIAMONDRAPIDS_X
    (6, 0x8A, CNL),  // LAKEFIELD
    (6, 0x97, ADL),  // ALDERLAKE
    (6, 0x9A, ADL),  // ALDERLAKE_L
    (6, 0xB7, ADL),  // RAPTORLAKE
    (6, 0xBA, ADL),  // RAPTORLAKE_P
    (6, 0xBF, ADL),  // RAPTORLAKE_S
    (6, 0xAC, ADL),  // METEORLAKE
    (6, 0xAA, ADL),  // METEORLAKE_L
    (6, 0xC5, ADL),  // ARROWLAKE_H
    (6, 0xB5, ADL),  // ARROWLAKE_U
    (6, 0xC6, ADL),  // ARROWLAKE
    (6, 0xBD, LNL),  // LUNARLAKE_M
    (6, 0xCC, LNL),  // PANTHERLAKE_L
    (6, 0x37, SLV),  // ATOM_SILVERMONT
    (6, 0x4D, SLVD), // ATOM_SILVERMONT_D
    (6, 0x4C, AMT),  // ATOM_AIRMONT
    (6, 0x5C, GMT),  // ATOM_GOLDMONT
    (6, 0x5F, GMTD), // ATOM_GOLDMONT_D
    (6, 0x7A, GMTP), // ATOM_GOLDMONT_PLUS
    (6, 0x86, TMTD), // ATOM_TREMONT_D
    (6, 0x96, TMT),  // ATOM_TREMONT
    (6, 0x9C, TMT),  // ATOM_TREMONT_L
    (6, 0xBE, ADL),  // ATOM_GRACEMONT
    (6, 0xAF, SRF),  // ATOM_CRESTMONT_X
    (6, 0xB6, GRR),  // ATOM_CRESTMONT
    (6, 0xDD, SRF),  // ATOM_DARKMONT_X
    (6, 0x57, KNL),  // XEON_PHI_KNL
    (6, 0x85, KNL),  // XEON_PHI_KNM
];

fn intel_platform(vendor: Vendor, family: u32, model: u32) -> Option<Platform> {
    if vendor != Vendor::Intel {
        return None;
    }
    INTEL_MODELS
        .iter()
        .find(|(f, m, _)| *f == family && *m == model)
        .map(|(_, _, p)| *p)
}

/// turbostat's short name for a known Intel model (`"hsw"`, `"skx"`), or
/// `"amd-f17h+"` for AMD/Hygon with RAPL; `None` for models it does not know.
pub fn platform_name(vendor: Vendor, family: u32, model: u32) -> Option<&'static str> {
    if vendor.is_amd_like() && family >= 0x17 {
        return Some("amd-f17h+");
    }
    intel_platform(vendor, family, model).map(|p| p.name)
}

/// Residency MSRs of a model (anchors.md §4.4); empty when unknown, on AMD
/// and Hygon (which expose C-states only through cpuidle) and off x86.
pub fn cstate_regs(vendor: Vendor, family: u32, model: u32) -> CstateRegs {
    let mut regs = CstateRegs {
        core: Vec::new(),
        module: Vec::new(),
        pkg: Vec::new(),
    };
    let Some(p) = intel_platform(vendor, family, model) else {
        return regs;
    };
    let has = |bit: u16| p.cstates & bit != 0;
    // Without MSR_CORE_C1_RES, C1 is derived (TSC − MPERF − C3 − C6 − C7), not read.
    if has(CC1) && p.core_c1_msr {
        regs.core.push(("C1", MSR_CORE_C1_RES));
    }
    if has(CC3) {
        regs.core.push(("C3", MSR_CORE_C3_RESIDENCY));
    }
    if has(CC6) {
        let reg = if p.knl_core_c6 {
            MSR_KNL_CORE_C6_RESIDENCY
        } else {
            MSR_CORE_C6_RESIDENCY
        };
        regs.core.push(("C6", reg));
    }
    if has(CC7) {
        regs.core.push(("C7", MSR_CORE_C7_RESIDENCY));
    }
    if p.module_c6_msr {
        regs.module.push(("MC6", MSR_MODULE_C6_RES_MS));
    }
    regs.pkg = pkg_regs(&p);
    regs
}

fn pkg_regs(p: &Platform) -> Vec<(&'static str, u32)> {
    let pc6 = if p.atom_pkg_c6 {
        MSR_PKG_C7_RESIDENCY
    } else {
        MSR_PKG_C6_RESIDENCY
    };
    [
        (PC2, "PC2", MSR_PKG_C2_RESIDENCY),
        (PC3, "PC3", MSR_PKG_C3_RESIDENCY),
        (PC6, "PC6", pc6),
        (PC7, "PC7", MSR_PKG_C7_RESIDENCY),
        (PC8, "PC8", MSR_PKG_C8_RESIDENCY),
        (PC9, "PC9", MSR_PKG_C9_RESIDENCY),
        (PC10, "PC10", MSR_PKG_C10_RESIDENCY),
    ]
    .into_iter()
    .filter(|(bit, _, _)| p.cstates & bit != 0)
    .map(|(_, name, reg)| (name, reg))
    .collect()
}

/// RAPL registers of a model; `None` when it has no RAPL or is unknown.
/// AMD/Hygon family 17h and later: package and per-core energy.
pub fn rapl_regs(vendor: Vendor, family: u32, model: u32) -> Option<RaplRegs> {
    if vendor.is_amd_like() {
        return (family >= 0x17).then(|| RaplRegs {
            unit: MSR_AMD_RAPL_POWER_UNIT,
            domains: vec![
                ("pkg", MSR_AMD_PKG_ENERGY_STATUS),
                ("core", MSR_AMD_CORE_ENERGY_STATUS),
            ],
            per_core: vec!["core"],
            fixed_dram_unit_j: None,
            fixed_psys_unit_j: None,
            silvermont_unit: false,
        });
    }
    let p = intel_platform(vendor, family, model)?;
    if p.rapl == 0 {
        return None;
    }
    let domains = [
        (R_PKG, "pkg", MSR_PKG_ENERGY_STATUS),
        (R_CORES, "cores", MSR_PP0_ENERGY_STATUS),
        (R_RAM, "ram", MSR_DRAM_ENERGY_STATUS),
        (R_GPU, "gpu", MSR_PP1_ENERGY_STATUS),
        (R_PSYS, "psys", MSR_PLATFORM_ENERGY_STATUS),
    ]
    .into_iter()
    .filter(|(bit, _, _)| p.rapl & bit != 0)
    .map(|(_, name, reg)| (name, reg))
    .collect();
    Some(RaplRegs {
        unit: MSR_RAPL_POWER_UNIT,
        domains,
        per_core: Vec::new(),
        fixed_dram_unit_j: p.fixed_dram_unit.then_some(15.3e-6),
        fixed_psys_unit_j: p.fixed_psys_unit.then_some(1.0),
        silvermont_unit: p.silvermont_unit,
    })
}

fn energy_bits(unit_msr: u64) -> u32 {
    ((unit_msr >> 8) & 0x1F) as u32
}

/// Joules per energy count: `1/2^bits[12:8]` of the RAPL unit MSR (Intel and AMD).
pub fn energy_unit_joules(unit_msr: u64) -> f64 {
    1.0 / f64::from(1u32 << energy_bits(unit_msr))
}

/// Watts per power count: `1/2^bits[3:0]` of the RAPL unit MSR.
pub fn power_unit_watts(unit_msr: u64) -> f64 {
    1.0 / f64::from(1u32 << (unit_msr & 0xF))
}

/// Seconds per time count: `1/2^bits[19:16]` of the RAPL unit MSR.
pub fn time_unit_seconds(unit_msr: u64) -> f64 {
    1.0 / f64::from(1u32 << ((unit_msr >> 16) & 0xF))
}

/// `TjMax` in °C from `MSR_IA32_TEMPERATURE_TARGET` bits 23:16; `None` when 0
/// (the register is implemented but does not say).
pub fn tjmax(temperature_target_msr: u64) -> Option<u32> {
    let t = ((temperature_target_msr >> 16) & 0xFF) as u32;
    (t != 0).then_some(t)
}

/// TCC activation offset in °C below `TjMax` (bits 29:24); shown, never subtracted.
pub fn tcc_offset(temperature_target_msr: u64) -> u32 {
    ((temperature_target_msr >> 24) & 0x3F) as u32
}

/// A decoded `IA32_THERM_STATUS` or `IA32_PACKAGE_THERM_STATUS`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per status bit of the register"
)]
pub struct ThermStatus {
    /// Temperature: `TjMax` minus the readout (bits 22:16), only when bit 31 says it is valid.
    pub temp_c: Option<i32>,
    /// Bit 0: the thermal sensor is at or above the TCC activation point now.
    pub throttling: bool,
    /// Bit 2: PROCHOT# or FORCEPR# is asserted now.
    pub prochot: bool,
    /// Bit 4: critical temperature reached.
    pub critical: bool,
    /// Bit 10: the frequency is below the OS request because of a power limit.
    pub power_limit: bool,
    /// The sticky log bits (1, 3, 5, 7, 9, 11, 13, 15) as they stand in the MSR.
    pub log_bits: u32,
}

/// Decodes a thermal status MSR against `TjMax`.
pub fn decode_therm_status(msr: u64, tjmax: u32) -> ThermStatus {
    let valid = msr & (1 << 31) != 0;
    let readout = ((msr >> 16) & 0x7F) as i32;
    ThermStatus {
        temp_c: valid.then(|| tjmax as i32 - readout),
        throttling: msr & (1 << 0) != 0,
        prochot: msr & (1 << 2) != 0,
        critical: msr & (1 << 4) != 0,
        power_limit: msr & (1 << 10) != 0,
        log_bits: (msr & 0xAAAA) as u32,
    }
}

#[cfg(test)]
#[expect(
    clippy::float_cmp,
    reason = "energy units are powers of two or fixed constants, exact in f64"
)]
mod tests {
    use super::*;
    use crate::os::msr::{FakeMsr, MsrAccess};

    fn names(regs: &[(&'static str, u32)]) -> Vec<&'static str> {
        regs.iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn haswell_client_has_c3_c6_c7_and_pc2_to_pc7() {
        let r = cstate_regs(Vendor::Intel, 6, 0x3C);
        assert_eq!(r.core, [("C3", 0x3FC), ("C6", 0x3FD), ("C7", 0x3FE)]);
        assert_eq!(
            r.pkg,
            [
                ("PC2", 0x60D),
                ("PC3", 0x3F8),
                ("PC6", 0x3F9),
                ("PC7", 0x3FA)
            ]
        );
        assert!(r.module.is_empty());
    }

    #[test]
    fn haswell_ult_adds_pc8_to_pc10() {
        let r = cstate_regs(Vendor::Intel, 6, 0x45);
        assert_eq!(
            names(&r.pkg),
            ["PC2", "PC3", "PC6", "PC7", "PC8", "PC9", "PC10"]
        );
        assert_eq!(
            r.pkg[4..],
            [("PC8", 0x630), ("PC9", 0x631), ("PC10", 0x632)]
        );
    }

    #[test]
    fn skylake_x_has_only_c6_and_pc2_pc6() {
        let r = cstate_regs(Vendor::Intel, 6, 0x55);
        assert_eq!(r.core, [("C6", 0x3FD)]);
        assert_eq!(r.pkg, [("PC2", 0x60D), ("PC6", 0x3F9)]);
    }

    #[test]
    fn tiger_lake_reads_c1_from_its_own_msr() {
        let r = cstate_regs(Vendor::Intel, 6, 0x8C);
        assert_eq!(r.core, [("C1", 0x660), ("C6", 0x3FD), ("C7", 0x3FE)]);
        assert_eq!(
            names(&r.pkg),
            ["PC2", "PC3", "PC6", "PC7", "PC8", "PC9", "PC10"]
        );
    }

    #[test]
    fn alder_lake_lacks_pc7_and_pc9() {
        let r = cstate_regs(Vendor::Intel, 6, 0x97);
        assert_eq!(names(&r.pkg), ["PC2", "PC3", "PC6", "PC8", "PC10"]);
    }

    #[test]
    fn atom_and_phi_use_their_odd_registers() {
        // Silvermont: package C6 lives at 0x3FA, module C6 at 0x664.
        let slv = cstate_regs(Vendor::Intel, 6, 0x37);
        assert_eq!(slv.pkg, [("PC6", 0x3FA)]);
        assert_eq!(slv.module, [("MC6", 0x664)]);
        assert_eq!(slv.core, [("C1", 0x660), ("C6", 0x3FD)]);
        // Knights Landing: core C6 at 0x3FF.
        let knl = cstate_regs(Vendor::Intel, 6, 0x57);
        assert_eq!(knl.core, [("C6", 0x3FF)]);
        assert_eq!(knl.pkg, [("PC3", 0x3F8), ("PC6", 0x3F9)]);
    }

    #[test]
    fn amd_unknown_and_other_vendors_have_no_residency_msrs() {
        let empty = CstateRegs {
            core: vec![],
            module: vec![],
            pkg: vec![],
        };
        assert_eq!(cstate_regs(Vendor::Amd, 0x17, 1), empty);
        assert_eq!(cstate_regs(Vendor::Hygon, 0x18, 0), empty);
        assert_eq!(cstate_regs(Vendor::Intel, 6, 0x7D), empty); // ICELAKE: turbostat lacks it
        assert_eq!(cstate_regs(Vendor::Intel, 15, 0x3C), empty); // wrong family
        assert_eq!(cstate_regs(Vendor::Other, 6, 0x3C), empty);
    }

    #[test]
    fn nehalem_has_no_rapl_and_sandy_bridge_client_has_gpu() {
        assert_eq!(rapl_regs(Vendor::Intel, 6, 0x1E), None);
        let snb = rapl_regs(Vendor::Intel, 6, 0x2A).unwrap();
        assert_eq!(snb.unit, 0x606);
        assert_eq!(
            snb.domains,
            [("pkg", 0x611), ("cores", 0x639), ("gpu", 0x641)]
        );
    }

    #[test]
    fn server_rapl_has_dram_with_fixed_unit() {
        let skx = rapl_regs(Vendor::Intel, 6, 0x55).unwrap();
        assert_eq!(skx.domains, [("pkg", 0x611), ("ram", 0x619)]);
        assert_eq!(skx.domain_unit_joules("ram", 0xA1003), 15.3e-6);
        assert_eq!(skx.domain_unit_joules("pkg", 0xA1003), 1.0 / 65536.0);
        let spr = rapl_regs(Vendor::Intel, 6, 0x8F).unwrap();
        assert_eq!(
            spr.domains,
            [("pkg", 0x611), ("ram", 0x619), ("psys", 0x64D)]
        );
        assert_eq!(spr.domain_unit_joules("psys", 0xA0E03), 1.0);
        assert_eq!(spr.domain_unit_joules("ram", 0xA0E03), 1.0 / 16384.0);
    }

    #[test]
    fn skylake_client_has_all_five_domains() {
        let skl = rapl_regs(Vendor::Intel, 6, 0x8E).unwrap();
        assert_eq!(names(&skl.domains), ["pkg", "cores", "ram", "gpu", "psys"]);
    }

    #[test]
    fn amd_zen_rapl_is_pkg_plus_per_core() {
        let zen = rapl_regs(Vendor::Amd, 0x19, 0x21).unwrap();
        assert_eq!(zen.unit, 0xC001_0299);
        assert_eq!(zen.domains, [("pkg", 0xC001_029B), ("core", 0xC001_029A)]);
        assert_eq!(zen.per_core, ["core"]);
        assert!(rapl_regs(Vendor::Hygon, 0x18, 0).is_some());
        assert_eq!(rapl_regs(Vendor::Amd, 0x15, 0x60), None);
    }

    #[test]
    fn silvermont_energy_unit_is_microjoules_times_power_of_two() {
        let slv = rapl_regs(Vendor::Intel, 6, 0x37).unwrap();
        // bits 12:8 = 5 → 2^5 µJ = 32 µJ
        assert_eq!(slv.domain_unit_joules("pkg", 0x0505), 32e-6);
    }

    #[test]
    fn rapl_units_from_a_fake_msr() {
        let mut msr = FakeMsr::default();
        msr.values.insert((0, MSR_RAPL_POWER_UNIT), 0xA1003);
        let unit = msr.read(0, MSR_RAPL_POWER_UNIT).unwrap();
        assert_eq!(energy_unit_joules(unit), 1.0 / 65536.0); // bits 12:8 = 0x10
        assert_eq!(power_unit_watts(unit), 0.125); // bits 3:0 = 3
        assert_eq!(time_unit_seconds(unit), 1.0 / 1024.0); // bits 19:16 = 0xA
        assert_eq!(energy_unit_joules(0), 1.0);
        assert_eq!(energy_unit_joules(u64::MAX), 1.0 / f64::from(1u32 << 31));
    }

    #[test]
    fn tjmax_and_offset_from_a_fake_msr() {
        let mut msr = FakeMsr::default();
        msr.values.insert((0, MSR_TEMPERATURE_TARGET), 0x64_0000);
        msr.values.insert((1, MSR_TEMPERATURE_TARGET), 0x0A5F_0000);
        assert_eq!(
            tjmax(msr.read(0, MSR_TEMPERATURE_TARGET).unwrap()),
            Some(100)
        );
        let t1 = msr.read(1, MSR_TEMPERATURE_TARGET).unwrap();
        assert_eq!(tjmax(t1), Some(95));
        assert_eq!(tcc_offset(t1), 10);
        assert_eq!(tjmax(0xFF00_FFFF), None);
        assert!(msr.read(2, MSR_TEMPERATURE_TARGET).is_err());
    }

    #[test]
    fn therm_status_valid_reading() {
        let mut msr = FakeMsr::default();
        // valid (bit 31), resolution 1 (bit 27), readout 0x39 = 57 below TjMax
        msr.values.insert((0, MSR_THERM_STATUS), 0x8839_0000);
        let s = decode_therm_status(msr.read(0, MSR_THERM_STATUS).unwrap(), 100);
        assert_eq!(
            s,
            ThermStatus {
                temp_c: Some(43),
                throttling: false,
                prochot: false,
                critical: false,
                power_limit: false,
                log_bits: 0,
            }
        );
    }

    #[test]
    fn therm_status_flags_and_logs() {
        // bits 0, 2, 10 active, bit 11 logged; readout 0x22 = 34
        let s = decode_therm_status(0x8822_0C05, 100);
        assert_eq!(s.temp_c, Some(66));
        assert!(s.throttling && s.prochot && s.power_limit && !s.critical);
        assert_eq!(s.log_bits, 0x800);
        let c = decode_therm_status(0x8800_0030, 90); // critical + its log, readout 0
        assert_eq!(c.temp_c, Some(90));
        assert!(c.critical);
        assert_eq!(c.log_bits, 0x20);
    }

    #[test]
    fn therm_status_without_valid_bit_has_no_temperature() {
        assert_eq!(decode_therm_status(0x0839_0000, 100).temp_c, None);
        // bit 23 is outside the 7-bit readout
        assert_eq!(decode_therm_status(0x80B9_0000, 100).temp_c, Some(43));
        // a readout above TjMax gives a negative reading, not a wrap
        assert_eq!(decode_therm_status(0x807F_0000, 100).temp_c, Some(-27));
    }

    #[test]
    fn vendor_ids() {
        assert_eq!(Vendor::from_vendor_id("GenuineIntel"), Vendor::Intel);
        assert_eq!(Vendor::from_vendor_id(" AuthenticAMD\n"), Vendor::Amd);
        assert_eq!(Vendor::from_vendor_id("HygonGenuine"), Vendor::Hygon);
        assert_eq!(Vendor::from_vendor_id("CentaurHauls"), Vendor::Other);
        assert_eq!(platform_name(Vendor::Intel, 6, 0x3C), Some("hsw"));
        assert_eq!(platform_name(Vendor::Amd, 0x17, 1), Some("amd-f17h+"));
        assert_eq!(platform_name(Vendor::Intel, 6, 0x7D), None);
    }
}
