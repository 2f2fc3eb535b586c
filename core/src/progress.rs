//! The one progress bar of every tool: input bytes done of the total,
//! rate, time left and a short message, on standard error, and only when
//! standard error is a terminal (pipes, log files and tests see nothing, so
//! outputs and messages stay byte-identical wherever they are captured).

use std::io::IsTerminal;

pub use indicatif::ProgressBar;

const TEMPLATE: &str = "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {msg}";

/// A bar for `total` bytes of input, or `None` when standard error is not a
/// terminal. Print other lines through [`ProgressBar::suspend`] while it is
/// shown; end it with [`ProgressBar::finish_and_clear`].
pub fn bytes_bar(total: u64) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| styled(total))
}

/// The bar itself, whatever standard error is.
fn styled(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(TEMPLATE)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_valid() {
        assert!(indicatif::ProgressStyle::with_template(TEMPLATE).is_ok());
        let bar = styled(10);
        bar.set_position(4);
        assert_eq!(bar.position(), 4);
        assert_eq!(bar.length(), Some(10));
    }
}
