//! libFuzzer entry of `exercise/roofline_profile.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/roofline_profile.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
