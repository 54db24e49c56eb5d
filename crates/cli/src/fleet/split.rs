//! Distributed load: a fleet whose command is an HTTP load (`http`, `ab`, `httperf`) gives
//! each host its share of the load, so the hosts together make the load the command asks
//! for: the rate, the connections and the request count are divided among them (the
//! remainder one each to the first hosts); what each host measures is merged afterwards
//! (`hostbench_core::merge`).
//!
//! | grammar | divided | default when absent |
//! |---|---|---|
//! | `http` | `-R/--rate`, `-c/--connections`, `-n/--requests` | `-c 10`; no rate, no count |
//! | `ab` | `-n`, `-c` | `-n 1` (none with `-t`), `-c 1` |
//! | `httperf` | `--rate` (or `--period`: each host's n times as long), `--num-conns` (or `--wsess`'s sessions) | no rate; `--num-conns 1` |
//!
//! A host whose share would be 0 is a usage error: the total is too small for the fleet.

use crate::frontend::getopt::{Arg, Flag, Getopt, Style};
use anyhow::{Result, bail};

/// One option divided among the hosts.
struct Divided {
    /// As the user wrote it (`-c`, `--rate`), for messages.
    shown: String,
    /// What each host is given (`-c`, `--rate=`): the option and its value are written as
    /// `{option} {value}` or, for a `=` option, `{option}{value}` in one word.
    option: &'static str,
    /// The total.
    total: f64,
    /// An integer count (connections, requests) rather than a rate.
    count: bool,
    /// A period (httperf's `--period=[d|e]T`, `total` its seconds) rather than a rate:
    /// each host's is `n` times as long, written after this prefix (`d`, `e` or none).
    period: Option<String>,
    /// Written after each host's value (httperf's `--wsess=N1,N2,X`: `,N2,X`).
    suffix: String,
}

/// Whether `command` (the words after `--`) is a load the fleet divides.
pub fn is_load(command: &[String]) -> bool {
    matches!(
        command.first().map(String::as_str),
        Some("http" | "ab" | "httperf")
    )
}

/// Each host's command (`hosts` of them), or `None` when the command is not a load.
pub fn split(command: &[String], hosts: &[String]) -> Result<Option<Vec<Vec<String>>>> {
    let Some(first) = command.first() else {
        return Ok(None);
    };
    let rest = &command[1..];
    let (divided, others) = match first.as_str() {
        "http" => http(rest)?,
        "ab" => getopt_grammar(rest, crate::ab::FLAGS, ab_style(), Grammar::Ab)?,
        "httperf" => getopt_grammar(
            rest,
            crate::httperf::FLAGS,
            httperf_style(),
            Grammar::Httperf,
        )?,
        _ => return Ok(None),
    };
    let n = hosts.len();
    let mut per_host: Vec<Vec<String>> = vec![vec![first.clone()]; n];
    for d in &divided {
        let shares = shares(d, hosts)?;
        for (words, v) in per_host.iter_mut().zip(shares) {
            if d.option.ends_with('=') {
                words.push(format!("{}{v}{}", d.option, d.suffix));
            } else {
                words.push(d.option.to_string());
                words.push(v);
            }
        }
    }
    for words in per_host.iter_mut() {
        words.extend(others.iter().cloned());
    }
    Ok(Some(per_host))
}

/// The values of `d` for each host: a count divided with the remainder spread one each
/// over the first hosts; a whole rate the same way; a fractional rate in equal parts.
fn shares(d: &Divided, hosts: &[String]) -> Result<Vec<String>> {
    let n = hosts.len();
    if let Some(prefix) = &d.period {
        // The rate divided: each host's sessions (connections) arrive n times as far apart.
        let t = format!("{:.9}", d.total * n as f64);
        let t = t.trim_end_matches('0').trim_end_matches('.');
        return Ok(vec![format!("{prefix}{t}"); n]);
    }
    if d.count || (d.total.fract() == 0.0 && d.total < 1e15) {
        let total = d.total as u64;
        let (base, rem) = (total / n as u64, (total % n as u64) as usize);
        if base == 0 {
            bail!(
                "fleet: {} {} over {n} hosts leaves {} (host {} of {n}) nothing to do: give {} \
                 of at least {n} (one per host) or fewer hosts",
                d.shown,
                total,
                hosts[rem],
                rem + 1,
                d.shown
            );
        }
        return Ok((0..n)
            .map(|i| (base + u64::from(i < rem)).to_string())
            .collect());
    }
    Ok(vec![format!("{}", d.total / n as f64); n])
}

fn ab_style() -> Style {
    Style {
        double_dash_ends: true,
        ..Style::default()
    }
}

fn httperf_style() -> Style {
    Style {
        long_prefixes: true,
        double_dash_ends: true,
    }
}

/// `hostbench http`'s options (clap: `-c 4`, `-c4`, `-c=4`, `--connections 4`,
/// `--connections=4`). Returns what is divided and the other words.
fn http(rest: &[String]) -> Result<(Vec<Divided>, Vec<String>)> {
    // (short, long, default total, count)
    const OPTS: [(&str, &str, Option<f64>, bool); 3] = [
        ("-c", "--connections", Some(10.0), true),
        ("-R", "--rate", None, false),
        ("-n", "--requests", None, true),
    ];
    let mut found: [Option<(String, f64)>; 3] = [None, None, None];
    let mut others = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        i += 1;
        if w == "--" {
            others.extend(rest[i - 1..].iter().cloned());
            break;
        }
        let mut hit = None;
        for (k, (short, long, _, _)) in OPTS.iter().enumerate() {
            let value = if w == short || w == long {
                match rest.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => bail!("fleet: {w} needs a value"),
                }
            } else if let Some(v) = w.strip_prefix(&format!("{long}=")) {
                Some(v.to_string())
            } else {
                w.strip_prefix(short)
                    .filter(|_| !w.starts_with("--"))
                    .map(|v| v.strip_prefix('=').unwrap_or(v).to_string())
            };
            if let Some(v) = value {
                hit = Some((k, w.clone(), v));
                break;
            }
        }
        match hit {
            Some((k, shown, v)) => {
                let shown = if shown.starts_with("--") {
                    OPTS[k].1
                } else {
                    OPTS[k].0
                };
                let x = number(shown, &v, OPTS[k].3)?;
                found[k] = Some((shown.to_string(), x));
            }
            None => {
                // A cluster of short flags (`-kc8`) would hide one of ours from this scan.
                if w.len() > 2
                    && w.starts_with('-')
                    && !w.starts_with("--")
                    && w[1..].starts_with(['k', 'q'])
                    && w[2..].contains(['c', 'R', 'n'])
                {
                    bail!(
                        "fleet: write {w:?} as separate options (-k -c 8): a fleet divides -c, \
                         -R and -n among the hosts"
                    );
                }
                others.push(w.clone());
            }
        }
    }
    let mut divided = Vec::new();
    for (k, (short, _, default, count)) in OPTS.iter().enumerate() {
        let (shown, total) = match (&found[k], default) {
            (Some((s, v)), _) => (s.clone(), *v),
            (None, Some(d)) => (format!("{short} (default)"), *d),
            (None, None) => continue,
        };
        if total == 0.0 && default.is_none() {
            // -R 0 is the closed loop, -n 0 no count: nothing to divide.
            continue;
        }
        divided.push(Divided {
            shown,
            option: short,
            total,
            count: *count,
            period: None,
            suffix: String::new(),
        });
    }
    Ok((divided, others))
}

#[derive(Clone, Copy, PartialEq)]
enum Grammar {
    Ab,
    Httperf,
}

/// ab's and httperf's options, read with their own flag tables (clusters, prefixes and
/// all); the other options are written back one word each.
fn getopt_grammar(
    rest: &[String],
    flags: &[Flag],
    style: Style,
    g: Grammar,
) -> Result<(Vec<Divided>, Vec<String>)> {
    let mut opts: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    // (requests, concurrency, time limit seen) for ab; (rate, num-conns) for httperf.
    let mut a: Option<(String, f64)> = None;
    let mut b: Option<(String, f64)> = None;
    // httperf: the rate given as `--period` (its prefix), sessions as `--wsess` (`,N2,X`).
    let mut period: Option<String> = None;
    let mut wsess: Option<String> = None;
    let mut ab_time_after_n = false;
    for item in Getopt::new(flags, rest, style) {
        // A bad command line is the grammar's to word: left as it is, each host says it.
        let Ok(item) = item else {
            return Ok((Vec::new(), rest.to_vec()));
        };
        match item {
            Arg::Word(w) => words.push(w),
            Arg::Opt { flag, value, shown } => {
                let v = value.clone().unwrap_or_default();
                match (g, flag.short, flag.long) {
                    (Grammar::Ab, "n", _) => {
                        a = Some((shown, number("-n", &v, true)?));
                        ab_time_after_n = false;
                    }
                    (Grammar::Ab, "c", _) => b = Some((shown, number("-c", &v, true)?)),
                    (Grammar::Ab, "t", _) => {
                        ab_time_after_n = true;
                        opts.push(shown);
                        opts.push(v);
                    }
                    (Grammar::Httperf, _, "rate") => {
                        a = Some(("--rate".into(), number("--rate", &v, false)?));
                        period = None;
                    }
                    (Grammar::Httperf, _, "num-conns") => {
                        b = Some(("--num-conns".into(), number("--num-conns", &v, true)?))
                    }
                    // `--period=[d|e]T`: a rate of 1/T; each host gets n × T. (`u`, `v` and
                    // bad values are left for the hosts' httperf to refuse.)
                    (Grammar::Httperf, _, "period")
                        if let Some((prefix, t)) = httperf_period(&v) =>
                    {
                        a = Some(("--period".into(), t));
                        period = Some(prefix);
                    }
                    // `--wsess=N1,N2,X`: N1 sessions divided, N2 calls and X think time each.
                    (Grammar::Httperf, _, "wsess")
                        if let Some((n1, rest)) = v.split_once(',')
                            && rest.split(',').count() == 2 =>
                    {
                        b = Some(("--wsess".into(), number("--wsess", n1, true)?));
                        wsess = Some(format!(",{rest}"));
                    }
                    _ => {
                        if shown.starts_with("--") {
                            match value {
                                Some(v) => opts.push(format!("{shown}={v}")),
                                None => opts.push(shown),
                            }
                        } else {
                            opts.push(shown);
                            if let Some(v) = value {
                                opts.push(v);
                            }
                        }
                    }
                }
            }
        }
    }
    let mut divided = Vec::new();
    match g {
        Grammar::Ab => {
            // ab: -t sets the count to 50000 unless -n follows it: then each host has its
            // own cap, and only the time limit matters.
            if !ab_time_after_n {
                let (shown, total) = a.unwrap_or(("-n (default)".into(), 1.0));
                divided.push(Divided {
                    shown,
                    option: "-n",
                    total,
                    count: true,
                    period: None,
                    suffix: String::new(),
                });
            }
            let (shown, total) = b.unwrap_or(("-c (default)".into(), 1.0));
            divided.push(Divided {
                shown,
                option: "-c",
                total,
                count: true,
                period: None,
                suffix: String::new(),
            });
        }
        Grammar::Httperf => {
            if let Some((shown, total)) = a.filter(|(_, r)| *r > 0.0) {
                divided.push(Divided {
                    shown,
                    option: if period.is_some() {
                        "--period="
                    } else {
                        "--rate="
                    },
                    total,
                    count: false,
                    period,
                    suffix: String::new(),
                });
            }
            let (shown, total) = b.unwrap_or(("--num-conns (default)".into(), 1.0));
            divided.push(Divided {
                shown,
                option: if wsess.is_some() {
                    "--wsess="
                } else {
                    "--num-conns="
                },
                total,
                count: true,
                period: None,
                suffix: wsess.unwrap_or_default(),
            });
        }
    }
    if !words.is_empty() {
        opts.push("--".into());
        opts.extend(words);
    }
    Ok((divided, opts))
}

/// httperf's `--period=[d|e]T` (deterministic or exponential, T seconds > 0): its prefix as
/// written and T; `None` for what httperf refuses or the fleet does not divide (`u`, `v`).
fn httperf_period(v: &str) -> Option<(String, f64)> {
    let (prefix, t) = match v.chars().next()? {
        c @ ('d' | 'e') => (c.to_string(), &v[1..]),
        _ => (String::new(), v),
    };
    let t: f64 = t.trim().parse().ok()?;
    (t.is_finite() && t > 0.0).then_some((prefix, t))
}

/// A value of a divided option: a whole number for a count, a non-negative number for a
/// rate.
fn number(option: &str, v: &str, count: bool) -> Result<f64> {
    let x = if count {
        v.trim().parse::<u64>().ok().map(|x| x as f64)
    } else {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    match x {
        Some(x) => Ok(x),
        None => bail!(
            "fleet: {option} {v:?} is not {}",
            if count {
                "a whole number"
            } else {
                "a rate (a number of requests per second)"
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn hosts(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("h{i}")).collect()
    }

    #[test]
    fn http_rate_connections_and_count_are_divided_with_the_remainder_spread() {
        let c = split(
            &w("http -R 50000 -c7 --requests=10 -d 60s http://x/"),
            &hosts(3),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c[0], w("http -c 3 -R 16667 -n 4 -d 60s http://x/"), "{c:?}");
        assert_eq!(c[1], w("http -c 2 -R 16667 -n 3 -d 60s http://x/"));
        assert_eq!(c[2], w("http -c 2 -R 16666 -n 3 -d 60s http://x/"));
        // -c's default (10) is a total too; a fractional rate is shared equally.
        let c = split(&w("http --rate 2.5 http://x/"), &hosts(2))
            .unwrap()
            .unwrap();
        assert_eq!(c[0], w("http -c 5 -R 1.25 http://x/"));
    }

    #[test]
    fn a_host_given_nothing_is_a_usage_error_naming_the_option() {
        let e = split(&w("http -c 2 http://x/"), &hosts(3)).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("-c 2 over 3 hosts leaves h3"), "{e}");
        let e = split(&w("ab -n 100 http://x/"), &hosts(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("-c (default) 1 over 2 hosts"), "{e}");
        assert!(split(&w("http -kc8 http://x/"), &hosts(2)).is_err());
    }

    #[test]
    fn ab_and_httperf_read_their_own_clusters_and_prefixes() {
        let c = split(&w("ab -kc5 -n 11 http://x/"), &hosts(2))
            .unwrap()
            .unwrap();
        assert_eq!(c[0], w("ab -n 6 -c 3 -k -- http://x/"));
        assert_eq!(c[1], w("ab -n 5 -c 2 -k -- http://x/"));
        // -t without a later -n: each host keeps ab's own cap.
        let c = split(&w("ab -t 5 -c 4 http://x/"), &hosts(2))
            .unwrap()
            .unwrap();
        assert_eq!(c[0], w("ab -c 2 -t 5 -- http://x/"));
        let c = split(
            &w("httperf --server x --rate 101 --num-con 40 --hog"),
            &hosts(2),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c[0], w("httperf --rate=51 --num-conns=20 --server=x --hog"));
        assert_eq!(c[1][1], "--rate=50");
        assert!(split(&w("cpu run"), &hosts(2)).unwrap().is_none());
    }

    /// httperf's sessions and period are divided like its connections and rate: the
    /// sessions (`--wsess`'s first figure) with the remainder to the first hosts, calls and
    /// think time kept; each host's period n times as long (its share of the rate); the
    /// later of `--rate`/`--period` and of `--num-conns`/`--wsess` counts, as in httperf.
    #[test]
    fn httperf_sessions_and_period_are_divided() {
        let c = split(
            &w("httperf --server x --wsess=100,5,0.5 --period=e0.01"),
            &hosts(3),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            c[0],
            w("httperf --period=e0.03 --wsess=34,5,0.5 --server=x")
        );
        assert_eq!(
            c[1],
            w("httperf --period=e0.03 --wsess=33,5,0.5 --server=x")
        );
        assert_eq!(
            c[2],
            w("httperf --period=e0.03 --wsess=33,5,0.5 --server=x")
        );
        let c = split(&w("httperf --period=0.5 --num-conns 4"), &hosts(2))
            .unwrap()
            .unwrap();
        assert_eq!(c[0], w("httperf --period=1 --num-conns=2"));
        let c = split(
            &w("httperf --period=d0.5 --rate 10 --num-conns 4"),
            &hosts(2),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c[0], w("httperf --rate=5 --num-conns=2"));
        let e = split(&w("httperf --wsess=1,2,3"), &hosts(2)).unwrap_err();
        assert!(e.to_string().contains("--wsess 1 over 2 hosts"), "{e}");
        // What httperf itself refuses is left for it to say on each host.
        let c = split(&w("httperf --period=u1,2 --num-conns 2"), &hosts(2))
            .unwrap()
            .unwrap();
        assert!(c[0].contains(&"--period=u1,2".to_string()), "{c:?}");
        assert!(split(&w("cpu run"), &hosts(2)).unwrap().is_none());
    }
}
