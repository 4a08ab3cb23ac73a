//! What was read, as plain data: the machine's shape (`machine`), one
//! reading of every counter (`snapshot`), the difference of two readings
//! as rates and percentages (`interval`), and interrupt rates by source
//! (`irq_rates`).

pub mod interval;
pub mod irq_rates;
pub mod machine;
pub mod snapshot;
