//! `--format table`: findings for a terminal. Colour only on a TTY and never with `NO_COLOR`.

use super::{Report, effect_kinds, mechanism_kinds};
use crate::rules::Severity;
use comfy_table::{
    Cell, Color, ColumnConstraint, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED,
};

fn severity_cell(s: Severity, colour: bool) -> Cell {
    let cell = Cell::new(s.as_str());
    if !colour {
        return cell;
    }
    match s {
        Severity::Critical => cell.fg(Color::Red),
        Severity::High => cell.fg(Color::DarkYellow),
        Severity::Medium => cell.fg(Color::Yellow),
        Severity::Low => cell.fg(Color::Blue),
        Severity::Inverse => cell.fg(Color::Magenta),
        Severity::None => cell.fg(Color::Green),
    }
}

fn new_table(colour: bool) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if colour {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    if t.width().is_none() {
        t.set_width(140);
    }
    t
}

pub fn render(report: &Report, colour: bool, prefix: &str) -> String {
    let mut out = findings(report, colour, prefix);
    out.push_str(&summary_line(report));
    out
}

/// The table and the details of each finding, without the summary line. Suppressed findings are
/// left out (the JSON keeps them); baselined ones say so.
pub fn findings(report: &Report, colour: bool, prefix: &str) -> String {
    let mut out = String::new();
    let visible: Vec<_> = report.shown_findings().collect();
    if visible.is_empty() {
        out.push_str("No findings.\n");
    } else {
        let mut t = new_table(colour);
        t.set_header(vec!["#", "Severity", "Rule", "Endpoint", "Location"]);
        for (i, f) in visible.iter().enumerate() {
            let sev = if f.baselined {
                Cell::new(format!("{} (baselined)", f.severity.as_str()))
            } else {
                severity_cell(f.severity, colour)
            };
            t.add_row(vec![
                Cell::new(i + 1),
                sev,
                Cell::new(format!("{} {}", f.rule, f.name)),
                Cell::new(&f.endpoint),
                Cell::new(format!("{prefix}{}:{}", f.file, f.line)),
            ]);
        }
        unwrapped(&mut t, &[3, 4]);
        out.push_str(&t.to_string());
        out.push_str("\n\n");
        for (i, f) in visible.iter().enumerate() {
            out.push_str(&format!(
                "#{} {} {} at {prefix}{}:{}\n  {}\n  change: {}\n  impact: {}\n\n",
                i + 1,
                f.rule,
                f.endpoint,
                f.file,
                f.line,
                f.message,
                f.change,
                f.impact
            ));
        }
    }
    out
}

/// Columns that hold paths are as wide as their content: a path is never broken across lines.
fn unwrapped(t: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
}

pub fn render_inventory(report: &Report, colour: bool, prefix: &str) -> String {
    let mut t = new_table(colour);
    t.set_header(vec![
        "Endpoint",
        "Location",
        "Handler",
        "Side effects",
        "Mechanism",
        "Severity",
    ]);
    for e in &report.endpoints {
        t.add_row(vec![
            Cell::new(e.shown()),
            Cell::new(format!("{prefix}{}:{}", e.file, e.line)),
            Cell::new(&e.handler),
            Cell::new(effect_kinds(&e.side_effects)),
            Cell::new(mechanism_kinds(&e.mechanisms)),
            severity_cell(e.severity, colour),
        ]);
    }
    unwrapped(&mut t, &[0, 1]);
    let mut out = t.to_string();
    out.push('\n');
    out.push_str(&format!(
        "{} mutation endpoints, {} with idempotency, {} files scanned\n",
        report.summary.mutation_endpoints,
        report.summary.with_idempotency,
        report.summary.files_scanned
    ));
    out
}

/// `typescript 12, rust 3`.
fn counts(map: &std::collections::BTreeMap<String, usize>) -> String {
    map.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn summary_line(report: &Report) -> String {
    let s = &report.summary;
    let b = &s.by_severity;
    let mut line = format!(
        "{} mutation endpoints, {} with idempotency; findings: {} critical, {} high, {} medium, {} low, {} inverse",
        s.mutation_endpoints, s.with_idempotency, b.critical, b.high, b.medium, b.low, b.inverse,
    );
    let total = b.critical + b.high + b.medium + b.low + b.inverse;
    if total > 0 {
        line.push_str(&format!(
            " ({total} finding{} from {} cause{})",
            if total == 1 { "" } else { "s" },
            s.causes,
            if s.causes == 1 { "" } else { "s" }
        ));
    }
    line.push_str(&format!("; {} files scanned", s.files_scanned));
    let langs = counts(&s.coverage.files_by_language);
    if !langs.is_empty() {
        line.push_str(&format!(" ({langs})"));
    }
    let fws = counts(&s.endpoints_by_framework);
    if !fws.is_empty() {
        line.push_str(&format!("; endpoints by framework: {fws}"));
    }
    if s.suppressed > 0 {
        line.push_str(&format!("; {} suppressed", s.suppressed));
    }
    if let Some(new) = s.new {
        line.push_str(&format!("; {new} new, {} known", s.baselined));
    } else if s.baselined > 0 {
        line.push_str(&format!("; {} in the baseline", s.baselined));
    }
    if !report.diagnostics.is_empty() {
        line.push_str(&format!(
            "; {} diagnostics (see --format json)",
            report.diagnostics.len()
        ));
    }
    line.push('\n');
    line
}
