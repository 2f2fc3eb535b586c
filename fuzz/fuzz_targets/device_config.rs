//! libFuzzer entry of `exercise/device_config.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/device_config.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
