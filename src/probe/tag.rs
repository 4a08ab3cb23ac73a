//! Which idle state a wake-up came out of: from the `power:cpu_idle` events
//! of the woken CPU, or inferred from its cpuidle `usage` counters read
//! around the wake-up where tracing is not allowed.

use serde::{Deserialize, Serialize};

use super::TagMethod;
use crate::os::idle_ring::IdleEvent;

/// What the woken CPU was doing when the wake-up was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Tag {
    /// Idle in cpuidle state N; the wake-up took it out.
    State(u32),
    /// Not idle: something else ran there when the wake-up was due.
    Busy,
    /// Cannot be told: events lost, or several states entered in between
    /// (inferred tags).
    Unknown,
}

/// Tags one wake-up due at `start` whose thread ran at `end`, from the
/// CPU's idle events sorted by time. The CPU woke from idle for it when it
/// left idle between the two; the state is the one entered last before
/// that exit. No exit in between: busy, unless the CPU sat in idle at
/// `start` (events lost: unknown).
pub fn from_events(events: &[IdleEvent], start: u64, end: u64) -> Tag {
    let from = events.partition_point(|e| e.time < start);
    let exit = events[from..]
        .iter()
        .take_while(|e| e.time <= end)
        .position(|e| e.state.is_none())
        .map(|i| from + i);
    match exit {
        Some(i) => match events[..i].iter().rev().find_map(|e| e.state) {
            Some(s) => Tag::State(s),
            None => Tag::Unknown,
        },
        None => match events[..from].last() {
            Some(IdleEvent { state: Some(_), .. }) => Tag::Unknown,
            _ => Tag::Busy,
        },
    }
}

/// The tag of a traced wake-up, checked against the usage counters read
/// around it (`None`: unreadable): the trace's idle state stands; where the
/// trace saw no idle period (busy) or lost it (unknown) but the counters
/// show one entered, the trace missed it and the counters' tag is used,
/// marked inferred.
pub fn combine(traced: Tag, counted: Option<Tag>) -> (Tag, TagMethod) {
    match (traced, counted) {
        (Tag::State(s), _) => (Tag::State(s), TagMethod::Tracepoint),
        (_, Some(Tag::State(s))) => (Tag::State(s), TagMethod::Inferred),
        (t, _) => (t, TagMethod::Tracepoint),
    }
}

/// Tags a wake-up from the `usage` counters of the CPU's states read just
/// before it slept and just after it woke: one state entered is that
/// state, none is busy, several cannot be told apart.
pub fn from_usage(before: &[u64], after: &[u64]) -> Tag {
    if before.len() != after.len() || before.is_empty() {
        return Tag::Unknown;
    }
    let mut entered = before
        .iter()
        .zip(after)
        .enumerate()
        .filter(|(_, (b, a))| a > b)
        .map(|(i, _)| i as u32);
    match (entered.next(), entered.next()) {
        (None, _) => Tag::Busy,
        (Some(i), None) => Tag::State(i),
        _ => Tag::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: u64, state: Option<u32>) -> IdleEvent {
        IdleEvent { time, state }
    }

    #[test]
    fn a_wake_up_is_tagged_with_the_state_left_between_due_and_running() {
        // idle in state 1 from 100, woken at 205 for a timer due at 200
        let e = [
            ev(10, Some(0)),
            ev(50, None),
            ev(100, Some(1)),
            ev(205, None),
            ev(300, Some(0)),
        ];
        assert_eq!(from_events(&e, 200, 230), Tag::State(1));
        // due while something ran (between 50 and 100): busy
        assert_eq!(from_events(&e, 60, 90), Tag::Busy);
        // due in idle, but the exit lies past the thread running: lost
        assert_eq!(from_events(&e, 120, 150), Tag::Unknown);
        // before any event at all: nothing says it idled
        assert_eq!(from_events(&e, 1, 5), Tag::Busy);
        // an exit at exactly the due time counts
        assert_eq!(from_events(&e, 205, 205), Tag::State(1));
        // the first exit in the window decides, later idle periods do not
        let f = [ev(0, Some(1)), ev(20, None), ev(25, Some(0)), ev(28, None)];
        assert_eq!(from_events(&f, 10, 30), Tag::State(1));
        // an exit with no entry before it (lost): unknown
        assert_eq!(from_events(&[ev(20, None)], 10, 30), Tag::Unknown);
    }

    #[test]
    fn the_counters_fill_in_what_the_trace_missed_and_nothing_else() {
        use TagMethod::{Inferred, Tracepoint};
        let s1 = Tag::State(1);
        assert_eq!(combine(s1, Some(Tag::Busy)), (s1, Tracepoint));
        assert_eq!(combine(s1, Some(Tag::State(0))), (s1, Tracepoint));
        assert_eq!(combine(Tag::Busy, Some(s1)), (s1, Inferred));
        assert_eq!(combine(Tag::Unknown, Some(s1)), (s1, Inferred));
        assert_eq!(combine(Tag::Busy, Some(Tag::Busy)), (Tag::Busy, Tracepoint));
        assert_eq!(
            combine(Tag::Busy, Some(Tag::Unknown)),
            (Tag::Busy, Tracepoint)
        );
        assert_eq!(combine(Tag::Busy, None), (Tag::Busy, Tracepoint));
        assert_eq!(combine(Tag::Unknown, None), (Tag::Unknown, Tracepoint));
    }

    #[test]
    fn usage_deltas_name_one_state_or_say_they_cannot() {
        assert_eq!(from_usage(&[5, 9], &[5, 10]), Tag::State(1));
        assert_eq!(from_usage(&[5, 9], &[6, 9]), Tag::State(0));
        assert_eq!(from_usage(&[5, 9], &[5, 9]), Tag::Busy);
        assert_eq!(from_usage(&[5, 9], &[6, 10]), Tag::Unknown);
        assert_eq!(from_usage(&[], &[]), Tag::Unknown);
        assert_eq!(from_usage(&[1], &[1, 2]), Tag::Unknown);
    }
}
