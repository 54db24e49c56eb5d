//! One getopt-style tokenizer for the peers' hand-written grammars (ab, IOzone, httperf),
//! driven by a table of [`Flag`]s that also writes their usage text: one definition per
//! flag, so the parser and `-h` cannot disagree.
//!
//! What it accepts, as POSIX getopt and GNU getopt_long do: short flags clustered (`-kq`),
//! a short flag's value attached or next (`-n100`, `-n 100`), IOzone's two-character `-+x`
//! flags (when the table has any), long options as `--name=value` or `--name value`, and
//! (with [`Style::long_prefixes`]) a unique prefix of a long name (`--num-con`), as
//! getopt_long does. Anything else is a positional word, in order. Errors are typed
//! ([`GetoptError`]) so each grammar words them as its peer does.

/// One option of a grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// The short name without its dash (`n`; `+p` for IOzone's two-character flags), or "".
    pub short: &'static str,
    /// The long name without its dashes (`num-conns`), or "".
    pub long: &'static str,
    /// The value's name in the usage text (`requests`); "" for a flag without a value; one
    /// in brackets (`[=header]`) for a long option whose value is optional (getopt_long's
    /// `optional_argument`: only `--name=value` gives it one).
    pub value: &'static str,
    /// The usage text, one or more lines (continuation lines are indented by
    /// [`usage`]); "" keeps the flag out of the usage text.
    pub help: &'static str,
}

impl Flag {
    /// A short flag (`-n requests`).
    pub const fn short(short: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag {
            short,
            long: "",
            value,
            help,
        }
    }

    /// A long option (`--label NAME`).
    pub const fn long(long: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag {
            short: "",
            long,
            value,
            help,
        }
    }

    /// Whether it takes a value (required or optional).
    pub fn takes_value(&self) -> bool {
        !self.value.is_empty()
    }

    /// Whether its value is optional (`--print-reply` or `--print-reply=header`).
    pub fn optional_value(&self) -> bool {
        self.value.starts_with('[')
    }
}

/// One item of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg<'f> {
    /// A flag from the table, with its value when it takes one.
    Opt {
        /// The table's entry.
        flag: &'f Flag,
        /// Its value (None for a flag without one).
        value: Option<String>,
        /// How the user wrote its name (`-n`, `--num-conns`, `--num-con`).
        shown: String,
    },
    /// Anything that is not an option (a URL, a job file, a test word).
    Word(String),
}

/// What went wrong, for the grammar to word as its peer does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetoptError {
    /// A short flag that is not in the table (the character, `+x` for a `-+x`).
    UnknownShort(String),
    /// A long option that is not in the table (the name as typed, without dashes or value).
    UnknownLong(String),
    /// A prefix of several long names (the prefix, the names in alphabetical order).
    Ambiguous(String, Vec<&'static str>),
    /// A flag that needs a value came last (its name as typed).
    MissingValue(String),
    /// `--flag=value` for a long flag that takes none (its name as typed).
    UnexpectedValue(String),
}

/// How a grammar reads its command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// A unique prefix of a long name stands for it (getopt_long; httperf).
    pub long_prefixes: bool,
    /// `--` ends the options: what follows is positional.
    pub double_dash_ends: bool,
}

/// Splits `args` (without the program words) by `flags`, all at once.
#[cfg(test)]
pub fn getopt<'f>(
    flags: &'f [Flag],
    args: &[String],
    style: Style,
) -> Result<Vec<Arg<'f>>, GetoptError> {
    Getopt::new(flags, args, style).collect()
}

/// Splits a command line by a flag table one item at a time, in order: a grammar that acts
/// on an option as it comes (`-h` prints the usage at once, as getopt's callers do) stops
/// there, before a later bad option is looked at.
#[derive(Debug)]
pub struct Getopt<'f, 'a> {
    flags: &'f [Flag],
    args: &'a [String],
    style: Style,
    /// The next word of `args`.
    i: usize,
    /// Items of the word last read not yet handed out (a cluster `-kqn5` is three).
    pending: std::collections::VecDeque<Result<Arg<'f>, GetoptError>>,
    /// An error was handed out, or `--` ended the options and its words were queued.
    done: bool,
}

impl<'f, 'a> Getopt<'f, 'a> {
    /// Reads `args` (without the program words) by `flags`.
    pub fn new(flags: &'f [Flag], args: &'a [String], style: Style) -> Self {
        Getopt {
            flags,
            args,
            style,
            i: 0,
            pending: Default::default(),
            done: false,
        }
    }

    /// The next word's value (a flag's value given as the next word).
    fn next_word(&mut self, shown: &str) -> Result<String, GetoptError> {
        let v = self
            .args
            .get(self.i)
            .cloned()
            .ok_or_else(|| GetoptError::MissingValue(shown.to_string()))?;
        self.i += 1;
        Ok(v)
    }

    /// Reads one word of `args` into `pending`.
    fn read_word(&mut self) {
        let arg = self.args[self.i].clone();
        self.i += 1;
        if arg == "--" && self.style.double_dash_ends {
            let rest = self.args[self.i..]
                .iter()
                .cloned()
                .map(|w| Ok(Arg::Word(w)));
            self.pending.extend(rest);
            self.i = self.args.len();
            return;
        }
        if arg == "--" {
            // Not an end marker in this grammar: a long option without a name, not a short
            // flag '-'.
            self.pending
                .push_back(Err(GetoptError::UnknownLong(String::new())));
            return;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let item = self.long(long);
            self.pending.push_back(item);
            return;
        }
        let Some(body) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else {
            self.pending.push_back(Ok(Arg::Word(arg)));
            return;
        };
        let chars: Vec<char> = body.chars().collect();
        let plus = self.flags.iter().any(|f| f.short.starts_with('+'));
        let mut k = 0;
        while k < chars.len() {
            let mut name = chars[k].to_string();
            k += 1;
            if name == "+" && plus {
                match chars.get(k) {
                    Some(&c) => name.push(c),
                    None => {
                        self.pending.push_back(Err(GetoptError::UnknownShort(name)));
                        return;
                    }
                }
                k += 1;
            }
            let Some(flag) = self.flags.iter().find(|f| f.short == name) else {
                self.pending.push_back(Err(GetoptError::UnknownShort(name)));
                return;
            };
            let shown = format!("-{name}");
            if !flag.takes_value() {
                self.pending.push_back(Ok(Arg::Opt {
                    flag,
                    value: None,
                    shown,
                }));
                continue;
            }
            let value = if k < chars.len() {
                Ok(chars[k..].iter().collect())
            } else {
                self.next_word(&shown)
            };
            self.pending.push_back(value.map(|v| Arg::Opt {
                flag,
                value: Some(v),
                shown,
            }));
            return;
        }
    }

    /// `--name[=value]`.
    fn long(&mut self, long: &str) -> Result<Arg<'f>, GetoptError> {
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (long, None),
        };
        let flag = find_long(self.flags, name, self.style)?;
        let shown = format!("--{name}");
        let value = match (flag.takes_value(), inline) {
            (true, Some(v)) => Some(v),
            (true, None) if flag.optional_value() => None,
            (true, None) => Some(self.next_word(&shown)?),
            (false, Some(_)) => return Err(GetoptError::UnexpectedValue(shown)),
            (false, None) => None,
        };
        Ok(Arg::Opt { flag, value, shown })
    }
}

impl Getopt<'_, '_> {
    /// Takes the words that follow the item just handed out while `keep` says so (IOzone's
    /// `-F f1 f2 ...`, a value that runs over several words). Nothing when that item's word
    /// still has items to hand out (a cluster).
    pub fn take_words(&mut self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut words = Vec::new();
        if !self.pending.is_empty() {
            return words;
        }
        while let Some(w) = self.args.get(self.i).filter(|w| keep(w)) {
            words.push(w.clone());
            self.i += 1;
        }
        words
    }
}

impl<'f> Iterator for Getopt<'f, '_> {
    type Item = Result<Arg<'f>, GetoptError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        while self.pending.is_empty() && self.i < self.args.len() {
            self.read_word();
        }
        let item = self.pending.pop_front()?;
        if item.is_err() {
            self.done = true;
        }
        Some(item)
    }
}

/// The long option `name` names: itself, or with [`Style::long_prefixes`] the one long name
/// it is a prefix of.
fn find_long<'f>(flags: &'f [Flag], name: &str, style: Style) -> Result<&'f Flag, GetoptError> {
    if let Some(f) = flags.iter().find(|f| !f.long.is_empty() && f.long == name) {
        return Ok(f);
    }
    if style.long_prefixes && !name.is_empty() {
        let hits: Vec<&Flag> = flags
            .iter()
            .filter(|f| !f.long.is_empty() && f.long.starts_with(name))
            .collect();
        match hits.as_slice() {
            [one] => return Ok(one),
            [] => {}
            many => {
                let mut names: Vec<&'static str> = many.iter().map(|f| f.long).collect();
                names.sort_unstable();
                return Err(GetoptError::Ambiguous(name.to_string(), names));
            }
        }
    }
    Err(GetoptError::UnknownLong(name.to_string()))
}

/// The usage lines of `flags` that have help: `{indent}-n requests  help`, the help column
/// at `column` (a longer name pushes it one space past), continuation lines of the help
/// indented to that column.
pub fn usage(flags: &[Flag], indent: usize, column: usize) -> String {
    let mut s = String::new();
    for f in flags.iter().filter(|f| !f.help.is_empty()) {
        let name = if f.short.is_empty() {
            format!("--{}", f.long)
        } else {
            format!("-{}", f.short)
        };
        let head = if f.takes_value() && f.short.is_empty() {
            // A long option's value as GNU tools write it: `--server=HOST`.
            format!("{}{name}={}", " ".repeat(indent), f.value)
        } else if f.takes_value() {
            format!("{}{name} {}", " ".repeat(indent), f.value)
        } else {
            format!("{}{name}", " ".repeat(indent))
        };
        let pad = column.saturating_sub(head.chars().count()).max(1);
        let mut lines = f.help.lines();
        s.push_str(&head);
        s.push_str(&" ".repeat(pad));
        s.push_str(lines.next().unwrap_or_default());
        s.push('\n');
        for l in lines {
            s.push_str(&" ".repeat(column));
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: &[Flag] = &[
        Flag::short("n", "requests", "Number of requests"),
        Flag::short("k", "", "Keep-alive"),
        Flag::short("q", "", "Quiet"),
        Flag::short("+p", "percent", "Read percentage"),
        Flag::short("+n", "", "No retests"),
        Flag::long("num-conns", "N", "Connections"),
        Flag::long("num-calls", "N", "Calls"),
        Flag::long("no-save", "", "Do not save\nin the store"),
        Flag::long("print-reply", "[=header|body]", ""),
    ];

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn names(v: &[Arg]) -> Vec<String> {
        v.iter()
            .map(|a| match a {
                Arg::Opt { value, shown, .. } => match value {
                    Some(v) => format!("{shown}={v}"),
                    None => shown.clone(),
                },
                Arg::Word(w) => format!("word:{w}"),
            })
            .collect()
    }

    #[test]
    fn posix_and_gnu_forms() {
        let st = Style::default();
        let v = getopt(
            FLAGS,
            &args("-kqn100 -n 5 url -+p70 -+n -+p 3 --num-conns=4 --num-calls 2 --no-save"),
            st,
        )
        .unwrap();
        assert_eq!(
            names(&v),
            [
                "-k",
                "-q",
                "-n=100",
                "-n=5",
                "word:url",
                "-+p=70",
                "-+n",
                "-+p=3",
                "--num-conns=4",
                "--num-calls=2",
                "--no-save"
            ]
        );
        // A value that starts with a dash is still the value.
        let v = getopt(FLAGS, &args("-n -5"), st).unwrap();
        assert_eq!(names(&v), ["-n=-5"]);
        // A lone dash is a word (stdin, by convention).
        assert_eq!(names(&getopt(FLAGS, &args("-"), st).unwrap()), ["word:-"]);
    }

    #[test]
    fn errors_are_typed() {
        let st = Style::default();
        assert_eq!(
            getopt(FLAGS, &args("-kx"), st),
            Err(GetoptError::UnknownShort("x".into()))
        );
        assert_eq!(
            getopt(FLAGS, &args("-+z"), st),
            Err(GetoptError::UnknownShort("+z".into()))
        );
        assert_eq!(
            getopt(FLAGS, &args("-k -n"), st),
            Err(GetoptError::MissingValue("-n".into()))
        );
        assert_eq!(
            getopt(FLAGS, &args("--num-conns"), st),
            Err(GetoptError::MissingValue("--num-conns".into()))
        );
        assert_eq!(
            getopt(FLAGS, &args("--no-save=yes"), st),
            Err(GetoptError::UnexpectedValue("--no-save".into()))
        );
        assert_eq!(
            getopt(FLAGS, &args("--num-con=3"), st),
            Err(GetoptError::UnknownLong("num-con".into()))
        );
        // A lone `--` where it does not end the options: a long option with no name (the
        // grammars say "unknown option --"), not an unknown short flag '-'.
        assert_eq!(
            getopt(FLAGS, &args("-k -- url"), st),
            Err(GetoptError::UnknownLong(String::new()))
        );
    }

    #[test]
    fn unique_prefixes_with_getopt_long_style() {
        let st = Style {
            long_prefixes: true,
            ..Style::default()
        };
        let v = getopt(FLAGS, &args("--num-co=3 --no"), st).unwrap();
        assert_eq!(names(&v), ["--num-co=3", "--no"]);
        match &v[0] {
            Arg::Opt { flag, .. } => assert_eq!(flag.long, "num-conns"),
            _ => panic!(),
        }
        assert_eq!(
            getopt(FLAGS, &args("--num=3"), st),
            Err(GetoptError::Ambiguous(
                "num".into(),
                vec!["num-calls", "num-conns"]
            ))
        );
    }

    #[test]
    fn items_come_in_order_up_to_the_first_error() {
        let a = args("-kq -x -n");
        let mut g = Getopt::new(FLAGS, &a, Style::default());
        assert!(matches!(g.next(), Some(Ok(Arg::Opt { .. }))));
        assert!(matches!(g.next(), Some(Ok(Arg::Opt { .. }))));
        assert_eq!(g.next(), Some(Err(GetoptError::UnknownShort("x".into()))));
        assert_eq!(g.next(), None);
    }

    /// getopt_long's optional argument: only `=` gives it one; the next word stays a word.
    #[test]
    fn optional_values_come_only_after_an_equals_sign() {
        let st = Style::default();
        let v = getopt(FLAGS, &args("--print-reply url --print-reply=body"), st).unwrap();
        assert_eq!(
            names(&v),
            ["--print-reply", "word:url", "--print-reply=body"]
        );
    }

    #[test]
    fn a_value_may_run_over_the_next_words() {
        let a = args("-n a b c -k d");
        let mut g = Getopt::new(FLAGS, &a, Style::default());
        assert!(matches!(g.next(), Some(Ok(Arg::Opt { value: Some(v), .. })) if v == "a"));
        assert_eq!(g.take_words(|w| !w.starts_with('-')), ["b", "c"]);
        assert!(matches!(g.next(), Some(Ok(Arg::Opt { .. }))));
        // Inside a cluster there is nothing to take.
        let a = args("-kq x");
        let mut g = Getopt::new(FLAGS, &a, Style::default());
        g.next();
        assert!(g.take_words(|_| true).is_empty());
        g.next();
        assert_eq!(g.take_words(|_| true), ["x"]);
    }

    #[test]
    fn double_dash_ends_options_when_asked() {
        let st = Style {
            double_dash_ends: true,
            ..Style::default()
        };
        let v = getopt(FLAGS, &args("-k -- -n 3"), st).unwrap();
        assert_eq!(names(&v), ["-k", "word:-n", "word:3"]);
    }

    #[test]
    fn usage_comes_from_the_same_table() {
        let u = usage(&FLAGS[..2], 4, 20);
        assert_eq!(
            u,
            "    -n requests     Number of requests\n    -k              Keep-alive\n"
        );
        let u = usage(&FLAGS[7..], 2, 14);
        assert_eq!(u, "  --no-save   Do not save\n              in the store\n");
        let u = usage(&FLAGS[5..6], 2, 20);
        assert_eq!(u, "  --num-conns=N     Connections\n");
    }
}
