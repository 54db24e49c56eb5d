//! Feeds arbitrary bytes to the HTTP response parser the way the engine does: a head, then
//! the body in two pieces split at the first byte's value. Must never panic.
#![no_main]

use hostbench_workloads::http::parse::{Body, BodyKind, parse_head};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let head_request = data.first().is_some_and(|b| b & 1 == 1);
    let (kind, rest) = match parse_head(data, head_request) {
        Ok(Some(h)) => (h.body, &data[h.len..]),
        _ => (BodyKind::Chunked, data),
    };
    let split = data.first().map_or(0, |b| *b as usize).min(rest.len());
    let mut body = Body::start(kind);
    if let Ok(f) = body.feed(&rest[..split])
        && !f.done
    {
        let _ = body.feed(&rest[split..]);
    }
});
