//! Typed workload parameters: each workload declares a static table of [`ParamSpec`]s
//! (name, kind, default, unit, help, and the option name a peer tool uses for it); front-ends
//! hand over `name = text` pairs and [`Params::resolve`] checks and types them. The resolved
//! set always contains every parameter, defaults included, so a result records exactly what
//! ran.

use crate::units::{parse_bool, parse_seconds, parse_size};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A whole number within an inclusive range.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A byte count (K/M/G/T suffixes, powers of 1024).
    Size,
    /// A real number within an inclusive range.
    Float {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// A duration, stored in seconds.
    Seconds,
    /// on/off.
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// Free text.
    Text,
}

/// One parameter of a workload.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Native name (`max_prime`).
    pub name: &'static str,
    /// Value kind and range.
    pub kind: ParamKind,
    /// Default, in the same text form a user would type.
    pub default: &'static str,
    /// Unit of the value, for help and docs.
    pub unit: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// The sysbench option for this parameter (`cpu-max-prime`), if sysbench has one.
    pub sysbench: Option<&'static str>,
}

/// A resolved parameter value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// Int and Size values.
    Int(i64),
    /// Float and Seconds values.
    Float(f64),
    /// Bool values.
    Bool(bool),
    /// Choice and Text values.
    Text(String),
}

/// Why a parameter could not be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No parameter of that name.
    #[error("unknown parameter '{name}' for workload '{workload}' (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The workload.
        workload: String,
        /// Comma-separated list of valid names.
        known: String,
    },
    /// The value did not parse or was out of range.
    #[error("invalid value '{value}' for {name}: expected {expected}")]
    Invalid {
        /// The parameter.
        name: String,
        /// The text given.
        value: String,
        /// What would be accepted.
        expected: String,
    },
}

impl ParamSpec {
    /// Parses `text` as a value of this parameter.
    pub fn parse(&self, text: &str) -> Result<Value, ParamError> {
        let invalid = |expected: String| ParamError::Invalid {
            name: self.name.to_string(),
            value: text.to_string(),
            expected,
        };
        match self.kind {
            ParamKind::Int { min, max } => {
                let v: i64 = text
                    .trim()
                    .parse()
                    .map_err(|_| invalid(format!("an integer from {min} to {max}")))?;
                if v < min || v > max {
                    return Err(invalid(format!("an integer from {min} to {max}")));
                }
                Ok(Value::Int(v))
            }
            ParamKind::Size => {
                let v = parse_size(text).map_err(|e| invalid(e.expected()))?;
                i64::try_from(v)
                    .map(Value::Int)
                    .map_err(|_| invalid("a size below 8 EiB".into()))
            }
            ParamKind::Float { min, max } => {
                let v: f64 = text
                    .trim()
                    .parse()
                    .map_err(|_| invalid(format!("a number from {min} to {max}")))?;
                if !(min..=max).contains(&v) {
                    return Err(invalid(format!("a number from {min} to {max}")));
                }
                Ok(Value::Float(v))
            }
            ParamKind::Seconds => parse_seconds(text)
                .map(Value::Float)
                .map_err(|e| invalid(e.expected())),
            ParamKind::Bool => parse_bool(text)
                .map(Value::Bool)
                .map_err(|e| invalid(e.expected())),
            ParamKind::Choice(words) => {
                let t = text.trim();
                if words.contains(&t) {
                    Ok(Value::Text(t.to_string()))
                } else {
                    Err(invalid(format!("one of {}", words.join(", "))))
                }
            }
            ParamKind::Text => Ok(Value::Text(text.to_string())),
        }
    }

    /// A short description of the kind, for listings.
    pub fn kind_name(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("int {min}..{max}"),
            ParamKind::Size => "size".into(),
            ParamKind::Float { min, max } => format!("number {min}..{max}"),
            ParamKind::Seconds => "seconds".into(),
            ParamKind::Bool => "bool".into(),
            ParamKind::Choice(w) => w.join("|"),
            ParamKind::Text => "text".into(),
        }
    }
}

/// Every parameter of one workload, defaults filled in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params {
    values: BTreeMap<String, Value>,
}

impl Params {
    /// Applies `overrides` (native names, text values) over the defaults of `specs`.
    pub fn resolve(
        workload: &str,
        specs: &[ParamSpec],
        overrides: &[(String, String)],
    ) -> Result<Params, ParamError> {
        let mut values = BTreeMap::new();
        for s in specs {
            let v = s
                .parse(s.default)
                .unwrap_or_else(|e| panic!("default of {workload}.{} does not parse: {e}", s.name));
            values.insert(s.name.to_string(), v);
        }
        for (name, text) in overrides {
            let key = name.replace('-', "_");
            let spec = specs
                .iter()
                .find(|s| s.name == key)
                .ok_or_else(|| ParamError::Unknown {
                    name: name.clone(),
                    workload: workload.to_string(),
                    known: if specs.is_empty() {
                        "none".into()
                    } else {
                        specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    },
                })?;
            values.insert(key, spec.parse(text)?);
        }
        Ok(Params { values })
    }

    /// Blanks every parameter whose name says it holds a password and hides passwords in
    /// URL-valued parameters, so a saved or printed result never carries one.
    pub fn redact_secrets(&mut self) {
        for (name, v) in self.values.iter_mut() {
            if let Value::Text(t) = v {
                if crate::secret::is_secret_name(name) {
                    if !t.is_empty() {
                        *t = crate::secret::MASK.to_string();
                    }
                } else if let std::borrow::Cow::Owned(r) = crate::secret::mask(t) {
                    *t = r;
                }
            }
        }
    }

    /// Sets one value (a fleet's merged run: the sum of its hosts' connections).
    pub fn set(&mut self, name: &str, v: Value) {
        self.values.insert(name.to_string(), v);
    }

    /// The raw value map.
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.values
    }

    fn get(&self, name: &str) -> &Value {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("parameter '{name}' is not declared by this workload"))
    }

    /// An Int or Size parameter.
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Int(v) => *v,
            other => panic!("parameter '{name}' is {other:?}, not an integer"),
        }
    }

    /// A Float or Seconds parameter.
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(v) => *v,
            Value::Int(v) => *v as f64,
            other => panic!("parameter '{name}' is {other:?}, not a number"),
        }
    }

    /// A Bool parameter.
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Bool(v) => *v,
            other => panic!("parameter '{name}' is {other:?}, not a boolean"),
        }
    }

    /// A Choice or Text parameter.
    pub fn text(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Text(v) => v,
            other => panic!("parameter '{name}' is {other:?}, not text"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "max_prime",
            kind: ParamKind::Int {
                min: 1,
                max: 1 << 40,
            },
            default: "10000",
            unit: "",
            help: "",
            sysbench: Some("cpu-max-prime"),
        },
        ParamSpec {
            name: "block",
            kind: ParamKind::Size,
            default: "1K",
            unit: "bytes",
            help: "",
            sysbench: None,
        },
        ParamSpec {
            name: "mode",
            kind: ParamKind::Choice(&["seq", "rnd"]),
            default: "seq",
            unit: "",
            help: "",
            sysbench: None,
        },
    ];

    #[test]
    fn defaults_and_overrides() {
        let p = Params::resolve("t", SPECS, &[("max-prime".into(), "20000".into())]).unwrap();
        assert_eq!(p.int("max_prime"), 20000);
        assert_eq!(p.int("block"), 1024);
        assert_eq!(p.text("mode"), "seq");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Params::resolve("t", SPECS, &[("nope".into(), "1".into())]).unwrap_err();
        assert!(
            e.to_string().contains("known: max_prime, block, mode"),
            "{e}"
        );
        let e = Params::resolve("t", SPECS, &[("max_prime".into(), "0".into())]).unwrap_err();
        assert!(e.to_string().contains("from 1 to"), "{e}");
        let e = Params::resolve("t", SPECS, &[("mode".into(), "zig".into())]).unwrap_err();
        assert!(e.to_string().contains("one of seq, rnd"), "{e}");
    }
}
