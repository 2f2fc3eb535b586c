//! The bundled device files load, and every number carries its source.

use std::path::Path;

use unitrace_core::device_config::{DeviceConfig, Precision};

#[test]
fn bundled_device_files_load_and_cite_a_source_for_every_value() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../device_configs");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let dev = DeviceConfig::from_path(&path).unwrap_or_else(|e| panic!("{e}"));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let sources = json["sources"].as_object().expect("a `sources` object");
        let cited = |key: &str| {
            sources.contains_key(key) && sources[key].as_str().is_some_and(|s| !s.is_empty())
        };
        for p in Precision::ALL {
            let key = format!("peak_gflops.{}", p.json_key());
            assert!(cited(&key), "{}: no source for {key}", path.display());
        }
        for level in &dev.levels {
            let key = format!("bandwidth_gb_per_s.{}", level.key);
            assert!(cited(&key), "{}: no source for {key}", path.display());
        }
        seen.push(dev.name);
    }
    seen.sort();
    assert_eq!(seen, ["BMG_B580", "PVC_1tile", "PVC_2tile"]);
}

/// pvc.json carries exactly the numbers of the original's PVC_1tile.csv.
#[test]
fn pvc_json_equals_the_original_csv() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let json = DeviceConfig::from_path(&root.join("device_configs/pvc.json")).unwrap();
    let csv = DeviceConfig::from_path(&root.join("testdata/roofline/PVC_1tile.csv")).unwrap();
    assert_eq!(json.peak_gflops, csv.peak_gflops);
    assert_eq!(json.levels, csv.levels);
    assert_eq!(json.name, csv.name);
}
