// Reading a results database: a prepared statement that finalizes itself, and a text column.
// Shared by the readers of sim/output (report, comparison, the HTML report).
#ifndef CLUSTERSIM_SIM_OUTPUT_SQLITE_STATEMENT_H_
#define CLUSTERSIM_SIM_OUTPUT_SQLITE_STATEMENT_H_

#include <sqlite3.h>

#include <memory>
#include <string>

#include "sim/util/error.h"

namespace clustersim {

using Statement = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

// Prepares `sql` on `db`; throws InputError naming `path` with SQLite's message otherwise.
inline Statement Prepare(sqlite3* db, const std::string& path, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db);
    sqlite3_finalize(raw);
    throw InputError(path, 0, 0, "SQLite: " + message);
  }
  return Statement(raw, sqlite3_finalize);
}

// The column's text, "" for NULL.
inline std::string Text(sqlite3_stmt* stmt, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, column));
  return text ? text : "";
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_SQLITE_STATEMENT_H_
