//! Device configuration of the roofline (docs/formats.md#device-config-csv, #device-config-json, JSON and the
//! original's two-column CSV): any bytes give a config or an error, never a
//! panic; an accepted config has positive, finite peaks and bandwidths.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/device_config/*`).

use std::path::Path;

use unitrace_core::device_config::{DeviceConfig, Precision};

pub fn run(data: &[u8]) {
    let Ok(config) = DeviceConfig::from_bytes(Path::new("fuzz.json"), data) else {
        return;
    };
    for p in Precision::ALL {
        let peak = config.peak(p);
        assert!(peak.is_finite() && peak > 0.0, "{p:?} peak {peak}");
        let _ = (p.label(), p.json_key(), p.csv_key());
    }
    for bw in [config.l3_bw(), config.gpu_memory_bw()] {
        assert!(bw.is_finite() && bw > 0.0, "bandwidth {bw}");
    }
    for level in &config.levels {
        let _ = (level.label(), level.read_column(), level.write_column());
        assert!(config.level(&level.key).is_some());
    }
}
