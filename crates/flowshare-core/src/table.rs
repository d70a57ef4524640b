//! Columnar tables: the shape of every result a run produces, the event trace's included.

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// 64-bit floats (NaN where a value does not apply).
    F64(Vec<f64>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Text.
    Str(Vec<String>),
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Columns in order.
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// Append a column.
    pub fn push(&mut self, name: &'static str, col: Column) {
        debug_assert!(
            self.columns.first().is_none_or(|(_, c)| c.len() == col.len()),
            "column {name} has a different length"
        );
        self.columns.push((name, col));
    }

    /// The column called `name`.
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }

    /// A float column by name (panics if absent or of another type: for tests and tools).
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }

    /// An integer column by name (panics if absent or of another type: for tests and tools).
    pub fn i64(&self, name: &str) -> &[i64] {
        match self.get(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}
