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
//! first (ties by id); the document has no timestamp. When the runs belong to fleet runs
//! whose controller recorded its hosts (the store's `fleet_hosts`), a `"fleet_hosts"` list
//! follows `runs`: one object per host, `{"fleet_run", "host", "position", "status",
//! "reason", "runs"}`, so `fleet report` in the store imported into still names the hosts
//! that brought back no run. A reader that does not know it ignores it. So exporting, importing elsewhere and
//! exporting again gives an identical file, and every run keeps its id. Reading also
//! accepts a single result (what `--format json` prints) and a plain array of results.

use crate::StoreError;
use crate::StoredRun;
use crate::{FleetHost, FleetRoster};
use hostbench_core::input::{Bounded, IMPORT_MAX, human_bytes};
use hostbench_core::result::{RunResult, SCHEMA_ID, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::path::Path;

/// Value of the export document's `schema` field.
pub const EXPORT_SCHEMA_ID: &str = "hostbench.export";
/// Version of the export document layout.
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

/// Writes `runs` (already in the order wanted) as an export document, ending in a newline.
pub fn export_document(runs: &[StoredRun]) -> String {
    export_document_with(runs, &[])
}

/// One host of a fleet roster in an export document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RosterRow {
    fleet_run: String,
    host: String,
    position: i64,
    status: String,
    reason: Option<String>,
    runs: i64,
}

/// [`export_document`] with the fleet rosters of its runs' fleet runs (`"fleet_hosts"`,
/// left out when there are none, so a document without fleets is as before).
pub fn export_document_with(runs: &[StoredRun], rosters: &[FleetRoster]) -> String {
    let mut s = runs_document(runs);
    let rows: Vec<String> = rosters
        .iter()
        .flat_map(|r| {
            r.hosts.iter().map(|h| {
                serde_json::to_string(&RosterRow {
                    fleet_run: r.run.clone(),
                    host: h.host.clone(),
                    position: h.position,
                    status: h.status.clone(),
                    reason: h.reason.clone(),
                    runs: h.runs,
                })
                .unwrap_or_default()
            })
        })
        .collect();
    if rows.is_empty() {
        return s;
    }
    s.truncate(s.len() - "\n}\n".len());
    s.push_str(",\n  \"fleet_hosts\": [");
    for (i, row) in rows.iter().enumerate() {
        s.push_str(if i == 0 { "\n    " } else { ",\n    " });
        s.push_str(row);
    }
    s.push_str("\n  ]\n}\n");
    s
}

fn runs_document(runs: &[StoredRun]) -> String {
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

#[derive(Deserialize)]
struct Rosters {
    #[serde(default)]
    fleet_hosts: Vec<RosterRow>,
}

/// The fleet rosters of an export document (`"fleet_hosts"`; none in other documents),
/// each checked: names as fleet names are (1 to 200 characters, no control characters), a
/// known status, counts not negative. `origin` names the source in errors.
pub fn parse_rosters(text: &str, origin: &str) -> Result<Vec<FleetRoster>, StoreError> {
    let not = |why: String| StoreError::NotAnExport {
        origin: origin.to_string(),
        why,
    };
    if !text.trim_start().starts_with('{') {
        return Ok(Vec::new());
    }
    let doc: Rosters = serde_json::from_str(text).map_err(|e| {
        not(format!(
            "its \"fleet_hosts\" are not a list of fleet hosts ({e})"
        ))
    })?;
    let name = |what: &str, v: &str| -> Result<(), StoreError> {
        let n = v.chars().count();
        if n == 0 || n > 200 || v.chars().any(char::is_control) {
            return Err(not(format!(
                "\"fleet_hosts\": a {what} of {n} characters or with control characters"
            )));
        }
        Ok(())
    };
    let mut out: Vec<FleetRoster> = Vec::new();
    for row in doc.fleet_hosts {
        name("fleet run", &row.fleet_run)?;
        name("host", &row.host)?;
        if !matches!(row.status.as_str(), "ok" | "failed" | "interrupted")
            || row.runs < 0
            || row.position < 0
        {
            return Err(not(format!(
                "\"fleet_hosts\": host {} of fleet run {}: status {:?}, position {}, runs {} \
                 (expected ok, failed or interrupted and counts from 0)",
                row.host, row.fleet_run, row.status, row.position, row.runs
            )));
        }
        let host = FleetHost {
            host: row.host,
            position: row.position,
            status: row.status,
            reason: row.reason,
            runs: row.runs,
        };
        match out.iter_mut().find(|r| r.run == row.fleet_run) {
            Some(r) => r.hosts.push(host),
            None => out.push(FleetRoster {
                run: row.fleet_run,
                hosts: vec![host],
            }),
        }
    }
    Ok(out)
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

/// The checked-in result schema (`schemas/result.v1.json`), compiled once.
fn result_validator() -> Result<&'static jsonschema::Validator, String> {
    static V: std::sync::OnceLock<Result<jsonschema::Validator, String>> =
        std::sync::OnceLock::new();
    V.get_or_init(|| {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schemas/result.v1.json"))
                .map_err(|e| format!("the built-in result schema is not JSON ({e})"))?;
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| format!("the built-in result schema does not compile ({e})"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// A result that parses but breaks the schema's rules (a negative rate, an unknown
/// direction...) is refused with the first rule it breaks and where.
fn schema_violation(json: &str) -> Result<(), String> {
    let v = result_validator()?;
    let instance: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not a JSON object ({e})"))?;
    if v.is_valid(&instance) {
        return Ok(());
    }
    let Some(e) = v.iter_errors(&instance).next() else {
        return Ok(());
    };
    let mut msg = e.to_string();
    if msg.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|&i| msg.is_char_boundary(i))
            .unwrap_or(0);
        msg.replace_range(cut.., " …");
    }
    let at = e.instance_path().to_string();
    Err(format!(
        "{}: {msg} (the result schema, schemas/result.v1.json, does not allow it)",
        if at.is_empty() { "/" } else { &at }
    ))
}

/// Checks that `json` is a result this version understands and returns it as a stored run:
/// the text unchanged, except that a password in it (a result written by another tool or
/// an older hostbench) is masked, since no secret is ever stored. Ids and labels must be
/// short and free of control characters (they are printed in lists).
pub(crate) fn check_run(json: &str) -> Result<StoredRun, String> {
    let masked = hostbench_core::secret::mask(json);
    let json = masked.as_ref();
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
    use hostbench_core::input::{ID_MAX_CHARS, LABEL_MAX_CHARS};
    let short = |what: &str, v: &str, max: usize| -> Result<(), String> {
        let n = v.chars().count();
        if n == 0 || n > max {
            return Err(format!(
                "its {what} is {n} characters long (hostbench takes 1 to {max})"
            ));
        }
        if v.chars().any(char::is_control) {
            return Err(format!("its {what} holds control characters"));
        }
        Ok(())
    };
    short("id", &r.id, ID_MAX_CHARS)?;
    if let Some(l) = &r.label {
        short("label", l, LABEL_MAX_CHARS)?;
    }
    short("workload id", &r.workload.id, ID_MAX_CHARS)?;
    if let Some(h) = &r.host {
        short("host name", &h.hostname, 255)?;
    }
    schema_violation(json)?;
    Ok(StoredRun {
        id: r.id,
        json: json.to_string(),
    })
}

/// Reads the runs and the fleet rosters of a file (see [`read_document`]).
pub fn load_document(path: &Path) -> Result<(Vec<StoredRun>, Vec<FleetRoster>), StoreError> {
    let f = std::fs::File::open(path).map_err(|source| StoreError::File {
        action: "cannot read",
        path: path.to_path_buf(),
        source,
    })?;
    read_document(f, &path.display().to_string())
}

/// [`read_runs`] with the document's fleet rosters ([`parse_rosters`]).
pub fn read_document(
    r: impl std::io::Read,
    origin: &str,
) -> Result<(Vec<StoredRun>, Vec<FleetRoster>), StoreError> {
    read_within(r, origin, IMPORT_MAX)
}

/// Reads the runs in a file (see [`read_runs`]).
pub fn load_file(path: &Path) -> Result<Vec<StoredRun>, StoreError> {
    let f = std::fs::File::open(path).map_err(|source| StoreError::File {
        action: "cannot read",
        path: path.to_path_buf(),
        source,
    })?;
    read_runs(f, &path.display().to_string())
}

/// Reads the runs of a document from `r` (a file, stdin; see [`parse_runs`]), parsing as it
/// reads: what is not JSON (`/dev/zero`, a binary file) is refused at its first bytes, and
/// a document larger than [`IMPORT_MAX`] once it passes the limit, never after reading all
/// of it.
pub fn read_runs(r: impl std::io::Read, origin: &str) -> Result<Vec<StoredRun>, StoreError> {
    read_runs_within(r, origin, IMPORT_MAX)
}

fn read_runs_within(
    r: impl std::io::Read,
    origin: &str,
    limit: u64,
) -> Result<Vec<StoredRun>, StoreError> {
    read_within(r, origin, limit).map(|(runs, _)| runs)
}

fn read_within(
    r: impl std::io::Read,
    origin: &str,
    limit: u64,
) -> Result<(Vec<StoredRun>, Vec<FleetRoster>), StoreError> {
    let mut bounded = Bounded::new(std::io::BufReader::new(r), limit);
    let parsed = {
        let mut de = serde_json::Deserializer::from_reader(&mut bounded);
        Box::<RawValue>::deserialize(&mut de).and_then(|v| de.end().map(|()| v))
    };
    let whole = match parsed {
        Ok(v) => v,
        Err(_) if bounded.exceeded() => {
            return Err(StoreError::NotAnExport {
                origin: origin.to_string(),
                why: format!(
                    "it is larger than {}, hostbench's limit for one file: export fewer runs per \
                     file (--since, --until, --label, --workload)",
                    human_bytes(limit)
                ),
            });
        }
        Err(e) if e.is_io() => {
            return Err(StoreError::NotAnExport {
                origin: origin.to_string(),
                why: format!("it cannot be read ({e})"),
            });
        }
        Err(e) => {
            return Err(StoreError::NotAnExport {
                origin: origin.to_string(),
                why: format!("it is not JSON ({e})"),
            });
        }
    };
    Ok((
        parse_runs(whole.get(), origin)?,
        parse_rosters(whole.get(), origin)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_at_the_limit_or_the_first_bad_byte() {
        use std::io::Read;
        let endless = std::io::Cursor::new(b"[".to_vec()).chain(std::io::repeat(b' '));
        let e = read_runs_within(endless, "stdin", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        let e = read_runs(std::io::repeat(0), "/dev/zero").unwrap_err();
        assert!(e.to_string().contains("not JSON"), "{e}");
        let doc = export_document(&[]);
        let exact = read_runs_within(doc.as_bytes(), "x", doc.len() as u64).unwrap();
        assert!(exact.is_empty());
    }

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
