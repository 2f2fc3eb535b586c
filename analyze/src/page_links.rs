//! Where the chart server's dashboard pages link to
//! (docs/uniview.md#result-dir-links).
//!
//! `analyze -q` serves one file: `/` is that file's dashboard and a page's
//! links need nothing else. `uniview --result-dir` serves one file per
//! (rank, device), whose `GlobalInstanceId`s and kernel names overlap, and
//! its `/` is the result-dir index. There a page made for one file carries
//! that file's routing keys (`rank=R&device=D`, or `process=P&device=D`:
//! the keys the router reads, docs/uniview.md#result-dir) in every link,
//! form and script request it makes, its "All kernels" link goes to the
//! file's own dashboard instead of `/`, and its header links back to the
//! index.

use std::fmt::Write as _;

use crate::render::dashboard::HeaderLink;
use crate::render::escape::escape;

/// The header link back to the result-dir index.
pub const INDEX_LINK: HeaderLink<'static> = ("Result-dir index", "/");

/// The routing keys of the file a page shows; none for a single file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// `(key, value)` pairs, not encoded, in the order they are written.
    keys: Vec<(String, String)>,
}

impl PageLinks {
    /// The pages of the one file of `analyze -q` / `uniview -m`.
    pub fn single_file() -> PageLinks {
        PageLinks::default()
    }

    /// The pages of a file of a result dir, routed by `keys`.
    pub fn routed(keys: Vec<(String, String)>) -> PageLinks {
        PageLinks { keys }
    }

    /// Whether the server runs on a result dir (the pages then link back
    /// to its index).
    pub fn in_result_dir(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The keys as a query string (`rank=1&device=0`, values encoded);
    /// empty for a single file.
    pub fn query(&self) -> String {
        self.keys
            .iter()
            .map(|(key, value)| format!("{}={}", query_encode(key), query_encode(value)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// `url` with the keys added to its query (before any `#fragment`),
    /// relative URLs included; `url` itself for a single file.
    pub fn keep(&self, url: &str) -> String {
        if self.keys.is_empty() {
            return url.to_string();
        }
        let (base, fragment) = match url.find('#') {
            Some(at) => url.split_at(at),
            None => (url, ""),
        };
        let separator = if base.contains('?') { '&' } else { '?' };
        format!("{base}{separator}{}{fragment}", self.query())
    }

    /// The file's own dashboard: `/`, or `/perfdashboard?<keys>` in a
    /// result dir (whose `/` is the index).
    pub fn home(&self) -> String {
        self.keep(if self.keys.is_empty() {
            "/"
        } else {
            "/perfdashboard"
        })
    }

    /// The header link to the result-dir index, in a result dir.
    pub fn index_link(&self) -> Option<HeaderLink<'static>> {
        self.in_result_dir().then_some(INDEX_LINK)
    }

    /// Hidden `<input>`s that make a GET form send the keys.
    pub fn hidden_inputs(&self) -> String {
        let mut html = String::new();
        for (key, value) in &self.keys {
            let _ = write!(
                html,
                "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
                escape(key),
                escape(value)
            );
        }
        html
    }
}

/// Percent-encodes a query value: every byte but ASCII letters, digits and
/// `-_.~`.
pub fn query_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank_1() -> PageLinks {
        PageLinks::routed(vec![
            ("rank".into(), "1".into()),
            ("device".into(), "0".into()),
        ])
    }

    #[test]
    fn a_single_file_keeps_its_links() {
        let links = PageLinks::single_file();
        assert!(!links.in_result_dir());
        assert_eq!(
            links.keep("/perfdashboard?kernel=k#ip-0x10"),
            "/perfdashboard?kernel=k#ip-0x10"
        );
        assert_eq!(links.home(), "/");
        assert_eq!(links.index_link(), None);
        assert_eq!(links.hidden_inputs(), "");
        assert_eq!(links.query(), "");
    }

    #[test]
    fn a_result_dir_file_adds_its_keys_everywhere() {
        let links = rank_1();
        assert_eq!(links.query(), "rank=1&device=0");
        assert_eq!(
            links.keep("/perfdashboard?kernel=k&top=5#ip-0x01b8"),
            "/perfdashboard?kernel=k&top=5&rank=1&device=0#ip-0x01b8"
        );
        // The relative PDF link of `/<kernel>/<id>?format=html`.
        assert_eq!(links.keep("57?format=pdf"), "57?format=pdf&rank=1&device=0");
        assert_eq!(links.keep("/%22k%22/57"), "/%22k%22/57?rank=1&device=0");
        assert_eq!(links.home(), "/perfdashboard?rank=1&device=0");
        assert_eq!(links.index_link(), Some(("Result-dir index", "/")));
        assert_eq!(
            links.hidden_inputs(),
            "<input type=\"hidden\" name=\"rank\" value=\"1\"><input type=\"hidden\" name=\"device\" value=\"0\">"
        );
    }

    #[test]
    fn process_names_are_encoded_in_urls_and_escaped_in_forms() {
        let links = PageLinks::routed(vec![("process".into(), "my app&\"x\".12".into())]);
        assert_eq!(links.query(), "process=my%20app%26%22x%22.12");
        assert_eq!(links.home(), "/perfdashboard?process=my%20app%26%22x%22.12");
        assert_eq!(
            links.hidden_inputs(),
            "<input type=\"hidden\" name=\"process\" value=\"my app&amp;&quot;x&quot;.12\">"
        );
        assert_eq!(query_encode("a b+c/é"), "a%20b%2Bc%2F%C3%A9");
    }
}
