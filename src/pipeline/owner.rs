//! Who owns a traced CPU from one window to the next: where no owner is
//! given, the longest runner is, and a change of it is marked on the CPU
//! for the rules (`owner-changed`).

use crate::noise::traced::Traced;
use crate::noise::traced::TracedTask;

/// Marks each traced CPU whose longest runner (the owner, when none is
/// given) is not the one of the window before, and remembers this one.
pub fn note_longest_runner(longest: &mut Vec<(u32, TracedTask)>, t: &mut Traced) {
    for c in &mut t.cpus {
        let at = longest.iter().position(|(cpu, _)| *cpu == c.cpu);
        if c.owner_given {
            if let Some(i) = at {
                longest.swap_remove(i);
            }
            continue;
        }
        let Some(now) = c.owner.clone() else { continue };
        match at {
            Some(i) if longest[i].1.pid != now.pid => {
                c.owner_was = Some(std::mem::replace(&mut longest[i].1, now));
            }
            Some(_) => {}
            None => longest.push((c.cpu, now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::TracedCpu;

    fn task(comm: &str, pid: u32) -> TracedTask {
        TracedTask::user(comm, pid)
    }

    fn window(owner: Option<TracedTask>, given: bool) -> Traced {
        Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                window_ns: 1_000_000_000,
                owner,
                owner_given: given,
                ..TracedCpu::default()
            }],
            ..Traced::default()
        }
    }

    #[test]
    fn a_new_longest_runner_is_marked_with_the_one_before_once() {
        let mut longest = Vec::new();
        let mut w = window(Some(task("sh", 9437)), false);
        note_longest_runner(&mut longest, &mut w);
        assert_eq!(
            w.cpus[0].owner_was, None,
            "the first window has none before"
        );
        // a window where nothing ran keeps the last longest runner
        let mut w = window(None, false);
        note_longest_runner(&mut longest, &mut w);
        assert_eq!(w.cpus[0].owner_was, None);
        let mut w = window(Some(task("yes", 1234)), false);
        note_longest_runner(&mut longest, &mut w);
        assert_eq!(w.cpus[0].owner_was, Some(task("sh", 9437)));
        let mut w = window(Some(task("yes", 1234)), false);
        note_longest_runner(&mut longest, &mut w);
        assert_eq!(w.cpus[0].owner_was, None, "said once, at the change");
    }

    #[test]
    fn a_given_owner_never_changes() {
        let mut longest = Vec::new();
        let mut w = window(Some(task("sh", 9437)), false);
        note_longest_runner(&mut longest, &mut w);
        let mut w = window(Some(task("bench", 4000)), true);
        note_longest_runner(&mut longest, &mut w);
        assert_eq!(w.cpus[0].owner_was, None);
        assert!(longest.is_empty(), "forgotten once an owner is given");
    }
}
