//! Request URLs of the chart server: `/<quoted kernel>/<instance>[?format=html]`
//! as unitrace writes them into trace events (docs/formats.md#trace-json-metrics-link, docs/compatibility.md#analyze-server).

use std::fmt;

/// What the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFormat {
    /// The original's answer: a PDF with one chart per page.
    Pdf,
    /// Our addition: one HTML page with inline SVG charts (and the stall
    /// report), what a person clicking a link in Perfetto wants to see.
    Html,
}

/// One chart request, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartRequest {
    /// Kernel name as in the link: percent-decoded, surrounding `"` removed,
    /// shape still attached.
    pub kernel: String,
    /// The instance component, all ASCII digits (the `GlobalInstanceId` for
    /// metric files; not used by stall files, like the original).
    pub instance: String,
    pub format: PageFormat,
    /// `?rank=R`: the MPI rank whose metric files answer (uniview adds it
    /// to the links of a merged result dir, docs/uniview.md#result-dir);
    /// `None` searches every file.
    pub rank: Option<u32>,
    /// `?device=D`: only that device's metric file.
    pub device: Option<u32>,
    /// `?process=<app>.<pid>`: the process folder whose metric files answer
    /// (links of traces outside `rank_<r>.` folders).
    pub process: Option<String>,
}

impl ChartRequest {
    /// The instance id as a number; `None` when it does not fit in `u64`
    /// (no row can carry such an id, so it simply matches nothing).
    pub fn instance_id(&self) -> Option<u64> {
        self.instance.parse().ok()
    }
}

/// Why a URL is not a chart request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The original's `Invalid` answer: no instance component, or an
    /// instance that is not all digits.
    Invalid,
    /// `/favicon.ico` (the original sends nothing; we answer 404).
    Favicon,
    /// `?format=` with something else than `pdf` or `html`.
    UnknownFormat(String),
    /// `?rank=` or `?device=` that is not a number from 0 to 4294967295
    /// (`abc`, `-1`, empty, `4294967296`): answering it with the files of
    /// every rank would show another rank's data (docs/uniview.md#result-dir-links).
    BadRouteKey(String),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The original's exact body (docs/compatibility.md#analyze-server).
            Rejection::Invalid => f.write_str("Invalid"),
            Rejection::Favicon => f.write_str("Not found"),
            Rejection::UnknownFormat(format) => {
                write!(f, "Invalid format {format}: use format=pdf or format=html")
            }
            Rejection::BadRouteKey(message) => f.write_str(message),
        }
    }
}

/// Decodes a request target.
///
/// The instance is the LAST path component and the kernel everything
/// between the first `/` and that one, both split before percent-decoding:
/// unitrace encodes `/` inside names as `%2F`, and a raw `/` in a name (a
/// hand-written link) stays part of the kernel instead of shifting the
/// instance (fixes docs/compatibility.md#analyze-quirk-9, where the original takes the
/// second component).
pub fn parse_target(target: &str) -> Result<ChartRequest, Rejection> {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    // A fragment is never sent by browsers; tolerate it anyway.
    let path = path.split('#').next().unwrap_or("");
    let path = path.strip_prefix('/').unwrap_or(path);
    if path == "favicon.ico" {
        return Err(Rejection::Favicon);
    }
    let Query {
        format,
        rank,
        device,
        process,
    } = match query {
        Some(query) => parse_query(query)?,
        None => Query::default(),
    };
    let Some((raw_kernel, raw_instance)) = path.rsplit_once('/') else {
        return Err(Rejection::Invalid);
    };
    let instance = percent_decode(raw_instance);
    if instance.is_empty() || !instance.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Rejection::Invalid);
    }
    let kernel = percent_decode(raw_kernel).trim_matches('"').to_string();
    Ok(ChartRequest {
        kernel,
        instance,
        format,
        rank,
        device,
        process,
    })
}

/// The query parameters the server reads.
struct Query {
    format: PageFormat,
    rank: Option<u32>,
    device: Option<u32>,
    process: Option<String>,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            format: PageFormat::Pdf,
            rank: None,
            device: None,
            process: None,
        }
    }
}

fn parse_query(query: &str) -> Result<Query, Rejection> {
    let mut q = Query::default();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match percent_decode(key).as_str() {
            "format" => {
                let value = percent_decode(value);
                q.format = match value.to_ascii_lowercase().as_str() {
                    "pdf" => PageFormat::Pdf,
                    "html" => PageFormat::Html,
                    _ => return Err(Rejection::UnknownFormat(value)),
                };
            }
            "rank" => q.rank = Some(route_number("rank", value).map_err(Rejection::BadRouteKey)?),
            "device" => {
                q.device = Some(route_number("device", value).map_err(Rejection::BadRouteKey)?)
            }
            "process" => q.process = Some(percent_decode(value)),
            _ => {}
        }
    }
    Ok(q)
}

/// The value of a `rank=` or `device=` routing key (still percent-encoded):
/// decimal digits of a number from 0 to 4294967295, nothing else (no sign,
/// no space). `Err` is the 400 text, which names the key and the value.
pub fn route_number(key: &str, raw: &str) -> Result<u32, String> {
    let value = percent_decode(raw);
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    match value.parse::<u32>() {
        Ok(n) if digits => Ok(n),
        _ => Err(format!(
            "Invalid {key}={value}: a {key} is a number from 0 to {}",
            u32::MAX
        )),
    }
}

/// Checks every `rank=` and `device=` of a query with [`route_number`].
pub fn check_route_keys(query: &str) -> Result<(), String> {
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(key);
        if key == "rank" || key == "device" {
            route_number(&key, value)?;
        }
    }
    Ok(())
}

/// Percent-decodes like Python's `urllib.parse.unquote` (invalid UTF-8
/// replaced, malformed escapes kept literally, `+` kept), plus one repair:
/// unitrace encodes non-ASCII bytes as sign-extended `%FFFFFFC3` sequences
/// (docs/formats.md#trace-json-metrics-link); those decode to the byte they stand for.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let Some(byte) = sign_extended_escape(&bytes[i..]) {
                out.push(byte);
                i += 9;
                continue;
            }
            if let (Some(hi), Some(lo)) = (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `%FFFFFFxx` with `xx` >= 0x80 (a sign-extended `char` printed as `%X`).
fn sign_extended_escape(bytes: &[u8]) -> Option<u8> {
    if bytes.len() < 9 || !bytes[1..7].iter().all(|b| b.eq_ignore_ascii_case(&b'F')) {
        return None;
    }
    let byte = hex(bytes.get(7))? << 4 | hex(bytes.get(8))?;
    (byte >= 0x80).then_some(byte)
}

fn hex(byte: Option<&u8>) -> Option<u8> {
    let c = *byte?;
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Removes the shape unitrace appends to kernel names in metric CSVs and
/// trace links (`[SIMD32 {4096; 1; 1} {256; 1; 1}]`, `[SIMD_ANY {..} {..}]`,
/// or the writer's shape without `[SIMD..`: ` {1; 1; 1} {16; 1; 1}]`,
/// docs/formats.md#metric-csv-kernel-name), giving the name stall CSVs use. A name without a shape is
/// returned whole, so `operator[]` or `foo[2]` survive (the original cuts at
/// the last `[` whatever follows: docs/compatibility.md#analyze-quirk-9).
pub fn strip_shape(name: &str) -> &str {
    let Some(body) = name.strip_suffix(']') else {
        return name;
    };
    // Both shape forms end in ` {g; g; g} {l; l; l}`.
    let Some(groups_start) = trailing_groups_start(body) else {
        return name;
    };
    let before = &body[..groups_start];
    if let Some(pos) = before.rfind("[SIMD") {
        let width = &before[pos + 5..];
        if width == "_ANY" || (!width.is_empty() && width.bytes().all(|b| b.is_ascii_digit())) {
            return &name[..pos];
        }
    }
    // The form without `[SIMD<w>`: the name is followed by a space.
    &name[..groups_start]
}

/// Start (the space) of ` {a; b; c} {x; y; z}` at the end of `text`.
fn trailing_groups_start(text: &str) -> Option<usize> {
    let mut end = text.len();
    for _ in 0..2 {
        let group = &text[..end];
        let group = group.strip_suffix('}')?;
        let open = group.rfind('{')?;
        let inner = &group[open + 1..];
        let parts: Vec<&str> = inner.split("; ").collect();
        if parts.len() != 3
            || !parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        end = open.checked_sub(1)?;
        if text.as_bytes()[end] != b' ' {
            return None;
        }
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(target: &str) -> ChartRequest {
        parse_target(target).unwrap_or_else(|e| panic!("{target}: {e}"))
    }

    #[test]
    fn reads_rank_and_device_of_tagged_links() {
        let request = ok("/%22k%22/57?rank=3");
        assert_eq!((request.rank, request.device), (Some(3), None));
        assert_eq!(request.format, PageFormat::Pdf);
        let request = ok("/%22k%22/57?format=html&rank=1&device=2");
        assert_eq!((request.rank, request.device), (Some(1), Some(2)));
        assert_eq!(request.format, PageFormat::Html);
        // Not a number from 0 to 4294967295: refused (400), never read as
        // "any rank".
        for bad in ["x", "-1", "", "4294967296", "+1", " 1", "%3C"] {
            assert!(
                matches!(
                    parse_target(&format!("/%22k%22/57?rank={bad}")),
                    Err(Rejection::BadRouteKey(_))
                ),
                "{bad}"
            );
        }
        assert_eq!(ok("/%22k%22/57?rank=4294967295").rank, Some(u32::MAX));
        assert_eq!(ok("/%22k%22/57").rank, None);
        assert_eq!(
            ok("/%22k%22/57?process=my%20app.12").process.as_deref(),
            Some("my app.12")
        );
    }

    #[test]
    fn decodes_unitrace_links() {
        let request = ok("/%22main%3A%3A%7Blambda%28auto%3A1%29%234%7D%5BSIMD32%20%7B4096%3B%201%3B%201%7D%20%7B256%3B%201%3B%201%7D%5D%22/57");
        assert_eq!(
            request.kernel,
            "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]"
        );
        assert_eq!(request.instance, "57");
        assert_eq!(request.instance_id(), Some(57));
        assert_eq!(request.format, PageFormat::Pdf);
    }

    #[test]
    fn instance_is_the_last_component() {
        // `/` inside the name, raw or encoded, stays in the kernel.
        assert_eq!(ok("/%22a%2Fb%22/3").kernel, "a/b");
        assert_eq!(ok("/\"a/b/c\"/3").kernel, "a/b/c");
        assert_eq!(ok("/%22k%22/12?format=html").format, PageFormat::Html);
        assert_eq!(ok("/k/12?x=1&format=PDF").format, PageFormat::Pdf);
    }

    #[test]
    fn rejects_what_the_original_calls_invalid() {
        for target in [
            "/",
            "/k",
            "/k/",
            "/k/abc",
            "/k/-1",
            "/k/1.5",
            "/../../etc/passwd",
            "",
            "/k/%31x",
        ] {
            assert_eq!(parse_target(target), Err(Rejection::Invalid), "{target}");
        }
        assert_eq!(parse_target("/favicon.ico"), Err(Rejection::Favicon));
        assert_eq!(
            parse_target("/k/1?format=png"),
            Err(Rejection::UnknownFormat("png".into()))
        );
        // Digits that overflow u64 are a valid request for nothing.
        assert_eq!(ok("/k/99999999999999999999999").instance_id(), None);
    }

    #[test]
    fn percent_decoding_matches_unquote() {
        assert_eq!(percent_decode("a%20b+c"), "a b+c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A9"), "é");
        assert_eq!(percent_decode("%FF"), "\u{FFFD}");
        // unitrace's sign-extended escapes of non-ASCII bytes.
        assert_eq!(percent_decode("caf%FFFFFFC3%FFFFFFA9"), "café");
    }

    #[test]
    fn strips_only_real_shapes() {
        assert_eq!(
            strip_shape("main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]"),
            "main::{lambda(auto:1)#4}"
        );
        assert_eq!(strip_shape("k[SIMD_ANY {1; 1; 1} {16; 1; 1}]"), "k");
        assert_eq!(
            strip_shape("gemm(float*, int) {1; 1; 1} {16; 1; 1}]"),
            "gemm(float*, int)"
        );
        assert_eq!(strip_shape("a[b][SIMD16 {2; 1; 1} {8; 2; 1}]"), "a[b]");
        assert_eq!(strip_shape("Foo::operator[]"), "Foo::operator[]");
        assert_eq!(strip_shape("table[2]"), "table[2]");
        assert_eq!(strip_shape("plain"), "plain");
        assert_eq!(strip_shape("x {1; 1} {1; 1; 1}]"), "x {1; 1} {1; 1; 1}]");
        assert_eq!(strip_shape(" {1; 1; 1} {1; 1; 1}]"), "");
    }
}
