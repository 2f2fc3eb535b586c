//! The PyTorch profiler's (Kineto's) trace vocabulary
//! (docs/formats.md#kineto-json): the categories of its activity types —
//! device activity (`kernel`, `gpu_memcpy`, `gpu_memset`), runtime and
//! driver calls (`cuda_runtime`, `cuda_driver`, `xpu_runtime`,
//! `privateuse1_runtime`), framework ranges (`cpu_op`, `user_annotation`,
//! `python_function`) — launch links by `correlation` (and `ac2g` flows),
//! collectives from `record_param_comms`, the rank from the top-level
//! `distributedInfo`.

use crate::trace::object_members;

use super::chrome_json::{args_str, args_uint, JsonVocabulary, SliceKind};
use super::model::{CollectiveArgs, DeviceOpKind, HostRole, RunInfo};
use super::names::NameInfo;

/// Kineto's vocabulary; remembers nothing between events.
#[derive(Debug, Default, Clone, Copy)]
pub struct KinetoVocabulary;

/// Runtime and driver API categories (one per backend).
const API_CATEGORIES: &[&[u8]] = &[
    b"cuda_runtime",
    b"cuda_driver",
    b"cuda_sync",
    b"xpu_runtime",
    b"xpu_driver",
    b"hip_runtime",
    b"privateuse1_runtime",
    b"privateuse1_driver",
    b"mtia_runtime",
];

/// Framework ranges projected onto the device.
const RANGE_CATEGORIES: &[&[u8]] = &[b"cpu_op", b"user_annotation", b"python_function"];

impl JsonVocabulary for KinetoVocabulary {
    fn slice_kind(&self, cat: &[u8], info: &NameInfo) -> SliceKind {
        match cat {
            b"kernel" => SliceKind::Device(DeviceOpKind::Kernel),
            // The direction is in the name (`Memcpy HtoD (Pageable -> Device)`).
            b"gpu_memcpy" => match info.device_kind {
                k @ DeviceOpKind::Copy { .. } => SliceKind::Device(k),
                _ => SliceKind::Device(DeviceOpKind::Copy {
                    from: super::model::MemoryKind::Unknown,
                    to: super::model::MemoryKind::Unknown,
                }),
            },
            b"gpu_memset" => SliceKind::Device(DeviceOpKind::Fill),
            _ if API_CATEGORIES.contains(&cat) => SliceKind::Host(HostRole::ApiCall),
            _ if RANGE_CATEGORIES.contains(&cat) => SliceKind::Host(HostRole::Range),
            // `gpu_user_annotation` (a device-side copy of a range),
            // `Trace`, `overhead`, ...: rows, not work.
            _ => SliceKind::Other,
        }
    }

    fn device_ids(&self, args: Option<&[u8]>) -> (Option<u64>, Option<u64>) {
        let id = args.and_then(|a| args_uint(a, b"correlation"));
        (id, id)
    }

    fn submission_flow(&self, cat: &[u8]) -> bool {
        cat == b"ac2g"
    }

    fn collective(
        &self,
        name: &str,
        _info: &NameInfo,
        args: Option<&[u8]>,
    ) -> Option<CollectiveArgs> {
        if name != "record_param_comms" {
            return None;
        }
        let args = args?;
        let op = args_str(args, b"Collective name")?;
        // Barriers, sends and receives are not matched across ranks here.
        if op.is_empty() || op == "send" || op == "recv" || op == "coalesced" {
            return None;
        }
        let nelems = args_uint(args, b"In msg nelems").or_else(|| args_uint(args, b"In msg size"));
        let elem = args_str(args, b"dtype").map_or(0, |t| dtype_bytes(&t));
        let comm = args_str(args, b"Process Group Name")
            .or_else(|| args_str(args, b"Process Group Description"));
        Some(CollectiveArgs {
            bytes: nelems.map(|n| n.saturating_mul(elem.max(1))),
            comm,
            op: Some(op),
        })
    }

    fn top_level(&mut self, key: &[u8], value: &[u8]) -> Option<RunInfo> {
        if key != b"distributedInfo" || value.first() != Some(&b'{') {
            return None;
        }
        let mut info = RunInfo::default();
        for (k, _) in object_members(value) {
            match k {
                b"rank" => {
                    info.rank = args_uint(value, b"rank").and_then(|r| u32::try_from(r).ok())
                }
                b"world_size" => {
                    info.world_size =
                        args_uint(value, b"world_size").and_then(|r| u32::try_from(r).ok())
                }
                b"backend" => info.backend = args_str(value, b"backend"),
                _ => {}
            }
        }
        Some(info)
    }
}

/// Bytes per element of a PyTorch dtype name (`Float`, `BFloat16`, ...).
fn dtype_bytes(dtype: &str) -> u64 {
    match dtype {
        "Double" | "Long" | "ComplexFloat" => 8,
        "Float" | "Int" | "ComplexHalf" => 4,
        "Half" | "BFloat16" | "Short" => 2,
        "Byte" | "Char" | "Bool" | "Float8_e4m3fn" | "Float8_e5m2" => 1,
        "ComplexDouble" => 16,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::names::NameInfo;

    #[test]
    fn categories() {
        let v = KinetoVocabulary;
        let info = NameInfo::of("Memcpy HtoD (Pageable -> Device)");
        assert_eq!(
            v.slice_kind(b"gpu_memcpy", &info),
            SliceKind::Device(DeviceOpKind::Copy {
                from: super::super::model::MemoryKind::PageableHost,
                to: super::super::model::MemoryKind::Device
            })
        );
        let plain = NameInfo::of("x");
        assert_eq!(
            v.slice_kind(b"kernel", &plain),
            SliceKind::Device(DeviceOpKind::Kernel)
        );
        assert_eq!(
            v.slice_kind(b"cuda_runtime", &plain),
            SliceKind::Host(HostRole::ApiCall)
        );
        assert_eq!(
            v.slice_kind(b"cpu_op", &plain),
            SliceKind::Host(HostRole::Range)
        );
        assert_eq!(
            v.slice_kind(b"gpu_user_annotation", &plain),
            SliceKind::Other
        );
        assert!(v.submission_flow(b"ac2g"));
    }

    #[test]
    fn collectives_and_ranks() {
        let v = KinetoVocabulary;
        let args = br#"{"Collective name": "allreduce", "In msg nelems": 1024, "dtype": "Float", "Process Group Name": "0"}"#;
        let c = v
            .collective(
                "record_param_comms",
                &NameInfo::of("record_param_comms"),
                Some(args),
            )
            .unwrap();
        assert_eq!(c.bytes, Some(4096));
        assert_eq!(c.comm.as_deref(), Some("0"));
        assert_eq!(c.op.as_deref(), Some("allreduce"));
        let mut v = KinetoVocabulary;
        let info = v
            .top_level(
                b"distributedInfo",
                br#"{"backend": "nccl", "rank": 3, "world_size": 4}"#,
            )
            .unwrap();
        assert_eq!(info.rank, Some(3));
        assert_eq!(info.world_size, Some(4));
        assert_eq!(info.backend.as_deref(), Some("nccl"));
    }
}
