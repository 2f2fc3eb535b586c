//! Kernel-category rules in INI form, the input of `categorize`
//! (docs/formats.md#category-ini, docs/compatibility.md#categorize).
//!
//! Hand-written instead of an INI crate: the format is Python `configparser`
//! with `:=` as the only delimiter, `#` as the only comment prefix and
//! valueless keys, so `at::AtenIpexTypeXPU` and `a=b` are plain tags. General
//! INI crates split on `:`/`=` or treat `;` as a comment and reject the real
//! LLaMA.ini.
//!
//! What is kept from configparser (so that every INI the original accepts
//! compiles to the same rules): section header = text between the first `[`
//! and the last `]` of the stripped line; tags are stripped lines; `a := b` is
//! reassembled as `a:=b`; `#` lines are comments; `[DEFAULT]` tags are added
//! to every section after its own tags (unless a tag with the same key is
//! already there); category = text before the first ` if `, stripped, cut at
//! the first `.`; the condition is the rest with spaces and tabs removed.
//!
//! What is fixed (docs/compatibility.md#categorize): unknown conditions, `;` lines, a
//! repeated tag in one section and a repeated section give warnings instead of
//! silence or a traceback; two extension conditions, `contains` and
//! `matches regex`, exist.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::error::InputError;

/// How a tag is compared with a kernel name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    StartsWith,
    EqualsTo,
    EndsWith,
    /// Extension: the tag occurs anywhere in the name.
    Contains,
    /// Extension: the tag is a regular expression (Rust `regex` syntax)
    /// searched in the name.
    MatchesRegex,
}

impl Condition {
    pub fn describe(self) -> &'static str {
        match self {
            Condition::StartsWith => "starts with",
            Condition::EqualsTo => "equals to",
            Condition::EndsWith => "ends with",
            Condition::Contains => "contains",
            Condition::MatchesRegex => "matches regex",
        }
    }
}

/// One tag of one section, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IniRule {
    /// Category the tag maps to (section name before ` if `, cut at `.`).
    pub category: String,
    pub condition: Condition,
    /// The tag after `:=` reassembly and (with `remove_spaces`) space removal.
    pub tag: String,
    /// 1-based line of the tag.
    pub line: u64,
}

/// A problem that does not stop the compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IniWarning {
    pub line: u64,
    pub message: String,
}

#[derive(Debug, Clone, Copy)]
pub struct IniOptions {
    /// Remove spaces and tabs from every tag (categorize.py default).
    pub remove_spaces: bool,
    /// Keep `allreduce.nocopy` as the category instead of cutting at the
    /// first `.` (the original always cuts).
    pub keep_dotted: bool,
}

impl Default for IniOptions {
    fn default() -> Self {
        IniOptions {
            remove_spaces: true,
            keep_dotted: false,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct IniSchema {
    pub rules: Vec<IniRule>,
    pub warnings: Vec<IniWarning>,
}

struct Section {
    name: String,
    line: u64,
    /// (key, tag, line); key is what configparser uses to detect duplicates.
    tags: Vec<(String, String, u64)>,
    keys: HashSet<String>,
}

/// Removes spaces and tabs, as `str.translate` with `' \t'` does.
pub fn remove_spaces(s: &str) -> String {
    s.chars().filter(|c| *c != ' ' && *c != '\t').collect()
}

/// Parses an INI schema. `path` is only used in error positions.
pub fn parse_ini(path: &Path, text: &str, options: IniOptions) -> Result<IniSchema, InputError> {
    let sections = Sections::read(path, text)?;
    let defaults = sections.default_tags();
    let mut warnings = sections.warnings;
    let rules = compile_rules(path, &sections.list, &defaults, options, &mut warnings)?;
    if rules.is_empty() {
        return Err(InputError::at_file(path, "no tags in any section"));
    }
    let default_lines: HashSet<u64> = defaults.iter().map(|(_, _, line)| *line).collect();
    if let (Some(&i), Some(last)) = (sections.by_name.get("DEFAULT"), rules.last()) {
        if !defaults.is_empty() && sections.list.len() > 2 {
            warnings.push(IniWarning {
                line: sections.list[i].line,
                message: format!(
                    "[DEFAULT] tags are added to every section; in the compiled tree only \
                     the last section's category (`{}`) is kept for them",
                    last.category
                ),
            });
        }
    }
    warn_conflicts(&rules, &default_lines, &mut warnings);
    warnings.sort_by_key(|w| w.line);
    Ok(IniSchema { rules, warnings })
}

/// The sections of an INI file in order of first appearance with their
/// tags, read line by line as configparser does.
#[derive(Default)]
struct Sections {
    list: Vec<Section>,
    by_name: HashMap<String, usize>,
    /// The section the next tag goes to.
    current: Option<usize>,
    /// Indentation and line of the last tag of the current section: a more
    /// indented line after it is a configparser continuation line.
    last_tag: Option<(usize, u64)>,
    warnings: Vec<IniWarning>,
}

impl Sections {
    fn read(path: &Path, text: &str) -> Result<Sections, InputError> {
        let mut sections = Sections::default();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (index, raw) in split_lines(text).enumerate() {
            let lineno = index as u64 + 1;
            let value = raw.trim();
            if value.is_empty() || value.starts_with('#') {
                continue;
            }
            let indent = raw.chars().take_while(|c| c.is_whitespace()).count();
            if let Some((tag_indent, tag_line)) = sections.last_tag {
                if indent > tag_indent {
                    return Err(InputError::at_line(
                        path,
                        lineno,
                        format!(
                            "indented line continues the tag on line {tag_line} \
                             (configparser continuation); remove the indentation"
                        ),
                    ));
                }
            }
            match section_header(value) {
                Some(header) => sections.start(header, lineno),
                None => sections.add_tag(path, value, indent, lineno)?,
            }
        }
        Ok(sections)
    }

    /// A `[header]` line: a new section, or more tags for one already
    /// started (a warning, except for `[DEFAULT]`, which configparser
    /// never counts as a section).
    fn start(&mut self, header: &str, lineno: u64) {
        self.last_tag = None;
        match self.by_name.get(header) {
            Some(&i) if header == "DEFAULT" => self.current = Some(i),
            Some(&i) => {
                self.warnings.push(IniWarning {
                    line: lineno,
                    message: format!(
                        "section [{header}] already started on line {}; its tags are added to it",
                        self.list[i].line
                    ),
                });
                self.current = Some(i);
            }
            None => {
                self.by_name.insert(header.to_string(), self.list.len());
                self.current = Some(self.list.len());
                self.list.push(Section {
                    name: header.to_string(),
                    line: lineno,
                    tags: Vec::new(),
                    keys: HashSet::new(),
                });
            }
        }
    }

    /// A tag line (`value`, stripped) of the current section.
    fn add_tag(
        &mut self,
        path: &Path,
        value: &str,
        indent: usize,
        lineno: u64,
    ) -> Result<(), InputError> {
        let Some(section) = self.current else {
            return Err(InputError::at_line(
                path,
                lineno,
                "tag before the first [section] header",
            ));
        };
        let (key, tag) = match value.find(":=") {
            Some(at) => {
                let key = value[..at].trim_end();
                let val = value[at + 2..].trim();
                (key.to_string(), format!("{key}:={val}"))
            }
            None => (value.to_string(), value.to_string()),
        };
        if key.is_empty() {
            return Err(InputError::at_line(path, lineno, "empty tag before `:=`"));
        }
        if value.starts_with(';') {
            self.warnings.push(IniWarning {
                line: lineno,
                message: format!(
                    "`;` does not start a comment in this format (only `#` does); \
                     `{value}` is used as a tag"
                ),
            });
        }
        self.last_tag = Some((indent, lineno));
        let sec = &mut self.list[section];
        if !sec.keys.insert(key.clone()) {
            self.warnings.push(IniWarning {
                line: lineno,
                message: format!(
                    "tag `{key}` appears twice in section [{}]; the second one is ignored",
                    sec.name
                ),
            });
            return Ok(());
        }
        sec.tags.push((key, tag, lineno));
        Ok(())
    }

    /// The tags of `[DEFAULT]`, if there is one.
    fn default_tags(&self) -> Vec<(String, String, u64)> {
        self.by_name
            .get("DEFAULT")
            .map(|&i| self.list[i].tags.clone())
            .unwrap_or_default()
    }
}

/// The rules of every section but `[DEFAULT]`, in file order: each
/// section's own tags, then the `[DEFAULT]` tags whose key it lacks.
fn compile_rules(
    path: &Path,
    sections: &[Section],
    defaults: &[(String, String, u64)],
    options: IniOptions,
    warnings: &mut Vec<IniWarning>,
) -> Result<Vec<IniRule>, InputError> {
    let mut rules = Vec::new();
    for section in sections {
        if section.name == "DEFAULT" {
            continue;
        }
        let (category, condition) = section_meaning(section, options, warnings);
        let inherited = defaults
            .iter()
            .filter(|(key, _, _)| !section.keys.contains(key));
        for (_, tag, line) in section.tags.iter().chain(inherited) {
            let tag = if options.remove_spaces && condition != Condition::MatchesRegex {
                remove_spaces(tag)
            } else {
                tag.clone()
            };
            if condition == Condition::MatchesRegex && options.remove_spaces && tag.contains(' ') {
                warnings.push(IniWarning {
                    line: *line,
                    message: "regex contains a space but names are matched with spaces removed"
                        .to_string(),
                });
            }
            if tag.is_empty() {
                return Err(InputError::at_line(path, *line, "tag is empty"));
            }
            rules.push(IniRule {
                category: category.clone(),
                condition,
                tag,
                line: *line,
            });
        }
    }
    Ok(rules)
}

/// Python's universal newlines: `\n`, `\r\n` and a lone `\r` end a line.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.find(['\n', '\r']) {
            Some(at) => {
                let line = &rest[..at];
                let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[at + skip..];
                Some(line)
            }
            None => {
                let line = rest;
                rest = "";
                Some(line)
            }
        }
    })
}

/// configparser's `\[(?P<header>.+)\]` matched at the start of the stripped
/// line: greedy, so the header ends at the last `]`.
fn section_header(value: &str) -> Option<&str> {
    let inner = value.strip_prefix('[')?;
    let end = inner.rfind(']')?;
    if end == 0 {
        return None;
    }
    Some(&inner[..end])
}

fn section_meaning(
    section: &Section,
    options: IniOptions,
    warnings: &mut Vec<IniWarning>,
) -> (String, Condition) {
    let (category_part, verb) = match section.name.find(" if ") {
        Some(at) => (&section.name[..at], Some(&section.name[at + 4..])),
        None => (section.name.as_str(), None),
    };
    let category_part = category_part.trim();
    let category = if options.keep_dotted {
        category_part.to_string()
    } else {
        category_part
            .split_once('.')
            .map(|(c, _)| c)
            .unwrap_or(category_part)
            .to_string()
    };
    let condition = match verb.map(remove_spaces).as_deref() {
        None | Some("startswith") => Condition::StartsWith,
        Some("equalsto") => Condition::EqualsTo,
        Some("endswith") => Condition::EndsWith,
        Some("contains") => Condition::Contains,
        Some("matchesregex") => Condition::MatchesRegex,
        Some(other) => {
            warnings.push(IniWarning {
                line: section.line,
                message: format!(
                    "unknown condition `{other}` in [{}]; treated as \"starts with\" \
                     (known: starts with, equals to, ends with, contains, matches regex)",
                    section.name
                ),
            });
            Condition::StartsWith
        }
    };
    if category.is_empty() {
        warnings.push(IniWarning {
            line: section.line,
            message: format!("section [{}] gives an empty category name", section.name),
        });
    }
    (category, condition)
}

/// Warns when one tag string is given twice in the same search tree with a
/// different condition or category: in the compiled tree the later one
/// silently replaces the earlier one (docs/formats.md#category-json-tree).
fn warn_conflicts(rules: &[IniRule], default_lines: &HashSet<u64>, warnings: &mut Vec<IniWarning>) {
    // "starts with" and "equals to" share the direct tree.
    let tree_of = |c: Condition| match c {
        Condition::StartsWith | Condition::EqualsTo => 0u8,
        Condition::EndsWith => 1,
        Condition::Contains => 2,
        Condition::MatchesRegex => 3,
    };
    let mut seen: HashMap<(u8, &str), &IniRule> = HashMap::new();
    for rule in rules {
        let key = (tree_of(rule.condition), rule.tag.as_str());
        if let Some(prev) = seen.get(&key) {
            let inherited =
                default_lines.contains(&prev.line) && default_lines.contains(&rule.line);
            if !inherited && (prev.condition != rule.condition || prev.category != rule.category) {
                warnings.push(IniWarning {
                    line: rule.line,
                    message: format!(
                        "tag `{}` is defined twice: line {} `{}` {} and here `{}` {}; \
                         the later definition wins",
                        rule.tag,
                        prev.line,
                        prev.category,
                        prev.condition.describe(),
                        rule.category,
                        rule.condition.describe()
                    ),
                });
            }
        }
        seen.insert(key, rule);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<IniSchema, InputError> {
        parse_ini(Path::new("t.ini"), text, IniOptions::default())
    }

    #[test]
    fn sections_conditions_and_tags() {
        let s = parse(
            "# comment\n[total if equals to]\nL0_backend\n\n[allreduce.ccl if ends with]\n\
             ALLREDUCE_SMALL   \n[matmul]\nat::xetla hgemm\n  # indented comment\n",
        )
        .unwrap();
        let got: Vec<_> = s
            .rules
            .iter()
            .map(|r| (r.category.as_str(), r.condition, r.tag.as_str(), r.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("total", Condition::EqualsTo, "L0_backend", 3),
                ("allreduce", Condition::EndsWith, "ALLREDUCE_SMALL", 6),
                ("matmul", Condition::StartsWith, "at::xetlahgemm", 8),
            ]
        );
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn assignment_is_reassembled_and_spaces_kept_on_request() {
        let opts = IniOptions {
            remove_spaces: false,
            keep_dotted: true,
        };
        let s = parse_ini(
            Path::new("t.ini"),
            "[a.b if starts with]\nx y := z w\n",
            opts,
        )
        .unwrap();
        assert_eq!(s.rules[0].tag, "x y:=z w");
        assert_eq!(s.rules[0].category, "a.b");
    }

    #[test]
    fn tag_before_section_is_an_error_with_line() {
        let e = parse("\n# c\nfoo\n[a]\nbar\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.ini:3: tag before the first [section] header"
        );
    }

    #[test]
    fn continuation_line_is_an_error() {
        let e = parse("[a]\nfoo\n   bar\n").unwrap_err();
        assert!(e.to_string().starts_with("t.ini:3: indented line"), "{e}");
    }

    #[test]
    fn warnings_for_semicolon_unknown_condition_and_conflicts() {
        let s =
            parse("[a if startswth]\n; not a comment\nfoo\n[b if equals to]\nfoo\n[c]\nfoo\nfoo\n")
                .unwrap();
        let lines: Vec<u64> = s.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![1, 2, 5, 7, 8], "{:?}", s.warnings);
        assert!(s.warnings[0]
            .message
            .contains("unknown condition `startswth`"));
        assert!(s.warnings[1].message.contains("`;`"));
        assert!(s.warnings[2].message.contains("defined twice"));
        assert!(s.warnings[4].message.contains("appears twice"));
        assert_eq!(s.rules.len(), 4);
    }

    #[test]
    fn default_section_tags_go_to_every_section() {
        let s = parse("[DEFAULT]\nd\n[a]\nx\n[b]\nd\n").unwrap();
        let got: Vec<_> = s
            .rules
            .iter()
            .map(|r| (r.category.as_str(), r.tag.as_str()))
            .collect();
        assert_eq!(got, vec![("a", "x"), ("a", "d"), ("b", "d")]);
    }

    #[test]
    fn extension_conditions() {
        let s =
            parse("[x if contains]\nfoo bar\n[y if matches regex]\n^triton_(poi|red)\n").unwrap();
        assert_eq!(s.rules[0].condition, Condition::Contains);
        assert_eq!(s.rules[0].tag, "foobar");
        assert_eq!(s.rules[1].condition, Condition::MatchesRegex);
    }

    #[test]
    fn empty_file_is_an_error() {
        assert_eq!(
            parse("# nothing\n").unwrap_err().to_string(),
            "t.ini: no tags in any section"
        );
    }
}
