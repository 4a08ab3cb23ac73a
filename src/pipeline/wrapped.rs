//! A trace source wrapped to add one thing to it — a line for the who-ran
//! status, or a copy of each window it drains — and to pass every other
//! call through unchanged.

use super::TraceSource;
use crate::base::Unavailable;
use crate::noise::traced::Traced;

/// What a [`Wrapped`] source adds to the one it wraps.
pub trait Addition: Send {
    /// Sees each window the wrapped source drained.
    fn drained(&mut self, _window: &Traced) {}
    /// A line put before the wrapped source's notes.
    fn note(&self) -> Option<String> {
        None
    }
}

/// A line for the who-ran status (how tracefs came to be mounted).
impl Addition for String {
    fn note(&self) -> Option<String> {
        Some(self.clone())
    }
}

/// A trace source passing every call to `inner`, with `add`'s addition.
pub struct Wrapped<A> {
    /// The source wrapped.
    pub inner: Box<dyn TraceSource>,
    /// What is added.
    pub add: A,
}

impl<A: Addition> TraceSource for Wrapped<A> {
    fn drain(&mut self) -> Traced {
        let t = self.inner.drain();
        self.add.drained(&t);
        t
    }
    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable> {
        self.inner.retarget(cpus)
    }
    fn cpus(&self) -> Vec<u32> {
        self.inner.cpus()
    }
    fn notes(&self) -> Vec<String> {
        let mut n: Vec<String> = self.add.note().into_iter().collect();
        n.extend(self.inner.notes());
        n
    }
    fn set_owners(&mut self, pids: Vec<u32>) {
        self.inner.set_owners(pids);
    }
    fn owners(&self) -> Vec<u32> {
        self.inner.owners()
    }
    fn sampled(&self) -> bool {
        self.inner.sampled()
    }
    fn seen_leaving(&mut self, named: Vec<(u32, Vec<u32>)>) {
        self.inner.seen_leaving(named);
    }
    fn in_kernel(&self) -> bool {
        self.inner.in_kernel()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Cause;

    struct Inner;

    impl TraceSource for Inner {
        fn drain(&mut self) -> Traced {
            Traced::default()
        }
        fn retarget(&mut self, _: &[u32]) -> Result<(), Unavailable> {
            Err(Unavailable::new(Cause::Failed, "refused"))
        }
        fn cpus(&self) -> Vec<u32> {
            vec![3]
        }
        fn notes(&self) -> Vec<String> {
            vec!["inner".into()]
        }
        fn owners(&self) -> Vec<u32> {
            vec![42]
        }
        fn sampled(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_note_comes_first_and_everything_else_is_the_inner_sources() {
        let mut w = Wrapped {
            inner: Box::new(Inner),
            add: "tracefs mounted".to_string(),
        };
        assert_eq!(w.notes(), vec!["tracefs mounted", "inner"]);
        assert_eq!(
            (w.cpus(), w.owners(), w.sampled()),
            (vec![3], vec![42], true)
        );
        assert_eq!(
            w.retarget(&[1]),
            Err(Unavailable::new(Cause::Failed, "refused"))
        );
        assert_eq!(w.drain(), Traced::default());
    }
}
