// Reading JSON documents that come from outside (catalogs, cluster specs, run configs, sweep
// specs, traces), gzip or not (sim/util/input_file.h). Syntax errors and schema errors are
// reported as InputError with the file, line and column: a syntax error at once, a schema error
// (JsonValueError) once the reader places it with AtJsonPosition.
#ifndef CLUSTERSIM_SIM_UTIL_JSON_FILE_H_
#define CLUSTERSIM_SIM_UTIL_JSON_FILE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "sim/util/error.h"
#include "sim/util/input_file.h"

namespace clustersim {

// Returns the parsed document of `text`; `origin` names it in errors (a path or a preset name).
// Throws InputError naming line and column of a syntax error.
nlohmann::json ParseJsonText(const std::string& text, const std::string& origin);

// Reads and parses a file. Throws InputError when it cannot be read or parsed.
nlohmann::json ParseJsonFile(const std::string& path);

// A value of a JSON document that parses but is not what the schema wants. `where` is the
// value's path from the document's root: member names and array indices, "nodes[2].gpu_type"
// ("" or a name that is no member = not located). The message reads "<where>: <what>".
// Validation code throws it; the function that holds the document's text turns it into an
// InputError at the value's line and column with AtJsonPosition.
class JsonValueError : public InputError {
 public:
  JsonValueError(const std::string& origin, std::string where, const std::string& what)
      : InputError(origin, 0, 0, where.empty() ? what : where + ": " + what),
        where_(std::move(where)) {}
  // The same with `message` as it is (no "<where>: " prefix).
  static JsonValueError Verbatim(const std::string& origin, std::string where,
                                 const std::string& message) {
    JsonValueError e(origin, "", message);
    e.where_ = std::move(where);
    return e;
  }
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

// Returns the 1-based line and column (in bytes) where the value at `where` starts in the JSON
// `text` (of the last of repeated keys, which is the one kept), or {0, 0} if no value is there.
// `root_name`, if not empty, is a name a path may start with to mean the root ("jobs[3]" in a
// document that is a bare array). Parses `text` again: meant for the error path.
std::pair<int, int> FindJsonValue(const std::string& text, const std::string& where,
                                  const std::string& root_name = "");

// Returns `e` as an InputError at its value's line and column in `text`, the document read from
// `origin` (the same message; no position if the value cannot be found or `e` is about another
// document). Used in a function-try-block around the code that checks a document:
//   Spec Spec::FromJsonText(const std::string& text, ...) try { ... }
//   catch (const JsonValueError& e) { throw AtJsonPosition(e, origin, text); }
InputError AtJsonPosition(const JsonValueError& e, const std::string& origin,
                          const std::string& text, const std::string& root_name = "");

// Schema helpers: fetch a member of an object with the expected type, or throw a JsonValueError
// "<where>: expected <what>". `where` is a path like "nodes[2].gpu_type"; a missing key is
// reported at the object that lacks it.
const nlohmann::json& RequireMember(const nlohmann::json& object, const std::string& key,
                                    const std::string& origin, const std::string& where);
double RequireNumber(const nlohmann::json& value, const std::string& origin,
                     const std::string& where);
int RequirePositiveInt(const nlohmann::json& value, const std::string& origin,
                       const std::string& where);
// A duration (sim/util/duration.h): a number, counting `plain_unit_seconds` each, or a string
// such as "90s", "30min", "1.5h", "2d". Returns seconds.
double RequireDuration(const nlohmann::json& value, const std::string& origin,
                       const std::string& where, double plain_unit_seconds = 1);
std::string RequireString(const nlohmann::json& value, const std::string& origin,
                          const std::string& where);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_JSON_FILE_H_
