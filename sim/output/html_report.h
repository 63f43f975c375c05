// The report people open in a browser (`clustersim report DB --html OUT.html`,
// `clustersim.open(db).report_html(...)`; docs/comparing.md#the-html-report): one self-contained
// HTML file for one or several runs of a results database. It holds the runs and their settings,
// the headline table with 95 % confidence intervals over seeds (sim/output/report.h), JCT and
// wait CDFs, utilization, queue and fragmentation over time, an occupancy (Gantt) view of each
// run's allocation log, per-user and per-VC tables with cost allocation and wait reasons, the
// wait reasons of each configuration, and, for `validate` runs, the recorded-vs-simulated series.
//
// Self-contained: the charting library (Apache ECharts, from npm, compiled into the program at
// build time: sim/output/CMakeLists.txt) and the data are inside the file; the page loads
// nothing at view time. Large runs are downsampled, each chart's method stated on the page:
// CDFs of more than kCdfExactJobs jobs through the ECDF's points at 201 evenly spaced quantile
// levels; timeseries of more than kMaxSeriesPoints intervals as exact time averages over
// buckets of consecutive intervals; allocation logs of more than kMaxGanttRects rectangles
// shown for the lowest GPU indexes only (every interval on them).
//
// After rendering, the page's <body> carries data-rendered="true" and data-charts: a JSON object
// giving, per chart id, its number of series and the points of each, as ECharts holds them (the
// browser test reads it back: tests/html/report_browser_test.py).
#ifndef CLUSTERSIM_SIM_OUTPUT_HTML_REPORT_H_
#define CLUSTERSIM_SIM_OUTPUT_HTML_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim {

struct HtmlReportOptions {
  std::vector<int64_t> run_ids;  // empty = every complete run (as ReportOptions)
  std::string title;             // empty = "clustersim report: <database file name>"
  bool allow_different_jobs = false;  // as ReportOptions: runs that saw different jobs
};

// Downsampling limits (see the file comment). Trade-off: more points, a larger file and a slower
// page; these keep a 1M-job run's page near 2 MB.
inline constexpr int kCdfExactJobs = 500;
inline constexpr int kCdfQuantiles = 200;  // levels 0, 1/200, ..., 1
inline constexpr int kMaxSeriesPoints = 2000;
inline constexpr int kMaxGanttRects = 20000;
inline constexpr int kTopGroups = 15;  // rows of the per-user and per-VC tables

// The version of the embedded charting library ("6.1.0").
const char* ChartLibraryVersion();

// Writes the report of `db_path` to `out_path` (a temporary file beside it, renamed into place:
// nothing half-written). Throws InputError as BuildReport does (missing or foreign database,
// unknown or incomplete runs) and when the file cannot be written.
void WriteHtmlReport(const std::string& db_path, const std::string& out_path,
                     const HtmlReportOptions& options);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_HTML_REPORT_H_
