//! fio's client mode (`fio --client=HOST ... job.fio`) over the runs of a fleet: each
//! host's report as fio's client prints it (its start-up lines and the blank line before
//! its report prefixed with `<HOST> `), then the "All clients" block, every host's job
//! blocks added as fio's `client.c` adds them (see
//! [`hostbench_core::fio_result::FioBlock::all_clients`]); or the client-mode JSON
//! (`client_stats`).
//!
//! Differences from fio, on purpose: the prefix is the host's name as the fleet was given it
//! (fio uses the name the server's probe reports, which hosts of one image share); the
//! hosts' reports follow one another instead of interleaving their start-up lines as they
//! arrive; no `hostname=..., be=0, ...` probe line; the "All clients" block's `per=` is of
//! the hosts' summed group bandwidth (fio adds a host's group figures once per job, so with
//! several jobs a host its share is too small).

use super::{group_aggs, normal, unified_view};
use hostbench_core::fio_result::{FioBlock, FioDir, FioUnified};
use hostbench_core::layout::{FioFormat, FioLayout};
use hostbench_core::result::RunResult;

/// One host's run in a client-mode report.
#[derive(Debug, Clone, Copy)]
pub struct Client<'a> {
    /// The host's name (`<name>` in the normal layout, `hostname` in JSON).
    pub name: &'a str,
    /// Its port (JSON `port`; the ssh port for a fleet).
    pub port: u16,
    /// Its run of the job file.
    pub run: &'a RunResult,
}

/// The "All clients" block of `clients` and its aggregate bandwidth per direction (bytes/s:
/// the hosts' groups' aggregates added), when fio prints one: when the hosts' job blocks are
/// more than one in all. With `unified_rw_reporting=mixed` on the last block's job (fio
/// takes the summed statistics' setting from the last job it adds), every direction is
/// summed into one `mixed` direction in the reads' place, and the flag says so.
pub(super) fn all_clients(clients: &[Client]) -> Option<(FioBlock, [u64; 3], bool)> {
    let views: Vec<_> = clients
        .iter()
        .filter_map(|c| c.run.fio.as_ref().map(unified_view))
        .collect();
    let blocks: Vec<&FioBlock> = views.iter().flat_map(|v| v.blocks.iter()).collect();
    if blocks.len() < 2 {
        return None;
    }
    let mut agg = [0u64; 3];
    for v in &views {
        for g in group_aggs(v) {
            for (d, a) in agg.iter_mut().enumerate() {
                *a += g.agg(d);
            }
        }
    }
    let mixed = clients
        .iter()
        .rev()
        .find_map(|c| {
            let f = c.run.fio.as_ref()?;
            let b = f.blocks.last()?;
            Some(super::first_opts(f, b).unified_rw_reporting == FioUnified::Mixed)
        })
        .unwrap_or(false);
    let mut b = FioBlock::all_clients(&blocks)?;
    if mixed {
        b.read = FioDir::mixed(&[&b.read, &b.write, &b.trim]);
        b.write = FioDir::default();
        b.trim = FioDir::default();
        agg = [agg.iter().sum(), 0, 0];
    }
    Some((b, agg, mixed))
}

/// The client-mode report of `clients` in the formats `l` selects (normal and JSON; the
/// terse lines of each host without an aggregate, as fio has none).
pub fn render_clients(clients: &[Client], l: &FioLayout) -> String {
    let mut out = String::new();
    if l.has(FioFormat::Terse) {
        for c in clients {
            out.push_str(&super::terse::render(c.run, l.terse_version));
        }
    }
    if l.has(FioFormat::JsonPlus) {
        out.push_str(&super::json::render_clients(clients, true));
    } else if l.has(FioFormat::Json) {
        out.push_str(&super::json::render_clients(clients, false));
    }
    if l.has(FioFormat::Normal) {
        let version = super::version();
        for c in clients {
            let laid_out = super::layout_of(c.run).laid_out;
            for line in normal::banner(c.run, &laid_out).lines() {
                // fio's client prints no version line of the server's.
                if line != version {
                    out.push_str(&format!("<{}> {line}\n", c.name));
                }
            }
            out.push_str(&format!("<{}> ", c.name));
            out.push_str(&normal::render(c.run));
        }
        if let Some((b, agg, mixed)) = all_clients(clients) {
            let when = clients
                .iter()
                .map(|c| super::unix_of(&c.run.started_at))
                .fold(0.0, f64::max);
            out.push_str(&normal::all_clients(
                &b,
                agg,
                &super::ctime(when as i64),
                mixed,
            ));
        }
    }
    out
}
