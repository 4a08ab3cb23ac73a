//! Parses `/proc/interrupts` into a per-CPU counter table, and holds the
//! table shape (`CPU` header, `LABEL: n n n description` rows) that
//! `/proc/softirqs` shares.
//!
//! The header lists the real ids of the online CPUs (`CPU0 CPU2 ...`), so
//! columns are addressed by CPU id, never by position. Rows may carry fewer
//! values than there are CPUs (`ERR:`, `MIS:`, arm64 `Err:`), or none at all
//! (`FIQ:  usb_fiq` on a Raspberry Pi). The kernel ends every line with a
//! newline: a last line without one is a cut-off read whose final number may
//! be cut mid-digit, so it is dropped rather than reported as a smaller count.

use serde::Serialize;

use super::ParseError;

/// The kind of disturbance a row counts, as far as its label tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum IrqKind {
    /// A numbered device interrupt line (network queue, disk, timer chip, ...).
    Device,
    /// The per-CPU scheduler tick (x86 `LOC`, arm64 `arch_timer`, s390 `CLK`).
    LocalTimer,
    /// Reschedule IPIs (x86 `RES`, arm64 "Rescheduling interrupts").
    Reschedule,
    /// Function-call IPIs (x86 `CAL`, arm64 "Function call interrupts").
    FunctionCall,
    /// TLB shootdown IPIs (x86 `TLB`).
    TlbShootdown,
    /// IRQ-work self-interrupts (x86 `IWI`, arm64 "IRQ work interrupts").
    IrqWork,
    /// Other inter-processor interrupts (arm64 CPU stop, timer broadcast, ...).
    OtherIpi,
    /// Non-maskable interrupts (`NMI`).
    Nmi,
    /// Everything else (spurious, thermal, machine check, softirq rows, ...).
    Other,
}

/// One row of the table: a label, its description and one value per CPU column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqRow {
    /// The text before the colon, trimmed (`27`, `LOC`, `IPI0`, `I/O`).
    pub label: String,
    /// The text after the values, with inner runs of white space collapsed.
    pub desc: String,
    /// What the row counts.
    pub kind: IrqKind,
    /// `counts[i]` belongs to `IrqTable::cpus[i]`; may be shorter than `cpus`.
    pub counts: Vec<u64>,
}

/// A whole `/proc/interrupts` or `/proc/softirqs` file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IrqTable {
    /// CPU ids from the header line, in column order.
    pub cpus: Vec<u32>,
    /// The rows in file order; blank lines are skipped.
    pub rows: Vec<IrqRow>,
}

impl IrqTable {
    /// Column index of a CPU id, `None` when the header does not list it.
    pub fn column(&self, cpu: u32) -> Option<usize> {
        // The kernel prints CPUs in ascending order; fall back to a scan so an
        // unsorted header still answers correctly.
        match self.cpus.binary_search(&cpu) {
            Ok(i) => Some(i),
            Err(_) => self.cpus.iter().position(|&c| c == cpu),
        }
    }

    /// Value of row `row` for `cpu`; `None` when the row has no value there.
    pub fn cell(&self, row: usize, cpu: u32) -> Option<u64> {
        let col = self.column(cpu)?;
        self.rows.get(row)?.counts.get(col).copied()
    }

    /// First row with this label.
    pub fn row(&self, label: &str) -> Option<&IrqRow> {
        self.rows.iter().find(|r| r.label == label)
    }

    /// Index of the first row with this label, for use with [`IrqTable::cell`].
    pub fn row_index(&self, label: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.label == label)
    }

    /// Sum over every row of one CPU's column (PCP's `kernel.percpu.intr`).
    ///
    /// Rows without a value for that column add nothing; `None` when the CPU
    /// is not in the header or the sum does not fit in 64 bits.
    pub fn cpu_total(&self, cpu: u32) -> Option<u64> {
        self.column_sum(cpu, |_| true)
    }

    /// Sum of one CPU's column over the rows of one kind.
    pub fn kind_total(&self, cpu: u32, kind: IrqKind) -> Option<u64> {
        self.column_sum(cpu, |r| r.kind == kind)
    }

    fn column_sum(&self, cpu: u32, keep: impl Fn(&IrqRow) -> bool) -> Option<u64> {
        let col = self.column(cpu)?;
        self.rows
            .iter()
            .filter(|r| keep(r))
            .try_fold(0u64, |acc, r| match r.counts.get(col) {
                Some(&v) => acc.checked_add(v),
                None => Some(acc),
            })
    }
}

/// Parses `/proc/interrupts`, classifying rows with [`classify_interrupt`].
pub fn parse_interrupts(text: &str) -> Result<IrqTable, ParseError> {
    parse_table(text, "/proc/interrupts", classify_interrupt)
}

/// Like [`parse_interrupts`], but refills `out` in place (see [`parse_table_into`]).
pub fn parse_interrupts_into(text: &str, out: &mut IrqTable) -> Result<(), ParseError> {
    parse_table_into(text, "/proc/interrupts", classify_interrupt, out)
}

/// Parses any file with the `/proc/interrupts` table shape.
///
/// `file` names the file in errors; `classify` gets each row's label and
/// collapsed description. Errors: no header, a header token that is not
/// `CPUn`, a row without a colon or with an empty label, a value above 2^64.
pub fn parse_table(
    text: &str,
    file: &'static str,
    classify: fn(&str, &str) -> IrqKind,
) -> Result<IrqTable, ParseError> {
    let mut table = IrqTable::default();
    parse_table_into(text, file, classify, &mut table)?;
    Ok(table)
}

/// Like [`parse_table`], but refills `out`, reusing its row buffers.
///
/// Parsing every interval allocates nothing once the shape is stable (on
/// 1152 CPUs the counters alone are ~10 MB). On error `out` holds a
/// partial table and must not be used.
pub fn parse_table_into(
    text: &str,
    file: &'static str,
    classify: fn(&str, &str) -> IrqKind,
    out: &mut IrqTable,
) -> Result<(), ParseError> {
    let mut lines = whole_lines(text)
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !is_blank(l));
    let Some((header_no, header)) = lines.next() else {
        return Err(ParseError::new(file, 0, "no CPU header line"));
    };
    parse_header(header, &mut out.cpus)
        .map_err(|m| ParseError::new(file, header_no, m.to_string()))?;
    let ncpus = out.cpus.len();
    let mut used = 0;
    for (no, line) in lines {
        if used == out.rows.len() {
            out.rows.push(IrqRow {
                label: String::new(),
                desc: String::new(),
                kind: IrqKind::Other,
                counts: Vec::with_capacity(ncpus),
            });
        }
        let row = &mut out.rows[used];
        fill_row(line, ncpus, classify, row)
            .map_err(|m| ParseError::new(file, no, m.to_string()))?;
        used += 1;
    }
    out.rows.truncate(used);
    Ok(())
}

/// Classifies a `/proc/interrupts` row (x86, arm64 and s390x labels).
pub fn classify_interrupt(label: &str, desc: &str) -> IrqKind {
    if is_number(label) {
        // arm64 routes the per-CPU tick through a numbered GIC line.
        return if desc.ends_with("arch_timer") {
            IrqKind::LocalTimer
        } else {
            IrqKind::Device
        };
    }
    if label.strip_prefix("IPI").is_some_and(is_number) {
        return classify_arm_ipi(desc);
    }
    // s390x sub-rows of the EXT aggregate: CLK is the tick, EXC/EMS are SIGP IPIs.
    let s390_ext = desc.starts_with("[EXT]");
    match label {
        "LOC" => IrqKind::LocalTimer,
        "RES" => IrqKind::Reschedule,
        "CAL" => IrqKind::FunctionCall,
        "TLB" => IrqKind::TlbShootdown,
        "IWI" => IrqKind::IrqWork,
        "NMI" => IrqKind::Nmi,
        "CLK" if s390_ext => IrqKind::LocalTimer,
        "EXC" | "EMS" if s390_ext => IrqKind::OtherIpi,
        _ => IrqKind::Other,
    }
}

/// arm64 numbers its IPIs by enum position, which moved between kernels, so
/// the description is the stable key.
fn classify_arm_ipi(desc: &str) -> IrqKind {
    if desc == "Rescheduling interrupts" {
        IrqKind::Reschedule
    } else if desc.ends_with("unction call interrupts") {
        // "Function call interrupts" and arm32's "Single function call interrupts".
        IrqKind::FunctionCall
    } else if desc == "IRQ work interrupts" {
        IrqKind::IrqWork
    } else {
        IrqKind::OtherIpi
    }
}

/// The newline-terminated lines of `text`; an unterminated tail is a cut-off read.
pub(crate) fn whole_lines(text: &str) -> std::str::SplitTerminator<'_, char> {
    let end = text.rfind('\n').map_or(0, |p| p + 1);
    text[..end].split_terminator('\n')
}

/// True for a line holding only white space (or NUL padding from a capture).
pub(crate) fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace() || b == 0)
}

/// Parses an unsigned decimal; `None` for empty, non-digit or > 64-bit text.
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |acc, b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// What is wrong with one line of `/proc/interrupts` or `/proc/softirqs`.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
enum LineError {
    #[error("header token {0:?} is not CPUn")]
    NotACpu(String),
    #[error("header line lists no CPU")]
    NoCpu,
    #[error("row has no ':' after its label")]
    NoColon,
    #[error("row has an empty label")]
    EmptyLabel,
    #[error("value does not fit in 64 bits")]
    TooWide,
}

fn parse_header(line: &str, cpus: &mut Vec<u32>) -> Result<(), LineError> {
    cpus.clear();
    for token in line.split_ascii_whitespace() {
        let id = token
            .strip_prefix("CPU")
            .and_then(|n| if is_number(n) { n.parse().ok() } else { None })
            .ok_or_else(|| LineError::NotACpu(token.to_string()))?;
        cpus.push(id);
    }
    if cpus.is_empty() {
        return Err(LineError::NoCpu);
    }
    Ok(())
}

fn fill_row(
    line: &str,
    ncpus: usize,
    classify: fn(&str, &str) -> IrqKind,
    row: &mut IrqRow,
) -> Result<(), LineError> {
    let (label, rest) = line.split_once(':').ok_or(LineError::NoColon)?;
    let label = label.trim();
    if label.is_empty() {
        return Err(LineError::EmptyLabel);
    }
    let desc_start = parse_counts(rest.as_bytes(), ncpus, &mut row.counts)?;
    row.label.clear();
    row.label.push_str(label);
    collapse_spaces(&rest[desc_start..], &mut row.desc);
    row.kind = classify(label, &row.desc);
    Ok(())
}

/// Reads up to `ncpus` whitespace-separated numbers into `counts`; returns
/// the byte offset where the description begins (the first non-number token).
fn parse_counts(bytes: &[u8], ncpus: usize, counts: &mut Vec<u64>) -> Result<usize, LineError> {
    // u64 holds any 19-digit number; longer runs are checked separately.
    const SAFE_DIGITS: usize = 19;
    counts.clear();
    let len = bytes.len();
    let mut pos = 0;
    loop {
        pos = skip_spaces(bytes, pos);
        if pos == len || counts.len() == ncpus {
            return Ok(pos);
        }
        let start = pos;
        let mut value: u64 = 0;
        while pos < len {
            let digit = bytes[pos].wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
            pos += 1;
        }
        if pos == start || (pos < len && !bytes[pos].is_ascii_whitespace()) {
            return Ok(start);
        }
        if pos - start > SAFE_DIGITS {
            value = std::str::from_utf8(&bytes[start..pos])
                .ok()
                .and_then(parse_u64)
                .ok_or(LineError::TooWide)?;
        }
        counts.push(value);
    }
}

/// Index of the first non-white-space byte at or after `pos`.
fn skip_spaces(bytes: &[u8], mut pos: usize) -> usize {
    // Columns are padded to 10 characters, so most bytes of a wide file are
    // spaces: step over them eight at a time.
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        if u64::from_ne_bytes(chunk.try_into().unwrap_or_default()) != SPACES {
            break;
        }
        pos += 8;
    }
    while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

fn collapse_spaces(text: &str, out: &mut String) {
    out.clear();
    for word in text.split_ascii_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn kinds(t: &IrqTable) -> Vec<(&str, IrqKind)> {
        t.rows.iter().map(|r| (r.label.as_str(), r.kind)).collect()
    }

    #[test]
    fn header_ids_address_columns_not_positions() {
        // CPU1 offline: the header skips it and columns follow the ids.
        let t = parse_interrupts(
            "           CPU0       CPU2       CPU3\n  \
             0:         18          5          7   IO-APIC   2-edge      timer\n\
             LOC:       100        200        300   Local timer interrupts\n",
        )
        .unwrap();
        assert_eq!(t.cpus, vec![0, 2, 3]);
        assert_eq!(t.column(2), Some(1));
        assert_eq!(t.column(1), None);
        assert_eq!(t.cell(1, 2), Some(200));
        assert_eq!(t.cell(1, 1), None);
        assert_eq!(t.cpu_total(3), Some(307));
        assert_eq!(t.cpu_total(1), None);
        assert_eq!(t.kind_total(0, IrqKind::LocalTimer), Some(100));
        assert_eq!(t.rows[0].desc, "IO-APIC 2-edge timer");
    }

    #[test]
    fn unsorted_header_still_finds_columns() {
        let t = parse_interrupts("CPU3 CPU1\nLOC: 1 2 x\n").unwrap();
        assert_eq!(t.column(1), Some(1));
        assert_eq!(t.cell(0, 3), Some(1));
    }

    #[test]
    fn single_value_rows_are_shorter_than_cpus() {
        // x86 ERR/MIS and arm64 Err carry one value and no description.
        let t = parse_interrupts(
            "  CPU0 CPU1\nLOC: 5 6 Local timer interrupts\nERR:          3\nMIS:          0\n",
        )
        .unwrap();
        let err = t.row("ERR").unwrap();
        assert_eq!(err.counts, vec![3]);
        assert_eq!(err.desc, "");
        assert_eq!(t.cell(1, 1), None);
        assert_eq!(t.cell(1, 0), Some(3));
        // ERR counts toward cpu0 only, as PCP's kernel.percpu.intr does.
        assert_eq!(t.cpu_total(0), Some(8));
        assert_eq!(t.cpu_total(1), Some(6));
    }

    #[test]
    fn blank_and_whitespace_only_lines_are_skipped() {
        // procfs-fixtures has an empty line between MIS and PIN; the aarch64
        // file ends with a line of spaces.
        let text = "\n   CPU0 CPU1\nMIS:   0\n\nPIN:   1   2   Posted-interrupt notification event\n      \t   \n";
        let t = parse_interrupts(text).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.row("PIN").unwrap().counts, vec![1, 2]);
    }

    #[test]
    fn label_glued_to_first_value() {
        // node_exporter aarch64 fixture: `IPI0:2768808080 2844211768 ...`.
        let t = parse_interrupts(
            "          CPU0       CPU1\nIPI0:2768808080 2844211768       Rescheduling interrupts\n",
        )
        .unwrap();
        let row = t.row("IPI0").unwrap();
        assert_eq!(row.counts, vec![2_768_808_080, 2_844_211_768]);
        assert_eq!(row.kind, IrqKind::Reschedule);
        assert_eq!(row.desc, "Rescheduling interrupts");
    }

    #[test]
    fn arm64_ipis_classified_by_description() {
        let text = "CPU0\n\
            10: 1 GICv3  27 Level     arch_timer\n\
            14: 2 GICv3  37 Level     ttyS0\n\
            IPI0: 3 Rescheduling interrupts\n\
            IPI1: 4 Function call interrupts\n\
            IPI2: 5 CPU stop interrupts\n\
            IPI5: 6 IRQ work interrupts\n\
            IPI6: 7 Single function call interrupts\n\
            Err: 0\n";
        let t = parse_interrupts(text).unwrap();
        assert_eq!(
            kinds(&t),
            vec![
                ("10", IrqKind::LocalTimer),
                ("14", IrqKind::Device),
                ("IPI0", IrqKind::Reschedule),
                ("IPI1", IrqKind::FunctionCall),
                ("IPI2", IrqKind::OtherIpi),
                ("IPI5", IrqKind::IrqWork),
                ("IPI6", IrqKind::FunctionCall),
                ("Err", IrqKind::Other),
            ]
        );
    }

    #[test]
    fn x86_named_rows_classified_by_label() {
        let labels = [
            ("NMI", IrqKind::Nmi),
            ("LOC", IrqKind::LocalTimer),
            ("SPU", IrqKind::Other),
            ("PMI", IrqKind::Other),
            ("IWI", IrqKind::IrqWork),
            ("RTR", IrqKind::Other),
            ("RES", IrqKind::Reschedule),
            ("CAL", IrqKind::FunctionCall),
            ("TLB", IrqKind::TlbShootdown),
            ("TRM", IrqKind::Other),
            ("THR", IrqKind::Other),
            ("DFR", IrqKind::Other),
            ("MCE", IrqKind::Other),
            ("MCP", IrqKind::Other),
            ("HYP", IrqKind::Other),
            ("HRE", IrqKind::Other),
            ("HVS", IrqKind::Other),
            ("ERR", IrqKind::Other),
            ("MIS", IrqKind::Other),
            ("PIN", IrqKind::Other),
            ("NPI", IrqKind::Other),
            ("PIW", IrqKind::Other),
        ];
        for (label, kind) in labels {
            assert_eq!(classify_interrupt(label, "whatever"), kind, "{label}");
        }
        // x86 IRQ 0 is the legacy PIT/HPET line, not the per-CPU tick.
        assert_eq!(
            classify_interrupt("0", "IO-APIC 2-edge timer"),
            IrqKind::Device
        );
    }

    #[test]
    fn s390x_named_rows_before_numbered_rows() {
        // Shape of pcp-16cpu-s390x: EXT/I/O/AIO first, then numbered, then [EXT] sub-rows.
        let text = "           CPU0       CPU1       \n\
            EXT:      30368       5872 \n\
            I/O:        675        559 \n\
            AIO:         39         32 \n  \
            3:          6          4   PCI-MSI  mlx5_async@pci:0002:00:00.0\n\
            CLK:       1000        900   [EXT] Clock Comparator\n\
            EXC:         11         12   [EXT] External Call\n\
            CIO:         62         57   [I/O] Common I/O Layer Interrupt\n\
            NMI:          0          0   [NMI] Machine Check\n";
        let t = parse_interrupts(text).unwrap();
        assert_eq!(
            kinds(&t),
            vec![
                ("EXT", IrqKind::Other),
                ("I/O", IrqKind::Other),
                ("AIO", IrqKind::Other),
                ("3", IrqKind::Device),
                ("CLK", IrqKind::LocalTimer),
                ("EXC", IrqKind::OtherIpi),
                ("CIO", IrqKind::Other),
                ("NMI", IrqKind::Nmi),
            ]
        );
        assert_eq!(t.row("I/O").unwrap().counts, vec![675, 559]);
        assert_eq!(t.row("EXT").unwrap().desc, "");
        assert_eq!(t.row("CLK").unwrap().desc, "[EXT] Clock Comparator");
    }

    #[test]
    fn two_cpu_s390x_without_descriptions() {
        // pcp-2cpu-s390x, whole file.
        let text =
            "           CPU0       CPU1\nEXT:      31903      57022\nI/O:       6989      33457\n";
        let t = parse_interrupts(text).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.cpu_total(0), Some(38892));
        assert_eq!(t.cpu_total(1), Some(90479));
    }

    #[test]
    fn row_with_no_counters_is_kept() {
        // Raspberry Pi (telegraf test data): `FIQ:              usb_fiq`.
        let t = parse_interrupts("           CPU0       CPU1\nFIQ:              usb_fiq\n 16:  0  0  bcm2836-timer 0 Edge arch_timer\n")
            .unwrap();
        let fiq = t.row("FIQ").unwrap();
        assert!(fiq.counts.is_empty());
        assert_eq!(fiq.desc, "usb_fiq");
        assert_eq!(t.cell(0, 0), None);
        assert_eq!(t.rows[1].kind, IrqKind::LocalTimer);
    }

    #[test]
    fn description_spacing_collapsed_commas_kept() {
        let t = parse_interrupts(
            "CPU0 CPU1\n 16:   13    4  IR-IO-APIC  16-fasteoi   ehci_hcd:usb3, mmc0\n \
             28: 1206282  65009  IR-PCI-MSI 327680-edge      xhci_hcd\n\
             120:  0  0  PCI-MSI 1-edge  PCIe PME\n",
        )
        .unwrap();
        assert_eq!(t.rows[0].desc, "IR-IO-APIC 16-fasteoi ehci_hcd:usb3, mmc0");
        assert_eq!(t.rows[1].desc, "IR-PCI-MSI 327680-edge xhci_hcd");
        assert_eq!(t.rows[2].desc, "PCI-MSI 1-edge PCIe PME");
    }

    #[test]
    fn description_starting_with_digits_is_not_a_count() {
        // Only as many numbers as CPUs are values; the rest is description.
        let t = parse_interrupts("CPU0\n 9:  7  42 something\n").unwrap();
        assert_eq!(t.rows[0].counts, vec![7]);
        assert_eq!(t.rows[0].desc, "42 something");
        // A token that starts with digits but is not a number ends the values.
        let t = parse_interrupts("CPU0 CPU1\n 9:  7  2-edge foo\n").unwrap();
        assert_eq!(t.rows[0].counts, vec![7]);
        assert_eq!(t.rows[0].desc, "2-edge foo");
    }

    #[test]
    fn values_above_2_pow_32_and_overflow() {
        let t = parse_interrupts("CPU0 CPU1\nLOC: 7458781179 18446744073709551615 x\n").unwrap();
        assert_eq!(t.rows[0].counts, vec![7_458_781_179, u64::MAX]);
        // The column sum no longer fits: unknown, not wrapped.
        let t = parse_interrupts("CPU0\nA: 18446744073709551615\nB: 1\n").unwrap();
        assert_eq!(t.cpu_total(0), None);
        let e = parse_interrupts("CPU0\nLOC: 18446744073709551616 x\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("64 bits"), "{e}");
        // 20 digits with leading zeros still fit.
        let t = parse_interrupts("CPU0\nLOC: 00000000000000000042 x\n").unwrap();
        assert_eq!(t.rows[0].counts, vec![42]);
    }

    #[test]
    fn truncated_mid_line_drops_the_cut_row() {
        let full = "  CPU0  CPU1\nLOC:  18017794  5791007  Local timer interrupts\nRES:  1234  5678  Rescheduling interrupts\n";
        // Cut inside the RES values: "1234  56".
        let cut = &full[..full.find("5678").unwrap() + 2];
        let t = parse_interrupts(cut).unwrap();
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.row("RES"), None);
        assert_eq!(t.cell(0, 1), Some(5_791_007));
        // Cut inside the header: nothing complete at all.
        assert_eq!(parse_interrupts("  CPU0  CP").unwrap_err().line, 0);
    }

    #[test]
    fn empty_and_garbage_input_are_errors() {
        assert_eq!(parse_interrupts("").unwrap_err().line, 0);
        assert_eq!(parse_interrupts("\n \n\t\n").unwrap_err().line, 0);
        let e = parse_interrupts("hello world\n").unwrap_err();
        assert_eq!((e.file, e.line), ("/proc/interrupts", 1));
        let e = parse_interrupts("CPU0 CPU1\nno colon here 1 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_interrupts("CPU0\n   : 1 2\n").unwrap_err();
        assert!(e.msg.contains("empty label"), "{e}");
        let e = parse_interrupts("CPUx\nLOC: 1\n").unwrap_err();
        assert!(e.msg.contains("CPUx"), "{e}");
        // Binary junk must not panic on a char boundary.
        assert!(parse_interrupts("\u{fffd}\u{0}\u{7f}é:\n").is_err());
        let t = parse_interrupts("CPU0\né: ñ 1\n").unwrap();
        assert_eq!(t.rows[0].desc, "ñ 1");
    }

    #[test]
    fn header_with_more_than_256_cpus() {
        let n = 300u32;
        let mut text = String::new();
        for c in 0..n {
            write!(text, " CPU{c}").unwrap();
        }
        text.push_str("\nLOC:");
        for c in 0..n {
            write!(text, " {}", u64::from(c) * 1000).unwrap();
        }
        text.push_str(" Local timer interrupts\nERR: 9\n");
        let t = parse_interrupts(&text).unwrap();
        assert_eq!(t.cpus.len(), 300);
        assert_eq!(t.cpus[299], 299);
        assert_eq!(t.cell(0, 256), Some(256_000));
        assert_eq!(t.cell(0, 299), Some(299_000));
        assert_eq!(t.cpu_total(0), Some(9));
        assert_eq!(t.row("LOC").unwrap().desc, "Local timer interrupts");
    }

    #[test]
    fn refill_reuses_rows_and_follows_shape_changes() {
        let mut t = IrqTable::default();
        let a = "CPU0 CPU1\n 5: 1 2 dev-a\nLOC: 3 4 Local timer interrupts\nERR: 7\n";
        parse_interrupts_into(a, &mut t).unwrap();
        assert_eq!(t, parse_interrupts(a).unwrap());
        // A CPU went offline and a row vanished: nothing of the old table leaks.
        let b = "CPU1\nLOC: 9 Local timer interrupts\n";
        parse_table_into(b, "/proc/interrupts", classify_interrupt, &mut t).unwrap();
        assert_eq!(t, parse_interrupts(b).unwrap());
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].kind, IrqKind::LocalTimer);
        // After a failed parse, the next good one is whole again.
        assert!(
            parse_table_into(
                "CPU0\nbad row\n",
                "/proc/interrupts",
                classify_interrupt,
                &mut t
            )
            .is_err()
        );
        parse_table_into(a, "/proc/interrupts", classify_interrupt, &mut t).unwrap();
        assert_eq!(t, parse_interrupts(a).unwrap());
    }

    #[test]
    fn parse_u64_rejects_junk() {
        assert_eq!(parse_u64("0"), Some(0));
        assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64("18446744073709551616"), None);
        assert_eq!(parse_u64(""), None);
        assert_eq!(parse_u64("-1"), None);
        assert_eq!(parse_u64("1a"), None);
    }
}
