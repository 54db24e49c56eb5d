//! fio's job-file text: `[section]` starts a job, `[global]` sets defaults for the jobs
//! *below* it (several globals are allowed), `;` and `#` start a comment anywhere on a line
//! (so a value never holds one, as in fio), `key=value` or a bare `key` (a flag), `${VAR}`
//! expands from the environment (empty when unset; a bare `$NAME` is kept as written, as in
//! fio, but for fio's keywords `$pagesize`, `$mb_memory`, `$ncpus`). The command line is the same grammar:
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
    /// True for the first section of every job file after the first: fio starts each
    /// further job file from its defaults, so the `[global]` options given before it (the
    /// command line's and the earlier files') do not reach its jobs.
    pub file_start: bool,
}

/// The line the canonical text puts before a [`Section::file_start`] section (a comment to
/// fio and to [`parse_ini`]; [`to_text`] writes no other line starting with `;`).
const FILE_START: &str = "; next job file: fio's defaults again";

impl Section {
    /// True for `[global]`.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Parses job-file `text` (named `origin` in messages, the path it was read from);
/// `env` looks up `${VAR}`. `include FILE` lines read FILE (relative to the current
/// directory first, then to the including file's directory, as fio does) for options of
/// the section they are in; fio's keywords `$pagesize`, `$mb_memory` and `$ncpus` are
/// replaced by this machine's values, and a value where one was replaced and that holds
/// `+ - * /` is evaluated as fio has `bc` do it (whole numbers: `iodepth=$ncpus+1`).
pub fn parse_ini(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, JobError> {
    let mut out: Vec<Section> = Vec::new();
    // `${VAR}` expansion and included files may grow the text; all of it stays within the
    // job file limit.
    let mut budget = usize::try_from(hostbench_core::input::JOB_FILE_MAX).unwrap_or(usize::MAX);
    parse_lines(text, origin, env, &mut out, &mut budget, 0)?;
    for sec in &mut out {
        directory_first(sec);
    }
    Ok(out)
}

/// fio sorts a job file section's options before it applies them (`lockfile` first,
/// `filename` and `filename_format` last, "after directory"), so a `directory` or
/// `lockfile` anywhere in the section holds for its `filename`; the command line applies
/// its options in the order given (`--filename=x --directory=d` is `./x`). The section's
/// `directory` and `lockfile` options are moved first (the others keep their order).
fn directory_first(sec: &mut Section) {
    let mut at = std::mem::take(&mut sec.opt_at);
    at.resize(sec.opts.len(), sec.origin.clone());
    let pairs: Vec<((String, String), String)> =
        std::mem::take(&mut sec.opts).into_iter().zip(at).collect();
    let (dirs, rest): (Vec<_>, Vec<_>) = pairs
        .into_iter()
        .partition(|((k, _), _)| k == "directory" || k == "lockfile");
    for ((k, v), a) in dirs.into_iter().chain(rest) {
        sec.opts.push((k, v));
        sec.opt_at.push(a);
    }
}

/// How deep `include`s may nest (a file that includes itself ends here).
const MAX_INCLUDE_DEPTH: u32 = 16;

/// The lines of one file into `out`; `depth` > 0 for an included file (options only).
fn parse_lines(
    text: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Section>,
    budget: &mut usize,
    depth: u32,
) -> Result<(), JobError> {
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{origin}:{}", i + 1);
        // fio cuts a line at its first `;` or `#` wherever it is (a comment after a value
        // or a section header), before anything else reads the line.
        let line = raw.find([';', '#']).map_or(raw, |c| &raw[..c]).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            if depth > 0 {
                return err(format!(
                    "{at}: '{line}': an included file holds options only, not [sections] \
                     (fio: \"No new sections in included files\"); move the section to the \
                     job file"
                ));
            }
            let Some(name) = rest.strip_suffix(']') else {
                return err(format!(
                    "{at}: a section header must look like [name], not '{line}'"
                ));
            };
            // fio keeps the spaces inside the brackets (`[ a ]` is the job " a ", its file
            // " a .0.0").
            if name.is_empty() || name.chars().any(|c| c.is_control() || c == '[' || c == ']') {
                return err(format!("{at}: '{line}' is not a valid section name"));
            }
            out.push(Section {
                name: name.to_string(),
                opts: Vec::new(),
                origin: at,
                opt_at: Vec::new(),
                file_start: false,
            });
            continue;
        }
        if let Some(file) = line.strip_prefix("include")
            && (file.is_empty() || file.starts_with(char::is_whitespace))
        {
            include(file.trim(), &at, origin, env, out, budget, depth)?;
            continue;
        }
        let (line, keyword) = expand_env(line, env, &at, *budget)?;
        *budget -= line.len().min(*budget);
        let (k, mut v) = match line.split_once('=') {
            Some((k, v)) => {
                if let Some(e) = super::job::leading_space_error(k.trim(), v, &at) {
                    return Err(JobError(e));
                }
                (k.trim().to_string(), v.trim().to_string())
            }
            None => (line.trim().to_string(), String::new()),
        };
        if k.is_empty() {
            return err(format!("{at}: '{raw}' has no option name before '='"));
        }
        if k.contains(char::is_whitespace) {
            return err(format!(
                "{at}: '{k}' is not an option line; write key=value (or a bare flag)"
            ));
        }
        if keyword && v.contains(['+', '-', '*', '/']) && !v.contains('\'') {
            v = match super::expr::bc(&v) {
                Some(n) => n.to_string(),
                None => {
                    return err(format!(
                        "{at}: {k}={v}: a value with a $pagesize, $mb_memory or $ncpus keyword \
                         and + - * / is whole-number arithmetic (fio has bc compute it): \
                         numbers, + - * / % ^ and parentheses only, no units"
                    ));
                }
            };
        }
        let Some(sec) = out.last_mut() else {
            return err(format!(
                "{at}: option '{k}' comes before any [section]; start the file with [global] or [jobname]"
            ));
        };
        sec.opts.push((k, v));
        sec.opt_at.push(at);
    }
    Ok(())
}

/// `include FILE` at `at` in the file `origin`: its options join the current section.
fn include(
    file: &str,
    at: &str,
    origin: &str,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Section>,
    budget: &mut usize,
    depth: u32,
) -> Result<(), JobError> {
    if file.is_empty() {
        return err(format!("{at}: include needs a file name: include FILE"));
    }
    if out.is_empty() {
        return err(format!(
            "{at}: include {file} comes before any [section]; put it inside the section whose \
             options it holds"
        ));
    }
    if depth >= MAX_INCLUDE_DEPTH {
        return err(format!(
            "{at}: include {file}: includes nest more than {MAX_INCLUDE_DEPTH} deep (does a \
             file include itself?)"
        ));
    }
    let given = std::path::Path::new(file);
    let beside = std::path::Path::new(origin)
        .parent()
        .map(|d| d.join(given))
        .filter(|_| given.is_relative());
    let path = if given.exists() {
        given.to_path_buf()
    } else if let Some(b) = beside.filter(|b| b.exists()) {
        b
    } else {
        return err(format!(
            "{at}: include {file}: no such file (looked in the current directory{}); fix \
             the path or remove the line (fio 3.33 says \"unable to open\", drops the rest of \
             the section and runs its jobs with the open's error set: with some engines one \
             I/O and err=2, with others none, varying from run to run)",
            match std::path::Path::new(origin).parent() {
                Some(d) if given.is_relative() && !d.as_os_str().is_empty() =>
                    format!(" and in {}", d.display()),
                _ => String::new(),
            }
        ));
    };
    let limit = u64::try_from(*budget).unwrap_or(u64::MAX);
    let text = hostbench_core::input::read_text(&path, "included job file", limit)
        .map_err(|e| JobError(format!("{at}: include {file}: {e}")))?;
    *budget -= text.len().min(*budget);
    parse_lines(
        &text,
        &path.display().to_string(),
        env,
        out,
        budget,
        depth + 1,
    )
}

/// `line` with `${VAR}` replaced from the environment (a bare `$NAME` is kept, as fio
/// keeps it), and fio's keywords (`$pagesize`, `$mb_memory`, `$ncpus`) by this machine's
/// values (the flag says whether one was); an
/// error if the result would pass `budget` bytes (what is left of the job file limit),
/// checked before each value is appended.
fn expand_env(
    line: &str,
    env: &dyn Fn(&str) -> Option<String>,
    at: &str,
    budget: usize,
) -> Result<(String, bool), JobError> {
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
        return Ok((line.to_string(), false));
    }
    let mut keyword = false;
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
                let Some(n) = super::expr::keyword(name) else {
                    return err(format!(
                        "{at}: fio's '${name}' keyword: this machine does not say its value; \
                         write the number"
                    ));
                };
                keyword = true;
                out.push_str(&n.to_string());
            } else {
                // fio reads the environment only in `${VAR}`: a bare `$NAME` stays as
                // written (`filename_format=f.$filenum`, a file named `$F`), never a value
                // from the environment (a `filename=$F` once wrote and unlinked $F's file).
                if !fits(&out, 1 + name.len()) {
                    return too_big();
                }
                out.push('$');
                out.push_str(name);
            }
            rest = &after[end..];
        }
    }
    if !fits(&out, rest.len()) {
        return too_big();
    }
    out.push_str(rest);
    Ok((out, keyword))
}

/// The canonical job text: sections in order, one `key=value` (or bare flag) per line.
pub fn to_text(sections: &[Section]) -> String {
    let mut s = String::new();
    for sec in sections {
        if sec.file_start {
            s.push_str(FILE_START);
            s.push('\n');
        }
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

/// A job file's section in the order fio parses its options, which is the order its JSON
/// "job options" and "global options" show them: fio sorts a section's options by their
/// priority in its option table (`parse.c:sort_options`, a stable sort here as glibc's
/// is: `lockfile`, `cpus_allowed_policy`, `kb_base`, `unit_base` first, `filename` and
/// `filename_format` last, after `directory`), then parses the engine's own options, which
/// its table lacks, after all the others (`options.c:fio_options_parse`). The command line
/// is parsed in the order given (not sorted).
pub fn sort_as_fio(sec: &mut Section) {
    use super::fio_names::{OPTION_TABLE, PROFILE_OPTIONS, canonical_name};
    let rank = |k: &str| -> (bool, i8) {
        let k = canonical_name(k);
        let in_table = OPTION_TABLE.iter().any(|(n, _)| *n == k) || PROFILE_OPTIONS.contains(&k);
        let prio = match k {
            "lockfile" | "cpus_allowed_policy" | "kb_base" | "unit_base" => -1,
            "filename" | "filename_format" => 1,
            _ => 0,
        };
        (!in_table, prio)
    };
    let mut idx: Vec<usize> = (0..sec.opts.len()).collect();
    idx.sort_by_key(|&i| rank(&sec.opts[i].0));
    sec.opts = idx.iter().map(|&i| sec.opts[i].clone()).collect();
    if sec.opt_at.len() == idx.len() {
        sec.opt_at = idx.iter().map(|&i| sec.opt_at[i].clone()).collect();
    }
}

/// Reads canonical text back (no environment expansion: it was expanded when first parsed).
/// A single line of fio's command-line form (`--name=a --rw=read --size=1m`, no spaces
/// inside values) is accepted too, for the native grammar's `--set jobs=...`.
pub fn from_text(text: &str) -> Result<Vec<Section>, JobError> {
    if !text.contains('\n') && text.trim_start().starts_with("--") {
        return from_args(text);
    }
    let mut out: Vec<Section> = Vec::new();
    let mut file_start = false;
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        if line == FILE_START {
            file_start = true;
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.push(Section {
                name: name.to_string(),
                opts: Vec::new(),
                origin: format!("jobs:{}", i + 1),
                opt_at: Vec::new(),
                file_start: std::mem::take(&mut file_start),
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
            // An option here, as on fio's command line (its "job options" show it).
            out.push(Section {
                name: v.to_string(),
                opts: vec![(k.to_string(), v.to_string())],
                origin: "jobs".into(),
                opt_at: Vec::new(),
                file_start: false,
            });
            continue;
        }
        if out.is_empty() {
            out.push(Section {
                name: "global".into(),
                opts: Vec::new(),
                origin: "jobs".into(),
                opt_at: Vec::new(),
                file_start: false,
            });
        }
        if let Some(sec) = out.last_mut() {
            sec.opts.push((k.to_string(), v.to_string()));
        }
    }
    Ok(out)
}

/// One line for the `jobs` parameter's job text, as `compare` and `trend` label a variant:
/// each job's name and its `rw`, `bs` and `iodepth` as written (a `[global]` section's
/// above it, else fio's defaults), `; ` between jobs (`a rw=randread bs=4k iodepth=32; b
/// rw=write bs=1m iodepth=1`). The same text gives the same line. `None` when the text
/// does not parse (a result stored by another version).
pub fn variant_summary(text: &str) -> Option<String> {
    let sections = from_text(text).ok()?;
    let pick = |opts: &[(String, String)], want: &str| -> Option<String> {
        opts.iter()
            .rev()
            .find(|(k, _)| super::job::canonical_option(k) == Some(want))
            .map(|(_, v)| v.trim().to_string())
    };
    let mut global: Vec<(String, String)> = Vec::new();
    let mut jobs = Vec::new();
    for s in &sections {
        if s.file_start {
            global.clear();
        }
        if s.is_global() {
            global.extend(s.opts.iter().cloned());
            continue;
        }
        let opt = |want: &str, or: &str| {
            pick(&s.opts, want)
                .or_else(|| pick(&global, want))
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| or.to_string())
        };
        jobs.push(format!(
            "{} rw={} bs={} iodepth={}",
            s.name,
            opt("rw", "read"),
            opt("bs", "4k"),
            opt("iodepth", "1")
        ));
    }
    (!jobs.is_empty()).then(|| jobs.join("; "))
}

#[cfg(test)]
mod summary_tests {
    use super::variant_summary;

    #[test]
    fn a_job_text_reads_as_one_line() {
        let t = "[global]\nbs=64k\nioengine=libaio\n[a]\nreadwrite=randread\niodepth=32\n[b]\nrw=write\nbs=1m\n";
        assert_eq!(
            variant_summary(t).as_deref(),
            Some("a rw=randread bs=64k iodepth=32; b rw=write bs=1m iodepth=1")
        );
        assert_eq!(
            variant_summary("[x]\nsize=1m\n").as_deref(),
            Some("x rw=read bs=4k iodepth=1")
        );
        assert_eq!(variant_summary("[global]\nbs=4k\n"), None);
    }
}
