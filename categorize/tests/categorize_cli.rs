//! `categorize` against categorize.py's outputs (testdata/categorize/README.md)
//! and the deliberate differences of docs/compatibility.md#categorize.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_core::category_schema::CategorySchema;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn data(name: &str) -> PathBuf {
    repo().join("testdata/categorize").join(name)
}

fn categorize(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_categorize"))
        .args(args)
        .output()
        .expect("runs categorize")
}

/// Compiles `ini` with `extra` flags and returns the written bytes.
fn compile(ini: &Path, extra: &[&str]) -> (Vec<u8>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let mut args = vec![
        "--input",
        ini.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = categorize(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "categorize failed: {stderr}");
    (std::fs::read(&out).unwrap(), stderr)
}

#[test]
fn llama_is_byte_identical_to_the_original() {
    let (got, stderr) = compile(&data("LLaMA.ini"), &[]);
    assert_eq!(got, std::fs::read(data("LLaMA.orig.json")).unwrap());
    assert!(stderr.is_empty(), "{stderr}");
    // The shipped copy of the rules compiles to the shipped JSON.
    let (shipped, _) = compile(&repo().join("schemas/LLaMA.ini"), &[]);
    assert_eq!(
        shipped,
        std::fs::read(repo().join("schemas/LLaMA.json")).unwrap()
    );
}

#[test]
fn llama_variants_match_the_original() {
    let (got, _) = compile(&data("LLaMA.ini"), &["--no-remove-spaces"]);
    assert_eq!(
        got,
        std::fs::read(data("LLaMA.orig.nospaces.json")).unwrap()
    );
    let (got, _) = compile(&data("LLaMA.ini"), &["-vvv"]);
    assert_eq!(got, std::fs::read(data("LLaMA.orig.pretty.json")).unwrap());
    // Long-option spellings of argparse: --ini/--json and prefixes.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.json");
    let o = categorize(&[
        "--in",
        data("LLaMA.ini").to_str().unwrap(),
        "--js",
        out.to_str().unwrap(),
        "--remove-spaces",
    ]);
    assert!(o.status.success());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data("LLaMA.orig.json")).unwrap()
    );
}

#[test]
fn edge_cases_match_the_original() {
    for (flags, golden) in [
        (&[][..], "edge.orig.json"),
        (&["--no-remove-spaces"][..], "edge.orig.nospaces.json"),
        (&["-vv"][..], "edge.orig.pretty.json"),
    ] {
        let (got, _) = compile(&data("edge.ini"), flags);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            std::fs::read_to_string(data(golden)).unwrap(),
            "{golden}"
        );
    }
}

#[test]
fn edge_cases_warn_where_the_original_is_silent() {
    // docs/compatibility.md#categorize-3: unknown condition, `;` line, a tag defined twice
    // with different conditions.
    let (_, stderr) = compile(&data("edge.ini"), &[]);
    let lines: Vec<&str> = stderr.lines().collect();
    let ini = data("edge.ini");
    let at = |line: u32| format!("categorize: warning: {}:{line}: ", ini.display());
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&at(33)) && l.contains("`;`")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&at(36)) && l.contains("unknown condition `StartsWith`")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&at(40)) && l.contains("`gemm` is defined twice")),
        "{stderr}"
    );
}

#[test]
fn ini_without_ends_with_section_compiles() {
    // categorize.py fails with min() of an empty list (docs/compatibility.md#categorize-2);
    // expected tree derived by hand from docs/formats.md#category-json-tree.
    let dir = tempfile::tempdir().unwrap();
    let ini = dir.path().join("s.ini");
    std::fs::write(&ini, "[gemm]\ngemm\n[wallclock if equals to]\nWallclock\n").unwrap();
    let (got, _) = compile(&ini, &[]);
    assert_eq!(
        String::from_utf8(got).unwrap(),
        r#"{"ignore_spaces":true,"direct":{"length":4,"next":{"gemm":{"category":"gemm"},"Wall":{"length":5,"next":{"clock":{"next":{"":{"category":"wallclock"}}}}}}},"reverse":{}}"#
    );
    std::fs::write(&ini, "[sync if ends with]\n::SYNC\n").unwrap();
    let (got, _) = compile(&ini, &[]);
    assert_eq!(
        String::from_utf8(got).unwrap(),
        r#"{"ignore_spaces":true,"direct":{},"reverse":{"length":6,"next":{"CNYS::":{"category":"sync"}}}}"#
    );
}

#[test]
fn keep_dotted_keeps_the_full_section_name() {
    let dir = tempfile::tempdir().unwrap();
    let ini = dir.path().join("s.ini");
    std::fs::write(&ini, "[allreduce.nocopy]\nNoCopy\n").unwrap();
    let (got, _) = compile(&ini, &["--keep-dotted"]);
    assert_eq!(
        String::from_utf8(got).unwrap(),
        r#"{"ignore_spaces":true,"direct":{"length":6,"next":{"NoCopy":{"category":"allreduce.nocopy"}}},"reverse":{}}"#
    );
}

#[test]
fn tag_before_section_is_a_one_line_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ini = dir.path().join("bad.ini");
    let out = dir.path().join("bad.json");
    std::fs::write(&ini, "# rules\n\nstray_tag\n[a]\nx\n").unwrap();
    let o = categorize(&[
        "--input",
        ini.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr,
        format!(
            "categorize: {}:3: tag before the first [section] header\n",
            ini.display()
        )
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn other_bad_inis() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.json");
    for (text, want) in [
        (
            "[a]\nfoo\n    continued\n",
            ":3: indented line continues the tag on line 2",
        ),
        ("[a if matches regex]\n(unclosed\n", ":2: invalid regex"),
        ("# only comments\n", ": no tags in any section"),
    ] {
        let ini = dir.path().join("x.ini");
        std::fs::write(&ini, text).unwrap();
        let o = categorize(&[
            "--input",
            ini.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr.starts_with(&format!("categorize: {}{want}", ini.display())),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1);
        assert!(!out.exists());
    }
    let o = categorize(&[
        "--input",
        "/nonexistent/x.ini",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "categorize: /nonexistent/x.ini: no such file\n"
    );
}

#[test]
fn inductor_schema_trees_match_the_original_and_classify_inductor_names() {
    let shipped = std::fs::read(repo().join("schemas/inductor.json")).unwrap();
    let (got, stderr) = compile(&repo().join("schemas/inductor.ini"), &[]);
    assert_eq!(got, shipped, "schemas/inductor.json is stale");
    assert!(stderr.is_empty(), "{stderr}");
    // Without the extension sections, the original writes the same trees.
    let ours: serde_json::Value = serde_json::from_slice(&shipped).unwrap();
    let base: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data("inductor.base.orig.json")).unwrap()).unwrap();
    assert_eq!(ours["direct"], base["direct"]);
    assert_eq!(ours["reverse"], base["reverse"]);

    let schema = CategorySchema::from_json_bytes(Path::new("inductor.json"), &shipped).unwrap();
    let cat = |name: &str| {
        schema
            .classify(name)
            .map(|r| schema.category_of(r).to_string())
    };
    let cases = [
        ("triton_poi_fused_add_mul_0", Some("triton_pointwise")),
        ("triton_red_fused__softmax_1", Some("triton_reduction")),
        (
            "triton_per_fused_native_layer_norm_2",
            Some("triton_persistent_reduction"),
        ),
        ("triton_tem_fused_mm_3", Some("triton_unknown")),
        ("triton_", Some("triton_unknown")),
        ("gemm_kernel", Some("gemm")),
        (
            "xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 32>",
            Some("gemm"),
        ),
        (
            "gpu::xetla::fmha::FmhaForwardKernel<policy, half>",
            Some("attention"),
        ),
        ("gen_conv_fwd", Some("conv")),
        ("at::native::xpu::convert_kernel", None),
        ("oneCCL::API::ALLREDUCE_SMALL", Some("collectives")),
        ("oneCCL::API::SYNC", Some("sync")),
        ("zeCommandListAppendMemoryCopy(M2D)", Some("copy")),
        ("at::AtenIpexTypeXPU::direct_copy_kernel_gpu", Some("copy")),
        ("Wallclock", Some("wallclock")),
        ("L0_backend", Some("total")),
        ("some_custom_kernel", None),
    ];
    for (name, want) in cases {
        assert_eq!(cat(name).as_deref(), want, "{name}");
    }
}
