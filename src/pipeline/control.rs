//! What a screen may change while the live loop runs: the interval, the
//! loop's own CPUs and the watched CPUs. Each change is taken at the
//! loop's next wake-up, and a new interval wakes it at once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::os::stop::Stop;

/// Shared between the screen and the live loop.
#[derive(Debug)]
pub struct Control {
    interval_ms: AtomicU64,
    pin: Pending,
    watch: Pending,
    owner: Pending,
    /// The CPU whose tasks the detail view shows, sampled from /proc
    /// (empty: none any more).
    browse: Pending,
    waker: Mutex<Option<Stop>>,
}

/// A CPU list handed over once; a newer request replaces one not yet taken.
#[derive(Debug, Default)]
struct Pending(Mutex<Option<Vec<u32>>>);

impl Pending {
    fn set(&self, cpus: Vec<u32>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(cpus);
    }

    fn take(&self) -> Option<Vec<u32>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl Control {
    /// Starts with the given interval.
    pub fn new(interval: Duration) -> Self {
        Control {
            interval_ms: AtomicU64::new(interval.as_millis().max(1) as u64),
            pin: Pending::default(),
            watch: Pending::default(),
            owner: Pending::default(),
            browse: Pending::default(),
            waker: Mutex::new(None),
        }
    }

    /// Wakes this sleeper when the interval changes.
    pub fn wake_with(&self, stop: &Stop) {
        *self.waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop.clone());
    }

    /// Returns the interval in use.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.load(Ordering::Relaxed))
    }

    /// Sets the interval; the loop's current sleep ends at the new deadline.
    pub fn set_interval(&self, d: Duration) {
        self.interval_ms
            .store(d.as_millis().max(1) as u64, Ordering::Relaxed);
        if let Some(s) = &*self.waker.lock().unwrap_or_else(PoisonError::into_inner) {
            s.wake();
        }
    }

    /// Asks the loop thread to move itself onto `cpus` at its next wake-up.
    pub fn request_pin(&self, cpus: Vec<u32>) {
        self.pin.set(cpus);
    }

    /// The pin request not yet taken.
    pub fn take_pin(&self) -> Option<Vec<u32>> {
        self.pin.take()
    }

    /// Tells the loop the CPUs the user marked (`m`): from its next wake-up
    /// they get the strict rules, one-interval file figures and tracing.
    pub fn request_watch(&self, cpus: Vec<u32>) {
        self.watch.set(cpus);
    }

    /// The watch request not yet taken.
    pub fn take_watch(&self) -> Option<Vec<u32>> {
        self.watch.take()
    }

    /// Tells the loop the pids that own the watched CPUs from now on (the
    /// dashboard's `o`, as `--owner`).
    pub fn request_owner(&self, pids: Vec<u32>) {
        self.owner.set(pids);
    }

    /// The owner request not yet taken.
    pub fn take_owner(&self) -> Option<Vec<u32>> {
        self.owner.take()
    }

    /// Asks the loop to sample the tasks of `cpu` from /proc (the detail
    /// view's CPU), or of none.
    pub fn request_browse(&self, cpu: Option<u32>) {
        self.browse.set(cpu.into_iter().collect());
    }

    /// The browse request not yet taken: the CPU, or none (empty).
    pub fn take_browse(&self) -> Option<Vec<u32>> {
        self.browse.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_round_trips_interval_pin_and_watch() {
        let c = Control::new(Duration::from_secs(1));
        assert_eq!(c.interval(), Duration::from_secs(1));
        c.set_interval(Duration::from_millis(250));
        assert_eq!(c.interval(), Duration::from_millis(250));
        assert_eq!(c.take_pin(), None);
        c.request_pin(vec![0, 1]);
        assert_eq!(c.take_pin(), Some(vec![0, 1]));
        assert_eq!(c.take_pin(), None, "a pin request is taken once");
        assert_eq!(c.take_watch(), None);
        c.request_watch(vec![2]);
        c.request_watch(vec![2, 5]);
        assert_eq!(c.take_watch(), Some(vec![2, 5]), "the latest marks win");
        assert_eq!(c.take_watch(), None);
        c.request_owner(vec![9437]);
        assert_eq!(c.take_owner(), Some(vec![9437]));
        assert_eq!(c.take_owner(), None);
        assert_eq!(c.take_browse(), None);
        c.request_browse(Some(3));
        c.request_browse(None);
        assert_eq!(c.take_browse(), Some(Vec::new()), "closing the detail wins");
        assert_eq!(c.take_browse(), None);
    }
}
