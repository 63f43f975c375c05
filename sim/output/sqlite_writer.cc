#include "sim/output/sqlite_writer.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>

#include "sim/output/merge.h"
#include "sim/util/bounded_queue.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL,
  trace_path TEXT, trace_sha256 TEXT, trace_format TEXT,
  cluster_spec TEXT, cluster_sha256 TEXT, cluster_json TEXT,
  policy TEXT, placement TEXT, params TEXT, runtime_model TEXT,
  seed INTEGER, version TEXT,
  wall_seconds REAL, events INTEGER, passes INTEGER,
  status TEXT NOT NULL, error TEXT, fingerprint TEXT,
  timeseries_interval_seconds REAL, preemption_cost_seconds REAL, trace_filter TEXT,
  faults TEXT, models TEXT, planning_estimates TEXT, priority_classes TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  job_index INTEGER NOT NULL,
  job_id TEXT NOT NULL, user TEXT, vc TEXT,
  submit_time REAL NOT NULL, start_time REAL, end_time REAL,
  wait_time REAL, jct REAL, run_time REAL,
  gpus_requested INTEGER, gpus_allocated INTEGER, gpu_type TEXT, nodes INTEGER,
  status TEXT NOT NULL, reason TEXT,
  preemptions INTEGER, restarts INTEGER, oom_failures INTEGER,
  batch_requested INTEGER, batch_used INTEGER, memory_per_gpu_gib REAL,
  slowdown REAL, energy_kwh REAL, trace_duration REAL, trace_status TEXT,
  checkpoint_seconds REAL, lost_gpu_seconds REAL,
  queued_time REAL, bsld REAL, gpu_hours REAL, cost_usd REAL, priority INTEGER,
  recorded_start REAL, recorded_end REAL, recorded_attempts TEXT,
  cpus_requested REAL, host_memory_gib_requested REAL,
  preemption_gpu_seconds REAL, borrowed_gpu_seconds REAL, reserved_start REAL, deadline REAL,
  ettr REAL, restart_gpu_seconds REAL, capacity_wait_gpu_seconds REAL
);
CREATE TABLE IF NOT EXISTS timeseries (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  t_start REAL NOT NULL, t_end REAL NOT NULL, gpu_type TEXT NOT NULL,
  busy_gpus REAL, utilization REAL, memory_utilization REAL, power_watts REAL,
  queue_length REAL, running_jobs REAL, stranded_gpus REAL, i_frag REAL, node_imbalance REAL,
  f_mem REAL, fgd_fragmentation REAL, fgd_fragmented_gpus REAL,
  cpu_utilization REAL, host_memory_utilization REAL, cpu_stranded_gpus REAL
);
CREATE TABLE IF NOT EXISTS summary (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  metric TEXT NOT NULL, scope TEXT NOT NULL, value REAL,
  PRIMARY KEY (run_id, metric, scope)
);
CREATE TABLE IF NOT EXISTS allocations (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  job_index INTEGER NOT NULL, start_time REAL NOT NULL, end_time REAL NOT NULL,
  reason TEXT NOT NULL, gpu_type TEXT, gpus INTEGER, gpu_milli INTEGER,
  nodes TEXT, gpu_indexes TEXT
);
CREATE TABLE IF NOT EXISTS validation (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  scope TEXT NOT NULL, metric TEXT NOT NULL, simulated REAL, recorded REAL, value REAL,
  PRIMARY KEY (run_id, scope, metric)
);
CREATE TABLE IF NOT EXISTS placement_curve (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  percent INTEGER NOT NULL, arrived_share REAL, allocated_share REAL, unallocated_share REAL,
  frag_idle_share REAL, frag_total_share REAL, failed_jobs INTEGER,
  PRIMARY KEY (run_id, percent)
);
CREATE TABLE IF NOT EXISTS failures (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  failure_index INTEGER NOT NULL, time REAL NOT NULL, cause TEXT NOT NULL, component TEXT,
  domain TEXT, first_node INTEGER, nodes INTEGER, first_gpu INTEGER, gpus_out INTEGER,
  repair_seconds REAL,
  jobs_hit INTEGER, job_ids TEXT, spares_used INTEGER,
  PRIMARY KEY (run_id, failure_index)
);
CREATE TABLE IF NOT EXISTS node_events (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  time REAL NOT NULL, node_group TEXT NOT NULL, node INTEGER NOT NULL, event TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS wait_reasons (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  job_index INTEGER NOT NULL, reason TEXT NOT NULL, seconds REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS validation_series (
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  scope TEXT NOT NULL, t_start REAL NOT NULL, t_end REAL NOT NULL,
  simulated_utilization REAL, recorded_utilization REAL,
  simulated_queue_length REAL, recorded_queue_length REAL
);
)sql";

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw InputError(std::string("SQLite prepare failed: ") + sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  sqlite3_stmt* get() { return stmt_; }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // Text is bound without a copy (SQLITE_STATIC): it must outlive Step(), hence no temporaries.
  void Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void Bind(int i, std::string&& v) = delete;
  void Bind(int i, const char* v) { sqlite3_bind_text(stmt_, i, v, -1, SQLITE_STATIC); }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  void BindOptional(int i, double v, bool present) {
    if (present) {
      Bind(i, v);
    } else {
      BindNull(i);
    }
  }
  void Step() {
    if (sqlite3_step(stmt_) != SQLITE_DONE) {
      throw InputError(std::string("SQLite write failed: ") + sqlite3_errmsg(db_));
    }
    sqlite3_reset(stmt_);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// "start,end,gpus;start,end,gpus..." (seconds, shortest round-trip text).
std::string RecordedAttemptsText(const Trace& trace, const Job& job) {
  std::string text;
  char number[32];
  auto append = [&](double v) {
    const auto result = std::to_chars(number, number + sizeof number, v);
    text.append(number, result.ptr);
  };
  for (uint32_t a = 0; a < job.recorded_attempt_count; ++a) {
    const RecordedAttempt& attempt = trace.recorded_attempts[job.recorded_attempt_begin + a];
    if (a > 0) text += ';';
    append(attempt.start);
    text += ',';
    append(attempt.end);
    text += ',' + std::to_string(attempt.gpus);
  }
  return text;
}

std::string NowUtc() {
  char buffer[32];
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&t, &utc);  // not std::gmtime: sweeps write from several threads at once
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

constexpr const char* kTables[] = {"runs", "jobs", "timeseries", "summary"};
// Tables added after the first release: a database written before may lack them (merge then
// copies nothing for them); `runs` rows own their rows like the tables above.
constexpr const char* kAddedTables[] = {"allocations", "validation", "validation_series",
                                        "placement_curve", "failures", "wait_reasons",
                                        "node_events"};

// Columns added to the schema after its first release: a database written by an earlier version
// lacks them. The writer adds them to a database it appends to (NULL in its old rows); merge
// copies NULL from a source without them, except for columns of the runs' identity key
// (sim/output/merge.cc), which a source must have.
struct AddedColumn {
  const char* table;
  const char* column;
  const char* type;
  bool source_may_lack;
};
constexpr AddedColumn kAddedColumns[] = {
    {"runs", "faults", "TEXT", false},
    {"runs", "models", "TEXT", false},
    {"runs", "planning_estimates", "TEXT", true},
    {"runs", "priority_classes", "TEXT", true},
    {"jobs", "checkpoint_seconds", "REAL", true},
    {"jobs", "lost_gpu_seconds", "REAL", true},
    {"jobs", "queued_time", "REAL", true},
    {"jobs", "bsld", "REAL", true},
    {"jobs", "gpu_hours", "REAL", true},
    {"jobs", "cost_usd", "REAL", true},
    {"jobs", "priority", "INTEGER", true},
    {"jobs", "recorded_start", "REAL", true},
    {"jobs", "recorded_end", "REAL", true},
    {"jobs", "recorded_attempts", "TEXT", true},
    {"jobs", "preemption_gpu_seconds", "REAL", true},
    {"jobs", "borrowed_gpu_seconds", "REAL", true},
    {"jobs", "reserved_start", "REAL", true},
    {"jobs", "deadline", "REAL", true},
    {"timeseries", "f_mem", "REAL", true},
    {"timeseries", "fgd_fragmentation", "REAL", true},
    {"timeseries", "fgd_fragmented_gpus", "REAL", true},
    {"jobs", "cpus_requested", "REAL", true},
    {"jobs", "host_memory_gib_requested", "REAL", true},
    {"timeseries", "cpu_utilization", "REAL", true},
    {"timeseries", "host_memory_utilization", "REAL", true},
    {"timeseries", "cpu_stranded_gpus", "REAL", true},
    {"jobs", "ettr", "REAL", true},
    {"jobs", "restart_gpu_seconds", "REAL", true},
    {"jobs", "capacity_wait_gpu_seconds", "REAL", true},
};

bool SourceMayLack(const std::string& table, const std::string& column) {
  for (const AddedColumn& added : kAddedColumns) {
    if (table == added.table && column == added.column) return added.source_may_lack;
  }
  return false;
}

// The column names of `table` in `db`, in declaration order (empty if there is no such table).
std::vector<std::string> TableColumns(sqlite3* db, const std::string& table) {
  std::vector<std::string> columns;
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "PRAGMA main.table_info(\"" + table + "\")";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    throw InputError("SQLite: " + message);
  }
  int rc = 0;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
  }
  const std::string message = sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) throw InputError("SQLite: " + message);
  return columns;
}

}  // namespace

SqliteWriter::SqliteWriter(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  fresh_ = !fs::exists(path_);
  write_path_ = fresh_ ? path_ + ".tmp-" + std::to_string(::getpid()) : path_;
  if (fresh_) {
    // The folder must exist: making one wherever a mistyped path points is the caller's choice
    // (sim/util/output_path.h, --mkdir).
    const fs::path parent = fs::path(path_).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      throw InputError(path_, 0, 0,
                       "cannot create the database: the folder " + parent.string() +
                           " does not exist (create it first, or add --mkdir to create it)");
    }
    fs::remove(write_path_, ec);
    remove_on_signal_ = std::make_unique<RemoveOnSignal>(write_path_);
  }
  // Before SQLite's first use in the process: no memory statistics, whose global mutex every
  // allocation would take (a tenth of the writer thread's time on a long run).
  static const int kConfigured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)kConfigured;  // SQLITE_MISUSE when SQLite was used before: statistics stay on
  // NOMUTEX: the connection is used by one thread at a time (the writer thread between BeginRun
  // and EndRun, the caller's otherwise), so it needs no mutex of its own.
  if (sqlite3_open_v2(write_path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path_, 0, 0, "cannot open database: " + message);
  }
  // The destructor does not run when the constructor throws: close and clean up here.
  try {
    if (fresh_) {
      // The temporary file is renamed into place only when complete: no journal needed.
      // 16 KiB pages: a tenth less CPU per jobs row than the default 4 KiB (fewer page splits;
      // measured in bench/README.md); page size is the file's own setting, so only for a new file.
      Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=16384;");
    }
    Exec("BEGIN");
    // An existing database must be one of ours: either empty or holding a `runs` table.
    bool has_tables = false;
    bool has_runs = false;
    {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &stmt,
                             nullptr) != SQLITE_OK) {
        sqlite3_finalize(stmt);
        throw InputError(path_, 0, 0, "not a SQLite database");
      }
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        has_tables = true;
        const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        has_runs = has_runs || (name && std::string(name) == "runs");
      }
      sqlite3_finalize(stmt);
    }
    if (has_tables && !has_runs) {
      throw InputError(path_, 0, 0, "not a clustersim database: it has tables but no `runs` table");
    }
    try {
      Exec(kSchema);
      AddMissingColumns();
    } catch (const InputError&) {
      throw InputError(path_, 0, 0, "not a clustersim database (or not writable)");
    }
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    if (fresh_) std::remove(write_path_.c_str());
    throw;
  }
}

void SqliteWriter::AddMissingColumns() {
  for (const auto& [table, column, type, source_may_lack] : kAddedColumns) {
    sqlite3_stmt* stmt = nullptr;
    const std::string query = std::string("SELECT 1 FROM pragma_table_info('") + table +
                              "') WHERE name = '" + column + "'";
    bool present = false;
    if (sqlite3_prepare_v2(db_, query.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      present = sqlite3_step(stmt) == SQLITE_ROW;
    }
    sqlite3_finalize(stmt);
    if (!present) {
      Exec((std::string("ALTER TABLE ") + table + " ADD COLUMN " + column + " " + type).c_str());
    }
  }
}

SqliteWriter::~SqliteWriter() {
  stream_.reset();  // stops the writer thread before the connection closes
  if (db_ && !committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (db_) sqlite3_close(db_);
  if (fresh_ && !committed_) std::remove(write_path_.c_str());
}

void SqliteWriter::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw InputError(path_, 0, 0, "SQLite: " + message);
  }
}

namespace {

// One value of a row handed to the writer thread. Text is not copied: it points at storage that
// outlives the write (the trace, the catalogs, an interned symbol, a string literal, or the
// batch's own `texts`).
struct SqlValue {
  enum Kind : uint8_t { kNull, kInteger, kReal, kText };
  union {
    int64_t integer;
    double real;
    const char* text;
  };
  int32_t size = 0;  // bytes of text
  Kind kind = kNull;
  SqlValue() : integer(0) {}
};

// What a jobs row takes from the engine's state, copied on the engine's thread once the row is
// final. The rest of the row comes from the trace and the catalogs, which do not change during a
// run, and is read on the writer thread (RunStream::BuildJobRow). 168 bytes, against 46 x 16 bytes
// of values: the engine's thread writes a quarter of the memory it did when it built whole rows,
// and the writer thread reads it once (bench/README.md, "Shallow queues under conservative, the
// jobs rows, merging").
struct JobRowState {
  double first_start;
  double end_time;
  double run_seconds;
  double queued_seconds;
  double gpu_seconds;
  double energy_joules;
  double checkpoint_seconds;
  double lost_gpu_seconds;
  double preemption_gpu_seconds;
  double borrowed_gpu_seconds;
  double memory_per_gpu;       // bytes (ModelRun::memory_per_gpu)
  double promised_start;       // NaN = none
  double ettr;                 // NaN = none
  double restart_gpu_seconds;  // the failure log's, 0 without an entry
  double wait_gpu_seconds;
  const std::string* reason;  // in the batch's `texts`; nullptr = none
  uint32_t job;               // index in the trace
  int32_t max_gpus;
  int32_t max_nodes;
  int32_t preemptions;
  int32_t restarts;
  int32_t oom_failures;
  int32_t batch;  // ModelRun::batch
  int16_t gpu_type;
  JobState state;
  bool queued;       // reached the queue (queued_time is defined)
  bool reliability;  // failures or checkpoints are on (the restart/wait columns are defined)
};
static_assert(sizeof(void*) != 8 || sizeof(JobRowState) <= 168, "JobRowState grew (see above)");

// Rows of one table as the engine's thread handed them: `values` row after row, or for the jobs
// table one JobRowState per row.
struct RowBatch {
  enum Table : uint8_t { kJobs, kTimeseries, kWaitReasons };
  Table table = kJobs;
  std::vector<SqlValue> values;
  std::vector<JobRowState> jobs;
  std::deque<std::string> texts;  // text made for these rows (reasons, recorded attempts)
};

constexpr int kJobColumns = 46;
constexpr int kTimeseriesColumns = 19;
constexpr int kWaitReasonColumns = 4;

// Columns by name: a database upgraded by AddMissingColumns has them in another order.
constexpr const char* kInsertJob =
    "INSERT INTO jobs (run_id, job_index, job_id, user, vc, submit_time, start_time, "
    "end_time, wait_time, jct, run_time, gpus_requested, gpus_allocated, gpu_type, "
    "nodes, status, reason, preemptions, restarts, oom_failures, batch_requested, "
    "batch_used, memory_per_gpu_gib, slowdown, energy_kwh, trace_duration, "
    "trace_status, checkpoint_seconds, lost_gpu_seconds, queued_time, bsld, "
    "gpu_hours, cost_usd, priority, recorded_start, recorded_end, recorded_attempts, "
    "cpus_requested, host_memory_gib_requested, preemption_gpu_seconds, "
    "borrowed_gpu_seconds, reserved_start, deadline, ettr, restart_gpu_seconds, "
    "capacity_wait_gpu_seconds) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
    "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char* kInsertTimeseries =
    "INSERT INTO timeseries (run_id, t_start, t_end, gpu_type, busy_gpus, utilization, "
    "memory_utilization, power_watts, queue_length, running_jobs, stranded_gpus, "
    "i_frag, node_imbalance, f_mem, fgd_fragmentation, fgd_fragmented_gpus, "
    "cpu_utilization, host_memory_utilization, cpu_stranded_gpus) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char* kInsertWaitReason =
    "INSERT INTO wait_reasons (run_id, job_index, reason, seconds) VALUES (?,?,?,?)";

// Appends one row of `columns` values to a batch; its setters are Statement's (1-based).
class RowBuilder {
 public:
  RowBuilder(RowBatch* batch, int columns) : batch_(batch), base_(batch->values.size()) {
    batch->values.resize(base_ + columns);
  }
  void Bind(int i, double v) {
    SqlValue& value = At(i);
    value.kind = SqlValue::kReal;
    value.real = v;
  }
  void Bind(int i, int64_t v) {
    SqlValue& value = At(i);
    value.kind = SqlValue::kInteger;
    value.integer = v;
  }
  // `v` must outlive the write (see SqlValue); Own copies text made for the row.
  void Bind(int i, const std::string& v) { BindText(i, v.data(), v.size()); }
  void Bind(int i, std::string&& v) = delete;
  void Bind(int i, const char* v) { BindText(i, v, std::strlen(v)); }
  void Own(int i, std::string v) { Bind(i, batch_->texts.emplace_back(std::move(v))); }
  void BindNull(int i) { At(i).kind = SqlValue::kNull; }
  void BindOptional(int i, double v, bool present) {
    if (present) {
      Bind(i, v);
    } else {
      BindNull(i);
    }
  }

 private:
  SqlValue& At(int i) { return batch_->values[base_ + i - 1]; }
  void BindText(int i, const char* text, size_t size) {
    SqlValue& value = At(i);
    value.kind = SqlValue::kText;
    value.text = text;
    value.size = static_cast<int32_t>(size);
  }
  RowBatch* batch_;
  size_t base_;
};

// A job whose row can no longer change: ended, or rejected without running.
bool IsFinal(JobState state) { return Ended(state) || state == JobState::kRejected; }

}  // namespace

// The writer thread of one run (SqliteWriter::BeginRun to EndRun) and what the engine's thread
// keeps to feed it. The engine's thread owns the cursors and the batches it fills; a batch pushed
// on `full_` belongs to the writer thread until it comes back empty on `empty_`. At most
// kBatches exist, so neither queue's Push ever waits and memory stays bounded; the engine's
// thread waits for an empty batch only after the run, when it hands over the last rows. The
// writer thread alone uses the connection until Join() returns.
class RunStream {
 public:
  // Trade-off: larger batches mean fewer hand-overs, more memory in flight (a jobs row is
  // 43 x 16 bytes: 8 batches of 512 rows hold 2.8 MB).
  static constexpr size_t kRowsPerBatch = 512;
  static constexpr int kBatches = 8;
  // Rows per INSERT statement ("VALUES (...),(...),..."): the statement's fixed cost (transaction
  // check, cursor, reset) is paid once per 32 rows; this cut the writer thread's CPU time by a
  // quarter on a million jobs rows (bench/README.md). More rows per statement gained little.
  static constexpr int kRowsPerStatement = 32;

  RunStream(sqlite3* db, int64_t run_id, double bsld_threshold_seconds, const Engine& engine)
      : db_(db),
        run_id_(run_id),
        bsld_threshold_seconds_(bsld_threshold_seconds),
        engine_(engine),
        full_(kBatches),
        empty_(kBatches) {
    thread_ = std::thread([this] { WriterLoop(); });
  }
  RunStream(const RunStream&) = delete;
  RunStream& operator=(const RunStream&) = delete;
  // Without Join (an error on the engine's thread): the writer drops what is queued and stops.
  ~RunStream() {
    if (thread_.joinable()) {
      abandon_.store(true);
      full_.Close();
      thread_.join();
    }
  }

  // Engine's thread: see SqliteWriter::WriteFinished. Before the run is over it never waits for
  // the writer thread: when every batch is with the writer, the rows not yet handed stay in the
  // engine's state (a final job's row and a closed interval no longer change) and go at a later
  // call. Waiting instead made the two threads take turns: jobs end out of submission order, so
  // final rows come in bursts larger than the batches in flight.
  void Hand(const Engine& engine, bool run_over) {
    CHECK(&engine == &engine_, "SqliteWriter::WriteFinished: another engine than BeginRun's");
    const std::vector<JobRun>& runs = engine.runs();
    // A job's wait_reasons rows go with its jobs row (its reasons are final with it).
    while (next_job_ < runs.size() && (run_over || IsFinal(runs[next_job_].state)) &&
           Hold(&jobs_, RowBatch::kJobs, run_over) &&
           Hold(&waits_, RowBatch::kWaitReasons, run_over)) {
      AppendWaitReasons(next_job_);
      AppendJob(next_job_++);
      if (jobs_->jobs.size() >= kRowsPerBatch) Send(&jobs_);
      if (waits_->values.size() >= kRowsPerBatch * kWaitReasonColumns) Send(&waits_);
    }
    const std::vector<TimeseriesRow>& rows = engine.metrics().rows();
    while (next_interval_ < rows.size() && Hold(&timeseries_, RowBatch::kTimeseries, run_over)) {
      AppendInterval(rows[next_interval_++]);
      if (timeseries_->values.size() >= kRowsPerBatch * kTimeseriesColumns) Send(&timeseries_);
    }
    if (run_over) {
      if (jobs_ && !jobs_->jobs.empty()) Send(&jobs_);
      if (timeseries_ && !timeseries_->values.empty()) Send(&timeseries_);
      if (waits_ && !waits_->values.empty()) Send(&waits_);
      run_over_ = true;
    }
  }

  // Seconds the engine's thread has waited for the writer thread so far.
  double wait_seconds() const { return wait_seconds_; }

  // Waits for the writer thread to write everything handed over; rethrows its error.
  void Join() {
    CHECK(run_over_, "SqliteWriter::EndRun before WriteFinished(engine, true)");
    full_.Close();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Makes `filling` (the batch of `table` being filled on the engine's thread, none between Send
  // and the next Hold) hold an empty batch: one handed back, else a new one while fewer than
  // kBatches exist, else, with `wait`, the next one the writer hands back. Returns whether it
  // holds one.
  bool Hold(std::optional<RowBatch>* filling, RowBatch::Table table, bool wait) {
    if (*filling) return true;
    RowBatch batch;
    if (!empty_.TryPop(&batch)) {
      if (batches_made_ < kBatches) {
        ++batches_made_;
        batch.values.reserve(kRowsPerBatch * kTimeseriesColumns);
        batch.jobs.reserve(kRowsPerBatch);
      } else if (wait) {
        const auto start = std::chrono::steady_clock::now();
        empty_.Pop(&batch);  // the writer is kBatches behind
        wait_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } else {
        return false;
      }
    }
    batch.table = table;
    *filling = std::move(batch);
    return true;
  }

  // The batch belongs to the writer thread until it comes back empty.
  void Send(std::optional<RowBatch>* filling) {
    full_.Push(std::move(**filling));
    filling->reset();
  }

  // One table's insert statements: `one` for a row, `many` for kRowsPerStatement rows, and what
  // each of their parameters holds (at first nothing, which no value equals).
  struct Inserter {
    Inserter(sqlite3* db, const char* sql, int columns, int rows_per_statement)
        : columns(columns),
          rows_per_statement(rows_per_statement),
          one(db, sql),
          many(db, RepeatValues(sql, rows_per_statement).c_str()),
          bound_one(columns, Unbound()),
          bound_many(static_cast<size_t>(columns) * rows_per_statement, Unbound()) {}
    static SqlValue Unbound() {
      SqlValue unbound;
      unbound.kind = SqlValue::kText;
      unbound.text = nullptr;
      unbound.size = -1;
      return unbound;
    }
    // "INSERT ... VALUES (?,...)" with the tuple repeated `rows` times.
    static std::string RepeatValues(const std::string& sql, int rows) {
      const size_t values = sql.rfind("VALUES ") + 7;
      std::string text = sql;
      for (int r = 1; r < rows; ++r) text += "," + sql.substr(values);
      return text;
    }
    // Writes the rows of `values`.
    void Write(const std::vector<SqlValue>& values) {
      const size_t rows = values.size() / columns;
      size_t r = 0;
      for (; r + rows_per_statement <= rows; r += rows_per_statement) {
        BindAndStep(many, &values[r * columns], static_cast<size_t>(columns) * rows_per_statement,
                    bound_many.data());
      }
      for (; r < rows; ++r) BindAndStep(one, &values[r * columns], columns, bound_one.data());
    }
    const int columns;
    const int rows_per_statement;
    Statement one;
    Statement many;
    std::vector<SqlValue> bound_one;
    std::vector<SqlValue> bound_many;
  };

  void WriterLoop() {
    std::unique_ptr<Inserter> jobs;
    std::unique_ptr<Inserter> timeseries;
    std::unique_ptr<Inserter> waits;
    // As many rows per statement as the library's parameter limit allows, up to
    // kRowsPerStatement.
    const int parameters = sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
    auto rows_for = [&](int columns) {
      return std::clamp(parameters / columns, 1, kRowsPerStatement);
    };
    try {
      jobs = std::make_unique<Inserter>(db_, kInsertJob, kJobColumns, rows_for(kJobColumns));
      timeseries = std::make_unique<Inserter>(db_, kInsertTimeseries, kTimeseriesColumns,
                                              rows_for(kTimeseriesColumns));
      waits = std::make_unique<Inserter>(db_, kInsertWaitReason, kWaitReasonColumns,
                                         rows_for(kWaitReasonColumns));
    } catch (...) {
      error_ = std::current_exception();
    }
    RowBatch batch;
    while (full_.Pop(&batch)) {
      if (!error_ && !abandon_.load(std::memory_order_relaxed)) {
        try {
          if (batch.table == RowBatch::kJobs) {
            WriteJobs(batch, *jobs);
          } else {
            (batch.table == RowBatch::kTimeseries ? *timeseries : *waits).Write(batch.values);
          }
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      batch.values.clear();
      batch.jobs.clear();
      batch.texts.clear();
      empty_.Push(std::move(batch));
    }
  }

  // Binds `count` values to the parameters of `s` and steps it once. A parameter keeps its value
  // across sqlite3_reset, so a value equal to the one bound before (run_id, the NULL and constant
  // columns, the same user) is not bound again: `bound` holds what each parameter has.
  static void BindAndStep(Statement& s, const SqlValue* values, size_t count, SqlValue* bound) {
    sqlite3_stmt* stmt = s.get();
    for (size_t c = 0; c < count; ++c) {
      const SqlValue& v = values[c];
      if (SameValue(v, bound[c])) continue;
      bound[c] = v;
      const int i = static_cast<int>(c) + 1;
      switch (v.kind) {
        case SqlValue::kNull:
          sqlite3_bind_null(stmt, i);
          break;
        case SqlValue::kInteger:
          sqlite3_bind_int64(stmt, i, v.integer);
          break;
        case SqlValue::kReal:
          sqlite3_bind_double(stmt, i, v.real);
          break;
        case SqlValue::kText:
          // The same pointer and size: SQLite reads the text at the step, so an unchanged
          // binding sees the current row's text.
          sqlite3_bind_text(stmt, i, v.text, v.size, SQLITE_STATIC);
          break;
      }
    }
    s.Step();
  }

  static bool SameValue(const SqlValue& a, const SqlValue& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case SqlValue::kNull:
        return true;
      case SqlValue::kInteger:
        return a.integer == b.integer;
      case SqlValue::kReal:
        return std::memcmp(&a.real, &b.real, sizeof a.real) == 0;  // -0.0 is not 0.0
      case SqlValue::kText:
        return a.text == b.text && a.size == b.size;
    }
    return false;
  }

  // Engine's thread: what job i's row takes from the engine's state (its row is final).
  void AppendJob(size_t i) {
    const JobId id = static_cast<JobId>(i);
    const JobRun& run = engine_.runs()[i];
    const JobCosts& costs = engine_.costs(id);
    const ModelRun& model = engine_.model_run(id);
    const JobReliability* rel = engine_.failure_log().find(id);
    JobRowState& r = jobs_->jobs.emplace_back();
    r.first_start = run.first_start;
    r.end_time = run.end_time;
    r.run_seconds = run.run_seconds;
    r.queued_seconds = run.queued_seconds;
    r.gpu_seconds = run.gpu_seconds;
    r.energy_joules = run.energy_joules;
    r.checkpoint_seconds = costs.checkpoint_seconds;
    r.lost_gpu_seconds = costs.lost_gpu_seconds;
    r.preemption_gpu_seconds = costs.preemption_gpu_seconds;
    r.borrowed_gpu_seconds = costs.borrowed_gpu_seconds;
    r.memory_per_gpu = model.memory_per_gpu;
    r.promised_start = engine_.promised_start(id);
    r.ettr = engine_.Ettr(id);
    r.restart_gpu_seconds = rel != nullptr ? rel->restart_gpu_seconds : 0.0;
    r.wait_gpu_seconds = rel != nullptr ? rel->wait_gpu_seconds : 0.0;
    // The engine's map of reasons changes as the run goes on: the row keeps a copy.
    const std::string& reason = engine_.reason(id);
    r.reason = reason.empty() ? nullptr : &jobs_->texts.emplace_back(reason);
    r.job = static_cast<uint32_t>(i);
    r.max_gpus = run.max_gpus;
    r.max_nodes = run.max_nodes;
    r.preemptions = run.preemptions;
    r.restarts = costs.restarts;
    r.oom_failures = model.oom_failures;
    r.batch = model.batch;
    r.gpu_type = static_cast<int16_t>(run.gpu_type);
    r.state = run.state;
    // Queued time exists for every job that reached the queue (not rejected, submitted before
    // the run stopped).
    r.queued = run.state != JobState::kRejected &&
               (run.first_start >= 0 ||
                engine_.trace().jobs[i].submit_time <= engine_.metrics().last_time());
    r.reliability = !engine_.failure_log().productive_seconds().empty();
  }

  // Writer thread: the jobs rows of `batch`, built kRowsPerStatement at a time into `scratch`
  // (small enough to stay in this core's cache).
  void WriteJobs(RowBatch& batch, Inserter& inserter) {
    const size_t chunk = static_cast<size_t>(inserter.rows_per_statement);
    for (size_t first = 0; first < batch.jobs.size(); first += chunk) {
      scratch_.values.clear();
      scratch_.texts.clear();
      const size_t last = std::min(batch.jobs.size(), first + chunk);
      for (size_t k = first; k < last; ++k) BuildJobRow(batch.jobs[k]);
      inserter.Write(scratch_.values);
    }
  }

  // Writer thread: one jobs row from its engine state and what the trace and catalogs hold.
  void BuildJobRow(const JobRowState& r) {
    const Trace& trace = engine_.trace();
    const HardwareCatalog& catalog = engine_.cluster().catalog();
    const Job& job = trace.jobs[r.job];
    const bool started = r.first_start >= 0;
    const bool ended = Ended(r.state);
    RowBuilder s(&scratch_, kJobColumns);
    s.Bind(1, run_id_);
    s.Bind(2, static_cast<int64_t>(r.job));
    s.Bind(3, job.id);
    s.Bind(4, job.user.str());
    s.Bind(5, job.vc.str());
    s.Bind(6, job.submit_time);
    s.BindOptional(7, r.first_start, started);
    s.BindOptional(8, r.end_time, ended);
    s.BindOptional(9, r.first_start - job.submit_time, started);
    s.BindOptional(10, r.end_time - job.submit_time, ended);
    s.BindOptional(11, r.run_seconds, started);
    s.Bind(12, static_cast<int64_t>(job.gpus));
    s.Bind(13, static_cast<int64_t>(r.max_gpus));
    if (started && r.gpu_type >= 0) {
      // Multi-GPU jobs use one type; the allocation keeps its type after the job stops.
      s.Bind(14, catalog.gpu(r.gpu_type).name);
    } else {
      s.BindNull(14);
    }
    s.Bind(15, static_cast<int64_t>(r.max_nodes));
    s.Bind(16, JobStateName(r.state));  // a string literal: static storage
    if (r.reason == nullptr) {
      s.BindNull(17);
    } else {
      s.Bind(17, *r.reason);  // in the handed batch's texts, kept until it is written
    }
    s.Bind(18, static_cast<int64_t>(r.preemptions));
    s.Bind(19, static_cast<int64_t>(r.restarts));
    s.Bind(20, static_cast<int64_t>(r.oom_failures));
    s.BindOptional(21, job.batch_size, job.batch_size > 0);
    // Batch and memory are known in model-aware runs (memory_per_gpu > 0 once started).
    const bool modelled = started && r.memory_per_gpu > 0;
    s.BindOptional(22, r.batch, modelled && r.batch > 0);
    s.BindOptional(23, r.memory_per_gpu / (1u << 30), modelled);
    s.BindOptional(24, (r.end_time - job.submit_time) / r.run_seconds,
                   ended && r.run_seconds > 0);
    s.Bind(25, r.energy_joules / 3.6e6);
    s.Bind(26, job.duration);
    if (job.trace_status.empty()) {
      s.BindNull(27);
    } else {
      s.Bind(27, job.trace_status.str());
    }
    s.Bind(28, r.checkpoint_seconds);
    s.Bind(29, r.lost_gpu_seconds);
    s.BindOptional(30, r.queued_seconds, r.queued);
    s.BindOptional(
        31, BoundedSlowdown(r.end_time - job.submit_time, r.run_seconds, bsld_threshold_seconds_),
        ended);
    s.Bind(32, r.gpu_seconds / 3600);
    // Cost allocation: the GPU-hours the job held at its GPU type's price.
    const double price = r.gpu_type >= 0 ? catalog.gpu(r.gpu_type).price_per_gpu_hour : 0.0;
    s.Bind(33, r.gpu_seconds / 3600 * price);
    s.Bind(34, static_cast<int64_t>(job.priority));
    s.BindOptional(35, job.recorded_start, job.has_recorded_start());
    s.BindOptional(36, job.recorded_end, job.has_recorded_end());
    if (job.recorded_attempt_count > 0) {
      s.Own(37, RecordedAttemptsText(trace, job));
    } else {
      s.BindNull(37);
    }
    s.BindOptional(38, job.cpu_milli / 1000.0, job.cpu_milli > 0);
    s.BindOptional(39, job.memory_mib / 1024.0, job.memory_mib > 0);
    s.Bind(40, r.preemption_gpu_seconds);
    s.Bind(41, r.borrowed_gpu_seconds);
    s.BindOptional(42, r.promised_start, !std::isnan(r.promised_start));
    const double deadline = trace.DeadlineOf(job);  // absolute; +inf = none
    s.BindOptional(43, deadline, std::isfinite(deadline));
    // Reliability (docs/reliability.md#metrics): only when failures or checkpoints are on.
    s.BindOptional(44, r.ettr, !std::isnan(r.ettr));
    s.BindOptional(45, r.restart_gpu_seconds, r.reliability);
    s.BindOptional(46, r.wait_gpu_seconds, r.reliability);
  }

  // The job's seconds per wait reason (reasons with none have no row).
  void AppendWaitReasons(size_t i) {
    for (const auto& [reason, seconds] :
         engine_.wait_reasons().Seconds(static_cast<JobId>(i))) {
      RowBuilder s(&*waits_, kWaitReasonColumns);
      s.Bind(1, run_id_);
      s.Bind(2, static_cast<int64_t>(i));
      s.Bind(3, WaitReasonName(reason));  // a string literal: static storage
      s.Bind(4, seconds);
    }
  }

  void AppendInterval(const TimeseriesRow& row) {
    const Cluster& cluster = engine_.cluster();
    RowBuilder s(&*timeseries_, kTimeseriesColumns);
    s.Bind(1, run_id_);
    s.Bind(2, row.t_start);
    s.Bind(3, row.t_end);
    s.Bind(4, row.gpu_type < 0 ? "all" : cluster.catalog().gpu(row.gpu_type).name.c_str());
    s.Bind(5, row.busy_gpus);
    s.Bind(6, row.utilization);
    s.Bind(7, row.memory_utilization);
    s.Bind(8, row.power_watts);
    s.BindOptional(9, row.queue_length, row.gpu_type < 0);
    s.BindOptional(10, row.running_jobs, row.gpu_type < 0);
    s.BindOptional(11, row.stranded_gpus, row.gpu_type < 0);
    s.BindOptional(12, row.i_frag, row.gpu_type < 0);
    s.BindOptional(13, row.node_imbalance, row.gpu_type < 0);
    s.BindOptional(14, row.f_mem, row.gpu_type < 0);
    s.BindOptional(15, row.fgd_fragmentation, row.fgd_fragmentation >= 0);
    s.BindOptional(16, row.fgd_fragmented_gpus, row.fgd_fragmented_gpus >= 0);
    s.BindOptional(17, row.cpu_utilization, row.cpu_utilization >= 0);
    s.BindOptional(18, row.host_memory_utilization, row.host_memory_utilization >= 0);
    s.BindOptional(19, row.cpu_stranded_gpus, row.cpu_stranded_gpus >= 0);
  }

  sqlite3* const db_;
  const int64_t run_id_;
  const double bsld_threshold_seconds_;
  const Engine& engine_;
  // The engine's thread's: the next job and interval to hand over, the batches being filled.
  size_t next_job_ = 0;
  size_t next_interval_ = 0;
  int batches_made_ = 0;
  bool run_over_ = false;
  double wait_seconds_ = 0;
  std::optional<RowBatch> jobs_;
  std::optional<RowBatch> timeseries_;
  std::optional<RowBatch> waits_;
  RowBatch scratch_;  // the writer thread's: jobs rows being bound
  BoundedQueue<RowBatch> full_;   // to the writer thread
  BoundedQueue<RowBatch> empty_;  // back, cleared
  std::atomic<bool> abandon_{false};
  std::exception_ptr error_;  // the writer thread's; read after join
  std::thread thread_;
};

int64_t SqliteWriter::InsertRunRow(const RunRecord& r) {
  Statement s(db_,
              "INSERT INTO runs (created_at, trace_path, trace_sha256, trace_format, "
              "cluster_spec, cluster_sha256, cluster_json, policy, placement, params, "
              "runtime_model, seed, version, status, timeseries_interval_seconds, "
              "preemption_cost_seconds, trace_filter, faults, models, planning_estimates, "
              "priority_classes) "
              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'running',?,?,?,?,?,?,?)");
  const std::string now = NowUtc();
  s.Bind(1, now);
  s.Bind(2, r.trace_path);
  s.Bind(3, r.trace_sha256);
  s.Bind(4, r.trace_format);
  s.Bind(5, r.cluster_spec);
  s.Bind(6, r.cluster_sha256);
  s.Bind(7, r.cluster_json);
  s.Bind(8, r.policy);
  s.Bind(9, r.placement);
  s.Bind(10, r.params_json);
  s.Bind(11, r.runtime_model);
  s.Bind(12, r.seed);
  s.Bind(13, r.version);
  s.Bind(14, r.timeseries_interval_seconds);
  s.Bind(15, r.preemption_cost_seconds);
  s.Bind(16, r.trace_filter);
  s.Bind(17, r.faults);
  s.Bind(18, r.models);
  if (r.planning_estimates.empty()) {
    s.BindNull(19);
  } else {
    s.Bind(19, r.planning_estimates);
  }
  if (r.priority_classes.empty()) {
    s.BindNull(20);
  } else {
    s.Bind(20, r.priority_classes);
  }
  s.Step();
  return sqlite3_last_insert_rowid(db_);
}

void SqliteWriter::WriteOutcome(int64_t run_id, const RunRecord& r) {
  Statement s(db_,
              "UPDATE runs SET wall_seconds = ?, events = ?, passes = ?, status = ?, error = ?, "
              "fingerprint = ? WHERE run_id = ?");
  s.Bind(1, r.wall_seconds);
  s.Bind(2, static_cast<int64_t>(r.events));
  s.Bind(3, static_cast<int64_t>(r.passes));
  s.Bind(4, r.status);
  if (r.error.empty()) {
    s.BindNull(5);
  } else {
    s.Bind(5, r.error);
  }
  s.Bind(6, r.fingerprint);
  s.Bind(7, run_id);
  s.Step();
}

int64_t SqliteWriter::WriteRunWithoutRows(const RunRecord& r) {
  CHECK(!stream_, "SqliteWriter::WriteRunWithoutRows between BeginRun and EndRun");
  const int64_t run_id = InsertRunRow(r);
  WriteOutcome(run_id, r);
  return run_id;
}

void SqliteWriter::WritePlacementCurve(int64_t run_id, const Engine& engine) {
  if (engine.placement_curve().empty()) return;
  Statement s(db_,
              "INSERT INTO placement_curve (run_id, percent, arrived_share, allocated_share, "
              "unallocated_share, frag_idle_share, frag_total_share, failed_jobs) "
              "VALUES (?,?,?,?,?,?,?,?)");
  for (const PlacementCurvePoint& p : engine.placement_curve()) {
    s.Bind(1, run_id);
    s.Bind(2, int64_t{p.percent});
    s.Bind(3, p.arrived_share);
    s.Bind(4, p.allocated_share);
    s.Bind(5, p.unallocated_share);
    s.Bind(6, p.frag_idle_share);
    s.Bind(7, p.frag_total_share);
    s.Bind(8, p.failed_jobs);
    s.Step();
  }
}

void SqliteWriter::WriteFailures(int64_t run_id, const Engine& engine) {
  const FailureLog& log = engine.failure_log();
  if (log.events().empty()) return;
  Statement s(db_,
              "INSERT INTO failures (run_id, failure_index, time, cause, component, domain, "
              "first_node, nodes, first_gpu, gpus_out, repair_seconds, jobs_hit, job_ids, "
              "spares_used) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  std::string ids;
  for (size_t i = 0; i < log.events().size(); ++i) {
    const FailureEvent& e = log.events()[i];
    const LoggedCause& cause = log.causes()[e.cause];
    ids.clear();
    for (uint32_t k = 0; k < e.jobs_hit; ++k) {
      if (k > 0) ids += ',';
      ids += engine.trace().jobs[log.job_ids()[e.jobs_begin + k]].id;
    }
    s.Bind(1, run_id);
    s.Bind(2, static_cast<int64_t>(i));
    s.Bind(3, e.time);
    s.Bind(4, cause.name);
    s.Bind(5, cause.component);
    s.Bind(6, cause.domain);
    s.Bind(7, static_cast<int64_t>(e.first_node));
    s.Bind(8, static_cast<int64_t>(e.node_count));
    s.Bind(9, static_cast<int64_t>(e.first_gpu));
    s.Bind(10, static_cast<int64_t>(e.gpus_out));
    s.Bind(11, e.repair_seconds);
    s.Bind(12, static_cast<int64_t>(e.jobs_hit));
    s.Bind(13, ids);
    s.Bind(14, static_cast<int64_t>(e.spares_used));
    s.Step();
  }
}

void SqliteWriter::WriteNodeEvents(int64_t run_id, const Engine& engine) {
  const NodePools& pools = engine.node_pools();
  if (pools.events().empty()) return;
  const Cluster& cluster = engine.cluster();
  Statement s(db_,
              "INSERT INTO node_events (run_id, time, node_group, node, event) VALUES "
              "(?,?,?,?,?)");
  std::string group;
  for (const NodeEvent& e : pools.events()) {
    const int g = cluster.node(e.node).group;
    const std::string& name = cluster.spec().groups[g].name;
    group = name.empty() ? std::to_string(g) : name;
    s.Bind(1, run_id);
    s.Bind(2, e.time);
    s.Bind(3, group);
    s.Bind(4, static_cast<int64_t>(e.node));
    s.Bind(5, NodeEventName(e.kind));
    s.Step();
  }
}

int64_t SqliteWriter::BeginRun(const RunRecord& record, const Engine& engine) {
  CHECK(!stream_, "SqliteWriter::BeginRun: a run is being written already");
  stream_run_id_ = InsertRunRow(record);
  stream_engine_ = &engine;
  stream_ = std::make_unique<RunStream>(db_, stream_run_id_, record.bsld_threshold_seconds, engine);
  return stream_run_id_;
}

double SqliteWriter::wait_seconds() const { return stream_ ? stream_->wait_seconds() : 0.0; }

void SqliteWriter::WriteFinished(const Engine& engine, bool run_over) {
  CHECK(stream_, "SqliteWriter::WriteFinished without BeginRun");
  stream_->Hand(engine, run_over);
}

std::vector<SummaryRow> SqliteWriter::WriteLastRows(const Engine& engine,
                                                    const SummaryOptions& options) {
  std::future<std::vector<SummaryRow>> summary = std::async(
      std::launch::async, [&engine, &options] { return ComputeSummary(engine, options); });
  WriteFinished(engine, true);
  return summary.get();
}

int64_t SqliteWriter::EndRun(const RunRecord& r, const std::vector<SummaryRow>& summary) {
  CHECK(stream_, "SqliteWriter::EndRun without BeginRun");
  const std::unique_ptr<RunStream> stream = std::move(stream_);
  stream->Join();  // the connection is this thread's again; rethrows the writer's error
  {
    Statement s(db_, "INSERT INTO summary VALUES (?,?,?,?)");
    for (const SummaryRow& row : summary) {
      s.Bind(1, stream_run_id_);
      s.Bind(2, row.metric);
      s.Bind(3, row.scope);
      s.BindOptional(4, row.value, std::isfinite(row.value));
      s.Step();
    }
  }
  WriteAllocations(stream_run_id_, *stream_engine_);
  WritePlacementCurve(stream_run_id_, *stream_engine_);
  WriteFailures(stream_run_id_, *stream_engine_);
  WriteNodeEvents(stream_run_id_, *stream_engine_);
  WriteOutcome(stream_run_id_, r);
  stream_engine_ = nullptr;
  return stream_run_id_;
}

namespace {

// FindSameRun on an open connection; `path` names the file in errors.
int64_t FindSameRunOn(sqlite3* db, const std::string& path, const RunRecord& r) {
  std::string sql = "SELECT run_id FROM runs WHERE";
  for (const char* column : kRunKeyColumns) {
    sql += std::string(sql.back() == 'E' ? " \"" : " AND \"") + column + "\" IS ?";
  }
  sql += " ORDER BY run_id LIMIT 1";
  Statement s(db, sql.c_str());
  // Bound with the types InsertRunRow binds, so that equal values compare equal.
  int i = 0;
  for (const std::string_view column : kRunKeyColumns) {
    ++i;
    if (column == "trace_sha256") {
      s.Bind(i, r.trace_sha256);
    } else if (column == "cluster_sha256") {
      s.Bind(i, r.cluster_sha256);
    } else if (column == "policy") {
      s.Bind(i, r.policy);
    } else if (column == "placement") {
      s.Bind(i, r.placement);
    } else if (column == "params") {
      s.Bind(i, r.params_json);
    } else if (column == "runtime_model") {
      s.Bind(i, r.runtime_model);
    } else if (column == "seed") {
      s.Bind(i, r.seed);
    } else if (column == "trace_filter") {
      s.Bind(i, r.trace_filter);
    } else if (column == "timeseries_interval_seconds") {
      s.Bind(i, r.timeseries_interval_seconds);
    } else if (column == "preemption_cost_seconds") {
      s.Bind(i, r.preemption_cost_seconds);
    } else if (column == "faults") {
      s.Bind(i, r.faults);
    } else if (column == "models") {
      s.Bind(i, r.models);
    } else {
      throw InternalError("FindSameRun: no RunRecord field for key column " + std::string(column));
    }
  }
  const int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW) return sqlite3_column_int64(s.get(), 0);
  if (rc != SQLITE_DONE) throw InputError(path, 0, 0, std::string("SQLite: ") + sqlite3_errmsg(db));
  return -1;
}

}  // namespace

int64_t SqliteWriter::FindSameRun(const RunRecord& record) {
  return FindSameRunOn(db_, path_, record);
}

int64_t FindSameRunIn(const std::string& path, const RunRecord& record) {
  if (!std::filesystem::exists(path)) return -1;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw InputError(path, 0, 0, "cannot open database: " + message);
  }
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> owner(db, sqlite3_close);
  try {
    return FindSameRunOn(db, path, record);
  } catch (const InputError&) {
    throw InputError(path, 0, 0, "not a clustersim database (cannot look for a repeated run)");
  }
}

void SqliteWriter::WriteAllocations(int64_t run_id, const Engine& engine) {
  const AllocationLog& log = engine.allocations();
  if (log.intervals.empty()) return;
  const Cluster& cluster = engine.cluster();
  Statement s(db_,
              "INSERT INTO allocations (run_id, job_index, start_time, end_time, reason, gpu_type, "
              "gpus, gpu_milli, nodes, gpu_indexes) VALUES (?,?,?,?,?,?,?,?,?,?)");
  std::vector<int32_t> nodes;
  std::string node_text;
  std::string gpu_text;
  for (const AllocationInterval& interval : log.intervals) {
    const std::span<const int32_t> gpus = log.GpusOf(interval);
    nodes.clear();
    for (int32_t g : gpus) {
      const int32_t node = cluster.NodeOfGpu(g);
      if (nodes.empty() || nodes.back() != node) nodes.push_back(node);  // GPUs ascending
    }
    node_text = IndexRanges(nodes);
    gpu_text = IndexRanges(gpus);
    s.Bind(1, run_id);
    s.Bind(2, static_cast<int64_t>(interval.job));
    s.Bind(3, interval.start);
    s.Bind(4, interval.end);
    s.Bind(5, IntervalEndName(interval.why));  // a string literal: static storage
    if (interval.gpu_type >= 0) {
      s.Bind(6, cluster.catalog().gpu(interval.gpu_type).name);
    } else {
      s.BindNull(6);
    }
    s.Bind(7, static_cast<int64_t>(interval.gpu_count));
    if (interval.milli > 0) {
      s.Bind(8, static_cast<int64_t>(interval.milli));
    } else {
      s.BindNull(8);
    }
    s.Bind(9, node_text);
    s.Bind(10, gpu_text);
    s.Step();
  }
}

void SqliteWriter::WriteValidation(int64_t run_id, const ValidationReport& report) {
  {
    Statement s(db_,
                "INSERT INTO validation (run_id, scope, metric, simulated, recorded, value) "
                "VALUES (?,?,?,?,?,?)");
    for (const ValidationRow& row : report.rows) {
      s.Bind(1, run_id);
      s.Bind(2, row.scope);
      s.Bind(3, row.metric);
      s.BindOptional(4, row.simulated, std::isfinite(row.simulated));
      s.BindOptional(5, row.recorded, std::isfinite(row.recorded));
      s.BindOptional(6, row.value, std::isfinite(row.value));
      s.Step();
    }
  }
  Statement s(
      db_,
      "INSERT INTO validation_series (run_id, scope, t_start, t_end, simulated_utilization, "
      "recorded_utilization, simulated_queue_length, recorded_queue_length) "
      "VALUES (?,?,?,?,?,?,?,?)");
  for (const ValidationSeries& series : report.series) {
    for (size_t k = 0; k < series.simulated_utilization.size(); ++k) {
      s.Bind(1, run_id);
      s.Bind(2, series.scope);
      s.Bind(3, series.t0 + k * series.interval_seconds);
      s.Bind(4, series.t0 + (k + 1) * series.interval_seconds);
      s.Bind(5, series.simulated_utilization[k]);
      s.Bind(6, series.recorded_utilization[k]);
      s.Bind(7, series.simulated_queue[k]);
      s.Bind(8, series.recorded_queue[k]);
      s.Step();
    }
  }
}

int64_t SqliteWriter::CopyRun(sqlite3* source, int64_t source_run_id) {
  static constexpr int kRowsPerInsert = 32;
  int64_t run_id = -1;
  std::vector<const char*> tables(std::begin(kTables), std::end(kTables));
  for (const char* table : kAddedTables) {
    if (!TableColumns(source, table).empty()) tables.push_back(table);
  }
  for (const char* table : tables) {
    std::vector<std::string> columns = TableColumns(db_, table);
    std::erase(columns, "run_id");
    const std::vector<std::string> have = TableColumns(source, table);
    std::string list;
    std::string select_list;  // NULL for a column added after the source was written
    std::string marks;
    for (const std::string& c : columns) {
      list += (list.empty() ? "\"" : ",\"") + c + "\"";
      const bool present = std::find(have.begin(), have.end(), c) != have.end();
      select_list += (select_list.empty() ? "" : ",") + (present ? "\"" + c + "\"" : "NULL");
      marks += marks.empty() ? "?" : ",?";
    }
    const bool is_runs = std::string(table) == "runs";
    // Rows go kRowsPerInsert to a statement (as the writer's rows do: the statement's fixed cost
    // is paid once per group; bench/README.md, "Shallow queues under conservative, the jobs rows,
    // merging"), the last few one at a time; the runs row alone, since its new id is what the
    // other tables' rows get.
    const int per_row = static_cast<int>(columns.size()) + (is_runs ? 0 : 1);
    const int parameters = sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
    const int group = is_runs ? 1 : std::clamp(parameters / per_row, 1, kRowsPerInsert);
    const std::string tuple = "(" + std::string(is_runs ? "" : "?,") + marks + ")";
    const std::string insert = "INSERT INTO \"" + std::string(table) + "\" (" +
                               (is_runs ? "" : "run_id,") + list + ") VALUES ";
    Statement one(db_, (insert + tuple).c_str());
    std::string many_sql = insert + tuple;
    for (int r = 1; r < group; ++r) many_sql += "," + tuple;
    std::optional<Statement> many;
    if (group > 1) many.emplace(db_, many_sql.c_str());
    // Copies the rows `from` selects (its last column is the rowid) into `out`, `rows` rows per
    // statement; returns how many were bound but not stepped and the rowid of the first of them.
    auto copy = [&](sqlite3_stmt* from, Statement& out, int rows) {
      std::pair<int, int64_t> pending{0, 0};
      int rc = 0;
      while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
        if (pending.first == 0) {
          pending.second = sqlite3_column_int64(from, static_cast<int>(columns.size()));
        }
        const int base = pending.first * per_row;
        if (!is_runs) sqlite3_bind_int64(out.get(), base + 1, run_id);
        // sqlite3_bind_value binds a copy: the source's row may go once bound.
        for (size_t c = 0; c < columns.size(); ++c) {
          sqlite3_bind_value(out.get(), base + static_cast<int>(c) + 1 + (is_runs ? 0 : 1),
                             sqlite3_column_value(from, static_cast<int>(c)));
        }
        if (++pending.first == rows) {
          out.Step();
          pending.first = 0;
          if (is_runs) run_id = sqlite3_last_insert_rowid(db_);
        }
      }
      if (rc != SQLITE_DONE) {
        throw InputError("SQLite: reading table " + std::string(table) + ": " +
                         sqlite3_errmsg(source));
      }
      return pending;
    };
    // rowid order keeps the source's row order (job_index order for jobs).
    const std::string select = "SELECT " + select_list + ",rowid FROM \"" + table +
                               "\" WHERE run_id = ?1 AND rowid >= ?2 ORDER BY rowid";
    auto query = [&](int64_t first_rowid) {
      sqlite3_stmt* raw = nullptr;
      if (sqlite3_prepare_v2(source, select.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
        const std::string message = sqlite3_errmsg(source);
        sqlite3_finalize(raw);
        throw InputError("SQLite: reading table " + std::string(table) + ": " + message);
      }
      // Finalized on every path, errors included: an open statement keeps the source from
      // closing.
      std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> from(raw, sqlite3_finalize);
      sqlite3_bind_int64(raw, 1, source_run_id);
      sqlite3_bind_int64(raw, 2, first_rowid);
      return from;
    };
    const auto [left, first_left] =
        copy(query(std::numeric_limits<int64_t>::min()).get(), many ? *many : one, group);
    if (left > 0) copy(query(first_left).get(), one, 1);  // the last rows, one at a time
    if (is_runs && run_id < 0) {
      throw InputError("no run " + std::to_string(source_run_id) + " to copy");
    }
  }
  return run_id;
}

std::string SchemaProblem(sqlite3* db) {
  // The reference: the schema as this version writes it, in a private in-memory database.
  sqlite3* reference = nullptr;
  if (sqlite3_open(":memory:", &reference) != SQLITE_OK ||
      sqlite3_exec(reference, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close(reference);
    throw InternalError("cannot create the reference schema in memory");
  }
  std::string problem;
  try {
    for (const char* table : kTables) {
      const std::vector<std::string> have = TableColumns(db, table);
      if (have.empty()) {
        problem = std::string("no table ") + table;
        break;
      }
      for (const std::string& column : TableColumns(reference, table)) {
        if (SourceMayLack(table, column)) continue;  // an older database may lack it
        if (std::find(have.begin(), have.end(), column) == have.end()) {
          problem = std::string("table ") + table + " has no column " + column;
          break;
        }
      }
      if (!problem.empty()) break;
    }
  } catch (...) {
    sqlite3_close(reference);
    throw;
  }
  sqlite3_close(reference);
  return problem;
}

void SqliteWriter::Commit() {
  CHECK(!stream_, "SqliteWriter::Commit between BeginRun and EndRun");
  Exec("COMMIT");
  sqlite3_close(db_);
  db_ = nullptr;
  if (fresh_) {
    std::error_code ec;
    std::filesystem::rename(write_path_, path_, ec);
    if (ec) throw InputError(path_, 0, 0, "cannot rename the finished database into place");
  }
  committed_ = true;
}

}  // namespace clustersim
