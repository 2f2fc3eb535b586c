//! The one escape for XML and HTML text and attribute values, used by every
//! SVG and HTML writer of the workspace.

use std::borrow::Cow;

/// Escapes `text` for XML/HTML content and quoted attribute values.
/// Characters XML 1.0 forbids (control bytes from a damaged kernel name)
/// become U+FFFD, so the document stays well-formed.
pub fn escape_xml(text: &str) -> String {
    escape(text).into_owned()
}

/// [`escape_xml`] without a copy when nothing needs escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.bytes().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(b: u8) -> bool {
    matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')
        || (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_control_bytes() {
        assert_eq!(
            escape_xml("f<a, \"b\">(x&y)'"),
            "f&lt;a, &quot;b&quot;&gt;(x&amp;y)&apos;"
        );
        assert_eq!(escape_xml("a\u{1}b\tc\n"), "a\u{fffd}b\tc\n");
        assert!(matches!(escape("plain {1024; 1; 1}"), Cow::Borrowed(_)));
        assert_eq!(escape("ünï"), "ünï");
    }
}
