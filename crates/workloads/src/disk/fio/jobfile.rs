//! fio's job-file text: `[section]` starts a job, `[global]` sets defaults for the jobs
//! *below* it (several globals are allowed), `;` and `#` start a comment anywhere on a line
//! (so a value never holds one, as in fio), `key=value` or a bare `key` (a flag), `${VAR}`
//! expands from the environment (empty when unset). The command line is the same grammar:
//! `--name=x` starts a job, options before the first `--name` (or after `--name=global`)
//! are global.
//!
//! The canonical text ([`to_text`]) is the job file written back in section order; it is
//! what the `disk.fio` workload keeps as its `jobs` parameter, so a result records every
//! option as given. What the options mean is [`super::job`]'s.

use super::job::{JobError, err};

/// One `[section]` of a job file (or one `--name=` group of a command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Section name (`global` for defaults).
    pub name: String,
    /// Options in the order given; a flag has an empty value.
    pub opts: Vec<(String, String)>,
    /// Where the section came from (`jobs.fio:3`, `command line`), for error messages.
    pub origin: String,
    /// Where each option came from (`jobs.fio:12`), when known; else `origin`.
    pub opt_at: Vec<String>,
}

impl Section {
    /// True for `[global]`.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Parses job-file `text` (named `origin` in messages); `env` looks up `${VAR}`.
pub fn parse_ini(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, JobError> {
    let mut out: Vec<Section> = Vec::new();
    // `${VAR}` expansion may grow the text; the expanded job stays within the file limit.
    let mut budget = usize::try_from(hostbench_core::input::JOB_FILE_MAX).unwrap_or(usize::MAX);
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{origin}:{}", i + 1);
        // fio cuts a line at its first `;` or `#` wherever it is (a comment after a value
        // or a section header), before anything else reads the line.
        let line = raw.find([';', '#']).map_or(raw, |c| &raw[..c]).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return err(format!(
                    "{at}: a section header must look like [name], not '{line}'"
                ));
            };
            let name = name.trim();
            if name.is_empty() || name.chars().any(|c| c.is_control() || c == '[' || c == ']') {
                return err(format!("{at}: '{line}' is not a valid section name"));
            }
            out.push(Section {
                name: name.to_string(),
                opts: Vec::new(),
                origin: at,
                opt_at: Vec::new(),
            });
            continue;
        }
        let line = expand_env(line, env, &at, budget)?;
        budget -= line.len().min(budget);
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (line.trim().to_string(), String::new()),
        };
        if k.is_empty() {
            return err(format!("{at}: '{raw}' has no option name before '='"));
        }
        if k == "include" || k.starts_with("include ") {
            return err(format!(
                "{at}: 'include' is not supported; list the files on the command line instead"
            ));
        }
        if k.contains(char::is_whitespace) {
            return err(format!(
                "{at}: '{k}' is not an option line; write key=value (or a bare flag)"
            ));
        }
        let Some(sec) = out.last_mut() else {
            return err(format!(
                "{at}: option '{k}' comes before any [section]; start the file with [global] or [jobname]"
            ));
        };
        sec.opts.push((k, v));
        sec.opt_at.push(at);
    }
    Ok(out)
}

/// `line` with `${VAR}` and `$VAR` replaced; an error if the result would pass `budget`
/// bytes (what is left of the job file limit), checked before each value is appended.
fn expand_env(
    line: &str,
    env: &dyn Fn(&str) -> Option<String>,
    at: &str,
    budget: usize,
) -> Result<String, JobError> {
    let too_big = || {
        err(format!(
            "{at}: the job file grows past {} with its ${{VAR}} values expanded; use smaller \
             values or fewer references",
            hostbench_core::input::human_bytes(hostbench_core::input::JOB_FILE_MAX)
        ))
    };
    if !line.contains('$') {
        if line.len() > budget {
            return too_big();
        }
        return Ok(line.to_string());
    }
    let mut out = String::with_capacity(line.len().min(budget));
    let mut rest = line;
    let fits = |out: &String, more: usize| out.len().saturating_add(more) <= budget;
    while let Some(p) = rest.find('$') {
        if !fits(&out, p) {
            return too_big();
        }
        out.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return err(format!("{at}: '${{' without a closing '}}' in '{line}'"));
            };
            let name = &body[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return err(format!(
                    "{at}: '${{{name}}}' is not an environment variable name"
                ));
            }
            let v = env(name).unwrap_or_default();
            if !fits(&out, v.len()) {
                return too_big();
            }
            out.push_str(&v);
            rest = &body[end + 1..];
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                out.push('$');
            } else if matches!(name, "pagesize" | "mb_memory" | "ncpus") {
                return err(format!(
                    "{at}: fio's '${name}' keyword is not supported; write the number"
                ));
            } else {
                let v = env(name).unwrap_or_default();
                if !fits(&out, v.len()) {
                    return too_big();
                }
                out.push_str(&v);
            }
            rest = &after[end..];
        }
    }
    if !fits(&out, rest.len()) {
        return too_big();
    }
    out.push_str(rest);
    Ok(out)
}

/// The canonical job text: sections in order, one `key=value` (or bare flag) per line.
pub fn to_text(sections: &[Section]) -> String {
    let mut s = String::new();
    for sec in sections {
        s.push('[');
        s.push_str(&sec.name);
        s.push_str("]\n");
        for (k, v) in &sec.opts {
            s.push_str(k);
            if !v.is_empty() {
                s.push('=');
                s.push_str(v);
            }
            s.push('\n');
        }
    }
    s
}

/// Reads canonical text back (no environment expansion: it was expanded when first parsed).
/// A single line of fio's command-line form (`--name=a --rw=read --size=1m`, no spaces
/// inside values) is accepted too, for the native grammar's `--set jobs=...`.
pub fn from_text(text: &str) -> Result<Vec<Section>, JobError> {
    if !text.contains('\n') && text.trim_start().starts_with("--") {
        return from_args(text);
    }
    let mut out: Vec<Section> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.push(Section {
                name: name.to_string(),
                opts: Vec::new(),
                origin: format!("jobs:{}", i + 1),
                opt_at: Vec::new(),
            });
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        match out.last_mut() {
            Some(sec) => sec.opts.push((k.to_string(), v.to_string())),
            None => return err(format!("jobs:{}: option '{k}' before any section", i + 1)),
        }
    }
    Ok(out)
}

fn from_args(line: &str) -> Result<Vec<Section>, JobError> {
    let mut out: Vec<Section> = Vec::new();
    for a in line.split_whitespace() {
        let Some(body) = a.strip_prefix("--") else {
            return err(format!("jobs: '{a}' is not --option=value"));
        };
        let (k, v) = body.split_once('=').unwrap_or((body, ""));
        if k == "name" {
            out.push(Section {
                name: v.to_string(),
                opts: Vec::new(),
                origin: "jobs".into(),
                opt_at: Vec::new(),
            });
            continue;
        }
        if out.is_empty() {
            out.push(Section {
                name: "global".into(),
                opts: Vec::new(),
                origin: "jobs".into(),
                opt_at: Vec::new(),
            });
        }
        if let Some(sec) = out.last_mut() {
            sec.opts.push((k.to_string(), v.to_string()));
        }
    }
    Ok(out)
}
