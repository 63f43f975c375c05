// The SQLite output of `clustersim run` (sim/output/sqlite_writer.cc): the four tables and their
// documented columns, one jobs row per trace job with the schedule worked out by hand, appending
// runs to an existing file, and determinism (same inputs, same rows and fingerprint).
//
// Runs go through the clustersim executable, as a user would, and the databases are read back
// with the sqlite3 C API.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

using Row = Database::Row;

// The hand-made scenario: tests/data/tiny_cluster.json is
//   {"nodes": [{"count": 2, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}
// (node 0 holds GPUs 0-3, node 1 GPUs 4-7) and tests/data/tiny_trace.csv is
//   job_id,submit_time,gpus,duration,walltime,user,vc
//   a,0,4,100,,alice,vc1
//   b,10,8,50,,bob,vc1
//   c,20,2,30,,carol,vc2
//   007,30,16,10,,dave,vc2
//   e,40,1,10,,alice,vc1
//   f,200,1,100,40,bob,vc2
std::vector<std::string> TinyRunArgs(const std::string& out) {
  return {"run",
          "--trace",
          TestData("tiny_trace.csv"),
          "--cluster",
          TestData("tiny_cluster.json"),
          "--runtime-model",
          "trace",
          "--policy",
          "fcfs",
          "--placement",
          "first-fit",
          "--out",
          out,
          "--no-progress"};
}

void RunOk(const std::vector<std::string>& args) {
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
}

std::vector<std::string> ColumnsOf(Database& db, const std::string& table) {
  std::vector<std::string> names;
  for (const Row& row : db.Query("PRAGMA table_info(" + table + ")")) names.push_back(*row[1]);
  return names;
}

std::map<std::string, std::string> DeclaredTypesOf(Database& db, const std::string& table) {
  std::map<std::string, std::string> types;
  for (const Row& row : db.Query("PRAGMA table_info(" + table + ")")) types[*row[1]] = *row[2];
  return types;
}

// Every row of `sql` with the run_id column dropped, as text, for comparing two runs.
std::vector<Row> RowsWithoutRunId(Database& db, const std::string& sql) {
  std::vector<std::string> names;
  std::vector<Row> rows = db.Query(sql, &names);
  for (size_t c = names.size(); c-- > 0;) {
    if (names[c] != "run_id") continue;
    for (Row& row : rows) row.erase(row.begin() + static_cast<long>(c));
  }
  return rows;
}

std::string Show(const std::optional<std::string>& v) { return v ? *v : "NULL"; }

TEST(SqliteOutput, WritesTheFourTablesWithTheDocumentedColumns) {
  TempDir dir;
  const std::string out = dir.File("runs.sqlite");
  RunOk(TinyRunArgs(out));
  ASSERT_TRUE(Exists(out));
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
  Database db(out);
  EXPECT_EQ(db.Value("PRAGMA integrity_check"), "ok");

  std::vector<std::string> tables;
  for (const Row& row :
       db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    tables.push_back(*row[0]);
  }
  EXPECT_EQ(tables,
            (std::vector<std::string>{"allocations", "failures", "jobs", "node_events",
                                      "placement_curve", "runs", "summary", "timeseries",
                                      "validation",
                                      "validation_series", "wait_reasons"}));

  // The lists below are the schema in sim/output/sqlite_writer.cc (kSchema), column for column.
  EXPECT_EQ(ColumnsOf(db, "runs"), (std::vector<std::string>{"run_id",
                                                             "created_at",
                                                             "trace_path",
                                                             "trace_sha256",
                                                             "trace_format",
                                                             "cluster_spec",
                                                             "cluster_sha256",
                                                             "cluster_json",
                                                             "policy",
                                                             "placement",
                                                             "params",
                                                             "runtime_model",
                                                             "seed",
                                                             "version",
                                                             "wall_seconds",
                                                             "events",
                                                             "passes",
                                                             "status",
                                                             "error",
                                                             "fingerprint",
                                                             "timeseries_interval_seconds",
                                                             "preemption_cost_seconds",
                                                             "trace_filter",
                                                             "faults",
                                                             "models",
                                                             "planning_estimates",
                                                             "priority_classes"}));
  EXPECT_EQ(ColumnsOf(db, "jobs"), (std::vector<std::string>{"run_id",
                                                             "job_index",
                                                             "job_id",
                                                             "user",
                                                             "vc",
                                                             "submit_time",
                                                             "start_time",
                                                             "end_time",
                                                             "wait_time",
                                                             "jct",
                                                             "run_time",
                                                             "gpus_requested",
                                                             "gpus_allocated",
                                                             "gpu_type",
                                                             "nodes",
                                                             "status",
                                                             "reason",
                                                             "preemptions",
                                                             "restarts",
                                                             "oom_failures",
                                                             "batch_requested",
                                                             "batch_used",
                                                             "memory_per_gpu_gib",
                                                             "slowdown",
                                                             "energy_kwh",
                                                             "trace_duration",
                                                             "trace_status",
                                                             "checkpoint_seconds",
                                                             "lost_gpu_seconds",
                                                             "queued_time",
                                                             "bsld",
                                                             "gpu_hours",
                                                             "cost_usd",
                                                             "priority",
                                                             "recorded_start",
                                                             "recorded_end",
                                                             "recorded_attempts",
                                                             "cpus_requested",
                                                             "host_memory_gib_requested",
                                                             "preemption_gpu_seconds",
                                                             "borrowed_gpu_seconds",
                                                             "reserved_start",
                                                             "deadline",
                                                             "ettr",
                                                             "restart_gpu_seconds",
                                                             "capacity_wait_gpu_seconds"}));
  EXPECT_EQ(
      ColumnsOf(db, "timeseries"),
      (std::vector<std::string>{"run_id", "t_start", "t_end", "gpu_type", "busy_gpus",
                                "utilization", "memory_utilization", "power_watts", "queue_length",
                                "running_jobs", "stranded_gpus", "i_frag", "node_imbalance",
                                "f_mem", "fgd_fragmentation", "fgd_fragmented_gpus",
                                "cpu_utilization", "host_memory_utilization",
                                "cpu_stranded_gpus"}));
  EXPECT_EQ(ColumnsOf(db, "summary"),
            (std::vector<std::string>{"run_id", "metric", "scope", "value"}));
  EXPECT_EQ(ColumnsOf(db, "allocations"),
            (std::vector<std::string>{"run_id", "job_index", "start_time", "end_time", "reason",
                                      "gpu_type", "gpus", "gpu_milli", "nodes", "gpu_indexes"}));
  EXPECT_EQ(
      ColumnsOf(db, "validation"),
      (std::vector<std::string>{"run_id", "scope", "metric", "simulated", "recorded", "value"}));
  EXPECT_EQ(ColumnsOf(db, "validation_series"),
            (std::vector<std::string>{"run_id", "scope", "t_start", "t_end",
                                      "simulated_utilization", "recorded_utilization",
                                      "simulated_queue_length", "recorded_queue_length"}));
  EXPECT_EQ(ColumnsOf(db, "placement_curve"),
            (std::vector<std::string>{"run_id", "percent", "arrived_share", "allocated_share",
                                      "unallocated_share", "frag_idle_share", "frag_total_share",
                                      "failed_jobs"}));
  EXPECT_EQ(ColumnsOf(db, "failures"),
            (std::vector<std::string>{"run_id", "failure_index", "time", "cause", "component",
                                      "domain", "first_node", "nodes", "first_gpu", "gpus_out",
                                      "repair_seconds", "jobs_hit", "job_ids", "spares_used"}));
  // A plain run keeps no allocation log and no validation, and has no placement curve and no
  // failures (nor their job columns).
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM allocations"), 0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM validation"), 0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM placement_curve"), 0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM failures"), 0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE ettr IS NOT NULL OR "
                      "restart_gpu_seconds IS NOT NULL OR capacity_wait_gpu_seconds IS NOT NULL"),
            0);

  // Times are REAL columns holding REAL values; ids are text.
  const auto job_types = DeclaredTypesOf(db, "jobs");
  for (const char* column : {"submit_time", "start_time", "end_time", "wait_time", "jct",
                             "run_time", "slowdown", "energy_kwh", "trace_duration"}) {
    EXPECT_EQ(job_types.at(column), "REAL") << column;
  }
  EXPECT_EQ(job_types.at("job_id"), "TEXT");
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE typeof(submit_time) != 'real' OR "
                      "typeof(job_id) != 'text'"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE start_time IS NOT NULL AND ("
                      "typeof(start_time) != 'real' OR typeof(wait_time) != 'real' OR "
                      "typeof(run_time) != 'real')"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE end_time IS NOT NULL AND ("
                      "typeof(end_time) != 'real' OR typeof(jct) != 'real')"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE typeof(t_start) != 'real' OR "
                      "typeof(t_end) != 'real'"),
            0);

  // One runs row describing the run.
  const auto runs = db.Query(
      "SELECT run_id, status, policy, placement, runtime_model, trace_format, fingerprint, "
      "error, events > 0, length(trace_sha256), length(cluster_sha256), cluster_json "
      "FROM runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0][0], "1");
  EXPECT_EQ(runs[0][1], "complete");
  EXPECT_EQ(runs[0][2], "fcfs");
  EXPECT_EQ(runs[0][3], "first-fit");
  EXPECT_EQ(runs[0][4], "trace");
  EXPECT_EQ(runs[0][5], "native");
  EXPECT_EQ(runs[0][6].value_or("").size(), 16u) << Show(runs[0][6]);
  EXPECT_EQ(runs[0][7], std::nullopt);
  EXPECT_EQ(runs[0][8], "1");
  EXPECT_EQ(runs[0][9], "64");
  EXPECT_EQ(runs[0][10], "64");
  EXPECT_NE(runs[0][11].value_or("").find("A100-80GB"), std::string::npos);

  // One jobs row per trace job, ids as in the trace (the leading zeros of "007" kept), statuses.
  const auto jobs = db.Query("SELECT job_index, job_id, status FROM jobs ORDER BY job_index");
  const std::vector<Row> expected_jobs = {{"0", "a", "completed"}, {"1", "b", "completed"},
                                          {"2", "c", "completed"}, {"3", "007", "rejected"},
                                          {"4", "e", "completed"}, {"5", "f", "timeout"}};
  EXPECT_EQ(jobs, expected_jobs);

  // The job asking for 16 GPUs on an 8-GPU cluster: rejected with a reason, never started.
  const auto rejected = db.Query(
      "SELECT status, reason, start_time, end_time, wait_time, gpus_requested, gpus_allocated, "
      "gpu_type FROM jobs WHERE job_id = '007'");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0][0], "rejected");
  ASSERT_TRUE(rejected[0][1].has_value());
  EXPECT_FALSE(rejected[0][1]->empty());
  EXPECT_NE(rejected[0][1]->find("16"), std::string::npos) << *rejected[0][1];
  EXPECT_EQ(rejected[0][2], std::nullopt);
  EXPECT_EQ(rejected[0][3], std::nullopt);
  EXPECT_EQ(rejected[0][4], std::nullopt);
  EXPECT_EQ(rejected[0][5], "16");
  EXPECT_EQ(rejected[0][6], "0");
  EXPECT_EQ(rejected[0][7], std::nullopt);

  // Timeseries: rows for the whole cluster ("all") and per GPU type; summary has the headline
  // metrics.
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM timeseries WHERE gpu_type = 'all'"), 0);
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM timeseries WHERE gpu_type = 'A100-80GB'"), 0);
  EXPECT_EQ(db.Number("SELECT value FROM summary WHERE metric = 'jobs_total' AND scope = 'all'"),
            6);
}

// The schedule of the tiny scenario, worked out by hand (--runtime-model trace: a job runs for
// exactly its trace duration; fcfs: strict head-of-line blocking; first-fit: lowest-index node
// with enough free GPUs, whole free nodes for jobs larger than a node).
//   t=0    a (4 GPUs) arrives; node 0 is the first with 4 free: a runs 0-100 on node 0.
//   t=10   b (8 GPUs) needs both nodes whole; node 0 is busy, so b waits at the queue's head.
//   t=20   c (2 GPUs) would fit on node 1, but fcfs does not pass the blocked head: c waits.
//   t=30   007 (16 GPUs) can never fit on 8 GPUs: rejected at arrival, never started.
//   t=40   e (1 GPU) waits behind c.
//   t=100  a ends; b takes nodes 0 and 1 (8 GPUs, 2 nodes): b runs 100-150; c still blocked.
//   t=150  b ends; c takes 2 GPUs of node 0 (150-180), then e the next GPU of node 0 (150-160).
//   t=200  f (1 GPU, duration 100, walltime 40) starts at once on node 0 and is killed at its
//          wall time: 200-240, status timeout.
// Waits: a 0, b 90, c 130, e 110, f 0. JCTs: a 100, b 140, c 160, e 120, f 40.
// GPU-seconds: a 400 + b 400 + c 60 + e 10 + f 40 = 910 over 8 GPUs x 240 s (first submit to
// last end), so utilization 910/1920. Queue length: 1 job in [10,20), 2 in [20,40), 3 in
// [40,100), 2 in [100,150), then 0: 10 + 40 + 180 + 100 = 330 job-seconds / 240 s = 1.375.
TEST(SqliteOutput, JobsRowsMatchTheScheduleWorkedOutByHand) {
  TempDir dir;
  const std::string out = dir.File("runs.sqlite");
  RunOk(TinyRunArgs(out));
  Database db(out);
  const auto rows = db.Query(
      "SELECT job_id, submit_time, start_time, end_time, wait_time, jct, run_time, "
      "gpus_requested, gpus_allocated, nodes, gpu_type, status, user, vc, trace_duration, "
      "preemptions, restarts FROM jobs WHERE run_id = 1 ORDER BY job_index");
  const std::optional<std::string> null;
  const std::vector<Row> expected = {
      // id   submit start  end    wait  jct    run    req   alloc nodes type         status
      {"a", "0", "0", "100", "0", "100", "100", "4", "4", "1", "A100-80GB", "completed", "alice",
       "vc1", "100", "0", "0"},
      {"b", "10", "100", "150", "90", "140", "50", "8", "8", "2", "A100-80GB", "completed", "bob",
       "vc1", "50", "0", "0"},
      {"c", "20", "150", "180", "130", "160", "30", "2", "2", "1", "A100-80GB", "completed",
       "carol", "vc2", "30", "0", "0"},
      {"007", "30", null, null, null, null, null, "16", "0", "0", null, "rejected", "dave", "vc2",
       "10", "0", "0"},
      {"e", "40", "150", "160", "110", "120", "10", "1", "1", "1", "A100-80GB", "completed",
       "alice", "vc1", "10", "0", "0"},
      {"f", "200", "200", "240", "0", "40", "40", "1", "1", "1", "A100-80GB", "timeout", "bob",
       "vc2", "100", "0", "0"},
  };
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), expected[i].size());
    for (size_t c = 0; c < rows[i].size(); ++c) {
      EXPECT_EQ(Show(rows[i][c]), Show(expected[i][c]))
          << "job " << Show(expected[i][0]) << ", column " << c;
    }
  }
  EXPECT_EQ(db.Value("SELECT reason FROM jobs WHERE job_id = 'f'"),
            "killed at its requested wall time");
  EXPECT_DOUBLE_EQ(db.Number("SELECT slowdown FROM jobs WHERE job_id = 'b'"), 140.0 / 50.0);

  auto metric = [&](const std::string& name) {
    return db.Number("SELECT value FROM summary WHERE run_id = 1 AND scope = 'all' AND metric = '" +
                     name + "'");
  };
  EXPECT_EQ(metric("jobs_completed"), 4);
  EXPECT_EQ(metric("jobs_rejected"), 1);
  EXPECT_EQ(metric("jobs_timeout"), 1);
  EXPECT_EQ(metric("jobs_unfinished"), 0);
  EXPECT_DOUBLE_EQ(metric("makespan_seconds"), 240);
  EXPECT_DOUBLE_EQ(metric("jct_seconds_max"), 160);
  EXPECT_DOUBLE_EQ(metric("jct_seconds_mean"), (100 + 140 + 160 + 120 + 40) / 5.0);
  EXPECT_DOUBLE_EQ(metric("wait_seconds_mean"), (0 + 90 + 130 + 110 + 0) / 5.0);
  EXPECT_DOUBLE_EQ(metric("gpu_utilization"), 910.0 / 1920.0);
  EXPECT_DOUBLE_EQ(metric("busy_gpu_hours"), 910.0 / 3600.0);
  EXPECT_DOUBLE_EQ(metric("queue_length_mean"), 330.0 / 240.0);

  // One 300 s timeseries interval, cut at the last event (240 s): mean busy GPUs 910/240.
  const auto series = db.Query(
      "SELECT t_start, t_end, busy_gpus, queue_length FROM timeseries WHERE gpu_type = 'all'");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0][0], "0");
  EXPECT_EQ(series[0][1], "240");
  EXPECT_DOUBLE_EQ(std::stod(*series[0][2]), 910.0 / 240.0);
  EXPECT_DOUBLE_EQ(std::stod(*series[0][3]), 330.0 / 240.0);
}

TEST(SqliteOutput, AFailureRunWritesTheFailuresTableEttrAndLossesByCause) {
  // The spare swap of tests/sim/engine/reliability_engine_test.cc through the program: nodes
  // 0-1 and spare node 2 (swap 120 s), one 16-GPU job of 3,000 s checkpointing every 300 s at no
  // cost; node 1 fails at 1,000 s for 4 h. The job loses 100 s, restarts at once on the spare and
  // ends at 3,220 s: ETTR 3,000 / 3,220, 120 s x 16 GPUs of restart overhead, no wait.
  TempDir dir;
  const std::string cluster = dir.File("spare.json");
  const std::string trace = dir.File("job.csv");
  const std::string failures = dir.File("failures.csv");
  std::ofstream(cluster) << R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,)"
                            R"("spares":1,"swap_seconds":120}]})";
  std::ofstream(trace) << "job_id,submit_time,gpus,duration\na,0,16,3000\n";
  std::ofstream(failures) << "time,node,duration\n1000,1,14400\n";
  const std::string out = dir.File("runs.sqlite");
  RunOk({"run", "--trace", trace, "--cluster", cluster, "--runtime-model", "trace",
         "--failure-trace", failures, "--checkpoint-interval", "300", "--out", out,
         "--no-progress"});
  Database db(out);
  const auto rows = db.Query(
      "SELECT failure_index, time, cause, domain, first_node, nodes, first_gpu, gpus_out, "
      "repair_seconds, jobs_hit, job_ids, spares_used FROM failures");
  ASSERT_EQ(rows.size(), 1u);
  const Row expected = {"0", "1000", "trace", "node", "1", "1", "8", "8", "14400", "1", "a", "1"};
  for (size_t c = 0; c < expected.size(); ++c) EXPECT_EQ(Show(rows[0][c]), Show(expected[c])) << c;
  EXPECT_DOUBLE_EQ(db.Number("SELECT end_time FROM jobs"), 3220);
  EXPECT_DOUBLE_EQ(db.Number("SELECT ettr FROM jobs"), 3000.0 / 3220);
  EXPECT_DOUBLE_EQ(db.Number("SELECT restart_gpu_seconds FROM jobs"), 120.0 * 16);
  EXPECT_DOUBLE_EQ(db.Number("SELECT capacity_wait_gpu_seconds FROM jobs"), 0);
  EXPECT_DOUBLE_EQ(db.Number("SELECT lost_gpu_seconds FROM jobs"), 100.0 * 16);
  auto metric = [&](const std::string& name, const std::string& scope) {
    return db.Number("SELECT value FROM summary WHERE metric = '" + name + "' AND scope = '" +
                     scope + "'");
  };
  EXPECT_DOUBLE_EQ(metric("ettr", "all"), 3000.0 / 3220);
  EXPECT_EQ(metric("interruptions", "cause:trace"), 1);
  EXPECT_EQ(metric("spare_swaps", "cause:trace"), 1);
  EXPECT_DOUBLE_EQ(metric("recompute_gpu_hours", "cause:trace"), 100.0 * 16 / 3600);
  EXPECT_DOUBLE_EQ(metric("restart_gpu_hours", "all"), 120.0 * 16 / 3600);
  EXPECT_DOUBLE_EQ(metric("capacity_wait_gpu_hours", "all"), 0);
}

// With --allow-duplicate: the same run again is refused otherwise (report_test.cc).
std::vector<std::string> AgainArgs(const std::string& out) {
  std::vector<std::string> args = TinyRunArgs(out);
  args.push_back("--allow-duplicate");
  return args;
}

TEST(SqliteOutput, SecondRunIntoTheSameFileIsAppended) {
  TempDir dir;
  const std::string out = dir.File("runs.sqlite");
  RunOk(TinyRunArgs(out));
  RunOk(AgainArgs(out));
  Database db(out);
  EXPECT_EQ(db.Value("PRAGMA integrity_check"), "ok");
  const auto runs = db.Query("SELECT run_id, status FROM runs ORDER BY run_id");
  EXPECT_EQ(runs, (std::vector<Row>{{"1", "complete"}, {"2", "complete"}}));
  const auto jobs = db.Query("SELECT run_id, COUNT(*) FROM jobs GROUP BY run_id ORDER BY run_id");
  EXPECT_EQ(jobs, (std::vector<Row>{{"1", "6"}, {"2", "6"}}));
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 2"), 0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM summary WHERE run_id = 1"),
            db.Number("SELECT COUNT(*) FROM summary WHERE run_id = 2"));
  // The same inputs give the same rows in both runs.
  EXPECT_EQ(RowsWithoutRunId(db, "SELECT * FROM jobs WHERE run_id = 1 ORDER BY job_index"),
            RowsWithoutRunId(db, "SELECT * FROM jobs WHERE run_id = 2 ORDER BY job_index"));
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
  EXPECT_TRUE(EntriesContaining(dir.path(), "-journal").empty());
}

// A database written before the fragmentation columns existed (timeseries without f_mem,
// fgd_fragmentation, fgd_fragmented_gpus) gets them appended, NULL in its old rows, and a new run's
// values land in the columns named, not by position.
TEST(SqliteOutput, AnOlderDatabaseGetsTheFragmentationColumns) {
  TempDir dir;
  const std::string out = dir.File("runs.sqlite");
  RunOk(TinyRunArgs(out));
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(out.c_str(), &raw), SQLITE_OK);
    for (const char* column : {"f_mem", "fgd_fragmentation", "fgd_fragmented_gpus"}) {
      const std::string sql = std::string("ALTER TABLE timeseries DROP COLUMN ") + column;
      EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << column;
    }
    sqlite3_close(raw);
  }
  const std::string old_copy = dir.File("old.sqlite");
  std::filesystem::copy_file(out, old_copy);
  RunOk(AgainArgs(out));
  Database db(out);
  const auto columns = ColumnsOf(db, "timeseries");
  ASSERT_EQ(columns.size(), 19u);
  EXPECT_EQ(std::vector<std::string>(columns.end() - 3, columns.end()),
            (std::vector<std::string>{"f_mem", "fgd_fragmentation", "fgd_fragmented_gpus"}));
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 1 AND f_mem IS NOT NULL"), 0);
  // Run 2: F_mem and FGD on the whole-cluster rows only, within [0, 1].
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 2 AND gpu_type = 'all' AND "
                      "(f_mem IS NULL OR f_mem < 0 OR f_mem > 1)"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 2 AND gpu_type != 'all' AND "
                      "f_mem IS NOT NULL"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 2 AND gpu_type = 'all' AND "
                      "(fgd_fragmentation IS NULL OR fgd_fragmentation < 0 OR "
                      "fgd_fragmentation > 1)"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE run_id = 1 AND "
                      "fgd_fragmentation IS NOT NULL"),
            0);
  // The older columns hold the same values in both runs.
  const std::string older =
      "SELECT t_start, t_end, gpu_type, busy_gpus, utilization, memory_utilization, power_watts, "
      "queue_length, running_jobs, stranded_gpus, i_frag, node_imbalance FROM timeseries WHERE "
      "run_id = ";
  EXPECT_EQ(db.Query(older + "1 ORDER BY rowid"), db.Query(older + "2 ORDER BY rowid"));

  // merge accepts the older database as a source and copies NULL into the new columns.
  const std::string merged = dir.File("merged.sqlite");
  RunOk({"merge", merged, old_copy});
  Database m(merged);
  EXPECT_EQ(ColumnsOf(m, "timeseries").size(), 19u);
  EXPECT_EQ(m.Number("SELECT COUNT(*) FROM timeseries WHERE f_mem IS NOT NULL"), 0);
  EXPECT_EQ(m.Query(older + "1 ORDER BY rowid"), db.Query(older + "1 ORDER BY rowid"));
}

// A database written before the jobs table had queued_time, bsld, gpu_hours, cost_usd and
// priority gets them appended (NULL in its old rows); merge copies NULL from such a source; report
// shows the figures it lacks as "-" and says why.
TEST(SqliteOutput, AnOlderDatabaseGetsTheQueuedTimeAndCostColumns) {
  TempDir dir;
  const std::string out = dir.File("runs.sqlite");
  const std::vector<std::string> added = {"queued_time", "bsld", "gpu_hours", "cost_usd",
                                          "priority"};
  RunOk(TinyRunArgs(out));
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(out.c_str(), &raw), SQLITE_OK);
    for (const std::string& column : added) {
      const std::string sql = "ALTER TABLE jobs DROP COLUMN " + column;
      EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << column;
    }
    sqlite3_close(raw);
  }
  const std::string old_copy = dir.File("old.sqlite");
  std::filesystem::copy_file(out, old_copy);
  const CliResult report = RunCli({"report", old_copy});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("lacks the jobs columns queued_time, bsld, gpu_hours, cost_usd"),
            std::string::npos)
      << report.out;
  RunOk(AgainArgs(out));
  Database db(out);
  const auto columns = ColumnsOf(db, "jobs");
  EXPECT_EQ(std::vector<std::string>(columns.end() - 5, columns.end()), added);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE run_id = 1 AND (queued_time IS NOT NULL "
                      "OR gpu_hours IS NOT NULL)"),
            0);
  // Run 2 fills them by name: queued time + run time = JCT for the jobs that ended.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE run_id = 2 AND jct IS NOT NULL AND "
                      "ABS(queued_time + run_time - jct) > 1e-9"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE run_id = 2 AND gpu_hours IS NULL"), 0);
  const std::string merged = dir.File("merged.sqlite");
  RunOk({"merge", merged, old_copy});
  Database m(merged);
  EXPECT_EQ(ColumnsOf(m, "jobs").size(), columns.size());
  EXPECT_EQ(m.Number("SELECT COUNT(*) FROM jobs WHERE queued_time IS NOT NULL"), 0);
}

// Determinism on a less trivial input: the bundled Philly-derived trace (about 11,000 jobs) on
// the heterogeneous default cluster, so the hardware runtime model, several GPU types and queueing
// all take part.
TEST(SqliteOutput, SameInputsGiveIdenticalRowsAndFingerprint) {
  TempDir dir;
  const std::string trace = std::string(CLUSTERSIM_SOURCE_DIR) + "/traces/philly_default.csv";
  ASSERT_TRUE(Exists(trace)) << trace;
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{"run",     "--trace",     trace,      "--cluster",
                                    "default", "--placement", "best-fit", "--seed",
                                    "7",       "--out",       out,        "--no-progress"};
  };
  const std::string first = dir.File("first.sqlite");
  const std::string second = dir.File("second.sqlite");
  RunOk(args(first));
  RunOk(args(second));
  Database a(first);
  Database b(second);
  const std::string fingerprint = "SELECT fingerprint, events, passes, status FROM runs";
  EXPECT_EQ(a.Query(fingerprint), b.Query(fingerprint));
  EXPECT_EQ(a.Query(fingerprint).at(0).at(3), "complete");
  for (const std::string sql :
       {"SELECT * FROM jobs ORDER BY job_index", "SELECT * FROM timeseries ORDER BY rowid",
        "SELECT * FROM summary ORDER BY metric, scope"}) {
    const auto rows_a = RowsWithoutRunId(a, sql);
    const auto rows_b = RowsWithoutRunId(b, sql);
    EXPECT_FALSE(rows_a.empty()) << sql;
    ASSERT_EQ(rows_a.size(), rows_b.size()) << sql;
    for (size_t i = 0; i < rows_a.size(); ++i) {
      ASSERT_EQ(rows_a[i], rows_b[i]) << sql << ": first difference in row " << i;
    }
  }
  // The fingerprint does follow the schedule: another placement gives another one.
  const std::string third = dir.File("third.sqlite");
  auto other = args(third);
  other[6] = "first-fit";
  RunOk(other);
  Database c(third);
  EXPECT_NE(c.Value("SELECT fingerprint FROM runs"), a.Value("SELECT fingerprint FROM runs"));
}

// The rows are written on a writer thread while the run goes on (sim/output/sqlite_writer.h):
// a jobs row as soon as its job and every earlier one are done. With sjf on an overloaded
// cluster jobs end far out of submission order, and the run is long enough (over 30,000 events)
// for many hand-overs. The rows must still be one per job in job_index order, agree with the
// schedule (trace runtime model: a completed job ran exactly its trace duration), and the runs
// row must carry the outcome known only at the end.
TEST(SqliteOutput, RowsWrittenDuringTheRunAreCompleteAndInJobOrder) {
  TempDir dir;
  const std::string trace = dir.File("overloaded.csv");
  RunOk({"trace", "generate", "--jobs", "20000", "--gpus", "64", "--load", "1.5", "--seed", "3",
         "--out", trace});
  const std::string out = dir.File("streamed.sqlite");
  const std::string cluster = dir.File("cluster.json");
  WriteFile(cluster, R"({"nodes":[{"count":8,"gpu_type":"A100-80GB","gpus_per_node":8}]})");
  const std::vector<std::string> args = {"run",     "--trace",  trace,  "--cluster",
                                         cluster,   "--policy", "sjf",  "--runtime-model",
                                         "trace",   "--out",    out,    "--no-progress"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  Database db(out);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs"), 20000);
  // Stored in job_index order: the n-th row inserted is job n.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE rowid != job_index + 1"), 0);
  // Jobs did end out of order (the writer had to wait for earlier jobs).
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM jobs a JOIN jobs b ON b.job_index = a.job_index + 1 "
                      "WHERE b.end_time < a.end_time"),
            1000);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE status NOT IN ('completed', 'rejected')"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE status = 'completed' AND "
                      "(abs(run_time - trace_duration) > 1e-6 OR "
                      "abs(jct - (end_time - submit_time)) > 1e-6 OR "
                      "abs(wait_time - (start_time - submit_time)) > 1e-6)"),
            0);
  // The outcome columns: every job arrives once and every completed job finishes once.
  EXPECT_EQ(db.Value("SELECT status FROM runs"), "complete");
  EXPECT_EQ(db.Number("SELECT events FROM runs"),
            db.Number("SELECT COUNT(*) + SUM(status = 'completed') FROM jobs"));
  const std::string fingerprint = *db.Value("SELECT fingerprint FROM runs");
  EXPECT_EQ(fingerprint.size(), 16u);
  EXPECT_NE(r.out.find(fingerprint), std::string::npos) << r.out;
  // The timeseries: 300 s intervals, each beginning where the one before ended.
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM timeseries WHERE gpu_type = 'all'"), 1000);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries a JOIN timeseries b ON "
                      "b.rowid = a.rowid + 2 WHERE b.t_start != a.t_end"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM timeseries WHERE t_end - t_start > 300"), 0);
}

TEST(SqliteOutput, ModelAwareRunRecordsBatchesMemoryAndOomFailures) {
  // The bundled trace's first 3,000 jobs with models assigned (seed 7) under fcfs: the jobs
  // table's model columns must agree with each other and with the summary, counted here in SQL.
  TempDir dir;
  const std::string out = dir.File("models.sqlite");
  RunOk(
      {"run", "--first", "3000", "--assign-models", "--seed", "7", "--out", out, "--no-progress"});
  Database db(out);
  const std::string models = db.Value("SELECT models FROM runs").value_or("");
  EXPECT_NE(models.find("\"assign\":true"), std::string::npos) << models;
  EXPECT_NE(models.find("\"assign_seed\":7"), std::string::npos) << models;
  // Every job got a batch; every started job records the batch it ran and its memory per GPU.
  EXPECT_EQ(db.Value("SELECT count(*) FROM jobs WHERE batch_requested IS NULL").value_or(""), "0");
  EXPECT_EQ(db.Value("SELECT count(*) FROM jobs WHERE start_time IS NOT NULL AND "
                     "(batch_used IS NULL OR memory_per_gpu_gib IS NULL)")
                .value_or(""),
            "0");
  // A job's batch halves once per OOM failure (down to 1).
  EXPECT_EQ(db.Value("SELECT count(*) FROM jobs WHERE start_time IS NOT NULL AND batch_used != "
                     "max(1, batch_requested >> oom_failures) AND status != 'oom-failed'")
                .value_or(""),
            "0");
  // Memory per GPU never exceeds the GPU's memory (80 GiB at most on the default cluster).
  EXPECT_EQ(db.Value("SELECT count(*) FROM jobs WHERE memory_per_gpu_gib > 80").value_or(""), "0");
  const int oom_jobs = std::stoi(
      db.Value("SELECT count(*) FROM jobs WHERE oom_failures > 0 AND start_time IS NOT NULL")
          .value_or(""));
  const int started =
      std::stoi(db.Value("SELECT count(*) FROM jobs WHERE start_time IS NOT NULL").value_or(""));
  EXPECT_GT(oom_jobs, 0);  // the assigned batches straddle B_max on purpose
  EXPECT_NEAR(
      std::stod(db.Value("SELECT value FROM summary WHERE metric = 'oom_rate'").value_or("")),
      static_cast<double>(oom_jobs) / started, 1e-12);
  EXPECT_EQ(db.Value("SELECT value FROM summary WHERE metric = 'oom_failures'").value_or(""),
            db.Value("SELECT CAST(sum(oom_failures) AS REAL) FROM jobs").value_or(""));
  // Jobs that gave up carry their reason.
  EXPECT_EQ(db.Value("SELECT count(*) FROM jobs WHERE status = 'oom-failed' AND "
                     "reason NOT LIKE 'out of GPU memory:%'")
                .value_or(""),
            "0");
}

}  // namespace
}  // namespace clustersim::testing
