//! Sessions kept as one JSON document written again whole at each change
//! (Cline's, Continue's, Auggie's, nanocoder's…): an array of records,
//! appended to at its end. Each read converts the records after those read for good; the last one
//! stays provisional until another follows it or it has settled. The key
//! of the last record read for good (its id, else a digest of it) tells a
//! history that changed under the reader (compacted, undone): when that
//! record is no longer where it was, the session is read again from its
//! start.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Batch, DocumentRead};

/// What a family's document is made of.
pub struct Shape {
    /// Its records, in order.
    pub records: fn(&Value) -> &[Value],
    /// What the document says of the whole session: its id, its model.
    pub about: fn(&Value, &mut Batch),
    /// What tells a record from another put in its place.
    pub key: fn(&Value) -> String,
    /// Whether the last record can no longer change.
    pub settled: fn(&Value) -> bool,
    /// Appends a record's messages; the offset is its place.
    pub convert: fn(&Value, u64, &mut Batch),
}

/// Reads the records of `doc` after the first `done`, the last of which
/// had the key `last`. With `finished`, the last record is read for good.
pub fn read(doc: &[u8], done: usize, last: Option<&str>, finished: bool, shape: &Shape) -> DocumentRead {
    let mut read = DocumentRead::default();
    read.batch.stats.lines = 1;
    let Ok(doc) = serde_json::from_slice::<Value>(doc) else {
        // Cut short (a read may catch it half written), or not a session:
        // try again at the next change; only a finished file that does not
        // read is malformed.
        read.batch.stats.malformed = u64::from(finished);
        read.records_done = done;
        read.last_key = last.map(str::to_string);
        return read;
    };
    (shape.about)(&doc, &mut read.batch);
    let records = (shape.records)(&doc);
    let still_there = done == 0
        || records
            .get(done - 1)
            .is_some_and(|r| Some((shape.key)(r).as_str()) == last);
    let done = if still_there { done } else { 0 };
    read.reset = !still_there;
    read.records_done = done;
    read.last_key = if still_there { last.map(str::to_string) } else { None };
    for (i, record) in records.iter().enumerate().skip(done) {
        let before = read.batch.messages.len();
        (shape.convert)(record, i as u64, &mut read.batch);
        if i + 1 < records.len() || finished || (shape.settled)(record) {
            // Only a record read for good counts its tokens: a provisional
            // one is read again.
            for m in &read.batch.messages[before..] {
                if let Some(u) = &m.usage {
                    read.batch.usage.add(u);
                }
                if m.model.is_some() {
                    read.batch.model = m.model.clone();
                }
            }
            read.records_done = i + 1;
            read.last_key = Some((shape.key)(record));
        } else {
            read.batch.provisional = read.batch.messages.len() - before;
        }
    }
    read
}

/// The array at `key` of a document, or none.
pub fn array<'a>(doc: &'a Value, key: &str) -> &'a [Value] {
    doc[key].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A short digest of a record: the key of one that has no id.
pub fn digest(record: &Value) -> String {
    let hash = Sha256::digest(record.to_string().as_bytes());
    hash[..8].iter().map(|b| format!("{b:02x}")).collect()
}
