//! The doctor: `checkSession` and `repairSession` (lib/doctor.js).

use napi_derive::napi;

use super::*;

#[napi(object, object_from_js = false)]
pub struct JsDoctorFinding {
    pub problem: String,
    pub line: f64,
    pub message: String,
    pub repair: Option<String>,
}

#[napi(object, object_from_js = false)]
pub struct JsDoctorReport {
    pub size: f64,
    pub lines: f64,
    pub entries: f64,
    pub opens_in_reference: bool,
    pub findings: Vec<JsDoctorFinding>,
    pub repairable: bool,
}

#[napi(object, object_from_js = false)]
pub struct JsRepairOutcome {
    pub report: JsDoctorReport,
    pub applied: bool,
    pub backup: Option<String>,
    pub after: Option<JsDoctorReport>,
}

impl From<crate::catalog::doctor::Report> for JsDoctorReport {
    fn from(r: crate::catalog::doctor::Report) -> Self {
        JsDoctorReport {
            size: r.size as f64,
            lines: r.lines as f64,
            entries: r.entries as f64,
            opens_in_reference: r.opens_in_reference,
            repairable: r.has_repairs(),
            findings: r
                .findings
                .into_iter()
                .map(|f| JsDoctorFinding {
                    problem: f.problem.name().to_string(),
                    line: f.line as f64,
                    message: f.message,
                    repair: f.repair,
                })
                .collect(),
        }
    }
}

#[napi(catch_unwind)]
pub fn check_session_file(path: String) -> Result<JsDoctorReport> {
    crate::catalog::doctor::check(std::path::Path::new(&path))
        .map(Into::into)
        .map_err(to_napi)
}

#[napi(catch_unwind)]
pub fn repair_session_file(
    path: String,
    dry_run: bool,
    backup_stamp: String,
) -> Result<JsRepairOutcome> {
    let outcome =
        crate::catalog::doctor::repair(std::path::Path::new(&path), dry_run, &backup_stamp)
            .map_err(to_napi)?;
    Ok(JsRepairOutcome {
        report: outcome.report.into(),
        applied: outcome.applied,
        backup: outcome.backup.map(|b| b.to_string_lossy().into_owned()),
        after: outcome.after.map(Into::into),
    })
}
