//! Kernels of the metric outputs (metric CSVs, stall CSVs and shader dumps,
//! roofline profiles): their names as unitrace prints them, the compiled
//! symbol IGC's dump names them by, and how they behave on the hardware,
//! from which every counter of a row is derived consistently (clocks =
//! time x frequency, bytes = bandwidth x time, L3 bytes >= memory bytes,
//! operations = rate x time).

/// What a kernel spends its operations on (roofline precisions,
/// docs/formats.md#roofline-profiles).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpsMix {
    /// Instructions per nanosecond by precision.
    pub fp16: f64,
    pub fp32: f64,
    pub fp64: f64,
    pub xmx_fp16: f64,
    pub xmx_bf16: f64,
}

#[derive(Debug, Clone, Copy)]
pub struct MetricKernel {
    /// Demangled name, without launch shape.
    pub name: &'static str,
    pub shape: &'static str,
    /// The `//.kernel` symbol of its `.asm` in a shader dump
    /// (docs/formats.md#shader-dump-asm): demangles to `name` (after
    /// `typeinfo name for `), or `name` itself for OpenCL C/Triton kernels.
    pub symbol: &'static str,
    /// Typical device time of one instance.
    pub gpu_us: f64,
    /// GPU memory read bandwidth (GB/s); writes are `write_ratio` of it.
    pub read_gbps: f64,
    pub write_ratio: f64,
    /// L3 traffic over memory traffic (>= 1: cache hits).
    pub l3_factor: f64,
    /// Typical `XVE_ACTIVE[%]` and `XVE_STALL[%]`.
    pub active: f64,
    pub stall: f64,
    pub ops: OpsMix,
}

const fn mix(fp16: f64, fp32: f64, fp64: f64, xmx_fp16: f64, xmx_bf16: f64) -> OpsMix {
    OpsMix {
        fp16,
        fp32,
        fp64,
        xmx_fp16,
        xmx_bf16,
    }
}

/// Every kernel, in the order files use them (`--kernels K` takes the
/// first K, round robin beyond the list).
pub const KERNELS: &[MetricKernel] = &[
    MetricKernel {
        name: "main::{lambda(auto:1)#4}",
        shape: "[SIMD32 {4096; 1; 1} {256; 1; 1}]",
        symbol: "_ZTSZ4mainEUlT_E2_",
        gpu_us: 820.0,
        read_gbps: 540.0,
        write_ratio: 0.5,
        l3_factor: 1.08,
        active: 30.0,
        stall: 55.0,
        ops: mix(0.0, 37.0, 1.1, 0.0, 0.0),
    },
    MetricKernel {
        name: "gen_conv",
        shape: "[SIMD16 {28; 28; 8} {16; 1; 1}]",
        symbol: "gen_conv",
        gpu_us: 2050.0,
        read_gbps: 85.0,
        write_ratio: 0.4,
        l3_factor: 4.7,
        active: 62.0,
        stall: 14.0,
        ops: mix(47.0, 31.0, 0.0, 315.0, 112.0),
    },
    MetricKernel {
        name: "triton_poi_fused_add_0",
        shape: "[SIMD32 {2048; 1; 1} {128; 1; 1}]",
        symbol: "triton_poi_fused_add_0",
        gpu_us: 255.0,
        read_gbps: 520.0,
        write_ratio: 0.5,
        l3_factor: 1.07,
        active: 22.0,
        stall: 42.0,
        ops: mix(12.0, 22.0, 0.0, 0.0, 0.0),
    },
    MetricKernel {
        name: "xpu::xetla::hgemm_caller<sycl::_V1::ext::oneapi::bfloat16, 256, 256, 32, 64, 32, 1, true, false>",
        shape: "[SIMD_ANY {16; 16; 1} {8; 4; 1}]",
        symbol: "_ZTSN3xpu5xetla12hgemm_callerIN4sycl3_V13ext6oneapi8bfloat16ELi256ELi256ELi32ELi64ELi32ELi1ELb1ELb0EEE",
        gpu_us: 4500.0,
        read_gbps: 140.0,
        write_ratio: 0.15,
        l3_factor: 8.1,
        active: 78.0,
        stall: 9.0,
        ops: mix(7.5, 17.5, 0.0, 0.0, 510.0),
    },
    MetricKernel {
        name: "main::{lambda(sycl::_V1::handler&)#1}::operator()(sycl::_V1::handler&) const::{lambda(sycl::_V1::nd_item<1>)#1}",
        shape: "[SIMD16 {1024; 1; 1} {256; 1; 1}]",
        symbol: "_ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_7nd_itemILi1EEEE_",
        gpu_us: 520.0,
        read_gbps: 460.0,
        write_ratio: 0.3,
        l3_factor: 1.11,
        active: 35.0,
        stall: 48.0,
        ops: mix(0.0, 110.0, 9.5, 0.0, 0.0),
    },
    MetricKernel {
        name: "(anonymous namespace)::softmax_kernel<sycl::_V1::ext::oneapi::bfloat16, 1024>",
        shape: "[SIMD32 {512; 1; 1} {1024; 1; 1}]",
        symbol: "_ZTSN12_GLOBAL__N_114softmax_kernelIN4sycl3_V13ext6oneapi8bfloat16ELi1024EEE",
        gpu_us: 310.0,
        read_gbps: 480.0,
        write_ratio: 0.9,
        l3_factor: 1.25,
        active: 40.0,
        stall: 35.0,
        ops: mix(130.0, 98.0, 0.0, 0.0, 0.0),
    },
    MetricKernel {
        name: "at::native::xpu::VectorizedElementwiseKernel<4, at::native::xpu::AddFunctor<float>, at::native::xpu::TrivialOffsetCalc<3, unsigned int> >",
        shape: "[SIMD32 {8192; 1; 1} {512; 1; 1}]",
        symbol: "_ZTSN2at6native3xpu27VectorizedElementwiseKernelILi4ENS1_10AddFunctorIfEENS1_17TrivialOffsetCalcILi3EjEEEE",
        gpu_us: 640.0,
        read_gbps: 600.0,
        write_ratio: 0.5,
        l3_factor: 1.05,
        active: 25.0,
        stall: 60.0,
        ops: mix(0.0, 50.0, 0.0, 0.0, 0.0),
    },
    MetricKernel {
        name: "`anonymous namespace'::reduce_rows<float>",
        shape: "[SIMD16 {64; 1; 1} {1024; 1; 1}]",
        symbol: "_ZTSN12_GLOBAL__N_111reduce_rowsIfEE",
        gpu_us: 180.0,
        read_gbps: 380.0,
        write_ratio: 0.02,
        l3_factor: 1.1,
        active: 28.0,
        stall: 40.0,
        ops: mix(0.0, 60.0, 0.0, 0.0, 0.0),
    },
    MetricKernel {
        name: "gemm_kernel",
        shape: "[SIMD8 {4; 1; 1} {128; 1; 1}]",
        symbol: "gemm_kernel",
        gpu_us: 1600.0,
        read_gbps: 120.0,
        write_ratio: 0.2,
        l3_factor: 6.0,
        active: 70.0,
        stall: 12.0,
        ops: mix(20.0, 8.0, 0.0, 620.0, 0.0),
    },
    MetricKernel {
        name: "gpu::xetla::fmha::IfmhaForwardKernel<gpu::xetla::fmha::ifmha_policy_32x512x128, sycl::_V1::detail::half_impl::half, false, true>",
        shape: "[SIMD16 {16; 4; 1} {128; 1; 1}]",
        symbol: "_ZTSN3gpu5xetla4fmha18IfmhaForwardKernelINS1_23ifmha_policy_32x512x128EN4sycl3_V16detail9half_impl4halfELb0ELb1EEE",
        gpu_us: 900.0,
        read_gbps: 300.0,
        write_ratio: 0.25,
        l3_factor: 2.2,
        active: 55.0,
        stall: 25.0,
        ops: mix(60.0, 20.0, 0.0, 240.0, 0.0),
    },
];

/// The kernel of slot `k` of a file: the catalog round robin.
pub fn kernel(k: usize) -> &'static MetricKernel {
    &KERNELS[k % KERNELS.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_demangle_to_the_names() {
        for k in KERNELS {
            let got = unitrace_core::demangle::demangle_kernel_symbol(k.symbol);
            if k.name.starts_with('`') {
                // unitrace's spelling of an anonymous namespace is not the
                // demangler's: no dump file matches this kernel.
                assert_ne!(got, k.name);
            } else {
                assert_eq!(got, k.name, "symbol {}", k.symbol);
            }
        }
    }
}
