// Calibrating a replay against a log's recorded schedule, and proving it on the rest of the log
// (`clustersim validate --calibrate`, clustersim.calibrate in Python; docs/validation.md#calibrate).
//
// The log's jobs are split by submit time: the first `split` of them (in submission order) are
// the calibration part, the others the held-out part. The search runs the replay on the
// calibration part alone (a window on submit times) and compares each configuration with its
// record by the objective; the chosen configuration then replays the whole log, and only the
// held-out jobs are compared (RunConfig::validate_from): the held-out jobs meet the queue the
// earlier jobs left, as on the real machine, and the calibration never saw them.
//
// Search: coordinate descent over the axes. It starts at each axis's first value, then, axis by
// axis, runs every value of one axis with the others fixed (those runs in parallel), keeps the
// best, and repeats the sweep over all axes until a sweep changes nothing or `rounds` sweeps
// ran. A configuration is run once however often the search comes back to it. An axis key is
// `policy`, `placement`, `runtime-model`, a path into the cluster spec (`site.user_limits[0].
// max_running_jobs`, `nodes[0].count`: the value is JSON, `null` removes the key) or a policy or
// placement parameter ([NAME:]key, as --search).
//
// Objective `fit` (the default) is how far the worst of the three targets of docs/validation.md
// is from being met: max(KS / 0.15, |simulated - recorded mean wait| / (0.25 x recorded),
// (1 - utilization correlation) / 0.2), each distance of the wait distributions and series as
// sim/engine/validation.h computes them; 1 or less meets all three. Any distance --rank-by
// takes (wait_wasserstein_hours, wait_ks, ...) may be the objective instead.
#ifndef CLUSTERSIM_APP_CALIBRATE_H_
#define CLUSTERSIM_APP_CALIBRATE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/run.h"

namespace clustersim {

struct CalibrationAxis {
  std::string key;
  std::vector<std::string> values;
};

// "key=v1,v2,..." (a value holding commas may be given in brackets or quotes as JSON:
// site.x=[1,2] is one value only if the whole list is one JSON value: write site.x=[1,2];[3]).
// Throws InputError on an empty key or value, or a value listed twice.
CalibrationAxis ParseCalibrationAxis(const std::string& text);

struct CalibrationConfig {
  RunConfig base;  // the replay: trace, cluster, policy, placement, filters, interval, out
  std::map<std::string, std::string> params;  // --param settings ([NAME:]key -> value)
  std::vector<CalibrationAxis> axes;
  double split = 0.5;               // share of the jobs (by submit time) calibrated on, (0, 1)
  std::string objective = "fit";
  int jobs = 1;                     // runs in parallel
  int rounds = 3;                   // sweeps over the axes at most
  // Called after each run of the search (for a progress line); may be empty.
  std::function<void(size_t done)> on_trial;
};

struct CalibrationTrial {
  std::vector<size_t> choice;  // value index per axis
  std::string label;           // "policy=easy site.x=4 ..."
  double objective = 0;
  RunOutcome outcome;          // on the calibration part
  int64_t run_id = -1;         // in the output database
};

struct CalibrationResult {
  double split_time = 0;  // seconds of the trace: the first held-out submission
  int64_t calibration_jobs = 0, held_out_jobs = 0;
  std::vector<CalibrationTrial> trials;  // in the order they ran
  size_t chosen = 0;                     // index into trials
  RunConfig evaluation_config;
  RunOutcome evaluation;  // the whole log, compared on the held-out part (the last run written)
};

// The objective of a validation report (see the header comment): +inf if it lacks a figure.
double CalibrationObjective(const ValidationReport& report, const std::string& objective);
// The objectives CalibrationObjective knows, for messages.
const std::vector<std::string>& CalibrationObjectives();

// Runs the search and the evaluation, appending every run to base.out (the evaluation last).
// Throws InputError for bad settings (before any run) or a failing configuration (then nothing
// is written).
CalibrationResult Calibrate(const CalibrationConfig& config);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_CALIBRATE_H_
