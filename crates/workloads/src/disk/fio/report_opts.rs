//! The job options that shape fio's report of a job, not its I/O: `percentile_list`,
//! `clat_percentiles`, `lat_percentiles`, `slat_percentiles`, `unified_rw_reporting` and
//! `description`, parsed as fio 3.33 parses them into the result's typed
//! [`FioReportOpts`] (which the renderers read).

use super::job::{JobError, flag};
use hostbench_core::fio_result::{FioReportOpts, FioUnified};

/// fio's longest `percentile_list` (`FIO_IO_U_LIST_MAX_LEN`).
pub const MAX_PERCENTILES: usize = 20;

/// Whether `key` (a canonical option name) is one of these options.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "percentile_list"
            | "clat_percentiles"
            | "lat_percentiles"
            | "slat_percentiles"
            | "unified_rw_reporting"
            | "description"
            | "significant_figures"
    )
}

/// Applies option `key` (canonical) with value `v`, written at `at`, to `r`.
pub fn apply(r: &mut FioReportOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    match key {
        "clat_percentiles" => r.clat_percentiles = flag(key, v, at)?,
        "lat_percentiles" => r.lat_percentiles = flag(key, v, at)?,
        "slat_percentiles" => r.slat_percentiles = flag(key, v, at)?,
        "unified_rw_reporting" => {
            r.unified_rw_reporting = match v.trim() {
                "none" | "0" => FioUnified::None,
                "mixed" | "1" => FioUnified::Mixed,
                "both" | "2" => FioUnified::Both,
                _ => {
                    return Err(JobError(format!(
                        "{at}: unified_rw_reporting={v}: expected none, mixed or both (or 0, 1, 2)"
                    )));
                }
            }
        }
        "description" => r.description = v.to_string(),
        "significant_figures" => {
            r.sig_figs = v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=10).contains(n))
                .ok_or_else(|| {
                    JobError(format!(
                        "{at}: significant_figures={v}: expected a whole number from 1 to 10 \
                         (fio's default 4)"
                    ))
                })?
        }
        "percentile_list" => {
            let (list, precision) = percentile_list(v, at)?;
            r.percentile_list = list;
            r.percentile_precision = precision;
        }
        _ => {}
    }
    Ok(())
}

/// `percentile_list=a:b:...`: at most 20 percentiles, each above 0 and at
/// most 100, and the decimals to print (the most typed in any of them, as fio counts).
fn percentile_list(v: &str, at: &str) -> Result<(Vec<f64>, u32), JobError> {
    let bad = |why: &str| {
        JobError(format!(
            "{at}: percentile_list={v}: {why} (e.g. percentile_list=50:90:99:99.9)"
        ))
    };
    let parts: Vec<&str> = v.split(':').map(str::trim).collect();
    if parts.len() > MAX_PERCENTILES {
        return Err(bad(&format!("at most {MAX_PERCENTILES} percentiles")));
    }
    let mut list = Vec::with_capacity(parts.len());
    let mut precision = 0u32;
    for p in parts {
        let x: f64 = p
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| bad(&format!("'{p}' is not a number")))?;
        if !(x > 0.0 && x <= 100.0) {
            return Err(bad(&format!("{p} is not above 0 and at most 100")));
        }
        if let Some((_, frac)) = p.split_once('.') {
            let digits = frac.chars().take_while(char::is_ascii_digit).count();
            precision = precision.max(digits as u32);
        }
        list.push(x);
    }
    Ok((list, precision))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(k: &str, v: &str) -> Result<FioReportOpts, JobError> {
        let mut r = FioReportOpts::default();
        apply(&mut r, k, v, "job.fio:3")?;
        Ok(r)
    }

    #[test]
    fn percentile_list_keeps_order_typed_and_counts_decimals() {
        let r = set("percentile_list", "99.95:50:1").unwrap();
        assert_eq!(r.percentile_list, vec![99.95, 50.0, 1.0]);
        assert_eq!(r.percentile_precision, 2);
        assert_eq!(r.percentiles(), vec![1.0, 50.0, 99.95]);
        let r = set("percentile_list", "50:90").unwrap();
        assert_eq!(r.percentile_precision, 0);
        assert_eq!(FioReportOpts::default().percentiles().len(), 17);
    }

    #[test]
    fn bad_values_name_the_problem() {
        for (k, v, needle) in [
            ("percentile_list", "50:0", "not above 0"),
            ("percentile_list", "50:101", "at most 100"),
            ("percentile_list", "50:x", "'x' is not a number"),
            ("percentile_list", "", "is not a number"),
            ("unified_rw_reporting", "3", "none, mixed or both"),
            ("lat_percentiles", "maybe", "expected 0 or 1"),
        ] {
            let e = set(k, v).unwrap_err().0;
            assert!(
                e.contains(needle) && e.starts_with("job.fio:3:"),
                "{k}={v}: {e}"
            );
        }
        let long = (1..=21)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(":");
        assert!(
            set("percentile_list", &long)
                .unwrap_err()
                .0
                .contains("at most 20")
        );
    }

    #[test]
    fn unified_aliases() {
        for (v, want) in [
            ("0", FioUnified::None),
            ("none", FioUnified::None),
            ("1", FioUnified::Mixed),
            ("mixed", FioUnified::Mixed),
            ("2", FioUnified::Both),
            ("both", FioUnified::Both),
        ] {
            assert_eq!(
                set("unified_rw_reporting", v).unwrap().unified_rw_reporting,
                want
            );
        }
    }
}
