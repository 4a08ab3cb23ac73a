//! The interruption sources a window names: softirqs by number and the
//! x86 system vectors, with the /proc/interrupts row that counts each.

/// The x86 system vectors whose `irq_vectors` entry/exit events noisetop
/// follows (those present on the running kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vector {
    /// LOC: the local APIC timer (the tick and hrtimers).
    LocalTimer,
    /// RES: rescheduling IPI.
    Reschedule,
    /// CAL: function call IPI.
    CallFunction,
    /// CAL: single-CPU function call IPI.
    CallFunctionSingle,
    /// IWI: `irq_work` self-IPI.
    IrqWork,
    /// TRM: thermal event interrupt.
    ThermalApic,
    /// THR: threshold APIC interrupt.
    ThresholdApic,
    /// DFR: deferred error APIC interrupt.
    DeferredErrorApic,
    /// PLT: platform (hypervisor callback) IPI.
    X86PlatformIpi,
    /// ERR: APIC error.
    ErrorApic,
    /// SPU: spurious interrupt.
    SpuriousApic,
}

impl Vector {
    /// Every vector noisetop knows.
    pub const ALL: [Vector; 11] = [
        Vector::LocalTimer,
        Vector::Reschedule,
        Vector::CallFunction,
        Vector::CallFunctionSingle,
        Vector::IrqWork,
        Vector::ThermalApic,
        Vector::ThresholdApic,
        Vector::DeferredErrorApic,
        Vector::X86PlatformIpi,
        Vector::ErrorApic,
        Vector::SpuriousApic,
    ];

    /// The event name without `_entry`/`_exit` (`local_timer`).
    pub fn event_base(self) -> &'static str {
        match self {
            Vector::LocalTimer => "local_timer",
            Vector::Reschedule => "reschedule",
            Vector::CallFunction => "call_function",
            Vector::CallFunctionSingle => "call_function_single",
            Vector::IrqWork => "irq_work",
            Vector::ThermalApic => "thermal_apic",
            Vector::ThresholdApic => "threshold_apic",
            Vector::DeferredErrorApic => "deferred_error_apic",
            Vector::X86PlatformIpi => "x86_platform_ipi",
            Vector::ErrorApic => "error_apic",
            Vector::SpuriousApic => "spurious_apic",
        }
    }

    /// Its x86 vector number (`arch/x86/include/asm/irq_vectors.h`), which
    /// its tracepoints pass.
    pub fn number(self) -> u32 {
        match self {
            Vector::LocalTimer => 0xec,
            Vector::Reschedule => 0xfd,
            Vector::CallFunction => 0xfc,
            Vector::CallFunctionSingle => 0xfb,
            Vector::IrqWork => 0xf6,
            Vector::ThermalApic => 0xfa,
            Vector::ThresholdApic => 0xf9,
            Vector::DeferredErrorApic => 0xf4,
            Vector::X86PlatformIpi => 0xf7,
            Vector::ErrorApic => 0xfe,
            Vector::SpuriousApic => 0xff,
        }
    }

    /// The vector of an x86 vector number, if noisetop knows it.
    pub fn from_number(n: u32) -> Option<Vector> {
        Vector::ALL.into_iter().find(|v| v.number() == n)
    }

    /// An IPI sent by another CPU (or itself, for `irq_work`).
    pub fn is_ipi(self) -> bool {
        matches!(
            self,
            Vector::Reschedule
                | Vector::CallFunction
                | Vector::CallFunctionSingle
                | Vector::IrqWork
        )
    }
}

/// Softirq names by vector number, as in the kernel's `softirq_to_name`.
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The name of softirq `vec`, `None` for a number this table lacks.
pub fn softirq_name(vec: u32) -> Option<&'static str> {
    SOFTIRQ_NAMES.get(vec as usize).copied()
}
