//! libFuzzer entry of `exercise/summary_tarball.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/summary_tarball.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
