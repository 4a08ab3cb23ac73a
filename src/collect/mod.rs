//! One module per kernel interface. Each turns raw text (or raw counters)
//! into plain data; none of them computes a rate.

use crate::base::ParseError;
pub(crate) mod cgroup_name;
pub mod cpufreq;
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
