//! The export document, and reading result files.
//!
//! An export is one JSON object:
//!
//! ```text
//! {
//!   "schema": "hostbench.export",
//!   "schema_version": 1,
//!   "runs": [
//!     {"schema":"hostbench.result","schema_version":1,"id":"…",…},
//!     …
//!   ]
//! }
//! ```
//!
//! Each element of `runs` is the stored result JSON text, copied byte for byte, oldest run
//! first (ties by id); the document has no timestamp. So exporting, importing elsewhere and
//! exporting again gives an identical file, and every run keeps its id. Reading also
//! accepts a single result (what `--format json` prints) and a plain array of results.

use crate::StoreError;
use crate::StoredRun;
use hostbench_core::result::{RunResult, SCHEMA_ID, SCHEMA_VERSION};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::Path;

/// Value of the export document's `schema` field.
pub const EXPORT_SCHEMA_ID: &str = "hostbench.export";
/// Version of the export document layout.
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

/// Writes `runs` (already in the order wanted) as an export document, ending in a newline.
pub fn export_document(runs: &[StoredRun]) -> String {
    let mut s = format!(
        "{{\n  \"schema\": \"{EXPORT_SCHEMA_ID}\",\n  \"schema_version\": {EXPORT_SCHEMA_VERSION},\n  \"runs\": ["
    );
    for (i, r) in runs.iter().enumerate() {
        s.push_str(if i == 0 { "\n    " } else { ",\n    " });
        s.push_str(&r.json);
    }
    s.push_str(if runs.is_empty() {
        "]\n}\n"
    } else {
        "\n  ]\n}\n"
    });
    s
}

#[derive(Deserialize)]
struct Probe {
    schema: Option<String>,
    schema_version: Option<u32>,
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    runs: Vec<&'a RawValue>,
}

/// Reads the runs in `text`: an export document, one result, or an array of results.
/// `origin` names the source in errors. Every run is checked to be a result this version
/// understands; nothing is returned unless all are.
pub fn parse_runs(text: &str, origin: &str) -> Result<Vec<StoredRun>, StoreError> {
    let not = |why: String| StoreError::NotAnExport {
        origin: origin.to_string(),
        why,
    };
    let text = text.trim();
    let whole: &RawValue =
        serde_json::from_str(text).map_err(|e| not(format!("it is not JSON ({e})")))?;
    let raws: Vec<&RawValue> = if text.starts_with('[') {
        serde_json::from_str(whole.get())
            .map_err(|e| not(format!("it is not a JSON array of results ({e})")))?
    } else if text.starts_with('{') {
        let probe: Probe = serde_json::from_str(whole.get()).map_err(|e| {
            not(format!(
                "its \"schema\" fields are not text and a number ({e})"
            ))
        })?;
        match probe.schema.as_deref() {
            Some(EXPORT_SCHEMA_ID) => {
                let v = probe.schema_version.unwrap_or(0);
                if v != EXPORT_SCHEMA_VERSION {
                    return Err(not(format!(
                        "it is a hostbench export of version {v}; this hostbench reads version \
                         {EXPORT_SCHEMA_VERSION} (upgrade hostbench to read newer exports)"
                    )));
                }
                let doc: Document = serde_json::from_str(whole.get())
                    .map_err(|e| not(format!("its \"runs\" are not a list of results ({e})")))?;
                doc.runs
            }
            Some(SCHEMA_ID) => vec![whole],
            Some(other) => {
                return Err(not(format!(
                    "its \"schema\" is \"{other}\", not \"{EXPORT_SCHEMA_ID}\" or \"{SCHEMA_ID}\""
                )));
            }
            None => return Err(not("it has no \"schema\" field".into())),
        }
    } else {
        return Err(not("it is neither a JSON object nor an array".into()));
    };
    raws.iter()
        .enumerate()
        .map(|(i, raw)| check_run(raw.get()).map_err(|why| not(format!("run #{}: {why}", i + 1))))
        .collect()
}

/// Checks that `json` is a result this version understands and returns it as a stored run
/// (the text unchanged).
pub(crate) fn check_run(json: &str) -> Result<StoredRun, String> {
    let p: Probe = serde_json::from_str(json).map_err(|e| format!("not a JSON object ({e})"))?;
    if p.schema.as_deref() != Some(SCHEMA_ID) {
        return Err(format!("its \"schema\" is not \"{SCHEMA_ID}\""));
    }
    if let Some(v) = p.schema_version.filter(|v| *v > SCHEMA_VERSION) {
        return Err(format!(
            "it is a result of schema version {v}; this hostbench reads up to version \
             {SCHEMA_VERSION} (upgrade hostbench)"
        ));
    }
    let r: RunResult =
        serde_json::from_str(json).map_err(|e| format!("not a valid hostbench result ({e})"))?;
    Ok(StoredRun {
        id: r.id,
        json: json.to_string(),
    })
}

/// Reads the runs in a file (see [`parse_runs`]).
pub fn load_file(path: &Path) -> Result<Vec<StoredRun>, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::File {
        action: "cannot read",
        path: path.to_path_buf(),
        source,
    })?;
    parse_runs(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_export_parses_back() {
        let doc = export_document(&[]);
        assert_eq!(parse_runs(&doc, "x").unwrap(), vec![]);
        assert!(doc.ends_with('\n'));
    }

    #[test]
    fn other_json_is_not_an_export() {
        let e = |t: &str| parse_runs(t, "f.json").unwrap_err().to_string();
        assert!(
            e("{\"results\": []}").contains("no \"schema\""),
            "{}",
            e("{}")
        );
        assert!(e("{\"schema\": \"x\"}").contains("\"x\""));
        assert!(e("hello").contains("not JSON"));
        assert!(
            e("{\"schema\":\"hostbench.export\",\"schema_version\":9,\"runs\":[]}")
                .contains("version 9")
        );
        assert!(e("[{\"schema\":\"hostbench.result\"}]").contains("run #1"));
        assert!(
            e("{\"schema\":\"hostbench.export\",\"schema_version\":1,\"runs\":[1]}")
                .contains("run #1")
        );
        assert!(
            e("{\"schema\":\"hostbench.result\",\"schema_version\":7}")
                .contains("schema version 7")
        );
        assert!(
            e("{\"schema\":\"hostbench.export\",\"schema_version\":1,\"runs\":[]")
                .contains("not JSON")
        );
    }
}
