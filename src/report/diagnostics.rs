//! `--format pretty` (the default). By default one short entry per cause — the rule, severity and
//! confidence, the endpoint (or how many share the flaw), the location, the message and the change
//! to make, never wrapped — then the diagnostics summarised by kind and a summary line. With
//! `--verbose` each finding is rendered like a compiler diagnostic with miette: the route's source
//! lines, the side effect's source lines, every diagnostic. Colour only on a terminal without
//! `NO_COLOR`.

use super::{EndpointReport, Report, table};
use crate::facts::Effect;
use crate::rules::{Finding, Severity};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// The side effects of `ep` that a finding's message names as "`callee` (file:line)".
pub fn effects_named_in<'a>(ep: &'a EndpointReport, message: &str) -> Vec<&'a Effect> {
    ep.side_effects
        .iter()
        .filter(|e| message.contains(&format!("`{}` ({})", e.callee, e.location)))
        .collect()
}

/// A diagnostic for miette: one message, one source file, labels in it, related diagnostics for
/// places in other files.
#[derive(Debug)]
struct Rendered {
    message: String,
    code: Option<String>,
    severity: miette::Severity,
    source: Option<NamedSource<String>>,
    labels: Vec<LabeledSpan>,
    help: Option<String>,
    related: Vec<Rendered>,
}

impl std::fmt::Display for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rendered {}

impl Diagnostic for Rendered {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn std::fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.source.is_none() || self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|r| r as &dyn Diagnostic)))
    }
}

/// Source files read once each; `None` when unreadable.
struct Sources<'a> {
    root: &'a Path,
    cache: HashMap<String, Option<String>>,
}

impl Sources<'_> {
    fn text(&mut self, file: &str) -> Option<String> {
        self.cache
            .entry(file.to_string())
            .or_insert_with(|| std::fs::read_to_string(self.root.join(file)).ok())
            .clone()
    }
}

/// The byte span of line `line` (1-based), leading whitespace left out.
fn line_span(text: &str, line: u32) -> Option<(usize, usize)> {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line as usize {
            let body = l.trim_end_matches(['\n', '\r']);
            let indent = body.len() - body.trim_start().len();
            let len = body.trim().len().max(1);
            return Some((offset + indent, len));
        }
        offset += l.len();
    }
    None
}

fn label(text: &str, line: u32, what: String) -> Option<LabeledSpan> {
    let (start, len) = line_span(text, line)?;
    Some(LabeledSpan::new(Some(what), start, len))
}

fn miette_severity(s: Severity) -> miette::Severity {
    match s {
        Severity::Critical | Severity::High => miette::Severity::Error,
        Severity::Medium | Severity::Low => miette::Severity::Warning,
        Severity::Inverse | Severity::None => miette::Severity::Advice,
    }
}

fn finding(report: &Report, f: &Finding, sources: &mut Sources, prefix: &str) -> Rendered {
    let baselined = if f.baselined { ", in the baseline" } else { "" };
    let code = format!(
        "{} {} ({}, {}{baselined})",
        f.rule,
        f.name,
        f.severity.as_str(),
        f.confidence.as_str()
    );
    let help = format!("{}\nImpact: {}", f.change, f.impact);
    let route_text = sources.text(&f.file);
    let ep = report
        .endpoints
        .iter()
        .find(|e| e.label() == f.endpoint && e.file == f.route.file && e.line == f.route.line);
    let incomplete = if ep.is_some_and(|e| !e.path_complete) {
        " (path incomplete)"
    } else {
        ""
    };
    let mut labels = Vec::new();
    if let Some(text) = &route_text {
        labels.extend(label(text, f.line, format!("`{}`{incomplete}", f.endpoint)));
    }
    let mut related = Vec::new();
    for e in ep
        .map(|ep| effects_named_in(ep, &f.message))
        .unwrap_or_default()
    {
        let what = format!("{}: `{}`", e.kind.as_str(), e.callee);
        if e.location.file == f.file {
            if let Some(text) = &route_text {
                labels.extend(label(text, e.location.line, what));
            }
            continue;
        }
        let Some(text) = sources.text(&e.location.file) else {
            continue;
        };
        let via = if e.via.is_empty() {
            String::new()
        } else {
            format!(" via {}", e.via.join(" → "))
        };
        related.push(Rendered {
            message: format!("the side effect is reached here{via}"),
            code: None,
            severity: miette::Severity::Advice,
            labels: label(&text, e.location.line, what).into_iter().collect(),
            source: Some(NamedSource::new(
                format!("{prefix}{}", e.location.file),
                text,
            )),
            help: None,
            related: Vec::new(),
        });
    }
    Rendered {
        message: f.message.clone(),
        code: Some(code),
        severity: miette_severity(f.severity),
        source: route_text.map(|t| NamedSource::new(format!("{prefix}{}", f.file), t)),
        labels,
        help: Some(help),
        related,
    }
}

fn handler(colour: bool) -> GraphicalReportHandler {
    let theme = if colour {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_width(110)
        .without_syntax_highlighting()
        .with_links(false)
        .with_show_related_as_nested(true)
}

/// Renders any miette diagnostic (a configuration error) as text.
pub fn render_error(d: &dyn Diagnostic, colour: bool) -> String {
    let mut out = String::new();
    if handler(colour).render_report(&mut out, d).is_err() {
        out = format!("retrysafe: error: {d}\n");
    }
    out
}

/// How the terminal report is written.
#[derive(Debug, Clone, Default)]
pub struct Human {
    pub colour: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// Put before each root-relative path so it resolves from where the user stands.
    pub prefix: String,
}

fn paint(text: &str, s: Severity, colour: bool) -> String {
    if !colour {
        return text.to_string();
    }
    let code = match s {
        Severity::Critical => "31;1",
        Severity::High => "31",
        Severity::Medium => "33",
        Severity::Low => "34",
        Severity::Inverse => "35",
        Severity::None => "32",
    };
    format!("\u{1b}[{code}m{text}\u{1b}[0m")
}

/// One cause, short: never wrapped, so a path is never broken.
fn concise(group: &[&Finding], opts: &Human, out: &mut String) {
    let f = group[0];
    let endpoints = super::cause_endpoints(group);
    let baselined = if f.baselined { ", in the baseline" } else { "" };
    let head = format!(
        "{} {} ({}, {}{baselined})",
        f.rule,
        f.name,
        f.severity.as_str(),
        f.confidence.as_str()
    );
    let what = if endpoints.len() > 1 {
        format!("{} endpoints", endpoints.len())
    } else {
        format!("`{}`", f.endpoint)
    };
    let (file, line) = super::cause_location(group);
    let _ = writeln!(out, "{}: {what}", paint(&head, f.severity, opts.colour));
    let _ = writeln!(out, "  --> {}{file}:{line}", opts.prefix);
    let _ = writeln!(out, "  {}", super::cause_message(group));
    if endpoints.len() > 1 {
        let limit = if opts.verbose { None } else { Some(4) };
        let _ = writeln!(out, "  endpoints: {}", super::listed(&endpoints, limit));
    }
    let _ = writeln!(out, "  help: {}", f.change);
}

/// The report for a person at a terminal. `root` is the scanned directory (to read source lines).
pub fn render(report: &Report, root: &Path, opts: &Human) -> String {
    let mut sources = Sources {
        root,
        cache: HashMap::new(),
    };
    let h = handler(opts.colour);
    let mut out = String::new();
    if opts.verbose {
        for f in report.shown_findings() {
            let d = finding(report, f, &mut sources, &opts.prefix);
            if h.render_report(&mut out, &d).is_err() {
                let _ = writeln!(out, "{} {}:{}: {}", f.rule, f.file, f.line, f.message);
            }
            out.push('\n');
        }
    } else {
        for group in report.causes() {
            concise(&group, opts, &mut out);
            out.push('\n');
        }
    }
    if opts.quiet {
        return out;
    }
    if report.shown_findings().next().is_none() {
        out.push_str(if report.summary.new.is_some() {
            "No new findings.\n"
        } else {
            "No findings.\n"
        });
    }
    for line in super::diff_lines(report, if opts.verbose { None } else { Some(20) }) {
        let _ = writeln!(out, "diff: {line}");
    }
    if opts.verbose {
        for d in &report.diagnostics {
            let _ = writeln!(out, "note: {}", located(d, &opts.prefix));
        }
    } else {
        for (kind, n, first) in super::diagnostics_by_kind(report) {
            if n == 1 {
                let _ = writeln!(out, "note: {}", located(first, &opts.prefix));
            } else {
                let _ = writeln!(
                    out,
                    "note: {n} × {kind} (first: {}{}:{})",
                    opts.prefix, first.file, first.line
                );
            }
        }
    }
    if !report.diagnostics.is_empty() {
        out.push('\n');
    }
    let notes = if opts.verbose {
        "(notes above)"
    } else {
        "(notes above; --verbose for each)"
    };
    out.push_str(&table::summary_line(report).replace("(see --format json)", notes));
    out
}

/// `file:line: message` of a diagnostic, the path made to resolve from where the user stands.
fn located(d: &crate::facts::Diagnostic, prefix: &str) -> String {
    match (d.file.is_empty(), d.line) {
        (true, _) => d.message.clone(),
        (false, 0) => format!("{prefix}{}: {}", d.file, d.message),
        (false, l) => format!("{prefix}{}:{l}: {}", d.file, d.message),
    }
}
