// Helpers shared by the command-line tests (cli_test.cc, sqlite_output_test.cc): a temporary
// folder that removes itself, running the clustersim executable with its stdout, stderr and exit
// code captured, and a small read-only wrapper over a SQLite database.
//
// Everything here is header-only and test-only; the clustersim executable is the one CMake built
// (CLUSTERSIM_BINARY), the input files are in tests/data (CLUSTERSIM_TEST_DATA).
#ifndef CLUSTERSIM_TESTS_CLI_CLI_TEST_UTIL_H_
#define CLUSTERSIM_TESTS_CLI_CLI_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace clustersim::testing {

// $CLUSTERSIM_TEST_BINARY when set (to run a test against another build, e.g. to show that it
// fails on the code before a fix), else the clustersim CMake built.
inline std::string BinaryPath() {
  const char* other = std::getenv("CLUSTERSIM_TEST_BINARY");
  return other && *other ? other : CLUSTERSIM_BINARY;
}
inline std::string TestData(const std::string& relative) {
  return std::string(CLUSTERSIM_TEST_DATA) + "/" + relative;
}

// A fresh folder under $TMPDIR (or /tmp) made with mkdtemp; removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/clustersim_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    }
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The lines of `text`, without their newlines (no empty last line for a final newline).
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The comma-separated fields of one CSV line (no quoting).
inline std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

inline bool Exists(const std::string& path) { return std::filesystem::exists(path); }

// Names of the entries of `dir` whose name contains `needle`.
inline std::vector<std::string> EntriesContaining(const std::string& dir,
                                                  const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(needle) != std::string::npos) out.push_back(name);
  }
  return out;
}

struct CliResult {
  int exit_code = -1;  // the exit status, or 128 + signal number if killed by a signal
  std::string out;
  std::string err;
};

// How a test starts clustersim. The defaults run BinaryPath() with no limit. A test whose
// failure could harm the machine (a refused size that would fill the disk if accepted, a writer
// stopped by a signal) sets both: it runs the clustersim of this build, never
// $CLUSTERSIM_TEST_BINARY, and the kernel stops any file growing past max_file_bytes
// (RLIMIT_FSIZE: the write fails and the process gets SIGXFSZ).
struct SpawnLimits {
  bool own_binary = false;          // CLUSTERSIM_BINARY, whatever $CLUSTERSIM_TEST_BINARY says
  unsigned long max_file_bytes = 0;  // 0: no limit
};

inline std::vector<char*> Argv(const std::vector<std::string>& args,
                               const SpawnLimits& limits = {}) {
  static const std::string binary = BinaryPath();
  static const std::string own = CLUSTERSIM_BINARY;
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(limits.own_binary ? own.c_str() : binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// posix_spawn with the file-size limit of `limits`: the soft RLIMIT_FSIZE is lowered for the
// spawn (the child inherits it) and restored at once. The tests are single-threaded, and the
// test process writes nothing in between.
inline int SpawnLimited(pid_t* pid, char* const argv[], const posix_spawn_file_actions_t* actions,
                        const SpawnLimits& limits) {
  rlimit saved{};
  const bool limit = limits.max_file_bytes > 0 && ::getrlimit(RLIMIT_FSIZE, &saved) == 0;
  if (limit) {
    rlimit lowered = saved;
    lowered.rlim_cur = std::min<rlim_t>(saved.rlim_cur, limits.max_file_bytes);
    if (::setrlimit(RLIMIT_FSIZE, &lowered) != 0) return errno;
  }
  const int rc = posix_spawn(pid, argv[0], actions, nullptr, argv, environ);
  if (limit) ::setrlimit(RLIMIT_FSIZE, &saved);
  return rc;
}

// Runs `clustersim args...` to completion. stdin is /dev/null; stdout and stderr go to files in
// a private temporary folder and are returned. Never goes through a shell, so arguments need no
// quoting.
inline CliResult RunCli(const std::vector<std::string>& args, const SpawnLimits& limits = {}) {
  TempDir capture;
  const std::string out_path = capture.File("stdout");
  const std::string err_path = capture.File("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv = Argv(args, limits);
  pid_t pid = 0;
  const int rc = SpawnLimited(&pid, argv.data(), &actions, limits);
  posix_spawn_file_actions_destroy(&actions);
  CliResult result;
  if (rc != 0) {
    result.err = "posix_spawn " + BinaryPath() + " failed: " + std::strerror(rc);
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

// `clustersim args...` started in the background, its output captured as RunCli's; Wait()
// returns the result. The process is killed (SIGKILL) if the object goes away first.
class BackgroundCli {
 public:
  explicit BackgroundCli(const std::vector<std::string>& args, const SpawnLimits& limits = {}) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, capture_.File("stdout").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, capture_.File("stderr").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv = Argv(args, limits);
    if (SpawnLimited(&pid_, argv.data(), &actions, limits) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~BackgroundCli() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  BackgroundCli(const BackgroundCli&) = delete;
  BackgroundCli& operator=(const BackgroundCli&) = delete;

  bool started() const { return pid_ > 0; }
  void Signal(int signal) const {
    if (pid_ > 0) ::kill(pid_, signal);
  }
  // What it has written to stderr so far.
  std::string ErrSoFar() const { return ReadFile(capture_.File("stderr")); }
  CliResult Wait() {
    CliResult result;
    if (pid_ <= 0) return result;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = ReadFile(capture_.File("stdout"));
    result.err = ReadFile(capture_.File("stderr"));
    return result;
  }

 private:
  TempDir capture_;
  pid_t pid_ = -1;
};

// Text for assertion messages: the command line and what it printed.
inline std::string Describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string s = "clustersim";
  for (const auto& a : args) s += " " + a;
  return s + "\n  exit code " + std::to_string(r.exit_code) + "\n  stdout: " + r.out +
         "\n  stderr: " + r.err;
}

// A read-only view of a SQLite database. Query returns every row as text (NULL = nullopt), REAL
// values printed with 17 significant digits so equal text means equal doubles.
class Database {
 public:
  explicit Database(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw std::runtime_error("cannot open " + path + ": " + message);
    }
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  using Row = std::vector<std::optional<std::string>>;

  std::vector<Row> Query(const std::string& sql, std::vector<std::string>* column_names = nullptr) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error("SQL error in \"" + sql + "\": " + sqlite3_errmsg(db_));
    }
    const int columns = sqlite3_column_count(stmt);
    if (column_names) {
      column_names->clear();
      for (int c = 0; c < columns; ++c) column_names->push_back(sqlite3_column_name(stmt, c));
    }
    std::vector<Row> rows;
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      Row row;
      for (int c = 0; c < columns; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_NULL:
            row.push_back(std::nullopt);
            break;
          case SQLITE_FLOAT: {
            char buffer[40];
            std::snprintf(buffer, sizeof buffer, "%.17g", sqlite3_column_double(stmt, c));
            row.push_back(std::string(buffer));
            break;
          }
          default:
            row.push_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                                      static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    const std::string error = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw std::runtime_error("SQL error in \"" + sql + "\": " + error);
    return rows;
  }

  // The single value of a one-row, one-column query (nullopt for NULL or no row).
  std::optional<std::string> Value(const std::string& sql) {
    const auto rows = Query(sql);
    if (rows.empty() || rows[0].empty()) return std::nullopt;
    return rows[0][0];
  }

  double Number(const std::string& sql) {
    const auto v = Value(sql);
    if (!v) throw std::runtime_error("NULL or no row from \"" + sql + "\"");
    return std::stod(*v);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace clustersim::testing

#endif  // CLUSTERSIM_TESTS_CLI_CLI_TEST_UTIL_H_
