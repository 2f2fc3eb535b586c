//! Demangling of the `//.kernel` symbols of IGC shader dumps
//! (docs/compatibility.md#analyze-demangle), so they can be compared with the kernel names of a stall CSV.
//!
//! unitrace names a kernel by fully demangling its symbol and dropping a
//! leading `typeinfo name for ` (SYCL kernels are typeinfo symbols). The
//! original script asked `c++filt` and kept the raw symbol for everything
//! that is not a typeinfo name, so OpenCL C++/ESIMD kernels never matched
//! (docs/compatibility.md#analyze-quirk-10); the built-in demangler here does what
//! unitrace does, without a subprocess. `-g PROGRAM` still runs an external
//! demangler for compatibility. Results are cached: a dump holds many files
//! per kernel and the all-kernels mode looks every kernel up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TYPEINFO_PREFIX: &str = "typeinfo name for ";

/// Demangles `symbol` like unitrace names kernels: full demangling, then a
/// leading `typeinfo name for ` removed. Symbols that are not mangled (plain
/// OpenCL C names such as `GEMM`) or that cpp_demangle cannot parse are
/// returned unchanged.
pub fn demangle_kernel_symbol(symbol: &str) -> String {
    let demangled = cpp_demangle::Symbol::new(symbol.as_bytes())
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok());
    match demangled {
        Some(text) => match text.strip_prefix(TYPEINFO_PREFIX) {
            Some(rest) => rest.to_string(),
            None => text,
        },
        None => symbol.to_string(),
    }
}

/// How symbols are demangled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemanglerKind {
    /// cpp_demangle, in process.
    BuiltIn,
    /// `PROGRAM SYMBOL`, first output line (the `-g` option).
    External(PathBuf),
}

/// A caching demangler. When the external program cannot run, the first
/// failure is recorded (see [`Demangler::failure`]) and the built-in
/// demangler is used from then on.
#[derive(Debug)]
pub struct Demangler {
    kind: DemanglerKind,
    cache: HashMap<String, String>,
    failure: Option<String>,
}

impl Demangler {
    pub fn built_in() -> Demangler {
        Demangler {
            kind: DemanglerKind::BuiltIn,
            cache: HashMap::new(),
            failure: None,
        }
    }

    /// An external demangler. `program` is used as given when it contains a
    /// path separator; a bare name is looked up in the current directory
    /// first (the original made it absolute relative to the current
    /// directory) and then on `PATH` (which the original could not do,
    /// docs/compatibility.md#analyze-quirk-10).
    pub fn external(program: &Path) -> Demangler {
        let has_separator = program.components().count() > 1;
        let resolved = if has_separator || program.is_file() {
            std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf())
        } else {
            program.to_path_buf()
        };
        Demangler {
            kind: DemanglerKind::External(resolved),
            cache: HashMap::new(),
            failure: None,
        }
    }

    pub fn kind(&self) -> &DemanglerKind {
        &self.kind
    }

    /// Why the external demangler could not be used, once it failed.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The kernel name `symbol` stands for.
    pub fn demangle(&mut self, symbol: &str) -> String {
        if let Some(hit) = self.cache.get(symbol) {
            return hit.clone();
        }
        let name = match (&self.kind, &self.failure) {
            (DemanglerKind::External(program), None) => match run_external(program, symbol) {
                Ok(name) => name,
                Err(reason) => {
                    self.failure = Some(format!(
                        "{reason}; {} is not found or fails to run",
                        program.display()
                    ));
                    demangle_kernel_symbol(symbol)
                }
            },
            _ => demangle_kernel_symbol(symbol),
        };
        self.cache.insert(symbol.to_string(), name.clone());
        name
    }
}

/// Runs `program symbol` and interprets its first output line as the
/// original's `-g` path does: the text after `typeinfo name for ` when it
/// holds that prefix, else the whole line.
fn run_external(program: &Path, symbol: &str) -> Result<String, String> {
    let output = Command::new(program)
        .arg(symbol)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} exited with {}",
            program.display(),
            output.status
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.split('\n').next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first);
    Ok(match first.find(TYPEINFO_PREFIX) {
        Some(at) => first[at + TYPEINFO_PREFIX.len()..].to_string(),
        None => first.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_sycl_typeinfo_names_like_cxxfilt() {
        let cases = [
            ("_ZTSZ4mainEUlT_E2_", "main::{lambda(auto:1)#4}"),
            ("_ZTSZ4mainEUlT_E_", "main::{lambda(auto:1)#1}"),
            (
                "_ZTSN3xpu5xetla12hgemm_callerIN4sycl3_V13ext6oneapi8bfloat16ELi256ELi256ELi32ELi64ELi32ELi1ELb1ELb0EEE",
                "xpu::xetla::hgemm_caller<sycl::_V1::ext::oneapi::bfloat16, 256, 256, 32, 64, 32, 1, true, false>",
            ),
            (
                "_ZTSN12_GLOBAL__N_114softmax_kernelIN4sycl3_V13ext6oneapi8bfloat16ELi1024EEE",
                "(anonymous namespace)::softmax_kernel<sycl::_V1::ext::oneapi::bfloat16, 1024>",
            ),
            (
                "_ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_7nd_itemILi1EEEE_",
                "main::{lambda(sycl::_V1::handler&)#1}::operator()(sycl::_V1::handler&) const::{lambda(sycl::_V1::nd_item<1>)#1}",
            ),
        ];
        for (symbol, name) in cases {
            assert_eq!(demangle_kernel_symbol(symbol), name, "{symbol}");
        }
    }

    #[test]
    fn keeps_plain_names_and_demangles_functions() {
        assert_eq!(
            demangle_kernel_symbol("triton_poi_fused_add_0"),
            "triton_poi_fused_add_0"
        );
        assert_eq!(demangle_kernel_symbol("GEMM"), "GEMM");
        // Non-typeinfo C++ symbols are demangled too (docs/compatibility.md#analyze-quirk-10 fixed).
        assert_eq!(demangle_kernel_symbol("_Z4gemmPfi"), "gemm(float*, int)");
    }

    #[test]
    fn caches_and_falls_back_when_external_program_fails() {
        let mut d = Demangler::external(Path::new("/nonexistent/demangler-program"));
        assert_eq!(d.demangle("_ZTSZ4mainEUlT_E_"), "main::{lambda(auto:1)#1}");
        assert!(d
            .failure()
            .unwrap()
            .contains("is not found or fails to run"));
        assert_eq!(d.demangle("_ZTSZ4mainEUlT_E_"), "main::{lambda(auto:1)#1}");
    }

    #[cfg(unix)]
    #[test]
    fn external_program_output_is_interpreted_like_the_original() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("fake-filt");
        std::fs::write(
            &prog,
            "#!/bin/sh\nif [ \"$1\" = T ]; then echo 'typeinfo name for K<1>'; else echo \"plain-$1\"; fi\n",
        )
        .unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut d = Demangler::external(&prog);
        assert_eq!(d.demangle("T"), "K<1>");
        assert_eq!(d.demangle("x"), "plain-x");
        assert!(d.failure().is_none());
    }
}
