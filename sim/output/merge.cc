#include "sim/output/merge.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "sim/output/sqlite_writer.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

// A read-only connection to a database that must hold the clustersim schema.
class SourceDatabase {
 public:
  explicit SourceDatabase(const std::string& path) : path_(path) {
    if (!fs::is_regular_file(path)) throw InputError(path, 0, 0, "no such database file");
    // NOMUTEX: a merge reads each source from one thread; the per-call mutex cost a tenth of it.
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError(path, 0, 0, "cannot open database: " + message);
    }
    std::string problem;
    try {
      problem = SchemaProblem(db_);
    } catch (const InputError& e) {
      // SQLite reads the header lazily: a file that is not a database fails here.
      problem = std::string("not a SQLite database (") + e.what() + ")";
    } catch (...) {
      sqlite3_close(db_);
      throw;
    }
    if (!problem.empty()) {
      sqlite3_close(db_);
      db_ = nullptr;
      if (problem.rfind("not a SQLite", 0) != 0) problem = "not a clustersim database: " + problem;
      throw InputError(path, 0, 0, problem);
    }
  }
  ~SourceDatabase() { sqlite3_close(db_); }
  SourceDatabase(const SourceDatabase&) = delete;
  SourceDatabase& operator=(const SourceDatabase&) = delete;

  sqlite3* get() const { return db_; }

  // Each run as (run_id, identity key, status), in run_id order. The key is the kRunKeyColumns
  // values as text, NULL spelled differently from any text.
  struct RunInfo {
    int64_t run_id;
    std::string key;
    std::string status;
  };
  std::vector<RunInfo> Runs() const {
    std::string sql = "SELECT run_id, status";
    for (const char* column : kRunKeyColumns) sql += std::string(", \"") + column + "\"";
    sql += " FROM runs ORDER BY run_id";
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      const std::string message = sqlite3_errmsg(db_);
      sqlite3_finalize(stmt);
      throw InputError(path_, 0, 0, "cannot read runs: " + message);
    }
    std::vector<RunInfo> runs;
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      RunInfo info;
      info.run_id = sqlite3_column_int64(stmt, 0);
      const auto* status = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
      info.status = status ? status : "";
      for (int c = 2; c < sqlite3_column_count(stmt); ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          info.key += '\x01';
        } else {
          info.key += reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        }
        info.key += '\x00';
      }
      runs.push_back(std::move(info));
    }
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw InputError(path_, 0, 0, "cannot read runs: " + message);
    return runs;
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string KeyDescription() {
  std::string text;
  for (const char* column : kRunKeyColumns)
    text += (text.empty() ? "" : ", ") + std::string(column);
  return text;
}

}  // namespace

MergeResult MergeDatabases(const std::string& out, const std::vector<std::string>& inputs,
                           const MergeOptions& options) {
  if (inputs.empty()) throw InputError("merge: no input databases");
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::exists(out) && fs::equivalent(input, out, ec)) {
      throw InputError(input, 0, 0, "is the output database itself");
    }
  }
  // Where each run key was first seen: "file run N".
  std::map<std::string, std::string> seen;
  MergeResult result;
  // Returns false for a run to leave out (a duplicate, with skip_duplicates).
  auto remember = [&](const SourceDatabase::RunInfo& run, const std::string& file) {
    const std::string where = file + " (run " + std::to_string(run.run_id) + ")";
    if (!options.reject_duplicates) return true;
    const auto [it, inserted] = seen.emplace(run.key, where);
    if (inserted) return true;
    if (options.skip_duplicates) {
      result.skipped.push_back(where + " = " + it->second);
      return false;
    }
    throw InputError(out, 0, 0,
                     "duplicate run: " + where + " is the same run as " + it->second + " (same " +
                         KeyDescription() +
                         "); nothing was written (--skip-duplicates leaves such runs out)");
  };
  // Open and check every input before writing anything.
  std::vector<std::unique_ptr<SourceDatabase>> sources;
  std::vector<std::vector<SourceDatabase::RunInfo>> runs;
  if (options.reject_duplicates && fs::exists(out)) {
    const SourceDatabase existing(out);
    // Duplicates already inside `out` (appended with --allow-duplicate) are its own business.
    for (const auto& run : existing.Runs()) {
      seen.emplace(run.key, out + " (run " + std::to_string(run.run_id) + ")");
    }
  }
  for (const std::string& input : inputs) {
    sources.push_back(std::make_unique<SourceDatabase>(input));
    runs.push_back({});
    for (auto& run : sources.back()->Runs()) {
      if (remember(run, input)) runs.back().push_back(std::move(run));
    }
  }
  SqliteWriter writer(out);
  for (size_t i = 0; i < sources.size(); ++i) {
    for (const auto& run : runs[i]) {
      try {
        result.new_run_ids.push_back(writer.CopyRun(sources[i]->get(), run.run_id));
      } catch (const InputError& e) {
        throw InputError(inputs[i], 0, 0, "run " + std::to_string(run.run_id) + ": " + e.what());
      }
      ++result.runs;
      if (run.status != "complete") ++result.failed_runs;
    }
  }
  writer.Commit();
  return result;
}

std::vector<std::string> ExpandDatabaseArguments(const std::vector<std::string>& arguments,
                                                 const std::string& out) {
  std::vector<std::string> files;
  for (const std::string& argument : arguments) {
    if (fs::is_directory(argument)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(argument)) {
        std::error_code ec;
        if (entry.is_regular_file() && entry.path().extension() == ".sqlite" &&
            !(fs::exists(out) && fs::equivalent(entry.path(), out, ec))) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(argument)) {
      files.push_back(argument);
    } else {
      throw InputError(argument, 0, 0, "no such database file or directory");
    }
  }
  return files;
}

std::vector<std::string> ReadRunStatuses(const std::string& path) {
  const SourceDatabase db(path);
  std::vector<std::string> statuses;
  for (const auto& run : db.Runs()) statuses.push_back(run.status);
  return statuses;
}

}  // namespace clustersim
