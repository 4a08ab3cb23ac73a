//! What the dashboard keeps between runs: the watched CPUs, the row order,
//! the filter and the overview's metric, in a small JSON file under
//! `$XDG_STATE_HOME/noisetop/` (`~/.local/state/noisetop/` without it).
//! `--no-state` neither reads nor writes it; `--watch` wins over it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tui::overview::Paint;
use crate::tui::state::{Filter, Sort, State};

/// The file's name under the state folder.
pub const FILE: &str = "noisetop/dashboard.json";

/// The saved choices; a field the file lacks or does not know keeps the
/// default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Saved {
    /// Watched CPUs.
    pub watch: Vec<u32>,
    /// Row order: `cpu`, `noisiest`, `busiest`.
    pub sort: String,
    /// Filter: `all`, `only watched`, `only noisy`.
    pub filter: String,
    /// The overview's metric, by its legend label.
    pub paint: String,
}

/// Returns where the file lives, from `XDG_STATE_HOME` and `HOME` (an
/// empty or relative `XDG_STATE_HOME` is ignored, as the XDG spec says).
pub fn path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    match xdg_state_home {
        Some(x) if Path::new(x).is_absolute() => Some(Path::new(x).join(FILE)),
        _ => home
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(h).join(".local/state").join(FILE)),
    }
}

/// Returns the file's path for this process's environment.
pub fn default_path() -> Option<PathBuf> {
    let x = std::env::var("XDG_STATE_HOME").ok();
    let h = std::env::var("HOME").ok();
    path(x.as_deref(), h.as_deref())
}

const SORTS: [Sort; 3] = [Sort::Cpu, Sort::Noise, Sort::Busy];
const FILTERS: [Filter; 3] = [Filter::All, Filter::Watched, Filter::Noisy];
const PAINTS: [Paint; 5] = [
    Paint::Busy,
    Paint::Mhz,
    Paint::Cstate,
    Paint::Irq,
    Paint::Verdict,
];

impl Saved {
    /// Takes the choices on screen.
    pub fn of(s: &State) -> Saved {
        Saved {
            watch: s.judged().watched().to_vec(),
            sort: s.nav().sort().label().into(),
            filter: s.nav().filter().label().into(),
            paint: s.nav().paint().label().into(),
        }
    }

    /// Puts the saved order, filter and metric on screen (the watched CPUs
    /// go to the sampler first: see [`Saved::watch_on`]).
    #[must_use]
    pub fn apply(&self, mut s: State) -> State {
        if let Some(x) = SORTS.iter().find(|x| x.label() == self.sort) {
            s = s.with_sort(*x);
        }
        if let Some(x) = FILTERS.iter().find(|x| x.label() == self.filter) {
            s = s.with_filter(*x);
        }
        if let Some(x) = PAINTS.iter().find(|x| x.label() == self.paint) {
            s = s.with_paint(*x);
        }
        s
    }

    /// Returns the saved watched CPUs that are online.
    pub fn watch_on(&self, online: &[u32]) -> Vec<u32> {
        self.watch
            .iter()
            .copied()
            .filter(|c| online.contains(c))
            .collect()
    }

    /// Reads the file: `None` when absent; an unreadable or garbled file
    /// is an error the caller reports and goes on without.
    pub fn load(p: &Path) -> Result<Option<Saved>, SavedError> {
        match std::fs::read_to_string(p) {
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|err| SavedError::Garbled {
                    path: p.to_path_buf(),
                    err,
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(SavedError::Unreadable {
                path: p.to_path_buf(),
                err,
            }),
        }
    }

    /// Writes the file, creating its folder.
    pub fn save(&self, p: &Path) -> Result<(), SavedError> {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|err| SavedError::NoFolder {
                dir: dir.to_path_buf(),
                err,
            })?;
        }
        let text = serde_json::to_string_pretty(self).map_err(SavedError::Encode)?;
        std::fs::write(p, text + "\n").map_err(|err| SavedError::Unwritable {
            path: p.to_path_buf(),
            err,
        })
    }
}

/// Why the saved dashboard state cannot be read or written; the caller
/// says it and goes on without.
#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    /// The file is there but cannot be read.
    #[error("cannot read {}: {err}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        err: std::io::Error,
    },
    /// The file is not JSON of a saved state.
    #[error("{}: not a saved dashboard state ({err})", .path.display())]
    Garbled {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
    /// Its folder cannot be made.
    #[error("cannot create {}: {err}", .dir.display())]
    NoFolder {
        /// The folder.
        dir: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
    /// The state cannot be put into JSON.
    #[error("{0}")]
    Encode(serde_json::Error),
    /// The file cannot be written.
    #[error("cannot write {}: {err}", .path.display())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tests::server;

    #[test]
    fn the_file_lives_under_xdg_state_home_else_home_local_state() {
        assert_eq!(
            path(Some("/srv/st"), Some("/home/u")),
            Some(PathBuf::from("/srv/st/noisetop/dashboard.json"))
        );
        // relative or empty XDG_STATE_HOME is ignored
        for x in [None, Some(""), Some("rel/dir")] {
            assert_eq!(
                path(x, Some("/home/u")),
                Some(PathBuf::from(
                    "/home/u/.local/state/noisetop/dashboard.json"
                ))
            );
        }
        assert_eq!(path(None, None), None);
    }

    #[test]
    fn choices_survive_a_save_and_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        assert!(
            matches!(Saved::load(&p), Ok(None)),
            "no file yet: nothing to restore"
        );
        let mut s = server();
        s.update(crate::tui::keys::Action::Sort);
        s.update(crate::tui::keys::Action::Filter);
        s.update(crate::tui::keys::Action::Paint);
        Saved::of(&s).save(&p).unwrap();
        let back = Saved::load(&p).unwrap().unwrap();
        assert_eq!(back.watch, vec![2, 3, 4, 5]);
        let fresh = back.apply(server());
        assert_eq!(
            (
                fresh.nav().sort(),
                fresh.nav().filter(),
                fresh.nav().paint()
            ),
            (Sort::Noise, Filter::Watched, Paint::Mhz)
        );
        assert_eq!(
            back.watch_on(&[0, 1, 2, 3]),
            vec![2, 3],
            "offline CPUs drop"
        );
        std::fs::write(&p, "{ not json").unwrap();
        let e = Saved::load(&p).unwrap_err();
        assert!(matches!(e, SavedError::Garbled { .. }), "{e}");
        assert!(e.to_string().contains("not a saved dashboard state"));
        // a file from a later version with fields this one does not know
        std::fs::write(&p, r#"{"sort":"busiest","columns":["IPC"]}"#).unwrap();
        let s = Saved::load(&p).unwrap().unwrap().apply(server());
        assert_eq!(s.nav().sort(), Sort::Busy);
    }
}
