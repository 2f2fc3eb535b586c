//! What one run is reduced to before two runs are compared: named items in
//! sections (kernels, categories, host ranges, ranks), each with a time and
//! further metric columns (docs/compare.md#items).

/// One item of a run: a kernel, a category, a host range, a rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: String,
    /// The item's time in microseconds (what the table sorts by and what a
    /// gate without a metric checks).
    pub time_us: f64,
    /// Further metric columns by name, in a fixed order per kind.
    pub metrics: Vec<(String, f64)>,
    /// Spread of the time over ranks or instances (max - min, in the unit
    /// `noise_per` says), when the input has several.
    pub spread_us: Option<f64>,
    /// How many ranks or instances the time spreads over (the change is
    /// divided by this before it is held against the spread).
    pub noise_per: f64,
}

impl Item {
    pub fn new(name: impl Into<String>, time_us: f64) -> Item {
        Item {
            name: name.into(),
            time_us,
            metrics: Vec::new(),
            spread_us: None,
            noise_per: 1.0,
        }
    }

    pub fn metric(&self, name: &str) -> Option<f64> {
        if name == "time" || name == "time_us" {
            return Some(self.time_us);
        }
        self.metrics.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

/// One section of a run: its items and whether their names are kernel
/// names (then matched by shape and template too, docs/compare.md#matching).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: &'static str,
    pub kernel_names: bool,
    pub items: Vec<Item>,
}

/// A whole run, as one input kind reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run's total time in microseconds (the `total` of a gate).
    pub total_us: f64,
    /// What `total` is, for the reader ("kernel time, all ranks").
    pub total_what: &'static str,
    pub sections: Vec<Section>,
}

impl Run {
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
}
