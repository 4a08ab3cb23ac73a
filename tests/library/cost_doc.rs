//! The caps and sizes docs/cost.md and docs/who-ran.md give are the code's:
//! every row of the cost page's table names its constant and file, and is
//! checked against that constant (the public ones through the library, the
//! private ones in their source); the sentences that repeat a figure are
//! rebuilt from the same constants. A constant that changes fails here
//! until the pages say the new figure.

use noisetop::os::bpf::layout::{
    self, CPU_AREA_SIZE, CTL_SIZE, HIST_GP, IRQ_BASE, MAX_DEPTH, NHIST, NSLOTS, NSRC, NVEC,
    REMOTE_SIZE, VEC_BASE, VEC_FIRST,
};

use crate::docs;

/// A count as the pages write it: thousands apart by a space (`16 384`).
fn n(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The value of `const NAME: T = VALUE;` in the source file `rel`, as
/// written there (a number's digit separators dropped).
fn source_const(rel: &str, name: &str) -> String {
    let text = docs::read(rel);
    let at = text
        .find(&format!("const {name}: "))
        .unwrap_or_else(|| panic!("{rel} defines no {name}"));
    let line = &text[at..at + text[at..].find(';').unwrap()];
    let value = line.split_once('=').unwrap().1.trim();
    let digits = value.replace('_', "");
    if digits.parse::<f64>().is_ok() {
        digits
    } else {
        value.to_string()
    }
}

/// The value, from the code, of what a table row's constant cell names.
fn value_of(constant: &str) -> u64 {
    let count = |rel: &str, name: &str| -> u64 {
        source_const(rel, name)
            .parse()
            .unwrap_or_else(|e| panic!("{name} in {rel}: {e}"))
    };
    match constant {
        "`NSLOTS`, `src/os/bpf/layout.rs`" => NSLOTS as u64,
        "`NSRC`, `src/os/bpf/layout.rs`" => NSRC as u64,
        "`NSRC` less `IRQ_BASE`, `src/os/bpf/layout.rs`" => (NSRC - IRQ_BASE) as u64,
        "`MAX_DEPTH`, `src/os/bpf/layout.rs`" => MAX_DEPTH as u64,
        "`NHIST`, `src/os/bpf/layout.rs`" => NHIST as u64,
        "`CPU_AREA_SIZE`, `src/os/bpf/layout.rs`" => CPU_AREA_SIZE as u64,
        "`TASKS_KEPT`, `src/cmd/run/seen.rs`" => noisetop::cmd::run::seen::TASKS_KEPT as u64,
        "`CAUSES_KEPT`, `src/cmd/run/seen.rs`" => count("src/cmd/run/seen.rs", "CAUSES_KEPT"),
        "`MAX_CGROUPS`, `src/os/cgroups.rs`" => count("src/os/cgroups.rs", "MAX_CGROUPS"),
        "`KEEP_THREADS`, `src/pipeline/in_kernel.rs`" => {
            count("src/pipeline/in_kernel.rs", "KEEP_THREADS")
        }
        "`COUNT_RING_BYTES`, `src/os/switch_ring.rs`" => {
            noisetop::os::switch_ring::COUNT_RING_BYTES as u64
        }
        other => panic!("docs/cost.md names {other}, which this test does not check"),
    }
}

#[test]
fn every_cap_in_the_cost_table_is_the_codes() {
    let s = docs::section("docs/cost.md", "What is bounded");
    let rows: Vec<Vec<&str>> = s
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| what |"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert!(rows.len() >= 10, "{} rows", rows.len());
    for r in &rows {
        assert_eq!(r.len(), 3, "{r:?}");
        // the file it names defines the constant
        let (names, file) = r[2].rsplit_once(", ").unwrap();
        let file = file.trim_matches('`');
        let src = docs::read(file);
        for name in names.split(" less ") {
            let name = name.trim_matches('`');
            assert!(
                src.contains(&format!("const {name}: ")),
                "{file} defines {name}"
            );
        }
        assert_eq!(r[1], n(value_of(r[2])), "{}", r[0]);
    }
}

#[test]
fn the_figures_the_cost_page_repeats_are_the_codes() {
    let page = docs::flat(&docs::read("docs/cost.md"));
    let kept = noisetop::cmd::run::seen::TASKS_KEPT as u64;
    let cgroups: u64 = source_const("src/os/cgroups.rs", "MAX_CGROUPS")
        .parse()
        .unwrap();
    let causes: u64 = source_const("src/cmd/run/seen.rs", "CAUSES_KEPT")
        .parse()
        .unwrap();
    let rescan = source_const("src/os/cgroups.rs", "RESCAN");
    assert_eq!(rescan, "Duration::from_secs(10)", "the cgroup walk's pause");
    // the histogram's top: 2^39 ns, about 550 s
    let top = layout::bucket_bounds(NHIST - 1).1;
    assert_eq!(top, 1 << 39);
    assert_eq!(
        (top + 500_000_000) / 1_000_000_000,
        550,
        "{top} ns to the second"
    );
    let fd = noisetop::os::sys::fd_table_size;
    assert_eq!(fd(2), 2 * (64 + 4 * 2));
    assert_eq!(fd(1152), 2 * (64 + 4 * 1152));
    for said in [
        "(to 2^39 ns, about 550 s)".to_string(),
        format!(
            "one BPF array of one area per possible CPU ({} bytes each), one line of {} bytes per \
             possible CPU for what other CPUs add (migrations out) and a control line of {} bytes",
            n(CPU_AREA_SIZE as u64),
            REMOTE_SIZE,
            CTL_SIZE
        ),
        format!("interruptions nested deeper than {MAX_DEPTH})"),
        format!(
            "`run` keeps {} tasks per CPU by name: when more than {} have run there",
            n(kept),
            n(2 * kept)
        ),
        format!("the shortest past the first {} are folded", n(kept)),
        format!(
            "causes are held to {} likewise: past {}, those seen in the fewest intervals are \
             dropped",
            n(causes),
            n(2 * causes)
        ),
        "walked again at most every ten seconds".to_string(),
        format!(
            "a machine with more than {} maps the first found",
            n(cgroups)
        ),
        format!(
            "2 × (64 + 4 × CPUs) descriptors ({} on 2 CPUs, {} on 1152)",
            n(fd(2) as u64),
            n(fd(1152) as u64)
        ),
        "64 of noisetop's own (the terminal, /proc and /sys files, BPF maps and links, \
         sockets), 4 per possible CPU (perf counters) and as many again as room"
            .to_string(),
    ] {
        assert!(page.contains(&said), "docs/cost.md says {said:?}");
    }
}

#[test]
fn the_figures_of_the_who_ran_page_are_the_codes() {
    let page = docs::flat(&docs::read("docs/who-ran.md"));
    let top_pct = source_const("src/tui/cores.rs", "TOP_RUNNER_PCT");
    assert_eq!(top_pct, "5.0");
    let verdict = docs::read("src/noise/verdict.rs");
    for said in [
        format!(
            "H2 log-linear histogram ({} buckets per power of two, {} % relative error at most)",
            1u32 << HIST_GP,
            100.0 / f64::from(1u32 << (HIST_GP + 1))
        ),
        format!(
            "{NSRC} interruption sources: {VEC_BASE} for the softirqs by number ({} in use), \
             {NVEC} for the x86 vectors from {VEC_FIRST:#x}, and {} slots for device IRQs",
            layout::NSOFTIRQ,
            NSRC - IRQ_BASE
        ),
        format!("{NSLOTS} task slots: time between switches"),
        format!(
            "(tasks past the {NSLOTS} slots, IRQs past the {} slots, interruptions nested deeper \
             than {MAX_DEPTH})",
            NSRC - IRQ_BASE
        ),
        format!("is not known: N slices of tasks past the table's {NSLOTS}`"),
        "(`rustc[16073] 62%`, from 5 % of the window)".to_string(),
    ] {
        assert!(page.contains(&said), "docs/who-ran.md says {said:?}");
    }
    // the verdict's own words for slices past the table
    assert!(
        verdict.contains(&format!("slices of tasks past the table's {NSLOTS}")),
        "src/noise/verdict.rs words it as the page quotes"
    );
    let dashboard = docs::flat(&docs::read("docs/dashboard.md"));
    assert!(
        dashboard.contains("when it ran at least 5 % of the window (`rustc[16073] 62%`"),
        "docs/dashboard.md gives the threshold"
    );
}
