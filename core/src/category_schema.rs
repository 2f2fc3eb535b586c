//! Compiled kernel-category schema: the JSON search tree written by
//! `categorize` and read by `summary` (docs/formats.md#category-json-tree, #category-json-lookup).
//!
//! Two halves:
//! * building and writing: [`compile_rules`] turns INI rules into a
//!   [`JsonValue`] with Python dict semantics (insertion order, assignment to
//!   an existing key keeps its place) so that [`JsonValue::to_python_json`]
//!   writes the same bytes as categorize.py's `json.dump`;
//! * reading and looking up: [`CategorySchema::from_json`] accepts every file
//!   categorize.py wrote (and ours, which may carry the `contains` / `matches`
//!   extension lists after `reverse`) and [`CategorySchema::classify`]
//!   implements the lookup of docs/formats.md#category-json-lookup without its KeyError (docs/compatibility.md#summary-5).

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::path::Path;

use aho_corasick::AhoCorasick;
use regex::RegexSet;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::InputError;
use crate::ini_schema::{Condition, IniRule};

// ---------------------------------------------------------------------------
// Ordered JSON values with Python dict semantics

/// A JSON value whose objects keep insertion order, like a Python dict.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<JsonValue>),
    Object(OrderedDict),
}

/// Insertion-ordered map; `insert` on an existing key replaces the value in
/// place, exactly as `d[k] = v` does in Python.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderedDict {
    entries: Vec<(String, JsonValue)>,
    index: HashMap<String, usize>,
}

impl OrderedDict {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, key: impl Into<String>, value: JsonValue) {
        let key = key.into();
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsonValue> {
        match self.index.get(key) {
            Some(&i) => Some(&mut self.entries[i].1),
            None => None,
        }
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &JsonValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Python `dict.update(other)`.
    pub fn update(&mut self, other: OrderedDict) {
        for (k, v) in other.entries {
            self.insert(k, v);
        }
    }
}

impl JsonValue {
    fn object(entries: Vec<(&str, JsonValue)>) -> JsonValue {
        let mut d = OrderedDict::new();
        for (k, v) in entries {
            d.insert(k, v);
        }
        JsonValue::Object(d)
    }

    /// Serialises like Python's `json.dumps(v)` with `ensure_ascii=True`:
    /// compact with `(',', ':')` separators when `indent` is `None`, else
    /// the indented form with `', '`-free item separators and `': '`.
    pub fn to_python_json(&self, indent: Option<usize>) -> String {
        let mut out = String::new();
        self.write_python(&mut out, indent, 0);
        out
    }

    fn write_python(&self, out: &mut String, indent: Option<usize>, level: usize) {
        match self {
            JsonValue::Null => out.push_str("null"),
            JsonValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            JsonValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            JsonValue::Float(f) => out.push_str(&crate::pyfmt::json_float(*f)),
            JsonValue::Str(s) => write_python_string(out, s),
            JsonValue::Array(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline_indent(out, indent, level + 1);
                    item.write_python(out, indent, level + 1);
                }
                newline_indent(out, indent, level);
                out.push(']');
            }
            JsonValue::Object(d) => {
                if d.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push('{');
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline_indent(out, indent, level + 1);
                    write_python_string(out, k);
                    out.push_str(if indent.is_some() { ": " } else { ":" });
                    v.write_python(out, indent, level + 1);
                }
                newline_indent(out, indent, level);
                out.push('}');
            }
        }
    }
}

fn newline_indent(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(width) = indent {
        out.push('\n');
        for _ in 0..width * level {
            out.push(' ');
        }
    }
}

/// A JSON string as Python's encoder with `ensure_ascii=True` writes it:
/// everything outside printable ASCII as a lower-case `\uXXXX` escape
/// (surrogate pairs above U+FFFF), with the short escapes for `"` `\` and
/// the usual control characters.
pub fn write_python_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{:04x}", unit);
                }
            }
        }
    }
    out.push('"');
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = JsonValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<JsonValue, E> {
                Ok(JsonValue::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<JsonValue, E> {
                Ok(JsonValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonValue, E> {
                i64::try_from(v)
                    .map(JsonValue::Int)
                    .or(Ok(JsonValue::Float(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<JsonValue, E> {
                Ok(JsonValue::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<JsonValue, E> {
                Ok(JsonValue::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<JsonValue, E> {
                Ok(JsonValue::Str(v))
            }
            fn visit_unit<E>(self) -> Result<JsonValue, E> {
                Ok(JsonValue::Null)
            }
            fn visit_none<E>(self) -> Result<JsonValue, E> {
                Ok(JsonValue::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(JsonValue::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
                let mut d = OrderedDict::new();
                while let Some((k, v)) = map.next_entry::<String, JsonValue>()? {
                    d.insert(k, v);
                }
                Ok(JsonValue::Object(d))
            }
        }
        deserializer.deserialize_any(ValueVisitor)
    }
}

// ---------------------------------------------------------------------------
// Building the tree (categorize)

struct TreeTag {
    chars: Vec<char>,
    category: String,
    exact: bool,
}

/// Builds one search tree the way categorize.py's `build_search_tree` does
/// (docs/formats.md#category-json-tree), including its key order and last-definition-wins rule.
/// An empty tag list gives `{}` (the original fails with `min()` of an empty
/// list; docs/compatibility.md#categorize-2).
fn build_tree(tags: Vec<TreeTag>) -> OrderedDict {
    let Some(length) = tags.iter().map(|t| t.chars.len()).min() else {
        return OrderedDict::new();
    };
    let mut next = OrderedDict::new();
    let mut groups: Vec<(String, Vec<TreeTag>)> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    for tag in tags {
        let key: String = tag.chars[..length].iter().collect();
        if tag.chars.len() > length {
            let rest = TreeTag {
                chars: tag.chars[length..].to_vec(),
                category: tag.category,
                exact: tag.exact,
            };
            match group_index.get(&key) {
                Some(&i) => groups[i].1.push(rest),
                None => {
                    group_index.insert(key.clone(), groups.len());
                    groups.push((key, vec![rest]));
                }
            }
        } else if tag.exact {
            let leaf = JsonValue::object(vec![(
                "next",
                JsonValue::object(vec![(
                    "",
                    JsonValue::object(vec![("category", JsonValue::Str(tag.category))]),
                )]),
            )]);
            next.insert(key, leaf);
        } else {
            next.insert(
                key,
                JsonValue::object(vec![("category", JsonValue::Str(tag.category))]),
            );
        }
    }
    for (key, tags) in groups {
        let mut sub = build_tree(tags);
        match next.get_mut(&key) {
            Some(JsonValue::Object(node)) => {
                // sub_tree['next'].update(node['next']); node.update(sub_tree)
                if let (Some(JsonValue::Object(node_next)), Some(JsonValue::Object(sub_next))) =
                    (node.get("next").cloned(), sub.get_mut("next"))
                {
                    sub_next.update(node_next);
                }
                node.update(sub);
            }
            _ => next.insert(key, JsonValue::Object(sub)),
        }
    }
    let mut tree = OrderedDict::new();
    tree.insert("length", JsonValue::Int(length as i64));
    tree.insert("next", JsonValue::Object(next));
    tree
}

/// Compiles INI rules into the JSON document of docs/formats.md#category-json-tree:
/// `{"ignore_spaces":…,"direct":…,"reverse":…}`, followed by `"contains"` and
/// `"matches"` lists only when such rules exist (so files without extension
/// rules stay byte-identical to categorize.py's).
pub fn compile_rules(rules: &[IniRule], ignore_spaces: bool) -> JsonValue {
    let mut direct = Vec::new();
    let mut reverse = Vec::new();
    let mut contains = Vec::new();
    let mut matches = Vec::new();
    for rule in rules {
        match rule.condition {
            Condition::StartsWith | Condition::EqualsTo => direct.push(TreeTag {
                chars: rule.tag.chars().collect(),
                category: rule.category.clone(),
                exact: rule.condition == Condition::EqualsTo,
            }),
            Condition::EndsWith => reverse.push(TreeTag {
                chars: rule.tag.chars().rev().collect(),
                category: rule.category.clone(),
                exact: false,
            }),
            Condition::Contains => contains.push(JsonValue::object(vec![
                ("tag", JsonValue::Str(rule.tag.clone())),
                ("category", JsonValue::Str(rule.category.clone())),
            ])),
            Condition::MatchesRegex => matches.push(JsonValue::object(vec![
                ("regex", JsonValue::Str(rule.tag.clone())),
                ("category", JsonValue::Str(rule.category.clone())),
            ])),
        }
    }
    let mut doc = OrderedDict::new();
    doc.insert("ignore_spaces", JsonValue::Bool(ignore_spaces));
    doc.insert("direct", JsonValue::Object(build_tree(direct)));
    doc.insert("reverse", JsonValue::Object(build_tree(reverse)));
    if !contains.is_empty() {
        doc.insert("contains", JsonValue::Array(contains));
    }
    if !matches.is_empty() {
        doc.insert("matches", JsonValue::Array(matches));
    }
    JsonValue::Object(doc)
}

// ---------------------------------------------------------------------------
// Lookup (summary)

/// Index of a rule in [`CategorySchema::rules`].
pub type RuleId = u32;

/// Category of a device kernel (or memory command) that no rule matches:
/// summary.py passes `device` as the default for the kernels of the device
/// table (docs/formats.md#category-json-lookup, docs/compatibility.md#summary).
pub const DEFAULT_DEVICE_CATEGORY: &str = "device";
/// Category of a CCL function that no rule matches (docs/formats.md#category-json-lookup).
pub const DEFAULT_COMM_CATEGORY: &str = "comm";

/// How a rule of a compiled schema matches (recovered from the tree shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    StartsWith,
    EqualsTo,
    EndsWith,
    Contains,
    MatchesRegex,
}

impl RuleKind {
    pub fn describe(self) -> &'static str {
        match self {
            RuleKind::StartsWith => "starts with",
            RuleKind::EqualsTo => "equals to",
            RuleKind::EndsWith => "ends with",
            RuleKind::Contains => "contains",
            RuleKind::MatchesRegex => "matches regex",
        }
    }
}

/// One rule as it survives in the compiled schema (tags replaced by a later
/// definition are gone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaRule {
    pub kind: RuleKind,
    pub tag: String,
    pub category: String,
}

#[derive(Debug, Default)]
struct TreeNode {
    /// A "starts with" tag ends here.
    category: Option<RuleId>,
    /// Chunk length used to descend; 0 when the node has no `length`.
    length: usize,
    has_next: bool,
    next: HashMap<Box<str>, u32>,
    /// `next[""]`: an "equals to" tag ends here.
    exact: Option<RuleId>,
}

/// One compiled search tree (`direct` or `reverse`) in an arena.
#[derive(Debug, Default)]
pub struct SearchTree {
    nodes: Vec<TreeNode>,
}

impl SearchTree {
    /// Lookup of docs/formats.md#category-json-lookup: the deepest "starts with" category on the
    /// path, or the "equals to" category when the name ends exactly at a
    /// node that has one. Where summary.py raises KeyError (name consumed at
    /// a node whose `next` has no `""`, e.g. an empty name or a name equal to
    /// a starts-with tag that prefixes a longer tag) this returns the
    /// category found so far (docs/compatibility.md#summary-5).
    pub fn search(&self, name: &str) -> Option<RuleId> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut node = &self.nodes[0];
        let mut found = None;
        let mut rest = name;
        loop {
            if node.category.is_some() {
                found = node.category;
            }
            if rest.is_empty() {
                if !node.has_next {
                    return found;
                }
                return node.exact.or(found);
            }
            if node.length == 0 {
                return found;
            }
            let Some(split) = char_offset(rest, node.length) else {
                return found;
            };
            let (key, tail) = rest.split_at(split);
            match node.next.get(key) {
                Some(&child) => {
                    node = &self.nodes[child as usize];
                    rest = tail;
                }
                None => return found,
            }
        }
    }
}

/// Byte offset just after the first `n` characters, `None` if `s` is shorter.
fn char_offset(s: &str, n: usize) -> Option<usize> {
    if s.is_ascii() {
        return (s.len() >= n).then_some(n);
    }
    match s.char_indices().nth(n) {
        Some((at, _)) => Some(at),
        None => (s.chars().count() == n).then_some(s.len()),
    }
}

/// A compiled schema ready for lookups.
#[derive(Debug)]
pub struct CategorySchema {
    pub ignore_spaces: bool,
    direct: SearchTree,
    reverse: SearchTree,
    contains: Option<(AhoCorasick, Vec<RuleId>)>,
    matches: Option<(RegexSet, Vec<RuleId>)>,
    /// Every rule of the schema: direct tree, reverse tree, contains, regex.
    pub rules: Vec<SchemaRule>,
}

impl CategorySchema {
    /// Reads a compiled schema; `path` is used in error messages.
    pub fn from_json_bytes(path: &Path, bytes: &[u8]) -> Result<CategorySchema, InputError> {
        let value: JsonValue = serde_json::from_slice(bytes).map_err(|e| {
            if e.line() > 0 && !e.is_eof() {
                InputError::at_line(path, e.line() as u64, format!("not valid JSON: {e}"))
            } else {
                InputError::at_file(path, format!("not valid JSON: {e}"))
            }
        })?;
        Self::from_json(&value).map_err(|problem| {
            InputError::at_file(path, format!("not a compiled category schema: {problem}"))
        })
    }

    /// Checks the shape of f.2 and compiles the lookup structures.
    pub fn from_json(value: &JsonValue) -> Result<CategorySchema, String> {
        let JsonValue::Object(doc) = value else {
            return Err("top level is not an object".to_string());
        };
        let ignore_spaces = match doc.get("ignore_spaces") {
            Some(JsonValue::Bool(b)) => *b,
            Some(_) => return Err("\"ignore_spaces\" is not true/false".to_string()),
            None => return Err("no \"ignore_spaces\" key".to_string()),
        };
        let mut rules = Vec::new();
        let mut trees = Vec::new();
        for (key, kind) in [("direct", false), ("reverse", true)] {
            let node = match doc.get(key) {
                Some(JsonValue::Object(node)) => node,
                Some(_) => return Err(format!("\"{key}\" is not an object")),
                None => return Err(format!("no \"{key}\" key")),
            };
            let mut tree = SearchTree::default();
            let mut path = String::new();
            compile_node(node, key, &mut path, kind, &mut tree, &mut rules, 0)?;
            trees.push(tree);
        }
        let reverse = trees.pop().unwrap_or_default();
        let direct = trees.pop().unwrap_or_default();

        let contains = extension_rules(
            doc.get("contains"),
            "contains",
            "tag",
            RuleKind::Contains,
            &mut rules,
        )?
        .map(|(patterns, ids)| {
            AhoCorasick::new(&patterns)
                .map(|ac| (ac, ids))
                .map_err(|e| format!("\"contains\" tags cannot be compiled: {e}"))
        })
        .transpose()?;
        let matches = extension_rules(
            doc.get("matches"),
            "matches",
            "regex",
            RuleKind::MatchesRegex,
            &mut rules,
        )?
        .map(|(patterns, ids)| {
            RegexSet::new(&patterns)
                .map(|set| (set, ids))
                .map_err(|e| format!("a \"matches\" regex is invalid: {e}"))
        })
        .transpose()?;
        Ok(CategorySchema {
            ignore_spaces,
            direct,
            reverse,
            contains,
            matches,
            rules,
        })
    }

    /// Category rule for a kernel or function name as it appears in a
    /// summary. Order: the direct tree (equals to, then the longest starts
    /// with), the reverse tree (longest ends with), then the extensions: the
    /// longest `contains` tag, then the first matching regex in file order.
    /// `None` means the caller's default category.
    pub fn classify(&self, name: &str) -> Option<RuleId> {
        let stripped;
        let name = if self.ignore_spaces && name.contains([' ', '\t']) {
            stripped = crate::ini_schema::remove_spaces(name);
            stripped.as_str()
        } else {
            name
        };
        if let Some(id) = self.direct.search(name) {
            return Some(id);
        }
        if !self.reverse.nodes.is_empty() {
            let reversed: String = name.chars().rev().collect();
            if let Some(id) = self.reverse.search(&reversed) {
                return Some(id);
            }
        }
        if let Some((ac, ids)) = &self.contains {
            let best = ac
                .find_overlapping_iter(name)
                .map(|m| (m.len(), std::cmp::Reverse(m.pattern().as_usize())))
                .max();
            if let Some((_, std::cmp::Reverse(pattern))) = best {
                return Some(ids[pattern]);
            }
        }
        if let Some((set, ids)) = &self.matches {
            if let Some(first) = set.matches(name).iter().next() {
                return Some(ids[first]);
            }
        }
        None
    }

    pub fn category_of(&self, rule: RuleId) -> &str {
        &self.rules[rule as usize].category
    }
}

/// The patterns of an extension list, with the rule id of each.
type ExtensionPatterns = (Vec<String>, Vec<RuleId>);

/// The rules of the extension list `key` (`contains` or `matches`), if the
/// document has one: appended to `rules` as `kind`, and returned as their
/// patterns with their rule ids, ready for one multi-pattern matcher.
fn extension_rules(
    list: Option<&JsonValue>,
    key: &str,
    field: &str,
    kind: RuleKind,
    rules: &mut Vec<SchemaRule>,
) -> Result<Option<ExtensionPatterns>, String> {
    let Some(list) = list else {
        return Ok(None);
    };
    let mut ids = Vec::new();
    let mut patterns = Vec::new();
    for (tag, category) in extension_list(list, key, field)? {
        ids.push(rules.len() as RuleId);
        patterns.push(tag.clone());
        rules.push(SchemaRule {
            kind,
            tag,
            category,
        });
    }
    Ok(Some((patterns, ids)))
}

fn extension_list(
    list: &JsonValue,
    key: &str,
    field: &str,
) -> Result<Vec<(String, String)>, String> {
    let JsonValue::Array(items) = list else {
        return Err(format!("\"{key}\" is not a list"));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let entry = match item {
            JsonValue::Object(d) => match (d.get(field), d.get("category")) {
                (Some(JsonValue::Str(tag)), Some(JsonValue::Str(cat))) => {
                    Some((tag.clone(), cat.clone()))
                }
                _ => None,
            },
            _ => None,
        };
        match entry {
            Some(e) => out.push(e),
            None => {
                return Err(format!(
                    "\"{key}\"[{i}] is not {{\"{field}\": …, \"category\": …}}"
                ))
            }
        }
    }
    Ok(out)
}

fn where_(tree_name: &str, path: &str) -> String {
    format!("{tree_name} node at {path:?}")
}

fn compile_node(
    node: &OrderedDict,
    tree_name: &str,
    path: &mut String,
    reversed: bool,
    tree: &mut SearchTree,
    rules: &mut Vec<SchemaRule>,
    depth: usize,
) -> Result<u32, String> {
    if depth > 100_000 {
        return Err(format!("\"{tree_name}\" is nested too deeply"));
    }
    let index = tree.nodes.len() as u32;
    tree.nodes.push(TreeNode::default());
    let tag_of = |path: &str| -> String {
        if reversed {
            path.chars().rev().collect()
        } else {
            path.to_string()
        }
    };
    let mut compiled = TreeNode::default();
    for (key, value) in node.iter() {
        match (key, value) {
            ("category", JsonValue::Str(cat)) => {
                compiled.category = Some(rules.len() as RuleId);
                rules.push(SchemaRule {
                    kind: if reversed {
                        RuleKind::EndsWith
                    } else {
                        RuleKind::StartsWith
                    },
                    tag: tag_of(path),
                    category: cat.clone(),
                });
            }
            ("length", JsonValue::Int(n)) if *n > 0 => compiled.length = *n as usize,
            ("next", JsonValue::Object(_)) => compiled.has_next = true,
            ("category" | "length" | "next", _) => {
                return Err(format!("{}: bad \"{key}\" value", where_(tree_name, path)));
            }
            _ => {}
        }
    }
    if let Some(JsonValue::Object(next)) = node.get("next") {
        for (chunk, child) in next.iter() {
            let JsonValue::Object(child) = child else {
                return Err(format!(
                    "{}: next[{chunk:?}] is not an object",
                    where_(tree_name, path)
                ));
            };
            if chunk.is_empty() {
                match child.get("category") {
                    Some(JsonValue::Str(cat)) => {
                        compiled.exact = Some(rules.len() as RuleId);
                        rules.push(SchemaRule {
                            kind: RuleKind::EqualsTo,
                            tag: tag_of(path),
                            category: cat.clone(),
                        });
                    }
                    _ => {
                        return Err(format!(
                            "{}: next[\"\"] has no \"category\" string",
                            where_(tree_name, path)
                        ))
                    }
                }
                continue;
            }
            if compiled.length != 0 && chunk.chars().count() != compiled.length {
                return Err(format!(
                    "{}: key {chunk:?} is not {} characters long",
                    where_(tree_name, path),
                    compiled.length
                ));
            }
            let saved = path.len();
            path.push_str(chunk);
            let child_index =
                compile_node(child, tree_name, path, reversed, tree, rules, depth + 1)?;
            path.truncate(saved);
            compiled.next.insert(chunk.into(), child_index);
        }
    }
    tree.nodes[index as usize] = compiled;
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ini_schema::{parse_ini, IniOptions};

    fn compile(ini: &str) -> JsonValue {
        let schema = parse_ini(Path::new("t.ini"), ini, IniOptions::default()).unwrap();
        compile_rules(&schema.rules, true)
    }

    #[test]
    fn string_escapes_like_python() {
        let mut s = String::new();
        write_python_string(&mut s, "a\"b\\c\u{7f}é😀\t");
        assert_eq!(s, r#""a\"b\\c\u007f\u00e9\ud83d\ude00\t""#);
    }

    #[test]
    fn tree_shape_and_key_order() {
        // "ab" exact, then "abcd" starts-with merges into the exact node:
        // python gives {"next":{...,"":...},"length":2} order for that node.
        let json = compile("[e if equals to]\nab\n[s]\nabcd\nx\n[r if ends with]\nyz\n");
        assert_eq!(
            json.to_python_json(None),
            r#"{"ignore_spaces":true,"direct":{"length":1,"next":{"x":{"category":"s"},"a":{"length":1,"next":{"b":{"next":{"cd":{"category":"s"},"":{"category":"e"}},"length":2}}}}},"reverse":{"length":2,"next":{"zy":{"category":"r"}}}}"#
        );
    }

    #[test]
    fn missing_ends_with_gives_empty_tree() {
        let json = compile("[a]\nfoo\n");
        assert_eq!(
            json.to_python_json(None),
            r#"{"ignore_spaces":true,"direct":{"length":3,"next":{"foo":{"category":"a"}}},"reverse":{}}"#
        );
        assert_eq!(
            json.to_python_json(Some(3)),
            "{\n   \"ignore_spaces\": true,\n   \"direct\": {\n      \"length\": 3,\n      \"next\": {\n         \"foo\": {\n            \"category\": \"a\"\n         }\n      }\n   },\n   \"reverse\": {}\n}"
        );
    }

    fn schema(ini: &str) -> CategorySchema {
        CategorySchema::from_json(&compile(ini)).unwrap()
    }

    fn cat<'a>(s: &'a CategorySchema, name: &str) -> Option<&'a str> {
        s.classify(name).map(|id| s.category_of(id))
    }

    #[test]
    fn lookup_semantics() {
        let s = schema(
            "[wall if equals to]\nWallclock\n[mm]\ngemm\ngemm_big\n[sync if ends with]\n::SYNC\n\
             [x if contains]\nsoftmax\nsoft\n[t if matches regex]\n^triton_(poi|red)_\n",
        );
        assert_eq!(cat(&s, "Wallclock"), Some("wall"));
        assert_eq!(cat(&s, "Wallclock2"), None);
        assert_eq!(cat(&s, "gemm_big_1"), Some("mm"));
        // Exactly a starts-with tag that prefixes a longer tag: KeyError in
        // summary.py (docs/compatibility.md#summary-5); here the tag's own category.
        assert_eq!(cat(&s, "gemm"), Some("mm"));
        assert_eq!(cat(&s, ""), None);
        assert_eq!(cat(&s, "oneCCL::API::SYNC"), Some("sync"));
        assert_eq!(cat(&s, "my softmax kernel"), Some("x"));
        assert_eq!(cat(&s, "triton_poi_fused_0"), Some("t"));
        assert_eq!(cat(&s, "other"), None);
        let kinds: Vec<_> = s.rules.iter().map(|r| (r.kind, r.tag.as_str())).collect();
        assert!(kinds.contains(&(RuleKind::EndsWith, "::SYNC")));
        assert!(kinds.contains(&(RuleKind::EqualsTo, "Wallclock")));
        assert!(kinds.contains(&(RuleKind::StartsWith, "gemm_big")));
    }

    #[test]
    fn rejects_things_that_are_not_schemas() {
        let bad = [
            &b"[1,2]"[..],
            b"{\"direct\":{},\"reverse\":{}}",
            b"{\"ignore_spaces\":true,\"direct\":{\"length\":0},\"reverse\":{}}",
            b"{\"ignore_spaces\":true,\"direct\":{},\"reverse\":[]}",
            b"{\"ignore_spaces\":true,\"direct\":{\"length\":2,\"next\":{\"abc\":{}}},\"reverse\":{}}",
        ];
        for b in bad {
            let e = CategorySchema::from_json_bytes(Path::new("s.json"), b).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("s.json: not a compiled category schema:"),
                "{e}"
            );
        }
        let e = CategorySchema::from_json_bytes(Path::new("s.json"), b"{\n\"a\": }").unwrap_err();
        assert!(e.to_string().starts_with("s.json:2: not valid JSON"), "{e}");
    }
}
