//! Where the results store is: an SQLite file or a PostgreSQL URL, chosen by (first wins)
//! `--results-db`, `HOSTBENCH_RESULTS_DB`, `$XDG_DATA_HOME/hostbench/results.db`,
//! `~/.local/share/hostbench/results.db`. Resolving a location never touches the disk.

use crate::StoreError;
use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable that chooses the store when `--results-db` is not given.
pub const ENV_RESULTS_DB: &str = "HOSTBENCH_RESULTS_DB";
/// Environment variable that turns saving off (like `--no-save`) when set to anything but
/// an empty string or `0`.
pub const ENV_NO_SAVE: &str = "HOSTBENCH_NO_SAVE";
/// PostgreSQL schema the tables live in unless the URL says `?schema=NAME`.
pub const DEFAULT_PG_SCHEMA: &str = "hostbench";

/// A results store's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database; the tables live in `schema`.
    Postgres {
        /// Connection URL as given, without hostbench's own `schema` parameter.
        url: String,
        /// Schema holding the tables (`hostbench` by default).
        schema: String,
    },
}

impl Location {
    /// Parses a `--results-db` value: a `postgres://` or `postgresql://` URL (optionally with
    /// `?schema=NAME`), otherwise a file path.
    pub fn parse(s: &str) -> Result<Location, StoreError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(StoreError::BadLocation(
                "the results store location is empty: give a file path or a postgres:// URL".into(),
            ));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            let (url, schema) = split_schema(s)?;
            return Ok(Location::Postgres { url, schema });
        }
        if let Some((scheme, _)) = s.split_once("://") {
            return Err(StoreError::BadLocation(format!(
                "'{scheme}://' is not a results store: use a file path (SQLite) or a postgres:// URL"
            )));
        }
        Ok(Location::Sqlite(PathBuf::from(s)))
    }

    /// The store to use: `explicit` (`--results-db`), else `HOSTBENCH_RESULTS_DB`, else the
    /// default file under the XDG data directory.
    pub fn resolve(explicit: Option<&str>) -> Result<Location, StoreError> {
        let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
        Location::resolve_from(
            explicit,
            env(ENV_RESULTS_DB).as_deref(),
            env("XDG_DATA_HOME").as_deref(),
            env("HOME").as_deref(),
        )
    }

    /// [`Location::resolve`] with the environment passed in (for tests).
    pub fn resolve_from(
        explicit: Option<&str>,
        env_db: Option<&str>,
        xdg_data_home: Option<&str>,
        home: Option<&str>,
    ) -> Result<Location, StoreError> {
        if let Some(e) = explicit {
            return Location::parse(e);
        }
        if let Some(e) = env_db.filter(|e| !e.trim().is_empty()) {
            return Location::parse(e);
        }
        Ok(Location::Sqlite(default_path(xdg_data_home, home)?))
    }
}

/// Whether `path` is the default store's file (whose directories hostbench makes); for a
/// path the user named, at most the file's own directory is made.
pub fn is_default_path(path: &Path) -> bool {
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    default_path(env("XDG_DATA_HOME").as_deref(), env("HOME").as_deref()).is_ok_and(|d| d == path)
}

/// `$XDG_DATA_HOME/hostbench/results.db`, or `$HOME/.local/share/hostbench/results.db`. The
/// XDG spec says a relative `XDG_DATA_HOME` is invalid and must be ignored.
fn default_path(xdg_data_home: Option<&str>, home: Option<&str>) -> Result<PathBuf, StoreError> {
    let base = match xdg_data_home.filter(|x| Path::new(x).is_absolute()) {
        Some(x) => PathBuf::from(x),
        None => match home.filter(|h| !h.is_empty()) {
            Some(h) => Path::new(h).join(".local").join("share"),
            None => return Err(StoreError::NoLocation),
        },
    };
    Ok(base.join("hostbench").join("results.db"))
}

/// Splits hostbench's `schema=NAME` query parameter off a PostgreSQL URL (the driver would
/// reject it) and checks the name is a plain identifier.
fn split_schema(url: &str) -> Result<(String, String), StoreError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), DEFAULT_PG_SCHEMA.to_string()));
    };
    let mut schema = DEFAULT_PG_SCHEMA.to_string();
    let mut rest = Vec::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        match kv.strip_prefix("schema=") {
            Some(s) => schema = s.to_string(),
            None => rest.push(kv),
        }
    }
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && schema.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(StoreError::BadLocation(format!(
            "schema '{schema}' in the results store URL: use lower-case letters, digits and _ \
             (at most 63, not starting with a digit)"
        )));
    }
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, schema))
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres { url, schema } => {
                write!(f, "{}", hostbench_core::secret::mask(url))?;
                if schema != DEFAULT_PG_SCHEMA {
                    write!(
                        f,
                        "{}schema={schema}",
                        if url.contains('?') { '&' } else { '?' }
                    )?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_explicit_env_xdg_home() {
        let r = |e, env, x, h| Location::resolve_from(e, env, x, h).unwrap();
        assert_eq!(
            r(Some("/a.db"), Some("/b.db"), Some("/x"), Some("/h")),
            Location::Sqlite("/a.db".into())
        );
        assert_eq!(
            r(None, Some("/b.db"), Some("/x"), Some("/h")),
            Location::Sqlite("/b.db".into())
        );
        assert_eq!(
            r(None, Some(" "), Some("/x"), Some("/h")),
            Location::Sqlite("/x/hostbench/results.db".into())
        );
        assert_eq!(
            r(None, None, Some("relative"), Some("/h")),
            Location::Sqlite("/h/.local/share/hostbench/results.db".into())
        );
        assert!(matches!(
            Location::resolve_from(None, None, None, None),
            Err(StoreError::NoLocation)
        ));
    }

    #[test]
    fn postgres_urls_and_schema() {
        let l = Location::parse("postgres://u:secret@db:5432/bench?schema=team_a&sslmode=disable")
            .unwrap();
        assert_eq!(
            l,
            Location::Postgres {
                url: "postgres://u:secret@db:5432/bench?sslmode=disable".into(),
                schema: "team_a".into()
            }
        );
        let shown = l.to_string();
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(
            shown,
            "postgres://u:***@db:5432/bench?sslmode=disable&schema=team_a"
        );
        assert_eq!(
            Location::parse("postgresql://h/db").unwrap(),
            Location::Postgres {
                url: "postgresql://h/db".into(),
                schema: "hostbench".into()
            }
        );
        assert!(Location::parse("postgres://h/db?schema=Bad-Name").is_err());
        assert!(Location::parse("mysql://h/db").is_err());
        assert!(Location::parse("").is_err());
        assert_eq!(
            hostbench_core::secret::mask("postgres://h/db?user=u&password=pw"),
            "postgres://h/db?user=u&password=***"
        );
    }
}
