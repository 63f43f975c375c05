// The one SQLite writer (results/README.md). A database holds any number of runs in the tables
// runs, jobs, timeseries, summary, and, for the runs that have them, allocations (the allocation
// log), validation and validation_series (`clustersim validate`); results/README.md documents
// every column and unit.
//
// Nothing half-written is left behind: a new database is written to a temporary file beside the
// target and renamed into place by Commit(); runs appended to an existing database are written
// in one transaction, so an interrupted write leaves the file as it was. All rows go through
// prepared statements inside that transaction.
//
// A run's jobs and timeseries rows are written while the run is simulated: between BeginRun and
// EndRun the connection belongs to a writer thread, fed by the engine's thread through a
// BoundedQueue (sim/util/bounded_queue.h) of row batches. The engine's thread turns engine state
// into rows (values and pointers to text that stays put: the trace, the catalogs, interned
// symbols); the writer thread only binds and steps them. The rows, their order (job_index order
// for jobs) and the transaction are the same as a write after the run.
#ifndef CLUSTERSIM_SIM_OUTPUT_SQLITE_WRITER_H_
#define CLUSTERSIM_SIM_OUTPUT_SQLITE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/summary.h"
#include "sim/engine/validation.h"
#include "sim/util/temporary_files.h"

struct sqlite3;

namespace clustersim {

struct RunRecord {
  std::string trace_path, trace_sha256, trace_format;
  std::string trace_filter = "{}";  // JSON: explicit filters and how many jobs they kept
  std::string cluster_spec, cluster_sha256, cluster_json;
  std::string policy, placement, params_json, runtime_model;
  int64_t seed = 0;
  std::string version;
  double wall_seconds = 0;
  uint64_t events = 0;
  uint64_t passes = 0;
  std::string status;  // complete | interrupted | failed
  std::string error;
  std::string fingerprint;
  double timeseries_interval_seconds = 0;
  double preemption_cost_seconds = 0;
  std::string faults = "{}";  // JSON: failure and checkpoint settings (FaultOptions::ToJson)
  std::string models = "{}";  // JSON: model-aware settings (ModelConfig::ToJson), {} = off
  double bsld_threshold_seconds = kDefaultBsldThresholdSeconds;  // for the jobs' bsld column
  // What the policy planned run times with (Policy::PlanningEstimates); empty = NULL.
  std::string planning_estimates;
  // JSON {"LEVEL": "NAME|NAME", ...}: the trace's class names per priority level; empty = NULL
  // (the trace names no class).
  std::string priority_classes;
};

class RunStream;  // the writer thread of one run (sqlite_writer.cc)

class SqliteWriter {
 public:
  // Opens (or prepares to create) `path` and begins the transaction. Throws InputError when the
  // file cannot be written or is not a clustersim database.
  explicit SqliteWriter(std::string path);
  ~SqliteWriter();  // rolls back and removes the temporary file unless committed
  SqliteWriter(const SqliteWriter&) = delete;
  SqliteWriter& operator=(const SqliteWriter&) = delete;

  // Writes the `runs` row of a run that has no other rows (a sweep run that failed before it
  // simulated), outcome included. Returns run_id.
  int64_t WriteRunWithoutRows(const RunRecord& record);
  // Writing a run while it is simulated; the one sequence that writes a run's rows:
  // BeginRun(record, engine) before Engine::Run, WriteFinished(engine, false) between passes
  // (EngineOptions::observe), WriteFinished(engine, true) or WriteLastRows after Run returns,
  // EndRun(record, summary).
  // BeginRun writes the `runs` row but its outcome (below) and starts the writer thread; until
  // EndRun no other method may be called. WriteFinished, called on the engine's thread, hands
  // over the jobs rows of the jobs in a final state (completed, timeout, OOM-failed, rejected)
  // from the first not yet written up to the first not final, and the timeseries rows of the
  // intervals closed since the last call; `run_over` hands over every remaining row. EndRun
  // waits for the writer thread, rethrows its error if it had one, and writes the summary rows,
  // the engine's allocation log (`allocations`; none unless it kept one), its placement curve
  // (`placement_curve`; none for most runs), its failures (`failures`; none without them) and
  // last the outcome: the `runs` columns
  // wall_seconds, events, passes, status, error and fingerprint, from EndRun's `record`.
  // `engine` must be the same engine, alive until EndRun. BeginRun and EndRun return run_id.
  int64_t BeginRun(const RunRecord& record, const Engine& engine);
  void WriteFinished(const Engine& engine, bool run_over);
  // WriteFinished(engine, true) while ComputeSummary(engine, options) runs on another thread
  // (both only read the engine), so that the rows still to hand over at the end of the run and
  // the summary overlap instead of following one another. Returns the summary.
  std::vector<SummaryRow> WriteLastRows(const Engine& engine, const SummaryOptions& options);
  int64_t EndRun(const RunRecord& record, const std::vector<SummaryRow>& summary);
  // Between BeginRun and EndRun: seconds WriteFinished has waited for the writer thread (only
  // WriteFinished(engine, true) waits, when the writer is 8 batches behind); 0 otherwise.
  double wait_seconds() const;
  // Returns the run_id of the first run in the database whose identity (the kRunKeyColumns of
  // sim/output/merge.h: inputs, settings and seed) equals `record`'s, or -1 if there is none.
  int64_t FindSameRun(const RunRecord& record);
  // Writes a validation report as `validation` and `validation_series` rows of run `run_id`.
  void WriteValidation(int64_t run_id, const ValidationReport& report);
  // Copies run `source_run_id` of the clustersim database open on `source` (its `runs` row with
  // every column but run_id, and its jobs, timeseries and summary rows, and its allocations and
  // validation rows when the source has those tables) into this database under
  // a new run id, which it returns. REQUIRES: SchemaProblem(source) is empty.
  int64_t CopyRun(sqlite3* source, int64_t source_run_id);
  // Commits and, for a new database, renames the temporary file into place.
  void Commit();

 private:
  void Exec(const char* sql);
  void AddMissingColumns();
  // The `runs` row without its outcome, which WriteOutcome sets (status 'running' until then:
  // the row is committed only after).
  int64_t InsertRunRow(const RunRecord& record);
  void WriteOutcome(int64_t run_id, const RunRecord& record);
  // The engine's allocation log and placement curve as rows of `run_id` (EndRun).
  void WriteAllocations(int64_t run_id, const Engine& engine);
  void WritePlacementCurve(int64_t run_id, const Engine& engine);
  // The `failures` table: one row per failure of the run (Engine::failure_log; none when off).
  void WriteFailures(int64_t run_id, const Engine& engine);
  // The node pools' node_events (docs/autoscaling.md#output); none without pools.
  void WriteNodeEvents(int64_t run_id, const Engine& engine);
  std::unique_ptr<RunStream> stream_;  // between BeginRun and EndRun
  const Engine* stream_engine_ = nullptr;
  int64_t stream_run_id_ = -1;
  std::string path_;
  std::string write_path_;  // path_ or its temporary sibling
  bool fresh_ = false;
  // A fresh database's temporary file, removed if the process is stopped by a signal.
  std::unique_ptr<RemoveOnSignal> remove_on_signal_;
  bool committed_ = false;
  sqlite3* db_ = nullptr;
};

// FindSameRun in the database file `path`, opened read-only; -1 when the file does not exist.
// Throws InputError naming the file when it is not a clustersim database.
int64_t FindSameRunIn(const std::string& path, const RunRecord& record);

// Returns "" when the database open on `db` has every table and column of the clustersim schema
// (it may have more; some columns added after the first release may be missing, as in a
// database written by an earlier version: CopyRun copies NULL for them), else what is missing, e.g.
// "table jobs has no column trace_status".
std::string SchemaProblem(sqlite3* db);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_SQLITE_WRITER_H_
