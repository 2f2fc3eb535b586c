//! Bytes and communicator of a collective call, read alike from a JSON
//! `args` object and from `.pftrace` debug annotations, so that a trace
//! matches its collectives the same way in both formats
//! (docs/tracestat.md#collectives, docs/formats.md#trace-json-events).

use crate::pftrace::{AnnotationValue, TrackEvent};
use crate::trace::{decode_string_content, object_members, parse_u64};

use super::model::CollectiveArgs;

/// Bytes and communicator from a JSON `args` object.
pub fn json_collective_args(args: Option<&[u8]>) -> CollectiveArgs {
    CollectiveArgs {
        bytes: args.and_then(json_collective_bytes),
        comm: args.and_then(json_collective_comm),
        op: None,
    }
}

/// Bytes a collective call moves, from its arguments: oneCCL ITT
/// `send_size:[n, ...]` (summed), MPI `ssize` / `dsize`.
pub fn json_collective_bytes(args: &[u8]) -> Option<u64> {
    let mut bytes: Option<u64> = None;
    for (key, span) in object_members(args) {
        let v = &args[span.range()];
        match key {
            b"send_size" | b"count_bytes" | b"bytes" => {
                let list = v.strip_prefix(b"[").and_then(|v| v.strip_suffix(b"]"));
                let items = list.unwrap_or(v);
                let mut sum = 0u64;
                for item in items.split(|&c| c == b',') {
                    let t = item.trim_ascii();
                    let t = t
                        .strip_prefix(b"\"")
                        .and_then(|t| t.strip_suffix(b"\""))
                        .unwrap_or(t);
                    if let Some(n) = parse_u64(t) {
                        sum = sum.saturating_add(n);
                    }
                }
                return Some(sum);
            }
            b"ssize" | b"dsize" => {
                if let Some(n) = parse_u64(v) {
                    bytes = Some(bytes.map_or(n, |b| b.max(n)));
                }
            }
            _ => {}
        }
    }
    bytes
}

/// The communicator of a collective call, `args.comm`, as text: a string,
/// an integer, or the ITT metadata form, a list of values (`["world"]`,
/// `[3]`), whose items are joined by `,`.
pub fn json_collective_comm(args: &[u8]) -> Option<String> {
    let (_, span) = object_members(args).find(|(k, _)| *k == b"comm")?;
    let v = args[span.range()].trim_ascii();
    let items = match v.strip_prefix(b"[").and_then(|v| v.strip_suffix(b"]")) {
        Some(inner) => split_list_items(inner),
        None => vec![v],
    };
    let mut text = String::new();
    for (n, item) in items.into_iter().enumerate() {
        let item = item.trim_ascii();
        let piece = if item.len() >= 2 && item[0] == b'"' && item[item.len() - 1] == b'"' {
            let inner = &item[1..item.len() - 1];
            decode_string_content(inner, inner.contains(&b'\\'))?.into_owned()
        } else if !item.is_empty() && item.iter().all(|c| c.is_ascii_digit() || *c == b'-') {
            String::from_utf8_lossy(item).into_owned()
        } else {
            // null, objects, booleans: not a communicator.
            return None;
        };
        if n > 0 {
            text.push(',');
        }
        text.push_str(&piece);
    }
    (!text.is_empty()).then_some(text)
}

/// The items of a JSON list's inside (or of an ITT `.pftrace` annotation,
/// the same items joined by `,`), split at commas outside strings.
pub fn split_list_items(inner: &[u8]) -> Vec<&[u8]> {
    let mut items = Vec::new();
    let (mut start, mut in_string, mut escaped) = (0, false, false);
    for (i, &c) in inner.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b',' {
            items.push(&inner[start..i]);
            start = i + 1;
        }
    }
    if start < inner.len() || !items.is_empty() {
        items.push(&inner[start..]);
    }
    items
}

/// Bytes and communicator from a `.pftrace` slice's annotations.
pub fn pftrace_collective_args(te: &TrackEvent<'_>) -> CollectiveArgs {
    CollectiveArgs {
        bytes: pftrace_collective_bytes(te),
        comm: pftrace_collective_comm(te),
        op: None,
    }
}

/// Bytes of a collective slice: ITT `send_size` (a string, values joined by
/// `,`, summed) or MPI `ssize`/`dsize`.
pub fn pftrace_collective_bytes(te: &TrackEvent<'_>) -> Option<u64> {
    if let Some(v) = te.annotation(b"send_size") {
        return match v {
            AnnotationValue::Str(s) => {
                let text = String::from_utf8_lossy(s);
                let mut sum = 0u64;
                for part in text.split(',') {
                    let part = part
                        .trim()
                        .trim_matches(|c| c == '"' || c == '[' || c == ']');
                    if let Ok(n) = part.parse::<u64>() {
                        sum = sum.saturating_add(n);
                    }
                }
                Some(sum)
            }
            other => other.as_u64(),
        };
    }
    let s = te.annotation(b"ssize").and_then(|v| v.as_u64());
    let d = te.annotation(b"dsize").and_then(|v| v.as_u64());
    match (s, d) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The communicator of a collective slice, the `comm` annotation, read as
/// [`json_collective_comm`] reads `args.comm`: unitrace writes an ITT value
/// list as one string, the items joined by `,` and strings wrapped in `"`
/// (docs/formats.md#pftrace-events), so `["world"]` arrives as `"world"`
/// and `[3]` as `3`; integer annotations read as their decimal text.
pub fn pftrace_collective_comm(te: &TrackEvent<'_>) -> Option<String> {
    let text = match te.annotation(b"comm")? {
        AnnotationValue::Str(s) => s,
        AnnotationValue::Uint(v) => return Some(v.to_string()),
        AnnotationValue::Int(v) => return Some(v.to_string()),
        _ => return None,
    };
    let mut comm = String::new();
    for (n, item) in split_list_items(text).into_iter().enumerate() {
        let item = item.trim_ascii();
        let item = if item.len() >= 2 && item[0] == b'"' && item[item.len() - 1] == b'"' {
            &item[1..item.len() - 1]
        } else {
            item
        };
        if n > 0 {
            comm.push(',');
        }
        comm.push_str(&String::from_utf8_lossy(item));
    }
    (!comm.is_empty()).then_some(comm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collective_sizes() {
        assert_eq!(
            json_collective_bytes(b"{\"send_size\":[65536]}"),
            Some(65536)
        );
        assert_eq!(json_collective_bytes(b"{\"send_size\":[1, 2]}"), Some(3));
        assert_eq!(
            json_collective_bytes(b"{\"dsize\": 16384, \"dst\": 1}"),
            Some(16384)
        );
        assert_eq!(json_collective_bytes(b"{\"x\": 1}"), None);
    }

    #[test]
    fn communicators() {
        let comm = |args: &str| json_collective_comm(args.as_bytes());
        assert_eq!(comm(r#"{"comm": "world"}"#).as_deref(), Some("world"));
        assert_eq!(comm(r#"{"comm": 5}"#).as_deref(), Some("5"));
        // ITT metadata lists (docs/formats.md#trace-json-events).
        assert_eq!(comm(r#"{"comm":["a"]}"#).as_deref(), Some("a"));
        assert_eq!(comm(r#"{"comm":[3, 4]}"#).as_deref(), Some("3,4"));
        assert_eq!(
            comm(r#"{"comm":["x,y", "z\"q"]}"#).as_deref(),
            Some("x,y,z\"q")
        );
        assert_eq!(comm(r#"{"comm": null}"#), None);
        assert_eq!(comm(r#"{"comm": []}"#), None);
        assert_eq!(comm(r#"{"send_size": [1]}"#), None);
    }
}
