//! `--format pretty` (the default): each finding rendered like a compiler diagnostic with miette —
//! the rule, the severity, the route's source lines, the side effect's source lines, and the change
//! to make — then the diagnostics and a summary line. Colour only on a terminal without `NO_COLOR`.

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

fn finding(report: &Report, f: &Finding, sources: &mut Sources) -> Rendered {
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
            source: Some(NamedSource::new(&e.location.file, text)),
            help: None,
            related: Vec::new(),
        });
    }
    Rendered {
        message: f.message.clone(),
        code: Some(code),
        severity: miette_severity(f.severity),
        source: route_text.map(|t| NamedSource::new(&f.file, t)),
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

/// The report for a person at a terminal. `root` is the scanned directory (to read source lines).
pub fn render(report: &Report, root: &Path, colour: bool, quiet: bool) -> String {
    let mut sources = Sources {
        root,
        cache: HashMap::new(),
    };
    let h = handler(colour);
    let mut out = String::new();
    for f in report.visible_findings() {
        let d = finding(report, f, &mut sources);
        if h.render_report(&mut out, &d).is_err() {
            let _ = writeln!(out, "{} {}:{}: {}", f.rule, f.file, f.line, f.message);
        }
        out.push('\n');
    }
    if quiet {
        return out;
    }
    if report.visible_findings().next().is_none() {
        out.push_str("No findings.\n");
    }
    for d in &report.diagnostics {
        let at = match (d.file.is_empty(), d.line) {
            (true, _) => String::new(),
            (false, 0) => format!("{}: ", d.file),
            (false, l) => format!("{}:{l}: ", d.file),
        };
        let _ = writeln!(out, "note: {at}{}", d.message);
    }
    if !report.diagnostics.is_empty() {
        out.push('\n');
    }
    out.push_str(&table::summary_line(report).replace("(see --format json)", "(notes above)"));
    out
}
