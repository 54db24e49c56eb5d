//! HTTP/1.x response parsing in place, without allocation: [`parse_head`] reads a status
//! line and headers from a byte slice (the connection's read buffer) and says how the body is
//! delimited; [`Body`] then consumes body bytes as they arrive (Content-Length, chunked, or
//! until the server closes).
//!
//! Invariants: nothing here allocates or panics on any input (a fuzz target and a proptest
//! feed it random bytes); a head is only returned once it is complete, so a caller keeps the
//! unparsed bytes in its buffer and calls again with more.

/// Why a response could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// The status line is not `HTTP/1.x DDD ...`.
    StatusLine,
    /// A header line has no colon, or a value is malformed.
    Header,
    /// `Content-Length` is not a number (or appears twice with different values).
    Length,
    /// The head does not fit in the buffer.
    TooLarge,
    /// A chunk size line or the CRLF after chunk data is malformed.
    Chunk,
}

impl ParseError {
    /// One line for messages.
    pub fn describe(self) -> &'static str {
        match self {
            ParseError::StatusLine => "malformed status line",
            ParseError::Header => "malformed header line",
            ParseError::Length => "malformed Content-Length",
            ParseError::TooLarge => "response head larger than the read buffer",
            ParseError::Chunk => "malformed chunked body",
        }
    }
}

/// How the body of a response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// No body (HEAD, 1xx, 204, 304).
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// A parsed status line and headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Status code.
    pub status: u16,
    /// Bytes of the head, final blank line included.
    pub len: usize,
    /// How the body ends.
    pub body: BodyKind,
    /// The connection may carry another request after this response.
    pub keep_alive: bool,
    /// Offset and length of the `Server:` value within the head (empty when absent).
    pub server: (usize, usize),
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    // Headers end at CRLF CRLF (or, leniently, LF LF).
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if i + 1 < buf.len() && buf[i + 1] == b'\n' {
                return Some(i + 2);
            }
            if i + 2 < buf.len() && buf[i + 1] == b'\r' && buf[i + 2] == b'\n' {
                return Some(i + 3);
            }
        }
        i += 1;
    }
    None
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r'] = s {
        s = rest;
    }
    s
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    Some(v)
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&c| c == b',')
        .any(|t| trim(t).eq_ignore_ascii_case(token))
}

/// Parses the head at the start of `buf`. `Ok(None)`: incomplete, call again with more bytes.
/// `head_request`: the request was HEAD (no body whatever the headers say).
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    // Reject garbage early rather than waiting for a blank line that never comes.
    let probe = buf.len().min(5);
    if buf[..probe] != b"HTTP/"[..probe] {
        return Err(ParseError::StatusLine);
    }
    let Some(end) = find_head_end(buf) else {
        return Ok(None);
    };
    let head = &buf[..end];
    let mut lines = head.split(|&c| c == b'\n');
    let status_line = lines.next().ok_or(ParseError::StatusLine)?;
    let status_line = trim(status_line);
    // HTTP/1.x SP DDD [SP reason]
    if status_line.len() < 12 || &status_line[..7] != b"HTTP/1." || status_line[8] != b' ' {
        return Err(ParseError::StatusLine);
    }
    let minor = status_line[7];
    if !minor.is_ascii_digit() {
        return Err(ParseError::StatusLine);
    }
    let code = &status_line[9..12];
    if !code.iter().all(u8::is_ascii_digit) || (status_line.len() > 12 && status_line[12] != b' ') {
        return Err(ParseError::StatusLine);
    }
    let status = code.iter().fold(0u16, |a, &c| a * 10 + (c - b'0') as u16);
    if status < 100 {
        return Err(ParseError::StatusLine);
    }
    let mut keep_alive = minor >= b'1';
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut server = (0, 0);
    for line in lines {
        let l = trim(line);
        if l.is_empty() {
            continue;
        }
        let colon = l
            .iter()
            .position(|&c| c == b':')
            .ok_or(ParseError::Header)?;
        let name = &l[..colon];
        let value = trim(&l[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = parse_u64(value).ok_or(ParseError::Length)?;
            if length.is_some_and(|old| old != v) {
                return Err(ParseError::Length);
            }
            length = Some(v);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = contains_token(value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            if contains_token(value, b"close") {
                keep_alive = false;
            } else if contains_token(value, b"keep-alive") {
                keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case(b"server") {
            // `value` is a sub-slice of `head`.
            server = (
                value.as_ptr() as usize - head.as_ptr() as usize,
                value.len(),
            );
        }
    }
    if status == 101 {
        // Switching Protocols: what follows is no longer HTTP/1.x.
        keep_alive = false;
    }
    let body = if head_request || status < 200 || status == 204 || status == 304 {
        BodyKind::None
    } else if chunked {
        BodyKind::Chunked
    } else if let Some(n) = length {
        BodyKind::Length(n)
    } else {
        keep_alive = false;
        BodyKind::UntilClose
    };
    Ok(Some(Head {
        status,
        len: end,
        body,
        keep_alive,
        server,
    }))
}

impl Head {
    /// An interim response (1xx other than 101 Switching Protocols: 100 Continue, 102,
    /// 103 Early Hints): the final response to the same request follows it.
    pub fn interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// Progress through a body. `feed` consumes what belongs to this body and says when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Nothing left.
    Done,
    /// This many content bytes left.
    Length(u64),
    /// Until the connection closes.
    UntilClose,
    /// Inside a chunked body.
    Chunked(Chunk),
}

/// Where a chunked body decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// Reading the hex size (value so far, digits seen, inside an extension).
    Size(u64, u8, bool),
    /// Chunk data left.
    Data(u64),
    /// Expecting the CR LF after data (`true` once CR is seen).
    DataEnd(bool),
    /// In the trailer: bytes on the current line.
    Trailer(u32),
}

/// What one `feed` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fed {
    /// Bytes of `buf` consumed.
    pub used: usize,
    /// Of those, content (decoded body) bytes.
    pub content: u64,
    /// The body ended within `buf`.
    pub done: bool,
}

impl Body {
    /// The body that follows `head`.
    pub fn start(kind: BodyKind) -> Body {
        match kind {
            BodyKind::None | BodyKind::Length(0) => Body::Done,
            BodyKind::Length(n) => Body::Length(n),
            BodyKind::Chunked => Body::Chunked(Chunk::Size(0, 0, false)),
            BodyKind::UntilClose => Body::UntilClose,
        }
    }

    /// Consumes body bytes from `buf`.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Fed, ParseError> {
        match self {
            Body::Done => Ok(Fed {
                done: true,
                ..Fed::default()
            }),
            Body::Length(left) => {
                let n = (*left).min(buf.len() as u64);
                *left -= n;
                let done = *left == 0;
                if done {
                    *self = Body::Done;
                }
                Ok(Fed {
                    used: n as usize,
                    content: n,
                    done,
                })
            }
            Body::UntilClose => Ok(Fed {
                used: buf.len(),
                content: buf.len() as u64,
                done: false,
            }),
            Body::Chunked(c) => {
                let mut fed = Fed::default();
                let mut i = 0;
                while i < buf.len() {
                    match c {
                        Chunk::Size(v, digits, ext) => {
                            let b = buf[i];
                            i += 1;
                            if b == b'\n' {
                                if *digits == 0 {
                                    return Err(ParseError::Chunk);
                                }
                                *c = if *v == 0 {
                                    Chunk::Trailer(0)
                                } else {
                                    Chunk::Data(*v)
                                };
                            } else if *ext || b == b'\r' {
                                // Extensions and the CR are skipped until LF.
                            } else if b == b';' || b == b' ' || b == b'\t' {
                                *ext = true;
                            } else {
                                let d = match b {
                                    b'0'..=b'9' => b - b'0',
                                    b'a'..=b'f' => b - b'a' + 10,
                                    b'A'..=b'F' => b - b'A' + 10,
                                    _ => return Err(ParseError::Chunk),
                                };
                                if *digits >= 15 {
                                    return Err(ParseError::Chunk);
                                }
                                *v = *v * 16 + d as u64;
                                *digits += 1;
                            }
                        }
                        Chunk::Data(left) => {
                            let n = (*left).min((buf.len() - i) as u64);
                            *left -= n;
                            i += n as usize;
                            fed.content += n;
                            if *left == 0 {
                                *c = Chunk::DataEnd(false);
                            }
                        }
                        Chunk::DataEnd(cr) => {
                            let b = buf[i];
                            i += 1;
                            match (b, *cr) {
                                (b'\r', false) => *c = Chunk::DataEnd(true),
                                (b'\n', _) => *c = Chunk::Size(0, 0, false),
                                _ => return Err(ParseError::Chunk),
                            }
                        }
                        Chunk::Trailer(n) => {
                            let b = buf[i];
                            i += 1;
                            if b == b'\n' {
                                if *n == 0 {
                                    fed.used = i;
                                    fed.done = true;
                                    *self = Body::Done;
                                    return Ok(fed);
                                }
                                *n = 0;
                            } else if b != b'\r' {
                                *n = n.saturating_add(1);
                            }
                        }
                    }
                }
                fed.used = i;
                Ok(fed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_response() {
        let r = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Length: 5\r\n\r\nhello";
        let h = parse_head(r, false).unwrap().unwrap();
        assert_eq!(h.status, 200);
        assert_eq!(h.body, BodyKind::Length(5));
        assert!(h.keep_alive);
        assert_eq!(&r[h.server.0..h.server.0 + h.server.1], b"nginx/1.22.1");
        let mut b = Body::start(h.body);
        let f = b.feed(&r[h.len..]).unwrap();
        assert_eq!((f.used, f.content, f.done), (5, 5, true));
    }

    #[test]
    fn incomplete_and_garbage() {
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nContent-", false), Ok(None));
        assert_eq!(parse_head(b"HTT", false), Ok(None));
        assert_eq!(
            parse_head(b"garbage\r\n\r\n", false),
            Err(ParseError::StatusLine)
        );
        assert_eq!(
            parse_head(b"HTTP/1.1 2x0 OK\r\n\r\n", false),
            Err(ParseError::StatusLine)
        );
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false),
            Err(ParseError::Length)
        );
    }

    #[test]
    fn http10_and_close() {
        let h = parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(!h.keep_alive);
        let h = parse_head(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(h.keep_alive);
        let h = parse_head(b"HTTP/1.1 200 OK\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(h.body, BodyKind::UntilClose);
        assert!(!h.keep_alive);
        let h = parse_head(b"HTTP/1.1 204 No Content\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(h.body, BodyKind::None);
    }

    #[test]
    fn interim_responses() {
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let h = parse_head(r, false).unwrap().unwrap();
        assert!(h.interim());
        assert_eq!((h.len, h.body), (25, BodyKind::None));
        let h = parse_head(&r[h.len..], false).unwrap().unwrap();
        assert!(!h.interim() && h.status == 200);
        let h = parse_head(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(h.interim());
        let h = parse_head(b"HTTP/1.1 101 Switching Protocols\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(!h.interim() && !h.keep_alive);
    }

    #[test]
    fn chunked_in_pieces() {
        let body =
            b"4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        for split in 0..body.len() {
            let mut b = Body::start(BodyKind::Chunked);
            let (a, c) = body.split_at(split);
            let f1 = b.feed(a).unwrap();
            let (content, used, done) = if f1.done {
                (f1.content, f1.used, true)
            } else {
                assert_eq!(f1.used, a.len());
                let f2 = b.feed(c).unwrap();
                (f1.content + f2.content, f1.used + f2.used, f2.done)
            };
            assert!(done, "split {split}");
            assert_eq!(content, 23, "split {split}");
            assert_eq!(used, body.len() - 4, "split {split}");
        }
    }

    #[test]
    fn bad_chunks() {
        let mut b = Body::start(BodyKind::Chunked);
        assert_eq!(b.feed(b"zz\r\n"), Err(ParseError::Chunk));
        let mut b = Body::start(BodyKind::Chunked);
        assert_eq!(b.feed(b"1\r\nab"), Err(ParseError::Chunk));
        let mut b = Body::start(BodyKind::Chunked);
        assert_eq!(b.feed(b"ffffffffffffffffff\r\n"), Err(ParseError::Chunk));
    }

    proptest::proptest! {
        /// Any bytes, split anywhere: parsing never panics, and a head never claims more
        /// bytes than it was given.
        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512),
            split in 0usize..512,
            head_req in proptest::bool::ANY,
        ) {
            if let Ok(Some(h)) = parse_head(&bytes, head_req) {
                proptest::prop_assert!(h.len <= bytes.len());
                let (o, l) = h.server;
                proptest::prop_assert!(o + l <= h.len);
            }
            for kind in [BodyKind::Chunked, BodyKind::Length(100), BodyKind::UntilClose] {
                let mut b = Body::start(kind);
                let cut = split.min(bytes.len());
                if let Ok(f) = b.feed(&bytes[..cut]) {
                    proptest::prop_assert!(f.used <= cut);
                    proptest::prop_assert!(f.content <= f.used as u64);
                    if !f.done {
                        let _ = b.feed(&bytes[cut..]);
                    }
                }
            }
        }

        /// Valid responses with random framing parse to the body they carry.
        #[test]
        fn chunked_round_trip(chunks in proptest::collection::vec(1usize..300, 0..8)) {
            let mut wire = Vec::new();
            let mut total = 0u64;
            for n in &chunks {
                wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                wire.extend(std::iter::repeat_n(b'z', *n));
                wire.extend_from_slice(b"\r\n");
                total += *n as u64;
            }
            wire.extend_from_slice(b"0\r\n\r\n");
            let mut b = Body::start(BodyKind::Chunked);
            let f = b.feed(&wire).unwrap();
            proptest::prop_assert!(f.done);
            proptest::prop_assert_eq!(f.used, wire.len());
            proptest::prop_assert_eq!(f.content, total);
        }
    }
}
