// Reading JSON documents that come from outside (catalogs, cluster specs, run configs, traces).
// Parse errors and schema errors are reported as InputError with the file, line and column.
#ifndef CLUSTERSIM_SIM_UTIL_JSON_FILE_H_
#define CLUSTERSIM_SIM_UTIL_JSON_FILE_H_

#include <nlohmann/json.hpp>
#include <string>

namespace clustersim {

// Returns the parsed document of `text`; `origin` names it in errors (a path or a preset name).
// Throws InputError naming line and column of a syntax error.
nlohmann::json ParseJsonText(const std::string& text, const std::string& origin);

// Reads and parses a file. Throws InputError when it cannot be read or parsed.
nlohmann::json ParseJsonFile(const std::string& path);

// Reads a whole file into a string. Throws InputError when it cannot be read.
std::string ReadFileText(const std::string& path);

// Schema helpers: fetch a member of an object with the expected type, or throw an InputError
// "origin: <where>: expected <what>". `where` is a path like "nodes[2].gpu_type".
const nlohmann::json& RequireMember(const nlohmann::json& object, const std::string& key,
                                    const std::string& origin, const std::string& where);
double RequireNumber(const nlohmann::json& value, const std::string& origin,
                     const std::string& where);
int RequirePositiveInt(const nlohmann::json& value, const std::string& origin,
                       const std::string& where);
std::string RequireString(const nlohmann::json& value, const std::string& origin,
                          const std::string& where);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_JSON_FILE_H_
