//! `timeseries.parquet`: the flow and queue time series in one tidy table, columns `time_s`,
//! `kind` (`"flow"` or `"queue"`), `id`, then every metric column of the flow series and then
//! of the queue series (a metric that does not apply to a row's kind is null; every metric is a
//! double), rows sorted by time, then kind, then id. The layout pyarrow gave the file when
//! pandas wrote it: optional columns, Snappy-compressed, `kind` dictionary-encoded,
//! a float NaN stored as null.

use crate::frame::Frame;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;

/// Most rows in one row group (pyarrow's default).
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// The tidy table's metric columns: the flow series' (less `time_s` and `flow`), then the
/// queue series' (less `time_s`, `queue` and names already taken).
pub fn metrics(flow: &Frame, queue: &Frame) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (frame, id) in [(flow, "flow"), (queue, "queue")] {
        for name in frame.names() {
            if name != "time_s" && name != id && !out.iter().any(|m| m == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Write the tidy time series of `flow` and `queue` series to `path`.
pub fn write_timeseries(flow: &Frame, queue: &Frame, path: &Path) -> crate::Result<()> {
    let metrics = metrics(flow, queue);
    let parts = [(flow, "flow"), (queue, "queue")];
    // Row order: (time, kind, id), stable, as numpy's lexsort gave it.
    let mut order: Vec<(f64, u8, i64, u32)> = Vec::with_capacity(flow.rows() + queue.rows());
    for (k, (frame, id)) in parts.iter().enumerate() {
        let time = frame.get("time_s");
        let ids = frame.get(id);
        for r in 0..frame.rows() {
            let t = time.map_or(f64::NAN, |c| c.f64_at(r));
            let i = ids.map_or(0, |c| c.f64_at(r) as i64);
            order.push((t, k as u8, i, r as u32));
        }
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));

    let mut fields = vec![
        Arc::new(field("time_s", Physical::DOUBLE, None)?),
        Arc::new(field("kind", Physical::BYTE_ARRAY, Some(LogicalType::String))?),
        Arc::new(field("id", Physical::INT64, None)?),
    ];
    for m in &metrics {
        fields.push(Arc::new(field(m, Physical::DOUBLE, None)?));
    }
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::SNAPPY)
            .set_created_by("flowshare".into())
            // Dictionaries cost more time than they save on sampled floats; `kind` keeps one.
            .set_dictionary_enabled(false)
            .set_column_dictionary_enabled("kind".into(), true)
            .build(),
    );
    let file = std::fs::File::create(path)?;
    let mut writer = SerializedFileWriter::new(std::io::BufWriter::with_capacity(1 << 16, file), schema, props)?;
    let kinds = [ByteArray::from("flow"), ByteArray::from("queue")];
    for rows in order.chunks(ROW_GROUP_ROWS).chain(std::iter::once(&[][..]).filter(|_| order.is_empty())) {
        let mut group = writer.next_row_group()?;
        write_doubles(&mut group, rows.iter().map(|&(t, _, _, _)| t))?;
        {
            let mut col = group.next_column()?.expect("kind column");
            let values: Vec<ByteArray> = rows.iter().map(|&(_, k, _, _)| kinds[k as usize].clone()).collect();
            let defs = vec![1i16; values.len()];
            col.typed::<ByteArrayType>().write_batch(&values, Some(&defs), None)?;
            col.close()?;
        }
        {
            let mut col = group.next_column()?.expect("id column");
            let values: Vec<i64> = rows.iter().map(|&(_, _, i, _)| i).collect();
            let defs = vec![1i16; values.len()];
            col.typed::<Int64Type>().write_batch(&values, Some(&defs), None)?;
            col.close()?;
        }
        for m in &metrics {
            let cols = [flow.get(m), queue.get(m)];
            let value = |k: u8, r: u32| cols[k as usize].map_or(f64::NAN, |c| c.f64_at(r as usize));
            write_doubles(&mut group, rows.iter().map(|&(_, k, _, r)| value(k, r)))?;
        }
        group.close()?;
    }
    writer.close()?;
    Ok(())
}

fn field(name: &str, physical: Physical, logical: Option<LogicalType>) -> crate::Result<Type> {
    Ok(Type::primitive_type_builder(name, physical)
        .with_repetition(Repetition::OPTIONAL)
        .with_logical_type(logical)
        .build()?)
}

/// The next column of `group`, doubles with NaN written as null.
fn write_doubles<W: std::io::Write + Send>(
    group: &mut parquet::file::writer::SerializedRowGroupWriter<'_, W>,
    values: impl Iterator<Item = f64>,
) -> crate::Result<()> {
    let mut present = Vec::new();
    let mut defs = Vec::new();
    for v in values {
        if v.is_nan() {
            defs.push(0i16);
        } else {
            defs.push(1);
            present.push(v);
        }
    }
    let mut col = group.next_column()?.expect("a column per field");
    col.typed::<DoubleType>().write_batch(&present, Some(&defs), None)?;
    col.close()?;
    Ok(())
}
