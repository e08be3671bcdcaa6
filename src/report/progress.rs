//! The progress bar: on stderr, only when stderr is a terminal, and only once a scan has taken
//! about a second (a quick scan never flickers). Never coloured.

use crate::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a scan runs before the bar appears.
pub const DELAY: Duration = Duration::from_millis(1000);

pub struct Bar {
    bar: ProgressBar,
    /// Set when the scan is over; guards the moment the bar is shown.
    done: Arc<Mutex<bool>>,
}

impl Bar {
    /// A bar that appears after [`DELAY`], or `None` when stderr is not a terminal.
    pub fn start() -> Option<Bar> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} files {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message("discovering");
        let done = Arc::new(Mutex::new(false));
        let (b, d) = (bar.clone(), done.clone());
        std::thread::spawn(move || {
            std::thread::sleep(DELAY);
            let done = d.lock().unwrap_or_else(|e| e.into_inner());
            if !*done {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(Duration::from_millis(120));
            }
        });
        Some(Bar { bar, done })
    }

    /// Removes the bar (if it was shown) before the report is printed.
    pub fn finish(self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done = true;
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn discovered(&self, files: usize) {
        self.bar.set_length(files as u64);
        self.bar.set_message("parsing");
    }
    fn parsed(&self) {
        self.bar.inc(1);
    }
    fn phase(&self, name: &str) {
        self.bar.set_message(name.to_string());
    }
}
