//! The names generated outputs use: kernels of an LLM workload on Intel
//! GPUs (IPEX/ATen functors, XeTLA GEMMs and attention, oneDNN, Triton,
//! oneCCL kernels), the PyTorch ops that launch them, and memory commands.
//! Together they cover every category of the LLaMA schema
//! (`schemas/LLaMA.json`) and names that match none, with the characters
//! real names carry (`<>`, `::`, `,`, `*`, spaces, `'`, `` ` ``, `#`, `{}`).

/// How a kernel family is counted by tracestat's built-in rules
/// (docs/tracestat.md#classification).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Compute,
    Communication,
}

/// A kernel family: its demangled name, the launch shapes it is used with,
/// and its typical device time.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    pub name: &'static str,
    pub shapes: &'static [&'static str],
    pub base_us: f64,
    pub class: Class,
}

macro_rules! kernel {
    ($name:expr, [$($shape:expr),+], $us:expr) => {
        Kernel { name: $name, shapes: &[$($shape),+], base_us: $us, class: Class::Compute }
    };
    ($name:expr, [$($shape:expr),+], $us:expr, comm) => {
        Kernel { name: $name, shapes: &[$($shape),+], base_us: $us, class: Class::Communication }
    };
}

pub const RMS_NORM: Kernel = kernel!(
    "at::AtenIpexTypeXPU::normalization::fused_norm_kernel1<c10::Half, float, 8, true>",
    [
        "[SIMD32 {16; 1; 1} {1024; 1; 1}]",
        "[SIMD32 {32; 1; 1} {1024; 1; 1}]"
    ],
    6.0
);
pub const HGEMM_QKV: Kernel = kernel!(
    "xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 32, 64, 8, 512, 8, 4, 1, 1, 3, true>",
    ["[SIMD16 {512; 1; 1} {256; 1; 1}]", "[SIMD16 {256; 1; 1} {256; 1; 1}]"],
    70.0
);
pub const HGEMM_MLP: Kernel = kernel!(
    "xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 64, 128, 8, 512, 8, 4, 1, 1, 3, true>",
    ["[SIMD16 {16; 1; 1} {1024; 1; 1}]", "[SIMD16 {64; 1; 1} {512; 1; 1}]"],
    120.0
);
pub const GEMM: Kernel = kernel!(
    "gemm_kernel",
    [
        "[SIMD8 {4; 1; 1} {128; 1; 1}]",
        "[SIMD8 {2; 1; 1} {128; 1; 1}]"
    ],
    55.0
);
pub const ROTARY: Kernel = kernel!(
    "at::AtenIpexTypeXPU::RotaryEmbeddingKernel<c10::Half, 128, true>",
    [
        "[SIMD32 {512; 1; 1} {512; 1; 1}]",
        "[SIMD32 {128; 4; 1} {128; 1; 1}]"
    ],
    7.0
);
pub const ATTENTION: Kernel = kernel!(
    "gpu::xetla::fmha::IfmhaForwardKernel<gpu::xetla::fmha::ifmha_policy_32x512x128, sycl::_V1::detail::half_impl::half, false, true>",
    ["[SIMD16 {16; 4; 1} {128; 1; 1}]", "[SIMD16 {64; 1; 1} {512; 1; 1}]"],
    45.0
);
pub const ADD: Kernel = kernel!(
    "at::AtenIpexTypeXPU::VectorizedElementwiseKernelFunctor<at::AtenIpexTypeXPU::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::impl::AddKernel<c10::Half> >, 4, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int> >",
    ["[SIMD32 {64; 1; 1} {256; 1; 1}]", "[SIMD32 {128; 1; 1} {256; 1; 1}]"],
    4.0
);
pub const SILU_MUL: Kernel = kernel!(
    "at::AtenIpexTypeXPU::VectorizedElementwiseKernelFunctor<at::AtenIpexTypeXPU::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::AtenIpexTypeXPU::impl::mul_kernel_dpcpp_functor<c10::Half> >, 4, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int> >",
    ["[SIMD32 {64; 1; 1} {256; 1; 1}]"],
    5.0
);
pub const TOPK: Kernel = kernel!(
    "at::AtenIpexTypeXPU::impl::topk_impl::RadixSelectKernel<c10::Half, long, 16>",
    ["[SIMD32 {8; 1; 1} {512; 1; 1}]"],
    12.0
);
pub const SOFTMAX: Kernel = kernel!(
    "at::AtenIpexTypeXPU::impl::SoftmaxForwardKernel<8, c10::Half, float, 4, true>",
    ["[SIMD32 {32; 1; 1} {512; 1; 1}]"],
    9.0
);
pub const TRITON_POI: Kernel = kernel!(
    "triton_poi_fused_add_mul_0",
    ["[SIMD32 {1024; 1; 1} {128; 1; 1}]"],
    3.0
);
pub const TRITON_RED: Kernel = kernel!(
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1",
    ["[SIMD32 {32; 1; 1} {512; 1; 1}]"],
    9.0
);
pub const COPY_KERNEL: Kernel = kernel!(
    "at::AtenIpexTypeXPU::UnrolledElementwiseKernelFunctor<4, at::impl::direct_copy_kernel_gpu_functor<c10::Half>, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int> >",
    ["[SIMD32 {512; 1; 1} {256; 1; 1}]"],
    8.0
);
pub const ANON_REDUCE: Kernel = kernel!(
    "`anonymous namespace'::reduce_rows<float>",
    ["[SIMD16 {28; 28; 8} {16; 1; 1}]"],
    6.0
);
pub const ALLREDUCE_SMALL: Kernel = kernel!(
    "Allreduce_small_kernel<sycl::_V1::detail::half_impl::half, 8>",
    ["[SIMD16 {1; 1; 1} {256; 1; 1}]"],
    20.0,
    comm
);
pub const ALLREDUCE_LARGE: Kernel = kernel!(
    "NoCopyKernel_compute<sycl::_V1::detail::half_impl::half, 12>",
    ["[SIMD16 {1024; 8; 1} {64; 1; 1}]"],
    60.0,
    comm
);

/// Every kernel family, in catalog order (the index is a kernel's number).
pub const KERNELS: &[Kernel] = &[
    RMS_NORM,
    HGEMM_QKV,
    HGEMM_MLP,
    GEMM,
    ROTARY,
    ATTENTION,
    ADD,
    SILU_MUL,
    TOPK,
    SOFTMAX,
    TRITON_POI,
    TRITON_RED,
    COPY_KERNEL,
    ANON_REDUCE,
    ALLREDUCE_SMALL,
    ALLREDUCE_LARGE,
];

/// Index of a family in [`KERNELS`] (by name; the catalog is small).
pub fn kernel_index(k: &Kernel) -> usize {
    KERNELS
        .iter()
        .position(|c| c.name == k.name)
        .expect("kernel in the catalog")
}

/// One operation of a transformer block: the PyTorch range and the kernels
/// it launches, optionally through a oneDNN primitive.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub range: &'static str,
    pub kernels: &'static [Kernel],
    pub onednn: bool,
}

/// The operations of one decoder block, in order; a step runs them round
/// robin, one per layer.
pub const BLOCK: &[Op] = &[
    Op {
        range: "PyTorch::torch_ipex::rms_norm",
        kernels: &[RMS_NORM],
        onednn: false,
    },
    Op {
        range: "PyTorch::aten::linear",
        kernels: &[HGEMM_QKV],
        onednn: false,
    },
    Op {
        range: "PyTorch::torch_ipex::rotary_embedding",
        kernels: &[ROTARY],
        onednn: false,
    },
    Op {
        range: "PyTorch::torch_ipex::masked_multihead_self_attention",
        kernels: &[ATTENTION, SOFTMAX],
        onednn: false,
    },
    Op {
        range: "PyTorch::aten::linear",
        kernels: &[GEMM],
        onednn: true,
    },
    Op {
        range: "PyTorch::aten::add",
        kernels: &[ADD],
        onednn: false,
    },
    Op {
        range: "PyTorch::torch_ipex::rms_norm",
        kernels: &[TRITON_RED],
        onednn: false,
    },
    Op {
        range: "PyTorch::torch_ipex::mm_silu_mul",
        kernels: &[HGEMM_MLP, SILU_MUL],
        onednn: false,
    },
    Op {
        range: "PyTorch::aten::linear",
        kernels: &[GEMM],
        onednn: true,
    },
    Op {
        range: "PyTorch::aten::add",
        kernels: &[TRITON_POI],
        onednn: false,
    },
    Op {
        range: "PyTorch::aten::topk",
        kernels: &[TOPK, ANON_REDUCE],
        onednn: false,
    },
    Op {
        range: "PyTorch::aten::copy_",
        kernels: &[COPY_KERNEL],
        onednn: false,
    },
];

/// The oneDNN primitive range around a oneDNN GEMM.
pub const ONEDNN_MATMUL: &str = "dnnl::primitive::execute::matmul";

/// Host API calls.
pub mod api {
    pub const LAUNCH: &str = "zeCommandListAppendLaunchKernel";
    pub const SET_ARG: &str = "zeKernelSetArgumentValue";
    pub const SET_GROUP: &str = "zeKernelSetGroupSize";
    pub const COPY: &str = "zeCommandListAppendMemoryCopy";
    pub const FILL: &str = "zeCommandListAppendMemoryFill";
    pub const BARRIER: &str = "zeCommandListAppendBarrier";
    pub const LIST_SYNC: &str = "zeCommandListHostSynchronize";
    pub const EVENT_SYNC: &str = "zeEventHostSynchronize";
    pub const MEM_FREE: &str = "zeMemFree";
}

/// The name of a device memory command with its byte count
/// (docs/formats.md#trace-json-events): `zeCommandListAppendMemoryCopy(M2D)[4194304]`.
pub fn memory_command(kind: &str, direction: &str, bytes: u64) -> String {
    format!("zeCommandListAppendMemory{kind}({direction})[{bytes}]")
}

/// The quoted-name percent encoding of a metrics link
/// (docs/formats.md#trace-json-metrics-link): unreserved bytes kept, every
/// other byte `%XX`; bytes above 0x7f sign-extended as unitrace writes them.
pub fn percent_encode(out: &mut Vec<u8>, name: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in name {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b);
        } else if b >= 0x80 {
            out.extend_from_slice(b"%FFFFFF");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.push(b'%');
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoding_follows_the_link_format() {
        let mut out = Vec::new();
        percent_encode(&mut out, b"\"a b<1>\"");
        assert_eq!(out, b"%22a%20b%3C1%3E%22");
        out.clear();
        percent_encode(&mut out, "é".as_bytes());
        assert_eq!(out, b"%FFFFFFC3%FFFFFFA9");
    }

    #[test]
    fn every_block_kernel_is_in_the_catalog() {
        for op in BLOCK {
            for k in op.kernels {
                assert_eq!(KERNELS[kernel_index(k)].name, k.name);
            }
        }
    }
}
