//! The screen for big machines and a newcomer: the overview of real
//! captures (96, 480 and 1152 CPUs, read from `../shared/captures`) and
//! of generated trees, every view's footer at 80×24, the stale marker,
//! the filter, and a finding opened with Enter.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Size;

use crate::os::capture::Captured;
use crate::os::fs::{Fs, Roots};
use crate::pipeline::{Driver, Msg, Step};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;
use crate::testkit::synth::Flavor;
use crate::tui::keys::Action;
use crate::tui::overview::Paint;
use crate::tui::state::{Change, Filter, Origin, Overlay, State, View};
use crate::tui::theme::Theme;

fn draw(s: &State, w: u16, h: u16) -> String {
    let mut s = s.clone();
    s = s.with_screen(Size::new(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(&s, f.area())).unwrap();
    t.backend().to_string()
}

fn filtered(f: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\b\d\d:\d\d:\d\d\b", "hh:mm:ss");
    settings.add_filter(r"kernel \d[^ │]*", "kernel [release]");
    settings.bind(f);
}

/// Plays a generated capture through the replay feed.
fn generated(flavor: Flavor, cpus: u32, watched: &[u32]) -> State {
    super::tests::played_for(flavor, cpus, 3, watched, false)
}

/// The 64-CPU server watching 2-5, played once for every test here.
fn server() -> State {
    static S: std::sync::OnceLock<State> = std::sync::OnceLock::new();
    S.get_or_init(|| generated(Flavor::IntelServer, 64, &[2, 3, 4, 5]))
        .clone()
}

/// The two-CPU guest, played once.
fn vm() -> State {
    static S: std::sync::OnceLock<State> = std::sync::OnceLock::new();
    S.get_or_init(|| generated(Flavor::Vm, 2, &[])).clone()
}

fn capture(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures")
        .join(name);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("{} absent: skipped", p.display());
        None
    }
}

/// A real capture is one instant: read twice one second apart, its rates
/// are zero and its figures known where the tree has the files.
fn real(tree: &Path) -> State {
    let hw = Captured {
        stamp: crate::os::hw::Stamp {
            mono_ns: 1_000_000_000,
            wall_ns: 0,
        },
        ..Captured::default()
    };
    let e = Engine::new(Sampler::new(Fs::new(Roots::under(tree)), hw));
    let mut d = Driver::new(e);
    assert!(matches!(d.step(), Step::Ready(_)));
    d.engine.sampler.hw.stamp.mono_ns += 1_000_000_000;
    let Step::Sample(mut sample) = d.step() else {
        panic!("an interval")
    };
    sample.position = Some((1, 1));
    let mut s = State::new(
        d.engine.sampler.machine.clone(),
        Origin::Replay("capture".into()),
        Duration::from_secs(1),
        Theme { color: false },
    );
    s.update_feed(Msg::Sample(sample));
    s = s.with_view(View::Overview);
    s
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn overview_of_real_captures_at_96_480_and_1152_cpus() {
    for (name, cpus) in [
        ("util-linux-epyc7451-2s-96cpu", 96),
        ("pcp-hpbl920gen8-480cpu", 480),
        ("pcp-1152cpu-x86_64", 1152),
    ] {
        let Some(tree) = capture(name) else { continue };
        let s = real(&tree);
        assert_eq!(s.judged().machine().online.len(), cpus, "{name}");
        filtered(|| {
            for (w, h) in [(160, 50), (80, 24)] {
                insta::assert_snapshot!(format!("overview_{name}_{w}x{h}"), draw(&s, w, h));
            }
        });
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn epyc_siblings_sit_side_by_side_by_package() {
    let Some(tree) = capture("util-linux-epyc7451-2s-96cpu") else {
        return;
    };
    let s = real(&tree);
    let g =
        crate::tui::overview::layout(s.judged().machine(), &s.judged().machine().online, 158, 40);
    // thread siblings are N and N+48; package 0 holds 0-23 and 48-71
    let at = |cpu: u32| g.cells.iter().find(|c| c.0 == cpu).copied().unwrap();
    assert_eq!((at(48).1, at(48).2), (at(0).1 + 1, at(0).2));
    assert_eq!(g.labels.len(), 2);
    assert!(g.labels[1].0 > at(71).2, "package 1 starts below package 0");
}

#[test]
fn overview_of_generated_trees_up_to_1152_cpus() {
    filtered(|| {
        for (flavor, cpus) in [(Flavor::AmdServer, 96), (Flavor::IntelServer, 1152)] {
            let mut s = generated(flavor, cpus, &[2, 3, 4, 5]);
            s = s.with_view(View::Overview);
            for paint in [
                Paint::Busy,
                Paint::Mhz,
                Paint::Cstate,
                Paint::Irq,
                Paint::Verdict,
            ] {
                s = s.with_paint(paint);
                insta::assert_snapshot!(
                    format!("overview_generated_{cpus}_{paint:?}_160x50"),
                    draw(&s, 160, 50)
                );
            }
            s = s.with_paint(Paint::Busy);
            insta::assert_snapshot!(format!("overview_generated_{cpus}_80x24"), draw(&s, 80, 24));
        }
    });
}

#[test]
fn arrows_move_in_the_grid_and_enter_opens_the_detail() {
    let mut s = server();
    s = s.with_view(View::Overview);
    s = s.with_screen(Size::new(160, 50));
    s.set_selected(Some(0));
    s.update(Action::Right);
    // siblings of the generated Xeon are N and N+32: right of 0 is its twin
    assert_eq!(s.nav().selected(), Some(32));
    s.update(Action::Left);
    assert_eq!(s.nav().selected(), Some(0));
    s.update(Action::Down);
    let below = s.nav().selected().unwrap();
    assert_ne!(below, 0, "one grid row down");
    s.update(Action::Up);
    assert_eq!(s.nav().selected(), Some(0));
    s.update(Action::Detail);
    assert_eq!(
        (s.nav().view(), s.nav().back()),
        (View::Detail, View::Overview)
    );
    s.update(Action::Back);
    assert_eq!(s.nav().view(), View::Overview);
}

#[test]
fn every_view_keeps_help_view_and_watch_in_the_footer_at_80x24() {
    let s = server();
    for v in View::ALL {
        let mut x = s.clone();
        x = x.with_view(v);
        let text = draw(&x, 80, 24);
        let footer = text.lines().last().unwrap();
        for hint in ["? help", "tab view", "m watch", "q quit"] {
            assert!(footer.contains(hint), "{v:?}: {footer}");
        }
    }
}

#[test]
fn lists_that_scroll_say_which_rows_show() {
    let mut s = server();
    for (v, want) in [
        (View::Cores, "rows 1–15 of 64"),
        (View::Cstates, "rows 1–"),
        (View::Interrupts, "CPUs 1–"),
    ] {
        s = s.with_view(v);
        let text = draw(&s, 80, 24);
        assert!(text.contains(want), "{v:?}:\n{text}");
    }
}

#[test]
fn esc_closes_popups_and_the_detail_and_never_quits_q_quits() {
    let mut s = vm();
    s.update(Action::Help);
    s.update(Action::Back);
    assert_eq!(s.nav().overlay(), Overlay::None);
    assert!(!s.pacing().quit());
    s.update(Action::Detail);
    s.update(Action::Back);
    assert_eq!(s.nav().view(), View::Cores);
    // on a main view Esc is nothing to lose the program by
    for v in View::TABS {
        s = s.with_view(v);
        s.update(Action::Back);
        assert!(!s.pacing().quit(), "{v:?}");
        assert_eq!(s.nav().view(), v);
    }
    s.update(Action::Quit);
    assert!(s.pacing().quit());
}

#[test]
fn with_watch_the_marked_row_is_the_one_enter_opens() {
    let m = vm().judged().machine().clone();
    let mut s = State::new(
        m,
        Origin::Live,
        std::time::Duration::from_secs(1),
        crate::tui::theme::Theme { color: false },
    )
    .with_watched(vec![1]);
    assert_eq!(s.nav().selected(), Some(1));
    s.update(Action::Detail);
    assert_eq!(
        (s.nav().view(), s.nav().selected()),
        (View::Detail, Some(1))
    );
}

#[test]
fn the_filter_keeps_only_watched_or_noisy_cpus() {
    let mut s = server();
    s.update(Action::Filter);
    assert_eq!(s.nav().filter(), Filter::Watched);
    assert_eq!(s.order(), vec![2, 3, 4, 5]);
    s.update(Action::Filter);
    assert_eq!(s.nav().filter(), Filter::Noisy);
    let noisy = s.order();
    assert!(!noisy.is_empty() && noisy.len() < 64, "{noisy:?}");
    assert!(noisy.iter().all(|c| s.tags_of(*c).count() > 0));
    assert!(s.nav().selected().is_some_and(|c| noisy.contains(&c)));
    s.update(Action::Filter);
    assert_eq!(s.order().len(), 64);
}

#[test]
fn a_live_sample_older_than_two_intervals_is_marked_stale() {
    let mut s = vm();
    s.set_origin(Origin::Live);
    s.set_ended(None);
    let t0 = Instant::now();
    s.set_arrived(Some(t0));
    s.update(Change::Tick(t0 + Duration::from_millis(1900)));
    assert_eq!(s.stale_for(), None);
    assert!(!draw(&s, 160, 50).contains("STALE"));
    s.update(Change::Tick(t0 + Duration::from_millis(2100)));
    assert_eq!(s.stale_for(), Some(Duration::from_millis(2100)));
    let text = draw(&s, 160, 50);
    assert!(
        text.lines().next().unwrap().contains("STALE >2.0 s"),
        "{text}"
    );
    assert!(text.lines().last().unwrap().contains("STALE"), "{text}");
    // a paused screen is frozen on purpose, not stale
    s.update(Action::Pause);
    assert_eq!(s.stale_for(), None);
}

#[test]
fn enter_on_a_finding_opens_its_evidence_history_and_fix() {
    let mut s = server();
    s = s.with_view(View::Findings);
    s.update(Action::Down);
    assert_eq!(s.nav().finding_at(), 1);
    s.update(Action::Detail);
    assert_eq!(s.nav().overlay(), Overlay::Finding);
    let e = s.judged().log().newest_first()[1].clone();
    let text = draw(&s, 160, 50);
    assert!(text.contains("evidence") && text.contains("seen") && text.contains("fix"));
    assert!(text.contains(&format!("{} intervals", e.count)), "{text}");
    s.update(Action::Back);
    assert_eq!(s.nav().overlay(), Overlay::None);
    assert!(!s.pacing().quit());
}

#[test]
fn findings_wrap_at_80_columns_instead_of_cutting_words() {
    let mut s = server();
    s = s.with_view(View::Findings);
    let text = draw(&s, 80, 30);
    let fix = s.judged().log().newest_first()[0]
        .finding
        .fix
        .clone()
        .expect("the first finding has a fix");
    // the last word of the fix is on screen, whole
    let last = fix.split_whitespace().last().unwrap();
    assert!(text.contains(last), "{last}:\n{text}");
}

#[test]
fn the_glossary_of_the_help_scrolls_on_a_small_screen() {
    let mut s = vm();
    s.update(Action::Help);
    let top = draw(&s, 80, 24);
    assert!(top.contains("rows 1–"), "{top}");
    for _ in 0..60 {
        s.update(Action::Down);
    }
    let bottom = draw(&s, 80, 24);
    assert!(bottom.contains("verdict"), "{bottom}");
}

#[test]
fn page_keys_in_the_findings_view_move_between_findings_not_cpus() {
    let mut s = server();
    s = s.with_screen(ratatui::layout::Size::new(80, 24));
    s = s.with_view(View::Findings);
    let n = s.judged().log().len();
    assert!(n > 8, "the server capture has {n} findings");
    let cpu = s.nav().selected();
    s.update(Action::PageDown);
    // 16 body rows: the heading and seven findings of two lines or more
    assert_eq!(s.nav().finding_at(), 7);
    assert_eq!(s.nav().selected(), cpu, "the CPU selection stays");
    s.update(Action::Last);
    assert_eq!(s.nav().finding_at(), n - 1);
    let text = draw(&s, 80, 24);
    assert!(text.contains(&format!("of {n}")), "{text}");
    s.update(Action::PageUp);
    assert_eq!(s.nav().finding_at(), n - 8);
    s.update(Action::First);
    assert_eq!(s.nav().finding_at(), 0);
    assert_eq!(s.nav().selected(), cpu);
}

#[test]
fn page_keys_in_the_help_scroll_it_and_end_then_up_moves_at_once() {
    let mut s = vm();
    s = s.with_screen(ratatui::layout::Size::new(80, 24));
    s.update(Action::Help);
    s.update(Action::PageDown);
    assert_eq!(s.nav().popup_scroll(), 16);
    assert!(draw(&s, 80, 24).contains("rows 17–"));
    s.update(Action::Last);
    let end = s.nav().popup_scroll();
    assert_eq!(end, crate::tui::popup::max_scroll(&s));
    let bottom = draw(&s, 80, 24);
    assert!(bottom.contains("verdict"), "{bottom}");
    s.update(Action::Down);
    assert_eq!(s.nav().popup_scroll(), end, "no further than the last row");
    s.update(Action::Up);
    assert_eq!(s.nav().popup_scroll(), end - 1);
    assert_ne!(draw(&s, 80, 24), bottom, "one Up after End shows a new row");
    s.update(Action::First);
    assert_eq!(s.nav().popup_scroll(), 0);
    assert!(draw(&s, 80, 24).contains("rows 1–"));
}

#[test]
fn a_foreign_tree_says_so_in_the_header_at_any_width() {
    let mut s = vm();
    s.set_foreign(Some("its boot_id differs".into()));
    let wide = draw(&s, 160, 50);
    let third = wide.lines().nth(2).unwrap();
    assert!(
        third.contains("another machine's tree: no live counters, no rates"),
        "{wide}"
    );
    let narrow = draw(&s, 80, 24);
    assert!(
        narrow.lines().nth(2).unwrap().contains("foreign tree"),
        "{narrow}"
    );
    s.set_foreign(None);
    assert!(!draw(&s, 160, 50).contains("another machine's tree"));
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn an_unknown_verdict_reads_as_the_one_unknown_glyph_in_the_noise_column() {
    // the EPYC dump has no /proc/interrupts, /proc/stat or perf: no CPU
    // can be judged, and each row's noise cell says so with `·`
    let Some(tree) = capture("util-linux-epyc7451-2s-96cpu") else {
        return;
    };
    let mut s = real(&tree);
    s = s.with_view(View::Cores);
    assert!(
        s.judged()
            .verdicts()
            .iter()
            .all(|v| v.state == crate::noise::VerdictState::Unknown)
    );
    let text = draw(&s, 160, 50);
    // lines come quoted: "│    0 … ·   │"
    let rows: Vec<&str> = text
        .lines()
        .map(|l| l.trim_matches('"'))
        .filter(|l| l.starts_with("│    0 ") || l.starts_with("│    1 "))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for r in rows {
        let cell = r.trim_end_matches('│').trim_end();
        assert!(cell.ends_with(" ·"), "{r}");
        assert!(!r.contains('?'), "{r}");
    }
}

#[test]
fn a_tree_of_one_instant_paints_its_overview_by_the_kernels_clock() {
    // one read has no average clock, but it has each CPU's current one
    let mut s = server();
    if let Some(iv) = s.latest_mut() {
        for r in &mut iv.cpus {
            r.avg_mhz = None;
        }
    }
    let top = s
        .judged()
        .machine()
        .max_mhz
        .expect("the server's top clock");
    let khz = (top * 1000.0) as u64;
    for f in &mut s.machine_mut().cpufreq {
        f.cur_khz = Some(if f.cpu == 0 { khz / 2 } else { khz });
    }
    s = s.with_view(View::Overview);
    s = s.with_paint(Paint::Mhz);
    s.set_selected(Some(0));
    // the grid's lines (quoted by the backend), less their labels
    let grid = |screen: &str| -> String {
        screen
            .lines()
            .map(|l| l.trim_matches('"'))
            .filter_map(|l| l.strip_prefix("│ pkg "))
            .collect()
    };
    // live, the clock is an average or unknown: no cell is painted
    let live = draw(&s, 160, 50);
    assert!(live.contains(" Avg MHz (c: next)"), "{live}");
    let cells = grid(&live);
    assert_eq!(cells.chars().filter(|c| *c == '·').count(), 64, "{live}");
    s.set_foreign(Some("its boot_id differs".into()));
    let one = draw(&s, 160, 50);
    assert!(one.contains(" cur MHz (c: next)"), "{one}");
    assert!(
        one.contains(&format!("│ cur {} MHz │", khz / 2000)),
        "{one}"
    );
    // CPU 0 at half the top clock (level 4 of 0-7), the other 63 at the top
    let cells = grid(&one);
    assert_eq!(cells.chars().filter(|c| *c == '█').count(), 63, "{one}");
    assert_eq!(cells.chars().filter(|c| *c == '▅').count(), 1, "{one}");
    // a tree read without a clock shows no time of day, rather than 00:00:00
    if let Some(iv) = s.latest_mut() {
        iv.to.wall_ns = 0;
    }
    let first = |s: &State| draw(s, 160, 50).lines().next().unwrap().to_string();
    assert!(!first(&s).contains("00:00:00"), "{}", first(&s));
    s.set_foreign(None);
    assert!(first(&s).contains("│ 00:00:00"), "{}", first(&s));
}

#[test]
fn an_owner_name_never_pushes_the_intruder_out_of_its_rows_noise_cell() {
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::noise::traced::TracedTask;
    use crate::noise::{Finding, Kind, Severity};
    let task = |comm: &str, pid: u32| TracedTask {
        comm: comm.into(),
        pid,
        tid: pid,
        per_cpu_kthread: false,
        exited: false,
        cgroup: None,
    };
    let row = |owner: &str, width: u16| -> String {
        let mut s = vm();
        s = s.with_view(View::Cores);
        s.set_watched(vec![1]);
        s.set_trace(Some(Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                owner: Some(task(owner, 30533)),
                ..TracedCpu::default()
            }],
            ..Traced::default()
        }));
        s.set_findings(vec![Finding {
            cpus: vec![1],
            kind: Kind::Intruder,
            severity: Severity::Crit,
            label: "gzip[30775]".into(),
            evidence: String::new(),
            numbers: Vec::new(),
            fix: None,
        }]);
        let screen = draw(&s, width, 50);
        screen
            .lines()
            .map(|l| l.trim_matches('"'))
            .find(|l| l.starts_with("│▸   1 "))
            .unwrap_or_else(|| panic!("no row of CPU 1 in\n{screen}"))
            .to_string()
    };
    // both fit a wide screen: the owner first, then the intruder
    let short = row("bench", 200);
    assert!(
        short.contains("owner bench[30533] · gzip[30775]"),
        "{short}"
    );
    // at 160 columns the owner's long name and the intruder's do not both
    // fit the cell: the owner goes by its pid, beside the intruder
    let long = row("stress-ng-cpu", 160);
    assert!(long.contains("owner pid 30533 · gzip[30775]"), "{long}");
}

/// The owner stays on its row when a finding comes: at 80 and 160 columns
/// a watched CPU owned by `sh` shows the owner and the interrupt that
/// took its time, side by side.
#[test]
fn a_finding_on_a_watched_row_keeps_its_owner_beside_it() {
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::noise::traced::TracedTask;
    use crate::noise::{Finding, Kind, Severity};
    for width in [80, 160] {
        let mut s = vm();
        s = s.with_view(View::Cores);
        s.set_watched(vec![1]);
        s.set_trace(Some(Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                owner: Some(TracedTask {
                    comm: "sh".into(),
                    pid: 43210,
                    tid: 43210,
                    per_cpu_kthread: false,
                    exited: false,
                    cgroup: None,
                }),
                ..TracedCpu::default()
            }],
            ..Traced::default()
        }));
        s.set_findings(vec![Finding {
            cpus: vec![1],
            kind: Kind::TickOnWatched,
            severity: Severity::Warn,
            label: "local_timer".into(),
            evidence: String::new(),
            numbers: Vec::new(),
            fix: None,
        }]);
        let screen = draw(&s, width, 50);
        let row = screen
            .lines()
            .find(|l| l.contains("│▸   1 "))
            .unwrap_or_else(|| panic!("no row of CPU 1 in\n{screen}"));
        assert!(
            row.contains("owner sh[43210] · local_timer"),
            "{width}: {row}"
        );
    }
}

/// An unwatched CPU's row names the task that ran longest there, counted
/// in the kernel, where it took at least 5 % of the window; below that the
/// row stays blank, and a watched CPU keeps naming its owner instead.
#[test]
fn an_unwatched_row_names_its_longest_runner_above_five_percent() {
    use crate::noise::traced::Traced;
    use crate::noise::traced::TracedCpu;
    use crate::noise::traced::TracedTask;
    let task = |comm: &str, pid: u32| TracedTask {
        comm: comm.into(),
        pid,
        tid: pid,
        per_cpu_kthread: false,
        exited: false,
        cgroup: None,
    };
    let browsed = |cpu: u32, owner_ns: u64| TracedCpu {
        cpu,
        window_ns: 1_000_000_000,
        owner: Some(task("rustc", 16073 + cpu)),
        owner_ns,
        ..TracedCpu::default()
    };
    let mut s = vm();
    s = s.with_view(View::Cores);
    s.set_watched(vec![]);
    // quiet CPUs: the row's cell is free for the longest runner
    s.set_verdicts(Vec::new());
    s.set_findings(Vec::new());
    s.set_trace(Some(Traced {
        browsed: vec![browsed(0, 49_000_000), browsed(1, 620_000_000)],
        ..Traced::default()
    }));
    let screen = draw(&s, 160, 50);
    let row = |cpu: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!("│    {cpu} ")))
            .unwrap_or_else(|| panic!("no row of CPU {cpu} in\n{screen}"))
            .to_string()
    };
    assert!(row("1").contains("rustc[16074] 62%"), "{}", row("1"));
    // 4.9 %: not named
    assert!(!row("0").contains("rustc["), "{}", row("0"));
}

/// Where BPF could not count who ran, the header says so beside the other
/// unavailable figures, and `u` gives the reason.
#[test]
fn the_header_says_who_ran_is_not_exact_where_bpf_was_refused() {
    let mut s = vm();
    s = s.with_view(View::Cores);
    assert!(!draw(&s, 160, 50).contains("exact who-ran"));
    s.set_trace_missing(Some(crate::base::Unavailable::new(
        crate::base::Cause::Permission,
        "BPF: loading BPF type data was refused (Operation not permitted): it needs root, or \
         CAP_BPF with CAP_PERFMON",
    )));
    let screen = draw(&s, 160, 50);
    let line = screen
        .lines()
        .find(|l| l.contains("unavailable: "))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(line.contains("exact who-ran"), "{line}");
}
