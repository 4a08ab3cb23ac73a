//! One module per kernel interface. Each turns raw text (or raw counters)
//! into plain data; none of them computes a rate.

pub mod cgroup_name;
pub mod cpufreq;
pub use crate::base::cpulist;
pub mod cpuidle;
pub mod cpuinfo;
pub mod facts;
pub mod hwmon;
pub mod interrupts;
pub mod powercap;
pub mod schedstat;
pub mod softirqs;
pub mod stat;
pub mod topology;
pub mod x86;

pub use crate::base::ParseError;
