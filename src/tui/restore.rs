//! Leaving the terminal as it was found.

use std::io::Write as _;

use ratatui::crossterm::terminal::{Clear, ClearType};

/// Blanks the alternate screen. For tmux before 3.4: leaving the alternate
/// screen after the window changed both width and height, it copies rows of
/// the alternate screen onto the main one (tmux issue 3510, fixed upstream
/// by not reflowing in `screen_alternate_off`).
fn blank() {
    let mut out = std::io::stdout();
    let _ = ratatui::crossterm::queue!(out, Clear(ClearType::All));
    let _ = out.flush();
}

/// Blanks the alternate screen, then leaves it and raw mode
/// (`ratatui::restore`).
pub fn leave() {
    blank();
    ratatui::restore();
}

/// Makes a panic blank the alternate screen before the hook `ratatui::init`
/// set leaves it and prints the message.
pub fn on_panic() {
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        blank();
        next(info);
    }));
}

/// Leaves raw mode and the alternate screen if the dashboard still holds
/// them: the hook a forced exit runs ([`crate::os::stop::before_forced_exit`]);
/// nothing is written when the terminal is not raw.
pub fn leave_if_raw() {
    if ratatui::crossterm::terminal::is_raw_mode_enabled().unwrap_or(false) {
        leave();
    }
}
