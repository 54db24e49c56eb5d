//! The columns the store indexes, all derived from a result's JSON: a later migration can
//! recompute them from `result_json` whenever the derivation changes.

use crate::StoreError;
use crate::time::parse_timestamp_ms;
use hostbench_core::host::HostInfo;
use hostbench_core::result::{RunResult, figure};
use serde::Serialize;

/// The figure `results list` shows for a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// Result field it comes from (`events_per_s`).
    pub metric: String,
    /// Its value; `None` when it is not a finite number.
    pub value: Option<f64>,
    /// Unit as printed (`events/s`).
    pub unit: String,
}

impl Headline {
    /// The headline of a run: its first figure (STREAM's Triad, the memory test's MiB/s),
    /// or its event rate for results written before figures existed; no value for a run
    /// stopped before it measured anything.
    pub fn of(r: &RunResult) -> Headline {
        if let Some(f) = r.figures.first() {
            return Headline {
                metric: f.name.clone(),
                value: f.value.is_finite().then_some(f.value),
                unit: f.unit.clone(),
            };
        }
        // A run stopped before it measured anything has no figure (not a rate of 0).
        let v = if r.measured_nothing() {
            f64::NAN
        } else {
            r.metrics.events_per_s
        };
        Headline {
            metric: figure::EVENTS_PER_S.name.into(),
            value: v.is_finite().then_some(v),
            unit: figure::EVENTS_PER_S.unit.into(),
        }
    }
}

/// Every indexed column of one stored run, besides the JSON itself.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Indexed {
    pub id: String,
    pub started_at: String,
    pub started_ms: i64,
    pub label: Option<String>,
    pub workload: String,
    pub workload_family: String,
    pub category: String,
    pub hostname: Option<String>,
    pub host_fingerprint: Option<String>,
    pub tool_version: String,
    pub stop_reason: String,
    pub headline: Headline,
    pub result_schema_version: u32,
    /// `fleet.run`.
    pub fleet_run: Option<String>,
    /// `fleet.host`: the host's name in its fleet run.
    pub fleet_host: Option<String>,
}

impl Indexed {
    /// The columns of `r`; fails when its start time is not a timestamp.
    pub fn of(r: &RunResult) -> Result<Indexed, StoreError> {
        let started_ms =
            parse_timestamp_ms(&r.started_at).ok_or_else(|| StoreError::BadResult {
                id: r.id.clone(),
                why: format!("started_at '{}' is not an RFC 3339 time", r.started_at),
            })?;
        if r.id.trim().is_empty() {
            return Err(StoreError::BadResult {
                id: r.id.clone(),
                why: "its id is empty".into(),
            });
        }
        Ok(Indexed {
            id: r.id.clone(),
            started_at: r.started_at.clone(),
            started_ms,
            label: r.label.clone(),
            workload: r.workload.id.clone(),
            workload_family: family(&r.workload.id).to_string(),
            category: r.workload.category.name().to_string(),
            hostname: r.host.as_ref().map(|h| h.hostname.clone()),
            host_fingerprint: r.host.as_ref().map(host_fingerprint),
            tool_version: r.tool.version.clone(),
            stop_reason: json_name(&r.outcome.stop_reason),
            headline: Headline::of(r),
            result_schema_version: r.schema_version,
            fleet_run: r.fleet.as_ref().map(|f| f.run.clone()),
            fleet_host: r.fleet.as_ref().map(|f| f.host.clone()),
        })
    }
}

/// The JSON name of a unit-variant enum (`time_limit`).
fn json_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => String::new(),
    }
}

/// The part of a workload id before its first dot: `memory` for `memory.stream`, `null` for
/// both `null` and `null.loop`. `--workload W` matches W itself and every id of family W.
pub fn family(workload: &str) -> &str {
    workload.split('.').next().unwrap_or(workload)
}

/// A 16-hex-digit hash of what makes two machines comparable: CPU model, vendor,
/// architecture, sockets/cores/threads, memory size (rounded to GiB), NUMA nodes, kernel,
/// distribution, virtualization, DMI vendor and product, and the current clocksource.
/// The host name is left out on purpose: two identical instances hash alike. Volatile
/// readings (current MHz, free memory) are left out so one machine keeps one fingerprint.
pub fn host_fingerprint(h: &HostInfo) -> String {
    let gib = (h.memory.total_bytes as f64 / (1u64 << 30) as f64).round() as u64;
    let dmi = h.dmi.clone().unwrap_or_default();
    let fields: [(&str, String); 14] = [
        ("cpu.model", h.cpu.model.clone()),
        ("cpu.vendor", h.cpu.vendor.clone()),
        ("cpu.arch", h.cpu.arch.clone()),
        ("cpu.sockets", h.cpu.sockets.to_string()),
        ("cpu.cores", h.cpu.cores.to_string()),
        ("cpu.threads", h.cpu.threads.to_string()),
        ("memory.gib", gib.to_string()),
        ("memory.numa_nodes", h.memory.numa_nodes.to_string()),
        ("os.kernel", h.os.kernel.clone()),
        ("os.distribution", h.os.distribution.clone()),
        (
            "virtualization",
            h.virtualization.clone().unwrap_or_default(),
        ),
        ("dmi.vendor", dmi.vendor.unwrap_or_default()),
        ("dmi.product", dmi.product.unwrap_or_default()),
        ("clocksource", h.clocksource.current.clone()),
    ];
    // FNV-1a, 64 bit: stable across Rust versions and platforms (std's hashers are not).
    let mut x: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in fields {
        for b in k.bytes().chain([b'=']).chain(v.bytes()).chain([0]) {
            x ^= u64::from(b);
            x = x.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{x:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(family("memory.stream"), "memory");
        assert_eq!(family("null"), "null");
        assert_eq!(family("disk.fio.rand"), "disk");
    }

    #[test]
    fn fingerprint_ignores_name_and_volatile_figures_but_not_hardware() {
        let mut a = HostInfo::default();
        a.cpu.model = "AMD EPYC 7B13".into();
        a.memory.total_bytes = 16 << 30;
        a.clocksource.current = "tsc".into();
        let fa = host_fingerprint(&a);
        assert_eq!(fa.len(), 16);
        let mut b = a.clone();
        b.hostname = "other".into();
        b.memory.available_bytes = 12345;
        b.cpu.mhz_current = Some(2345.0);
        b.memory.total_bytes = (16 << 30) - (40 << 20);
        assert_eq!(host_fingerprint(&b), fa);
        let mut c = a.clone();
        c.clocksource.current = "xen".into();
        assert_ne!(host_fingerprint(&c), fa);
        let mut d = a.clone();
        d.cpu.threads = 4;
        assert_ne!(host_fingerprint(&d), fa);
    }
}
