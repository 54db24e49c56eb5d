//! Target URLs and the request bytes sent to them, built once per run.

use hostbench_core::workload::WorkloadError;
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed `http://host[:port]/path` or `https://...` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `https://`: the connection is TLS.
    pub tls: bool,
    /// Host as written (name or address; IPv6 without brackets).
    pub host: String,
    /// Port (80 by default, 443 for https).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl Url {
    /// Parses `text`; the error says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<Url, WorkloadError> {
        let t = text.trim();
        let (rest, tls) = if let Some(r) = t.strip_prefix("http://") {
            (r, false)
        } else if let Some(r) = t.strip_prefix("https://") {
            (r, true)
        } else if t.contains("://") {
            return Err(WorkloadError::usage(format!(
                "'{text}': only http:// and https:// URLs are supported (e.g. \
                 http://127.0.0.1:8080/)"
            )));
        } else {
            return Err(WorkloadError::usage(format!(
                "'{text}' is not a URL: write it as http://HOST[:PORT]/PATH, e.g. \
                 http://127.0.0.1:8080/"
            )));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.contains('@') {
            return Err(WorkloadError::usage(format!(
                "'{text}': user:password@ in the URL is not supported; send an Authorization \
                 header instead"
            )));
        }
        let (host, port) = if let Some(h) = authority.strip_prefix('[') {
            let close = h.find(']').ok_or_else(|| {
                WorkloadError::usage(format!("'{text}': the IPv6 address has no closing ']'"))
            })?;
            let port = match &h[close + 1..] {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| {
                    WorkloadError::usage(format!("'{text}': expected ':PORT' after ']'"))
                })?),
            };
            (h[..close].to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(WorkloadError::usage(format!(
                "'{text}' has no host (e.g. http://127.0.0.1:8080/)"
            )));
        }
        if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(WorkloadError::usage(format!(
                "'{text}': the host contains spaces or control characters"
            )));
        }
        let port = match port {
            None if tls => 443,
            None => 80,
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => {
                    return Err(WorkloadError::usage(format!(
                        "'{text}': port '{p}' is not a number from 1 to 65535"
                    )));
                }
            },
        };
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(WorkloadError::usage(format!(
                "'{text}': the path contains spaces or control characters (percent-encode them)"
            )));
        }
        Ok(Url {
            tls,
            host,
            port,
            path,
        })
    }

    /// The first address the host resolves to.
    pub fn resolve(&self) -> Result<SocketAddr, WorkloadError> {
        self.resolve_like(None)
    }

    /// The first address the host resolves to in the family of `local` (a bind address),
    /// or the first of any family without one.
    pub fn resolve_like(&self, local: Option<&SocketAddr>) -> Result<SocketAddr, WorkloadError> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| {
                WorkloadError::environment(format!("cannot resolve host '{}': {e}", self.host))
            })?;
        let mut any = false;
        for a in addrs {
            any = true;
            if local.is_none_or(|l| l.is_ipv4() == a.is_ipv4()) {
                return Ok(a);
            }
        }
        match local {
            Some(l) if any => Err(WorkloadError::environment(format!(
                "host '{}' has no IPv{} address to reach from the local address {}; bind an \
                 address of the target's family",
                self.host,
                if l.is_ipv4() { 4 } else { 6 },
                l.ip()
            ))),
            _ => Err(WorkloadError::environment(format!(
                "host '{}' has no address",
                self.host
            ))),
        }
    }

    /// The absolute form of the URL (`http://host[:port]/path`), as a request line through a
    /// proxy carries it.
    pub fn absolute(&self) -> String {
        format!(
            "{}://{}{}",
            if self.tls { "https" } else { "http" },
            self.host_header(),
            self.path
        )
    }

    /// `Host:` header value.
    pub fn host_header(&self) -> String {
        let h = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            h
        } else {
            format!("{h}:{}", self.port)
        }
    }
}

/// What goes into every request.
#[derive(Debug, Clone)]
pub struct RequestSpec<'a> {
    /// Method (GET, POST, HEAD, ...).
    pub method: &'a str,
    /// Target.
    pub url: &'a Url,
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: &'a str,
    /// Extra header lines (`Name: value`), in order; they replace defaults of the same name.
    pub headers: &'a [String],
    /// Keep the connection open between requests.
    pub keep_alive: bool,
    /// Request body.
    pub body: &'a [u8],
    /// Content-Type of the body, if any.
    pub content_type: Option<&'a str>,
    /// User-Agent (None: none, as wrk).
    pub user_agent: Option<&'a str>,
    /// Send `Accept: */*` (as ab).
    pub accept: bool,
    /// The request goes to a proxy: the request line carries the absolute URL.
    pub via_proxy: bool,
}

/// Parses a proxy given as `HOST:PORT` (`[v6]:PORT`; an `http://` prefix and a trailing `/`
/// are accepted) into a URL whose host and port are the proxy's.
pub fn parse_proxy(text: &str) -> Result<Url, WorkloadError> {
    let t = text.trim();
    let bare = t.strip_prefix("http://").unwrap_or(t).trim_end_matches('/');
    let how = "give it as HOST:PORT, e.g. 127.0.0.1:3128";
    if bare.is_empty() || bare.contains(['/', '@']) || t.starts_with("https://") {
        return Err(WorkloadError::usage(format!(
            "proxy '{text}': {how} (an http:// proxy)"
        )));
    }
    let has_port = match bare.strip_prefix('[') {
        Some(v6) => v6.split_once(']').is_some_and(|(_, p)| p.starts_with(':')),
        None => bare.contains(':'),
    };
    if !has_port {
        return Err(WorkloadError::usage(format!(
            "proxy '{text}' has no port: {how}"
        )));
    }
    Url::parse(&format!("http://{bare}/"))
        .map_err(|e| WorkloadError::usage(format!("proxy {e}; {how}")))
}

/// A header given on a command line (`-H`, `-C`, `--add-header`) is one line, `Name:
/// value`: a CR or LF in it would end that line early and smuggle in another header (or a
/// request). Every grammar checks each one before the run. The error quotes nothing of the
/// header (it may hold a credential): the caller names the option and its position.
pub fn check_header_arg(h: &str) -> Result<(), WorkloadError> {
    if h.contains(['\r', '\n']) {
        return Err(WorkloadError::usage(
            "contains a CR or LF; give each header as one line 'Name: value' \
                    (repeat the option for several)",
        ));
    }
    Ok(())
}

/// True for the characters of an HTTP token (RFC 9110 5.6.2), what a header name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Checks one header line `Name: value` ([`check_header_arg`] too): a colon, and before it
/// a name that is an HTTP token, right before the colon. A blank there
/// (`Authorization : ...`) is refused: RFC 9112 5.1 has servers reject such a line, and
/// proxies that do not may read it as another header. Blanks before the name are dropped
/// when the request is built. The error quotes nothing of the header (with no colon, the
/// whole text may be a credential): the caller names the option and its position.
pub fn check_header_line(h: &str) -> Result<(), WorkloadError> {
    check_header_arg(h)?;
    let expected = "write it as 'Name: value', e.g. 'Accept: text/html'";
    let Some((name, _)) = h.trim_start().split_once(':') else {
        return Err(WorkloadError::usage(format!("has no colon: {expected}")));
    };
    if name.is_empty() {
        return Err(WorkloadError::usage(format!(
            "has no name before its colon: {expected}"
        )));
    }
    if name.ends_with([' ', '\t']) {
        return Err(WorkloadError::usage(
            "has a blank before its colon, which HTTP forbids (RFC 9112 5.1: servers \
                    reject it): write it as 'Name: value', the colon right after the name",
        ));
    }
    if !name.bytes().all(is_tchar) {
        return Err(WorkloadError::usage(format!(
            "has a name that is not an HTTP token (letters, digits and \
             !#$%&'*+-.^_`|~ only): {expected}"
        )));
    }
    Ok(())
}

/// The request bytes, built once. A method that is not a token or a bad header line is a
/// usage error.
pub fn build_request(s: &RequestSpec<'_>) -> Result<Vec<u8>, WorkloadError> {
    let method = s.method.trim();
    if method.is_empty()
        || !method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(WorkloadError::usage(format!(
            "method '{}' is not a token (e.g. GET, POST, HEAD)",
            s.method
        )));
    }
    let has = |name: &str| {
        s.headers.iter().any(|h| {
            h.split_once(':')
                .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        })
    };
    for (i, h) in s.headers.iter().enumerate() {
        check_header_line(h).map_err(|e| {
            e.map_message(|m| format!("the headers parameter's line {} {m}", i + 1))
        })?;
    }
    let mut r = if s.via_proxy {
        format!("{method} {} {}\r\n", s.url.absolute(), s.version)
    } else {
        format!("{method} {} {}\r\n", s.url.path, s.version)
    };
    if !has("host") {
        r.push_str(&format!("Host: {}\r\n", s.url.host_header()));
    }
    if let Some(agent) = s.user_agent
        && !has("user-agent")
    {
        r.push_str(&format!("User-Agent: {agent}\r\n"));
    }
    if s.accept && !has("accept") {
        r.push_str("Accept: */*\r\n");
    }
    if !has("connection") {
        match (s.keep_alive, s.version == "HTTP/1.0") {
            (true, true) => r.push_str("Connection: Keep-Alive\r\n"),
            (false, false) => r.push_str("Connection: close\r\n"),
            _ => {}
        }
    }
    if let Some(ct) = s.content_type
        && !has("content-type")
    {
        r.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if (!s.body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH")) && !has("content-length")
    {
        r.push_str(&format!("Content-Length: {}\r\n", s.body.len()));
    }
    for h in s.headers {
        r.push_str(h.trim());
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(s.body);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::workload::ErrorKind;

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:8080/4k.txt?x=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/4k.txt?x=1")
        );
        let u = Url::parse("http://example.com").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
        let u = Url::parse("http://[::1]:81/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 81));
        assert_eq!(u.host_header(), "[::1]:81");
        let u = Url::parse("https://example.com/x").unwrap();
        assert!(u.tls);
        assert_eq!((u.port, u.host_header()), (443, "example.com".to_string()));
        assert_eq!(
            Url::parse("https://h:8443/").unwrap().host_header(),
            "h:8443"
        );
        for bad in [
            "127.0.0.1:8080/",
            "ftp://x/",
            "https://",
            "http://:80/",
            "http://h:0/",
            "http://h:99999/",
            "http://h:x/",
            "http://h/a b",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    /// A GET of `u` with ab's headers (User-Agent "hostbench", Accept), keep-alive, HTTP/1.1.
    fn spec<'a>(u: &'a Url, headers: &'a [String]) -> RequestSpec<'a> {
        RequestSpec {
            method: "GET",
            url: u,
            version: "HTTP/1.1",
            headers,
            keep_alive: true,
            body: b"",
            content_type: None,
            user_agent: Some("hostbench"),
            accept: true,
            via_proxy: false,
        }
    }

    #[test]
    fn request_bytes() {
        let u = Url::parse("http://h:81/p").unwrap();
        let r = build_request(&spec(&u, &["X-A: 1".into()])).unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "GET /p HTTP/1.1\r\nHost: h:81\r\nUser-Agent: hostbench\r\nAccept: */*\r\nX-A: 1\r\n\r\n"
        );
        // Without the agent headers: wrk's request, Host only.
        let r = build_request(&RequestSpec {
            user_agent: None,
            accept: false,
            ..spec(&u, &[])
        })
        .unwrap();
        assert_eq!(r, b"GET /p HTTP/1.1\r\nHost: h:81\r\n\r\n");
        assert!(
            build_request(&RequestSpec {
                method: "G T",
                ..spec(&u, &[])
            })
            .is_err()
        );
        // Through a proxy: the absolute URL on the request line, the origin in Host.
        let auth = ["Proxy-Authorization: Basic dTpw".to_string()];
        let r = build_request(&RequestSpec {
            version: "HTTP/1.0",
            keep_alive: false,
            via_proxy: true,
            ..spec(&u, &auth)
        })
        .unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "GET http://h:81/p HTTP/1.0\r\nHost: h:81\r\nUser-Agent: hostbench\r\n\
             Accept: */*\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
        );
    }

    #[test]
    fn proxies() {
        let p = parse_proxy("127.0.0.1:3128").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("127.0.0.1", 3128));
        let p = parse_proxy("http://proxy.example:8080/").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("proxy.example", 8080));
        let p = parse_proxy("[::1]:3128").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("::1", 3128));
        for bad in [
            "",
            "proxy",
            "[::1]",
            "proxy:0",
            "proxy:x",
            "https://proxy:443",
            "u:p@proxy:1",
            "proxy:1/x",
        ] {
            assert!(parse_proxy(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_in_the_bind_family() {
        let u = Url::parse("http://127.0.0.1:80/").unwrap();
        let v4: SocketAddr = "127.0.0.2:0".parse().unwrap();
        let v6: SocketAddr = "[::1]:0".parse().unwrap();
        assert!(u.resolve_like(Some(&v4)).unwrap().is_ipv4());
        let e = u.resolve_like(Some(&v6)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Environment, "{e}");
        let e = e.message;
        assert!(e.contains("no IPv6 address"), "{e}");
    }

    #[test]
    fn header_lines_are_checked_without_echo() {
        for ok in [
            "Accept: */*",
            "X-A:1",
            "  X-B: a b",
            "Authorization: Basic dTpw",
            "E:",
        ] {
            assert_eq!(check_header_line(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("TOKEN123", "no colon"),
            ("Authorization Bearer TOKEN123", "no colon"),
            (": TOKEN123", "no name"),
            ("Authorization : Basic TOKEN123", "blank before"),
            ("Authorization\t: Basic TOKEN123", "blank before"),
            ("Bearer TOKEN123: x", "not an HTTP token"),
            ("X-A: 1\r\nX-B: TOKEN123", "CR or LF"),
        ] {
            let e = check_header_line(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Usage, "{e}");
            let e = e.message;
            assert!(e.contains(why), "{bad}: {e}");
            assert!(
                !e.contains("TOKEN123") && !e.contains("Authorization"),
                "{e}"
            );
        }
        let u = Url::parse("http://h/").unwrap();
        let e = build_request(&spec(&u, &["X: 1".into(), "Y : TOKEN123".into()])).unwrap_err();
        assert_eq!(e.kind, hostbench_core::error::ErrorKind::Usage);
        let e = e.to_string();
        assert!(e.contains("line 2") && !e.contains("TOKEN123"), "{e}");
    }
}
