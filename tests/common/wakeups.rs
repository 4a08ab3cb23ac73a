//! Wake-ups onto a watched CPU, as the scheduler's tracepoints record
//! them, and which IPIs sent there a hands-off test may let pass: an IPI
//! that only woke a task of the machine's there (a reschedule, or the
//! scheduler's wake list: `ttwu_queue_wakelist`) is that task's wake-up;
//! one that runs work there (a function call) or wakes noisetop's own
//! thread is noisetop's work. On a loaded CPU every wake-up of a task
//! that last ran there costs an IPI, so a busy machine meets them where
//! an idle one polls. Shared by the hands-off tests, whatever traces them.
// each test uses the part of this it needs
#![allow(dead_code)]

/// A task woken onto the watched CPU, and by which thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Waking {
    /// The thread that woke it (the trace line's task).
    pub waker_tid: u32,
    /// When, s on the trace clock.
    pub time_s: f64,
    /// The woken task's name.
    pub comm: String,
    /// The woken task's id.
    pub pid: u32,
}

/// Parses a `sched_waking` or `sched_wakeup` line whose `target_cpu` is
/// `cpu`. `sched_waking` is written by the waker whichever way the wake-up
/// goes; `sched_wakeup` of a wake-list wake-up is written on the woken
/// task's CPU, by whatever ran there:
/// `noisetop-9488 (9488) [000] d..3. 2198.6: sched_waking: comm=kworker/u8:1 pid=21 prio=120 target_cpu=001`.
pub fn parse_waking(line: &str, cpu: u32) -> Option<Waking> {
    let (head, rest) = line.split_once(") [")?;
    let (task, _) = head.rsplit_once('(')?;
    let (_, tid) = task.trim().rsplit_once('-')?;
    let (_, rest) = rest.split_once("] ")?;
    let mut words = rest.split_whitespace().skip(1);
    let time_s = words.next()?.trim_end_matches(':').parse().ok()?;
    if !matches!(words.next()?, "sched_wakeup:" | "sched_waking:") {
        return None;
    }
    let (mut comm, mut pid, mut target) = (None, None, None);
    for w in words {
        if let Some(c) = w.strip_prefix("comm=") {
            comm = Some(c.to_string());
        } else if let Some(p) = w.strip_prefix("pid=") {
            pid = p.parse::<u32>().ok();
        } else if let Some(t) = w.strip_prefix("target_cpu=") {
            target = t.parse::<u32>().ok();
        }
    }
    (target? == cpu).then_some(Waking {
        waker_tid: tid.parse().ok()?,
        time_s,
        comm: comm?,
        pid: pid?,
    })
}

/// The task an IPI sent by `tid` at `time_s` woke: the wake-up onto the
/// watched CPU by the same thread nearest to it (the kernel traces it
/// just before or after the IPI).
pub fn woken(tid: u32, time_s: f64, wakings: &[Waking]) -> Option<&Waking> {
    wakings
        .iter()
        .filter(|w| w.waker_tid == tid && (w.time_s - time_s).abs() < 0.001)
        .min_by(|a, b| {
            (a.time_s - time_s)
                .abs()
                .total_cmp(&(b.time_s - time_s).abs())
        })
}

/// Whether an IPI with `callsite` and a callback (`call`) is a wake-up: a
/// reschedule, or a function call that only runs the wake list.
pub fn is_wake_up(call: bool, callsite: &str) -> bool {
    !call || callsite.starts_with("ttwu_queue_wakelist")
}

/// Judges an IPI a thread of noisetop sent to the watched CPU, given the
/// task it woke and noisetop's own thread ids: `Ok` with what to print
/// when it is the machine's (a wake-up of a task that is not noisetop's),
/// `Err` with why it is noisetop's work.
pub fn judge(
    call: bool,
    callsite: &str,
    woke: Option<&Waking>,
    own_tids: &[u32],
) -> Result<String, String> {
    if !is_wake_up(call, callsite) {
        return Err(format!(
            "a function call ({callsite}): noisetop's work run on the watched CPU"
        ));
    }
    let how = if call {
        "through the scheduler's wake list"
    } else {
        "with a reschedule IPI"
    };
    match woke {
        Some(w) if own_tids.contains(&w.pid) => Err(format!(
            "woke noisetop's own thread {}[{}] there {how}",
            w.comm, w.pid
        )),
        Some(w) => Ok(format!(
            "woke {}[{}] onto the watched CPU {how} ({callsite}): a task of the machine's \
             that waited on noisetop's output or work, not noisetop's own; on a loaded CPU \
             its wake-up costs an IPI",
            w.comm, w.pid
        )),
        None => Err(format!(
            "a wake-up {how} ({callsite}) of a task the trace does not name"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_ups_of_others_pass_and_noisetops_work_does_not() {
        let l = "        noisetop-9488    (   9488) [000] d..3.  2198.604476: sched_waking: comm=kworker/u8:1 pid=21 prio=120 target_cpu=001";
        let w = parse_waking(l, 1).unwrap();
        assert_eq!(
            w,
            Waking {
                waker_tid: 9488,
                time_s: 2_198.604_476,
                comm: "kworker/u8:1".into(),
                pid: 21
            }
        );
        assert_eq!(parse_waking(l, 0), None);
        let all = [w.clone()];
        assert_eq!(woken(9488, 2_198.604_9, &all), Some(&w));
        assert_eq!(woken(9488, 2_198.7, &all), None);
        assert!(judge(true, "ttwu_queue_wakelist+0x1b", Some(&w), &[9488]).is_ok());
        assert!(judge(false, "wakeup_preempt+0x92", Some(&w), &[9488]).is_ok());
        // noisetop's own thread, a task nobody names, a function call
        assert!(judge(false, "wakeup_preempt+0x92", Some(&w), &[21]).is_err());
        assert!(judge(true, "ttwu_queue_wakelist+0x1b", None, &[9488]).is_err());
        assert!(judge(true, "generic_exec_single+0x36", Some(&w), &[9488]).is_err());
    }
}
