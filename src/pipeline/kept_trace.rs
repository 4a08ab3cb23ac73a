//! Who ran on the watched CPUs, kept with a capture: `noisetop capture
//! --watch` traces those CPUs and writes each window's figures into its
//! instant (`noisetop/traced.json`), and a replay hands them back in the
//! same order, so that the replayed findings name the same tasks and
//! interrupts the live run saw.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::TraceSource;
use super::wrapped::{Addition, Wrapped};
use crate::base::Unavailable;
use crate::noise::traced::Traced;
use crate::os::fs::{ReadError, read_capped};

/// The file of one instant that holds the window traced up to it.
pub const FILE: &str = "noisetop/traced.json";

/// Largest traced window a replay reads (a few hundred tasks and
/// interrupt sources per CPU stay far under it).
const MAX_BYTES: usize = 16 << 20;

/// The last window a [`Keeper`] passed on, for the capture to write.
pub type Kept = Arc<Mutex<Option<Traced>>>;

/// Keeps a copy of each window the wrapped tracer drains.
impl Addition for Kept {
    fn drained(&mut self, window: &Traced) {
        if let Ok(mut k) = self.lock() {
            *k = Some(window.clone());
        }
    }
}

/// A live tracer that keeps a copy of each window it drains.
pub type Keeper = Wrapped<Kept>;

/// Wraps `inner`, keeping what it drains in the returned slot.
pub fn keeper(inner: Box<dyn TraceSource>) -> (Keeper, Kept) {
    let kept = Kept::default();
    (
        Wrapped {
            inner,
            add: kept.clone(),
        },
        kept,
    )
}

/// Writes the window a [`Keeper`] last drained into instant `dir`; nothing
/// when it drained none.
pub fn write(kept: &Kept, dir: &Path) -> std::io::Result<()> {
    let Some(t) = kept.lock().ok().and_then(|mut k| k.take()) else {
        return Ok(());
    };
    let path = dir.join(FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let json = serde_json::to_string(&t).map_err(std::io::Error::other)?;
    std::fs::write(path, json)
}

/// Why a kept window cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    /// The file is there but cannot be read (or is too large).
    #[error(transparent)]
    Read(ReadError),
    /// It is not the JSON of a window.
    #[error("{}: {err}", .path.display())]
    Garbled {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
}

/// Reads the window kept in instant `dir`: `None` when the capture kept
/// none there.
pub fn read(dir: &Path) -> Result<Option<Traced>, KeptError> {
    let path = dir.join(FILE);
    match read_capped(&path, MAX_BYTES) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|err| KeptError::Garbled { path, err }),
        Err(ReadError::Missing(_)) => Ok(None),
        Err(e) => Err(KeptError::Read(e)),
    }
}

/// Whether any instant of a capture kept a traced window.
pub fn kept_in(instants: &[PathBuf]) -> bool {
    instants.iter().any(|d| d.join(FILE).is_file())
}

/// A replay's tracer: each drain hands back the window kept in the next
/// instant (the replay steps once per instant, from instant 0).
pub struct Replayed {
    instants: Vec<PathBuf>,
    next: usize,
    /// The CPUs the capture traced.
    traced: Vec<u32>,
    /// The CPUs watched now; only their windows are handed back.
    watched: Vec<u32>,
    /// Why a kept window could not be read, said with the status.
    broken: Option<String>,
}

impl Replayed {
    /// Replays the windows kept in `instants`.
    pub fn new(instants: Vec<PathBuf>) -> Self {
        let mut traced: Vec<u32> = instants
            .iter()
            .filter_map(|d| read(d).ok().flatten())
            .flat_map(|t| t.cpus.into_iter().map(|c| c.cpu))
            .collect();
        traced.sort_unstable();
        traced.dedup();
        Replayed {
            instants,
            next: 0,
            watched: traced.clone(),
            traced,
            broken: None,
        }
    }
}

impl TraceSource for Replayed {
    fn drain(&mut self) -> Traced {
        let Some(dir) = self.instants.get(self.next) else {
            return Traced::default();
        };
        self.next += 1;
        let mut t = match read(dir) {
            Ok(t) => t.unwrap_or_default(),
            Err(e) => {
                self.broken = Some(format!("a kept window cannot be read: {e}"));
                Traced::default()
            }
        };
        let w = &self.watched;
        t.cpus.retain(|c| w.contains(&c.cpu));
        t.probed.retain(|p| w.contains(&p.cpu));
        t
    }
    fn retarget(&mut self, cpus: &[u32]) -> Result<(), Unavailable> {
        self.watched = cpus.to_vec();
        Ok(())
    }
    fn cpus(&self) -> Vec<u32> {
        self.traced
            .iter()
            .copied()
            .filter(|c| self.watched.contains(c))
            .collect()
    }
    fn notes(&self) -> Vec<String> {
        let mut n = vec!["as the capture kept them".to_string()];
        n.extend(self.broken.clone());
        n
    }
    fn sampled(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::traced::{Intruder, TracedCpu, TracedTask};

    fn task(comm: &str, pid: u32) -> TracedTask {
        TracedTask::user(comm, pid)
    }

    fn window(cpu: u32, intruder: &str, ns: u64) -> Traced {
        Traced {
            cpus: vec![TracedCpu {
                cpu,
                window_ns: 1_000_000_000,
                owner: Some(task("bench", 10)),
                intruders: vec![Intruder {
                    task: task(intruder, 20),
                    ns,
                    slices: 3,
                    charged_ns: Some(ns + 5),
                }],
                ..TracedCpu::default()
            }],
            ..Traced::default()
        }
    }

    struct Fixed(Vec<Traced>);

    impl TraceSource for Fixed {
        fn drain(&mut self) -> Traced {
            self.0.remove(0)
        }
        fn retarget(&mut self, _: &[u32]) -> Result<(), Unavailable> {
            Ok(())
        }
        fn cpus(&self) -> Vec<u32> {
            vec![1]
        }
    }

    #[test]
    fn a_replay_hands_back_each_kept_window_in_order_for_the_watched_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let instants: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("{i:04}"))).collect();
        let (mut keeper, kept) = keeper(Box::new(Fixed(vec![
            window(1, "yes", 1),
            window(1, "yes", 250_000_000),
        ])));
        for d in &instants[..2] {
            let drained = keeper.drain();
            write(&kept, d).unwrap();
            assert_eq!(read(d).unwrap(), Some(drained));
        }
        // a step whose tracer drained nothing writes nothing
        write(&kept, &instants[2]).unwrap();
        assert_eq!(read(&instants[2]).unwrap(), None);
        assert!(kept_in(&instants));

        let mut r = Replayed::new(instants.clone());
        assert_eq!(r.cpus(), vec![1]);
        assert_eq!(r.drain(), window(1, "yes", 1));
        assert_eq!(r.drain(), window(1, "yes", 250_000_000));
        assert_eq!(r.drain(), Traced::default(), "an instant that kept none");
        assert_eq!(r.drain(), Traced::default(), "past the last instant");

        // watching another CPU: the kept windows of CPU 1 are not its
        let mut r = Replayed::new(instants.clone());
        r.retarget(&[0]).unwrap();
        assert!(r.cpus().is_empty());
        assert!(r.drain().cpus.is_empty());
    }

    #[test]
    fn a_garbled_window_is_an_empty_one_and_the_status_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("0000");
        std::fs::create_dir_all(d.join("noisetop")).unwrap();
        std::fs::write(d.join(FILE), "{\"cpus\": [").unwrap();
        let mut r = Replayed::new(vec![d]);
        assert_eq!(r.drain(), Traced::default());
        let notes = r.notes();
        assert!(
            notes.iter().any(|n| n.contains("traced.json")
                && n.starts_with("a kept window cannot be read")),
            "{notes:?}"
        );
    }
}
