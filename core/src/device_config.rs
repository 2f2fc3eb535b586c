//! Device description for the roofline: peak throughput per precision and
//! bandwidth per memory level (docs/formats.md#device-config-csv and #device-config-json).
//!
//! Two forms are read:
//! * the original two-column CSV (`key,value`, no header; `PlatformName`,
//!   `FP16_GFLOPS`, ..., `L3_BW_in_GB_per_sec`), and
//! * our JSON form with explicit units (`peak_gflops`, `bandwidth_gb_per_s`)
//!   plus optional descriptive fields (`description`, `sources`, `comment`).
//!
//! The JSON form is detected by the first non-blank byte being `{`.
//! Peaks are GFLOP/s (10^9 operations/s) and bandwidths GB/s (10^9 bytes/s)
//! in both forms.

use std::path::Path;

use crate::error::InputError;

/// The operation types the roofline counts, in the order of the JSON keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    Fp16,
    Fp16Xmx,
    Bf16Xmx,
    Fp32,
    Fp64,
}

impl Precision {
    pub const ALL: [Precision; 5] = [
        Precision::Fp16,
        Precision::Fp16Xmx,
        Precision::Bf16Xmx,
        Precision::Fp32,
        Precision::Fp64,
    ];

    /// Index into per-precision arrays (`[f64; 5]`), in [`Precision::ALL`] order.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name the original prints (`FP16`, `FP16_XMX`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp16 => "FP16",
            Precision::Fp16Xmx => "FP16_XMX",
            Precision::Bf16Xmx => "BF16_XMX",
            Precision::Fp32 => "FP32",
            Precision::Fp64 => "FP64",
        }
    }

    /// Key in the JSON `peak_gflops` object.
    pub fn json_key(self) -> &'static str {
        match self {
            Precision::Fp16 => "fp16",
            Precision::Fp16Xmx => "fp16_xmx",
            Precision::Bf16Xmx => "bf16_xmx",
            Precision::Fp32 => "fp32",
            Precision::Fp64 => "fp64",
        }
    }

    /// Key in the legacy CSV device file.
    pub fn csv_key(self) -> &'static str {
        match self {
            Precision::Fp16 => "FP16_GFLOPS",
            Precision::Fp16Xmx => "FP16_XMX_GFLOPS",
            Precision::Bf16Xmx => "BF16_XMX_GFLOPS",
            Precision::Fp32 => "FP32_GFLOPS",
            Precision::Fp64 => "FP64_GFLOPS",
        }
    }
}

/// One memory level with its bandwidth. `key` is the JSON key (`l3`,
/// `gpu_memory`, or any further level such as `load_store_cache`); the byte
/// counters of a level are `<KEY>_BYTE_READ[bytes]` and
/// `<KEY>_BYTE_WRITE[bytes]` with the key upper-cased.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryLevel {
    pub key: String,
    pub bandwidth_gb_per_s: f64,
}

impl MemoryLevel {
    /// Label used in pages and tables: `L3`, `GPU memory`, else the key.
    pub fn label(&self) -> String {
        match self.key.as_str() {
            "l3" => "L3".to_string(),
            "gpu_memory" => "GPU memory".to_string(),
            other => other.replace('_', " "),
        }
    }

    pub fn read_column(&self) -> String {
        format!("{}_BYTE_READ[bytes]", self.key.to_ascii_uppercase())
    }

    pub fn write_column(&self) -> String {
        format!("{}_BYTE_WRITE[bytes]", self.key.to_ascii_uppercase())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeviceConfig {
    pub name: String,
    pub description: Option<String>,
    /// Peak GFLOP/s indexed by [`Precision::index`].
    pub peak_gflops: [f64; 5],
    /// `l3` first, `gpu_memory` second, further levels after them in key order.
    pub levels: Vec<MemoryLevel>,
}

impl DeviceConfig {
    pub fn peak(&self, p: Precision) -> f64 {
        self.peak_gflops[p.index()]
    }

    pub fn level(&self, key: &str) -> Option<&MemoryLevel> {
        self.levels.iter().find(|l| l.key == key)
    }

    /// Bandwidth of the L3 level (always present).
    pub fn l3_bw(&self) -> f64 {
        self.level("l3").map_or(f64::NAN, |l| l.bandwidth_gb_per_s)
    }

    /// Bandwidth of the GPU-memory level (always present).
    pub fn gpu_memory_bw(&self) -> f64 {
        self.level("gpu_memory")
            .map_or(f64::NAN, |l| l.bandwidth_gb_per_s)
    }

    /// Reads a device file, JSON or legacy CSV.
    pub fn from_path(path: &Path) -> Result<DeviceConfig, InputError> {
        let bytes = crate::whole_file::read_capped(
            path,
            crate::whole_file::MAX_SMALL_FILE_BYTES,
            "device file",
        )?;
        DeviceConfig::from_bytes(path, &bytes)
    }

    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<DeviceConfig, InputError> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            None => Err(InputError::at_file(path, "device file is empty")),
            Some(b'{') => parse_json(path, bytes),
            Some(_) => parse_csv(path, bytes),
        }
    }
}

fn check_positive(path: &Path, line: Option<u64>, what: &str, v: f64) -> Result<f64, InputError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        let problem = format!("{what} must be a positive number, got {v}");
        Err(match line {
            Some(l) => InputError::at_line(path, l, problem),
            None => InputError::at_file(path, problem),
        })
    }
}

fn parse_csv(path: &Path, bytes: &[u8]) -> Result<DeviceConfig, InputError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| InputError::at_file(path, format!("not UTF-8 text ({e})")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // (value, line) per key; a later duplicate wins like the original's dict.
    let mut entries: Vec<(String, String, u64)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(',') else {
            return Err(InputError::at_line(
                path,
                line_no,
                format!("expected `key,value`, got `{line}`"),
            ));
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        entries.push((key.trim().to_string(), value.to_string(), line_no));
    }
    let find = |key: &str| entries.iter().rev().find(|(k, _, _)| k == key);
    let number = |key: &str| -> Result<f64, InputError> {
        let Some((_, value, line)) = find(key) else {
            return Err(InputError::at_file(
                path,
                format!("missing {key} (a device file needs all five peaks and both bandwidths)"),
            ));
        };
        let v: f64 = value.trim().parse().map_err(|_| {
            InputError::at_line(path, *line, format!("{key}: `{value}` is not a number"))
        })?;
        check_positive(path, Some(*line), key, v)
    };
    let name = match find("PlatformName") {
        Some((_, v, _)) => v.clone(),
        None => return Err(InputError::at_file(path, "missing PlatformName")),
    };
    let mut peak_gflops = [0.0; 5];
    for p in Precision::ALL {
        peak_gflops[p.index()] = number(p.csv_key())?;
    }
    let l3 = number("L3_BW_in_GB_per_sec")?;
    let gm = number("GPU_MEMORY_BW_in_GB_per_sec")?;
    Ok(DeviceConfig {
        name,
        description: None,
        peak_gflops,
        levels: vec![
            MemoryLevel {
                key: "l3".into(),
                bandwidth_gb_per_s: l3,
            },
            MemoryLevel {
                key: "gpu_memory".into(),
                bandwidth_gb_per_s: gm,
            },
        ],
    })
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<DeviceConfig, InputError> {
    use serde_json::Value;
    let root: Value = serde_json::from_slice(bytes)
        .map_err(|e| InputError::at_line(path, e.line() as u64, format!("invalid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(InputError::at_file(
            path,
            "device file must be a JSON object",
        ));
    };
    let name = match root.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(InputError::at_file(path, "`name` must be a string")),
        None => return Err(InputError::at_file(path, "missing `name`")),
    };
    let description = match root.get("description") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let object = |key: &str| -> Result<&serde_json::Map<String, Value>, InputError> {
        match root.get(key) {
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(InputError::at_file(
                path,
                format!("`{key}` must be an object"),
            )),
            None => Err(InputError::at_file(
                path,
                format!("missing `{key}` (a device file needs all five peaks and both bandwidths)"),
            )),
        }
    };
    let number = |obj: &serde_json::Map<String, Value>, section: &str, key: &str| match obj.get(key)
    {
        Some(Value::Number(n)) => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            check_positive(path, None, &format!("{section}.{key}"), v)
        }
        Some(other) => Err(InputError::at_file(
            path,
            format!("{section}.{key}: `{other}` is not a number"),
        )),
        None => Err(InputError::at_file(
            path,
            format!(
                "missing {section}.{key} (a device file needs all five peaks and both bandwidths)"
            ),
        )),
    };
    let peaks = object("peak_gflops")?;
    let mut peak_gflops = [0.0; 5];
    for p in Precision::ALL {
        peak_gflops[p.index()] = number(peaks, "peak_gflops", p.json_key())?;
    }
    let bws = object("bandwidth_gb_per_s")?;
    let mut levels = vec![
        MemoryLevel {
            key: "l3".into(),
            bandwidth_gb_per_s: number(bws, "bandwidth_gb_per_s", "l3")?,
        },
        MemoryLevel {
            key: "gpu_memory".into(),
            bandwidth_gb_per_s: number(bws, "bandwidth_gb_per_s", "gpu_memory")?,
        },
    ];
    // Further levels (e.g. `load_store_cache`), in key order so the output
    // does not depend on how the file was written.
    let mut extra: Vec<&String> = bws
        .keys()
        .filter(|k| *k != "l3" && *k != "gpu_memory")
        .collect();
    extra.sort();
    for key in extra {
        if !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(InputError::at_file(
                path,
                format!(
                    "bandwidth_gb_per_s.{key}: level names may only use letters, digits and `_`"
                ),
            ));
        }
        levels.push(MemoryLevel {
            key: key.clone(),
            bandwidth_gb_per_s: number(bws, "bandwidth_gb_per_s", key)?,
        });
    }
    Ok(DeviceConfig {
        name,
        description,
        peak_gflops,
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "PlatformName,\"PVC_1tile\"\nFP16_GFLOPS,39000\nFP16_XMX_GFLOPS,314000\nBF16_XMX_GFLOPS,314000\nFP32_GFLOPS,32000\nFP64_GFLOPS,32000\nGPU_MEMORY_BW_in_GB_per_sec,1055\nL3_BW_in_GB_per_sec,2043";

    const JSON: &str = r#"{
      "name": "PVC_1tile",
      "sources": {"all": "copied from PVC_1tile.csv"},
      "peak_gflops": {"fp64": 32000, "fp32": 32000, "fp16": 39000, "fp16_xmx": 314000, "bf16_xmx": 314000.0},
      "bandwidth_gb_per_s": {"gpu_memory": 1055, "l3": 2043}
    }"#;

    fn p() -> &'static Path {
        Path::new("dev")
    }

    #[test]
    fn csv_and_json_forms_agree() {
        let c = DeviceConfig::from_bytes(p(), CSV.as_bytes()).unwrap();
        let j = DeviceConfig::from_bytes(p(), JSON.as_bytes()).unwrap();
        assert_eq!(c, j);
        assert_eq!(c.name, "PVC_1tile");
        assert_eq!(c.peak(Precision::Fp16), 39000.0);
        assert_eq!(c.l3_bw(), 2043.0);
        assert_eq!(c.gpu_memory_bw(), 1055.0);
    }

    #[test]
    fn missing_peak_is_named() {
        let csv = CSV.replace("FP64_GFLOPS,32000\n", "");
        let e = DeviceConfig::from_bytes(p(), csv.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("missing FP64_GFLOPS"), "{e}");
        let json = JSON.replace("\"fp16\": 39000, ", "");
        let e = DeviceConfig::from_bytes(p(), json.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("missing peak_gflops.fp16"), "{e}");
    }

    #[test]
    fn non_numeric_and_non_positive_values() {
        let csv = CSV.replace("FP32_GFLOPS,32000", "FP32_GFLOPS,fast");
        let e = DeviceConfig::from_bytes(p(), csv.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "dev:5: FP32_GFLOPS: `fast` is not a number");
        let json = JSON.replace("\"l3\": 2043", "\"l3\": \"2043\"");
        let e = DeviceConfig::from_bytes(p(), json.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("bandwidth_gb_per_s.l3"), "{e}");
        let json = JSON.replace("\"l3\": 2043", "\"l3\": 0");
        let e = DeviceConfig::from_bytes(p(), json.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("positive"), "{e}");
    }

    #[test]
    fn extra_levels_follow_l3_and_gpu_memory() {
        let json = JSON.replace("\"l3\": 2043}", "\"l3\": 2043, \"load_store_cache\": 5000}");
        let d = DeviceConfig::from_bytes(p(), json.as_bytes()).unwrap();
        let keys: Vec<_> = d.levels.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(keys, ["l3", "gpu_memory", "load_store_cache"]);
        assert_eq!(
            d.levels[2].read_column(),
            "LOAD_STORE_CACHE_BYTE_READ[bytes]"
        );
    }
}
