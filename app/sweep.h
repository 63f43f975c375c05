// Experiments at scale (docs/sweep.md): the sweep spec, its cross product of runs with stable
// indices and keys, shards, and running many runs in parallel on local cores.
//
// A sweep spec is a JSON object of lists (docs/sweep.md): traces, clusters, policies,
// placements, params, load_factor, seeds, plus single values shared by every run. Its runs are
// the cross product in that order (the last list varies fastest); each gets an index and a key:
// the canonical JSON of its values as the spec wrote them, hashed into its file name
// `run-<index>-<first 8 hex digits of SHA-256(key)>.sqlite`. Indices and keys depend only on the
// spec text, so every shard, every resumed invocation and every machine agrees on them.
//
// Runs execute on threads, each calling ExecuteRun with its own inputs and its own output file.
// That is safe because a run shares no mutable state with another: the policy, placement and
// trace-reader registries are filled during static initialization and only read afterwards, the
// hardware catalog is a function-local static, the Symbol pool locks, spdlog loggers are
// thread-safe, SQLite (Debian builds it serialized) gets one connection per run, and the writer
// formats times with gmtime_r. (A ThreadSanitizer build ran sweeps and compares with 2
// threads, failing runs and logging included, without a report.) Threads rather than child
// processes: no re-parsing of options, one Ctrl-C flag for all runs, and a failing run is an
// exception caught per run; the price is that a crash (a bug) stops the whole invocation — a
// resumed sweep then redoes only what is missing.
#ifndef CLUSTERSIM_APP_SWEEP_H_
#define CLUSTERSIM_APP_SWEEP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/param_scopes.h"
#include "app/progress.h"
#include "app/run.h"

namespace clustersim {

struct SweepRun {
  size_t index = 0;
  std::string key_json;   // canonical JSON of the run's values as written in the spec
  std::string file_name;  // run-0007-1a2b3c4d.sqlite
  std::string label;      // short human description for progress lines
  RunConfig config;       // paths resolved against the spec's folder; config.out is empty
};

struct SweepSpec {
  std::string path;
  std::vector<SweepRun> runs;  // in index order
};

// Reads and expands a sweep spec. Relative trace, cluster and hardware paths are taken relative
// to the spec's folder (preset names stay names). Throws InputError naming the file and the key
// (e.g. "policies[1]") for a syntax error, an unknown key, a wrong type, an empty or repeated
// list entry, an unknown policy or placement, or a load factor <= 0. Parameters, traces and
// clusters are only checked when their run executes: a bad one fails that run alone.
SweepSpec LoadSweepSpec(const std::string& path);

// `--shard i/N`: run index k belongs to shard k mod N.
struct Shard {
  int index = 0;
  int count = 1;
  bool Contains(size_t run_index) const {
    return static_cast<int>(run_index % static_cast<size_t>(count)) == index;
  }
};
// Parses "i/N" with 0 <= i < N. Throws InputError naming --shard.
Shard ParseShard(const std::string& text);

// Calls body(i) for every i in [0, count) on min(jobs, count) threads (jobs < 1 counts as 1);
// returns when all are done. REQUIRES: body does not throw.
void ParallelFor(size_t count, int jobs, const std::function<void(size_t)>& body);

// The default for --jobs: the number of cores (at least 1).
int DefaultJobCount();

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;
  Shard shard;
  const std::atomic<bool>* interrupt = nullptr;  // Ctrl-C: no new runs, running ones stop
  ProgressStyle progress;  // the progress line on stderr (app/progress.h); off by default
};

struct SweepReport {
  int64_t in_shard = 0;     // runs of the spec in this shard
  int64_t skipped = 0;      // already complete in out_dir (resume)
  int64_t complete = 0;     // run now and complete
  int64_t failed = 0;       // run now and recorded as failed
  int64_t interrupted = 0;  // stopped or never started because of Ctrl-C
};

// Runs the spec's runs of `options.shard` into out_dir (one database per run, named by its
// file_name), skipping runs whose database already holds exactly one complete run; any other
// database of a selected run (failed, interrupted, unreadable) is removed and the run redone.
// A run that fails is recorded in its database as a runs row with status `failed` and the error,
// and the others go on. Writes out_dir/sweep.json, the manifest of all runs (index, file, key).
// Prints one line per finished run on stdout (with the run's warnings, app/run.h). Throws
// InputError if out_dir cannot be made.
SweepReport RunSweep(const SweepSpec& spec, const SweepOptions& options);

// Writes a database at config.out holding one runs row with status `failed` and `error` (the
// trace and cluster SHA-256 filled in when those files can be read). Throws InputError when the
// database cannot be written.
void RecordFailedRun(const RunConfig& config, const std::string& error);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_SWEEP_H_
