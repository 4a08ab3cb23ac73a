//! Parses `/proc/softirqs`: one row per softirq vector (`HI`, `TIMER`,
//! `NET_RX`, `SCHED`, `RCU`, ...) and one column per online CPU, in the same
//! table shape as `/proc/interrupts`.

use super::ParseError;
use super::interrupts::{IrqKind, IrqTable, parse_table, parse_table_into};

/// Parses `/proc/softirqs`; every row gets [`IrqKind::Other`].
///
/// Row names differ between kernels (`BLOCK_IOPOLL` became `IRQ_POLL` in
/// 4.5), so they are kept as printed.
pub fn parse_softirqs(text: &str) -> Result<IrqTable, ParseError> {
    parse_table(text, FILE, classify)
}

/// Like [`parse_softirqs`], but refills `out`, reusing its row buffers.
pub fn parse_softirqs_into(text: &str, out: &mut IrqTable) -> Result<(), ParseError> {
    parse_table_into(text, FILE, classify, out)
}

const FILE: &str = "/proc/softirqs";

fn classify(_label: &str, _desc: &str) -> IrqKind {
    IrqKind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_columns() {
        // procfs-fixtures/proc/softirqs, first rows.
        let text = "                    CPU0       CPU1       \n          \
                    HI:          3          0\n       \
                 TIMER:    2776180     247490\n\
            BLOCK_IOPOLL:          0          0\n";
        let t = parse_softirqs(text).unwrap();
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.row("TIMER").unwrap().counts, vec![2_776_180, 247_490]);
        assert_eq!(t.row("BLOCK_IOPOLL").unwrap().counts, vec![0, 0]);
        assert!(
            t.rows
                .iter()
                .all(|r| r.kind == IrqKind::Other && r.desc.is_empty())
        );
        assert_eq!(t.cpu_total(0), Some(2_776_183));
    }

    #[test]
    fn errors_name_the_file() {
        let e = parse_softirqs("").unwrap_err();
        assert_eq!((e.file, e.line), ("/proc/softirqs", 0));
        let e = parse_softirqs("CPU0\nTIMER 5\n").unwrap_err();
        assert_eq!((e.file, e.line), ("/proc/softirqs", 2));
    }

    #[test]
    fn refill_matches_fresh_parse() {
        let text = "   CPU0   CPU1\n   HI:  1  2\n  RCU:  3  4\n";
        let mut t = parse_softirqs("CPU5\nX: 1\nY: 2\nZ: 3\n").unwrap();
        parse_softirqs_into(text, &mut t).unwrap();
        assert_eq!(t, parse_softirqs(text).unwrap());
        assert_eq!(t.cpus, vec![0, 1]);
    }

    #[test]
    fn cut_off_last_row_is_dropped() {
        let t = parse_softirqs("   CPU0   CPU1\n   HI:  1  2\n  RCU:  6058").unwrap();
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.row("RCU"), None);
    }
}
