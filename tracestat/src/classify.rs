//! What a kernel and a host call are, for the breakdown and the gap causes
//! (docs/tracestat.md#classification).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use unitrace_core::category_schema::{CategorySchema, DEFAULT_DEVICE_CATEGORY};
use unitrace_core::summary_text::normalize_kernel_name;
pub use unitrace_core::timeline::names::{
    host_kind, is_collective_call, is_host_range, is_memory_command, HostKind,
};

/// The three kinds of GPU work of the temporal breakdown, in precedence
/// order: a time point where several run counts for the first one
/// (docs/tracestat.md#precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Compute,
    Communication,
    Memory,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Compute, Class::Communication, Class::Memory];
    pub fn name(self) -> &'static str {
        match self {
            Class::Compute => "compute",
            Class::Communication => "communication",
            Class::Memory => "memory",
        }
    }
}

/// Substrings (lower case) of collective kernels of oneCCL, MPI GPU
/// offload and the PyTorch/IPEX allreduce implementations.
const COLLECTIVE_KERNEL_WORDS: &[&str] = &[
    "allreduce",
    "all_reduce",
    "allgather",
    "all_gather",
    "reduce_scatter",
    "reducescatter",
    "alltoall",
    "all_to_all",
    "broadcast",
    "oneccl",
    "ccl::",
    "ccl_kernel",
    "sendrecv",
];

/// The built-in class of a kernel by name alone; copy-engine placement and
/// the collective host range of memory commands are decided by the caller.
pub fn builtin_class(name: &str) -> Class {
    if is_memory_command(name) {
        return Class::Memory;
    }
    let lower = name.to_ascii_lowercase();
    if COLLECTIVE_KERNEL_WORDS.iter().any(|w| lower.contains(w)) {
        return Class::Communication;
    }
    Class::Compute
}

/// Which class a `--schema` category stands for: categories named for
/// communication or memory (`comm`, `allreduce`, `mem_op`, ...), else
/// compute (docs/tracestat.md#classification).
pub fn class_of_category(category: &str) -> Class {
    let lower = category.to_ascii_lowercase();
    if lower.contains("comm")
        || lower.contains("ccl")
        || lower.contains("mpi")
        || COLLECTIVE_KERNEL_WORDS.iter().any(|w| lower.contains(w))
    {
        Class::Communication
    } else if lower.contains("mem") || lower.contains("copy") {
        Class::Memory
    } else {
        Class::Compute
    }
}

/// The category and class of kernels, by name, cached.
pub struct Classifier<'a> {
    schema: Option<&'a CategorySchema>,
    cache: HashMap<String, (String, Option<Class>)>,
}

/// Result of classifying one kernel name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelKind {
    /// Name without the launch shape (`[SIMD..]`, `[bytes]`): the row of
    /// the kernel breakdown.
    pub short_name: String,
    /// Schema category, or the built-in class name without a schema.
    pub category: String,
    /// Class from the schema category; `None` means "built-in", decided
    /// with the placement (copy engine, collective range).
    pub class: Option<Class>,
}

impl<'a> Classifier<'a> {
    pub fn new(schema: Option<&'a CategorySchema>) -> Self {
        Classifier {
            schema,
            cache: HashMap::new(),
        }
    }

    pub fn kind(&mut self, name: &str) -> KernelKind {
        let short = normalize_kernel_name(name).into_owned();
        if let Some((category, class)) = self.cache.get(&short) {
            return KernelKind {
                short_name: short,
                category: category.clone(),
                class: *class,
            };
        }
        let (category, class) = match self.schema {
            Some(schema) => match schema.classify(&short) {
                Some(rule) => {
                    let c = schema.category_of(rule).to_string();
                    let class = class_of_category(&c);
                    (c, Some(class))
                }
                // Unmatched kernels keep the schema's default category
                // (summary's rule, docs/formats.md#category-json-lookup) and the
                // built-in class.
                None => (DEFAULT_DEVICE_CATEGORY.to_string(), None),
            },
            None => (builtin_class(&short).name().to_string(), None),
        };
        self.cache.insert(short.clone(), (category.clone(), class));
        KernelKind {
            short_name: short,
            category,
            class,
        }
    }
}

/// Bus-bandwidth factor of a collective (the NCCL-tests convention): the
/// share of the data each rank's link carries, so numbers compare across
/// rank counts.
pub fn bus_factor(name: &str, ranks: usize) -> f64 {
    let n = ranks.max(1) as f64;
    let lower = name.to_ascii_lowercase();
    if lower.contains("allreduce") {
        2.0 * (n - 1.0) / n
    } else if lower.contains("allgather")
        || lower.contains("reduce_scatter")
        || lower.contains("alltoall")
    {
        (n - 1.0) / n
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_classes() {
        assert_eq!(
            builtin_class("zeCommandListAppendMemoryCopy(M2D)[16777216]"),
            Class::Memory
        );
        assert_eq!(
            builtin_class("sycl_allreducer_small<half>::allreduce(sycl::_V1::queue&)"),
            Class::Communication
        );
        assert_eq!(
            builtin_class("xpu::xetla::hgemm_caller<half>"),
            Class::Compute
        );
        assert_eq!(builtin_class("zeCommandListAppendBarrier"), Class::Compute);
    }

    #[test]
    fn schema_categories_map_to_classes() {
        assert_eq!(class_of_category("allreduce"), Class::Communication);
        assert_eq!(class_of_category("comm"), Class::Communication);
        assert_eq!(class_of_category("mem_op"), Class::Memory);
        assert_eq!(class_of_category("matmul"), Class::Compute);
    }
}
