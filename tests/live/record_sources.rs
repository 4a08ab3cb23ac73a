//! What a live recording says about where its numbers come from and who
//! made a CPU noisy: each metric's source in the sidecar, the plot's
//! frequency title following it, and the `why` and `intruders` columns.

use std::process::Command;

fn noisetop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

#[test]
fn a_live_recording_names_its_sources_and_why_each_cpu_is_judged_so() {
    let _turn = crate::turn::take();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let watch = if cpus > 1 { "1" } else { "0" };
    let out = noisetop()
        .args([
            "--batch", "-n", "3", "-i", "200ms", "--watch", watch, "--record",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let side = noisetop::record::sidecar::Sidecar::read(&csv)
        .unwrap()
        .unwrap();
    // every metric the footer names, with what it was read from or why not
    assert_eq!(
        side.sources.len(),
        noisetop::sample::ladder::Metric::ALL.len()
    );
    for s in &side.sources {
        assert!(s.source.is_some() || s.note.is_some(), "{s:?}");
    }
    let freq = side.freq_source().unwrap().source.clone().unwrap();
    let svg = dir.path().join("r.svg");
    let st = noisetop()
        .arg("report")
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    if freq.to_ascii_lowercase().contains("aperf") {
        assert!(svg.contains("Avg_MHz (ΔAPERF/dt"), "{freq}");
    } else {
        let first = freq.split(';').next().unwrap().trim();
        assert!(
            !svg.contains("ΔAPERF"),
            "{freq}: the title must not claim APERF"
        );
        assert!(svg.contains(&format!("Avg_MHz (from {first})")), "{freq}");
    }
    // why is said for every CPU that is not quiet, and only then
    let mut rdr = csv::Reader::from_path(&csv).unwrap();
    let head = rdr.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (cpu, verdict, why, who) = (col("cpu"), col("verdict"), col("why"), col("intruders"));
    assert_eq!(
        head.len() - 3,
        why,
        "why, intruders and their cgroups end the row"
    );
    assert_eq!(head.get(head.len() - 1), Some("intruder_cgroups"));
    for r in rdr.records() {
        let r = r.unwrap();
        let row = r.iter().collect::<Vec<_>>().join(",");
        match &r[verdict] {
            "quiet" => assert_eq!(&r[why], "", "{row}"),
            "noisy" | "unknown" if r[cpu] != *"all" => assert!(!r[why].is_empty(), "{row}"),
            _ => {}
        }
        if r[cpu] != *watch {
            assert_eq!(&r[who], "", "only watched CPUs name intruders: {row}");
        }
        let named: Vec<&str> = r[who].split(';').filter(|s| !s.is_empty()).collect();
        assert!(named.len() <= 3, "{row}");
        for n in named {
            let (task, ms) = n.rsplit_once(':').unwrap();
            let ms: f64 = ms.parse().unwrap();
            assert!((0.0..=1000.0).contains(&ms), "{n}");
            let pid = task.rsplit_once('[').unwrap().1.strip_suffix(']').unwrap();
            assert!(pid.parse::<u32>().is_ok(), "{n}");
        }
    }
}
