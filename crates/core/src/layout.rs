//! What a peer's report layout needs beyond the measurement: the options of the peer's
//! command line that shape its report (ab's `-d`, IOzone's flag order, fio's output format,
//! ...), decided by the front-end that parsed them and carried, typed, in the plan and the
//! result (`config.layout`). A renderer reads these and the measurement, never the command
//! line, so a stored run renders in its peer layout exactly as it printed
//! (`hostbench results show ID -f GRAMMAR`).
//!
//! A run of another grammar has no options of this one: its layout then renders from the
//! [`Default`] of the grammar's struct, which is what the peer prints when none of those
//! options is given.

use serde::{Deserialize, Serialize};

/// The layout options of the grammar a run was typed in; `None` in a result for grammars
/// whose layouts take none (native, STREAM, memlat, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "grammar", rename_all = "snake_case")]
pub enum Layout {
    /// sysbench's.
    Sysbench(SysbenchLayout),
    /// fio's.
    Fio(FioLayout),
    /// ApacheBench's.
    Ab(AbLayout),
    /// httperf's.
    Httperf(HttperfLayout),
    /// IOzone's.
    Iozone(IozoneLayout),
}

/// sysbench's options that shape its final report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchLayout {
    /// `--histogram`: the latency histogram before the report.
    pub histogram: bool,
}

/// fio's output options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioLayout {
    /// `--output-format` (the first format given).
    pub output_format: FioFormat,
    /// The other formats of `--output-format=normal,json,...` (fio prints every format
    /// selected, in its own order: terse, JSON, normal); absent before schema 1.4.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_formats: Vec<FioFormat>,
    /// `--terse-version` (2 to 5; fio's default 3).
    #[serde(default = "terse_v3", skip_serializing_if = "is_terse_v3")]
    pub terse_version: u8,
    /// The lines the file layout printed before the run ("job: Laying out IO file (1 file /
    /// 64MiB)"), which fio's normal layout shows after its "Starting N processes" line.
    pub laid_out: Vec<String>,
}

fn terse_v3() -> u8 {
    3
}

fn is_terse_v3(v: &u8) -> bool {
    *v == 3
}

impl Default for FioLayout {
    fn default() -> Self {
        FioLayout {
            output_format: FioFormat::Normal,
            more_formats: Vec::new(),
            terse_version: 3,
            laid_out: Vec::new(),
        }
    }
}

impl FioLayout {
    /// Whether `f` is among the formats selected (`json+` counts as `json` too, as in fio).
    pub fn has(&self, f: FioFormat) -> bool {
        let all = std::iter::once(&self.output_format).chain(&self.more_formats);
        let mut any = false;
        for &g in all {
            any |= g == f || (f == FioFormat::Json && g == FioFormat::JsonPlus);
        }
        any
    }
}

/// fio's `--output-format` (hostbench's own `hostbench-json` renders the result itself: its
/// fio layout is the normal one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FioFormat {
    /// fio's normal text.
    #[default]
    Normal,
    /// `json`.
    Json,
    /// `json+` (adds latency `bins`).
    #[serde(rename = "json+")]
    JsonPlus,
    /// `terse` (`minimal`, `csv`): one `;`-separated line per job block.
    Terse,
}

/// ApacheBench's options that shape its report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbLayout {
    /// `-d`: no percentile table.
    pub no_pct: bool,
    /// `-S`: no sd/median columns and no warnings about them.
    pub no_sd: bool,
    /// ab's heartbeat (past 150 requests or with `-t`, not with `-q`): the Benchmarking line
    /// ends at "(be patient)" instead of "(be patient).....done".
    pub heartbeat: bool,
    /// `-w`: the report is ab's HTML table, with the attributes `-x`, `-y`, `-z` gave.
    pub html: Option<AbHtml>,
}

/// The attributes ab's `-x`, `-y` and `-z` put into the HTML tags (ab's defaults: none,
/// none, `bgcolor=white`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbHtml {
    /// Inside `<table ...>` (`-x`).
    pub table: String,
    /// Inside every `<tr ...>` (`-y`).
    pub tr: String,
    /// Inside every `<th ...>` and `<td ...>` (`-z`).
    pub td: String,
}

impl Default for AbHtml {
    fn default() -> Self {
        AbHtml {
            table: String::new(),
            tr: String::new(),
            td: "bgcolor=white".into(),
        }
    }
}

/// httperf's options that its first line echoes only when they were given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttperfLayout {
    /// `--timeout` was given.
    pub timeout: bool,
    /// `--hog` was given.
    pub hog: bool,
}

/// IOzone's options that shape its header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IozoneLayout {
    /// IOzone's flags in the order given (`s`, `r`, `+n`; values left out): IOzone prints an
    /// option's line while it parses that option, so the header's lines come in this order.
    pub flags: Vec<String>,
    /// `-R`: the Excel-style report blocks after the table.
    pub excel: bool,
    /// The words after the program name, as IOzone's "Command line used:" line prints them
    /// (passwords redacted as in `config.command_line`).
    pub command: String,
}

impl Layout {
    /// The grammar's name (`sysbench`, `fio`, `ab`, `httperf`, `iozone`).
    pub fn grammar(&self) -> &'static str {
        match self {
            Layout::Sysbench(_) => "sysbench",
            Layout::Fio(_) => "fio",
            Layout::Ab(_) => "ab",
            Layout::Httperf(_) => "httperf",
            Layout::Iozone(_) => "iozone",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_tagged_by_grammar() {
        let l = Layout::Ab(AbLayout {
            no_pct: true,
            ..AbLayout::default()
        });
        let j = serde_json::to_value(&l).unwrap();
        assert_eq!(j["grammar"], "ab");
        assert_eq!(j["no_pct"], true);
        assert_eq!(serde_json::from_value::<Layout>(j).unwrap(), l);
        let f = Layout::Fio(FioLayout {
            output_format: FioFormat::JsonPlus,
            laid_out: vec!["a: Laying out IO file (1 file / 1MiB)".into()],
            ..FioLayout::default()
        });
        let j = serde_json::to_value(&f).unwrap();
        assert_eq!(j["output_format"], "json+");
        assert_eq!(serde_json::from_value::<Layout>(j).unwrap(), f);
        assert!(serde_json::from_value::<Layout>(serde_json::json!({"grammar": "wrk"})).is_err());
        // A layout of schema 1.3 (no more_formats, no terse_version) reads as fio's defaults.
        let old: Layout = serde_json::from_value(serde_json::json!(
            {"grammar": "fio", "output_format": "json", "laid_out": []}
        ))
        .unwrap();
        let Layout::Fio(old) = old else { panic!() };
        assert_eq!((old.terse_version, old.more_formats.len()), (3, 0));
        assert!(old.has(FioFormat::Json) && !old.has(FioFormat::Terse));
        let both = FioLayout {
            output_format: FioFormat::Terse,
            more_formats: vec![FioFormat::JsonPlus],
            terse_version: 5,
            laid_out: Vec::new(),
        };
        assert!(both.has(FioFormat::Json) && both.has(FioFormat::JsonPlus));
        assert!(!both.has(FioFormat::Normal));
        let j = serde_json::to_value(Layout::Fio(both.clone())).unwrap();
        assert_eq!(j["more_formats"][0], "json+");
        assert_eq!(
            serde_json::from_value::<Layout>(j).unwrap(),
            Layout::Fio(both)
        );
    }
}
