//! Why a figure or a source is not there: a cause a caller can act on,
//! and the words the user reads.
//!
//! The words are what the reader that failed said (`--no-trace`, `BPF:
//! loading a BPF program was refused (...)`); the cause lets a caller tell
//! "not root" from "the kernel lacks it" without reading them.

use std::fmt;

/// What kind of reason keeps a thing from being measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The tree read is not this machine's live kernel (a capture,
    /// `--root` of another machine).
    NotLive,
    /// Not allowed: it needs root or a capability.
    Permission,
    /// The kernel is locked down, which forbids it even to root.
    Lockdown,
    /// The kernel lacks it: not built in, too old, no BTF, no tracepoint.
    KernelLacks,
    /// The user asked for it not to be done (`--no-trace`, `--no-perf`).
    RefusedByUser,
    /// Turned off where it is configured (a kernel knob, a config file).
    Disabled,
    /// Anything else: a read or a call that failed for another reason.
    Failed,
}

/// Why something is unknown: its cause and the words that say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// What kind of reason.
    pub cause: Cause,
    /// The words shown to the user, as the reader said them.
    pub detail: String,
}

impl Unavailable {
    /// Makes one of a cause and its words.
    pub fn new(cause: Cause, detail: impl Into<String>) -> Unavailable {
        Unavailable {
            cause,
            detail: detail.into(),
        }
    }

    /// Returns the words shown to the user.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

/// Written as its words alone, as the reason was before it had a cause.
impl serde::Serialize for Unavailable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.detail)
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_detail_alone() {
        let u = Unavailable::new(Cause::RefusedByUser, "--no-trace");
        assert_eq!(u.to_string(), "--no-trace");
        assert_eq!(u.cause, Cause::RefusedByUser);
    }
}
