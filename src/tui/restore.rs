//! Leaving the terminal as it was found.

use std::io::Write as _;

use ratatui::crossterm::terminal::{Clear, ClearType};

/// Blanks the alternate screen, then leaves it and raw mode
/// (`ratatui::restore`). The blanking is for tmux before 3.4: leaving the
/// alternate screen after the window changed both width and height, it
/// copies rows of the alternate screen onto the main one (tmux issue 3510,
/// fixed upstream by not reflowing in `screen_alternate_off`).
pub fn leave() {
    let mut out = std::io::stdout();
    let _ = ratatui::crossterm::queue!(out, Clear(ClearType::All));
    let _ = out.flush();
    ratatui::restore();
}

/// Makes a panic leave the terminal through [`leave`] before the hook
/// `ratatui::init` set prints the message.
pub fn on_panic() {
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let mut out = std::io::stdout();
        let _ = ratatui::crossterm::queue!(out, Clear(ClearType::All));
        let _ = out.flush();
        next(info);
    }));
}
