//! Writing to stdout without losing output silently: a closed pipe (a
//! reader like `head` that has seen enough) ends the command quietly, any
//! other failure (a full disk) is an error and a non-zero exit.

use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};

use crate::pipeline::Flow;

/// Writes `text` to `out` and flushes it: `Flow::Stop` when the reader
/// went away, an error when the write failed otherwise.
pub fn emit(out: &mut impl Write, text: &str) -> Result<Flow> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(Flow::Continue),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(Flow::Stop),
        Err(e) => Err(e).context("cannot write to standard output"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Failing(ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_stops_quietly_and_a_full_disk_is_an_error() {
        assert_eq!(
            emit(&mut Failing(ErrorKind::BrokenPipe), "x").unwrap(),
            Flow::Stop
        );
        let e = emit(&mut Failing(ErrorKind::StorageFull), "x").unwrap_err();
        assert!(format!("{e:#}").starts_with("cannot write to standard output"));
        let mut v = Vec::new();
        assert_eq!(emit(&mut v, "ok\n").unwrap(), Flow::Continue);
        assert_eq!(v, b"ok\n");
    }
}
