//! `hostbench serve`: runs the built-in HTTP target server (see
//! `hostbench_workloads::http::server`) until Ctrl-C or `--duration`. The first line on
//! stdout is the URL it listens on (port 0 picks a free port), so scripts and tests can read
//! it; what it served goes to stderr at the end.

use anyhow::{Context, Result, bail};
use clap::Args;
use hostbench_core::units::{parse_seconds, parse_size};
use hostbench_workloads::http::server::{ServeConfig, Server};
use hostbench_workloads::http::tls;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A small, fast HTTP/1.1 target server for load tests and demos: fixed body size, status
/// code, optional delay, Content-Length or chunked bodies, keep-alive.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Port to listen on (0 = any free port; the URL is printed).
    #[arg(short, long, default_value_t = 8080)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Event-loop threads.
    #[arg(short, long, default_value_t = 1)]
    threads: usize,
    /// Body size of every response (4096, 4K, 1M; powers of 1024).
    #[arg(short = 's', long = "body-size", default_value = "4K", value_parser = size)]
    body_size: u64,
    /// Hold every response this long (e.g. 10ms).
    #[arg(long, default_value = "0", value_parser = seconds)]
    delay: f64,
    /// Status code of every response.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(100..=599))]
    status: u16,
    /// Send bodies with Transfer-Encoding: chunked (4 KiB chunks).
    #[arg(long)]
    chunked: bool,
    /// Close the connection after every response.
    #[arg(long)]
    no_keepalive: bool,
    /// Serve HTTPS (TLS 1.2 and 1.3) with a self-signed certificate made at start (for
    /// localhost, 127.0.0.1, ::1), or the one given with --cert/--key.
    #[arg(long)]
    tls: bool,
    /// PEM certificate chain for --tls.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<String>,
    /// PEM private key for --tls.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<String>,
    /// Close a connection that completes no request for this long (silent, a head sent a
    /// byte at a time, kept alive and unused); 0 = never.
    #[arg(long, default_value = "60s", value_parser = seconds)]
    idle_timeout: f64,
    /// Stop after this long (0 = until Ctrl-C).
    #[arg(short, long, default_value = "0", value_parser = seconds)]
    duration: f64,
}

fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s).map_err(|e| e.to_string())
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// Runs `hostbench serve ...`.
pub fn run(a: ServeArgs) -> Result<ExitCode> {
    if a.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if a.body_size > 1 << 30 {
        bail!("--body-size must be at most 1G (every response is built once, in memory)");
    }
    let tls = if a.tls || a.cert.is_some() {
        let id = match (&a.cert, &a.key) {
            (Some(c), Some(k)) => tls::load_pem(c, k).map_err(anyhow::Error::msg)?,
            _ => tls::self_signed(&[]).map_err(anyhow::Error::msg)?.0,
        };
        Some(tls::server_config(id).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let cfg = ServeConfig {
        tls,
        body_size: a.body_size as usize,
        delay: Duration::from_secs_f64(a.delay),
        status: a.status,
        chunked: a.chunked,
        keep_alive: !a.no_keepalive,
        threads: a.threads,
        idle_timeout: Duration::from_secs_f64(a.idle_timeout),
    };
    let addr = SocketAddr::new(a.bind, a.port);
    let server = Server::start(addr, cfg)
        .with_context(|| format!("cannot listen on {addr} (is the port in use? try --port 0)"))?;
    let url = match server.addr() {
        SocketAddr::V6(v6) => format!("{scheme}://[{}]:{}/", v6.ip(), v6.port()),
        v4 => format!("{scheme}://{v4}/"),
    };
    crate::exec::out(&format!("hostbench serve: listening on {url}\n"));
    let t0 = Instant::now();
    // Ctrl-C is the normal way to stop a server: exit 0.
    loop {
        if hostbench_core::runner::INTERRUPT.load(Ordering::Relaxed) {
            break;
        }
        if a.duration > 0.0 && t0.elapsed().as_secs_f64() >= a.duration {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let n = server.stop();
    eprintln!(
        "hostbench serve: {n} request(s) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
