#include "sim/json_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace clustersim {

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  throw InternalError(std::string("internal check failed at ") + file + ":" +
                      std::to_string(line) + ": " + condition + ": " + message);
}

std::string InputError::Format(const std::string& file, int line, int column,
                               const std::string& what) {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) out.append(":").append(std::to_string(line));
  if (column > 0) out.append(":").append(std::to_string(column));
  out.append(": ").append(what);
  return out;
}

nlohmann::json ParseJsonText(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the offending byte; turn it into line and column.
    int line = 1;
    int column = 1;
    const size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    throw InputError(origin, line, column,
                     "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  }
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json ParseJsonFile(const std::string& path) {
  return ParseJsonText(ReadFileText(path), path);
}

const nlohmann::json& RequireMember(const nlohmann::json& object, const std::string& key,
                                    const std::string& origin, const std::string& where) {
  if (!object.is_object()) throw InputError(origin, 0, 0, where + ": expected an object");
  auto it = object.find(key);
  if (it == object.end()) {
    throw InputError(origin, 0, 0, where + ": missing required key \"" + key + "\"");
  }
  return *it;
}

double RequireNumber(const nlohmann::json& value, const std::string& origin,
                     const std::string& where) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    throw InputError(origin, 0, 0, where + ": expected a number, got " + value.dump());
  }
  return value.get<double>();
}

int RequirePositiveInt(const nlohmann::json& value, const std::string& origin,
                       const std::string& where) {
  if (!value.is_number_integer() || value.get<long long>() <= 0 ||
      value.get<long long>() > 100'000'000) {
    throw InputError(origin, 0, 0, where + ": expected a positive integer, got " + value.dump());
  }
  return static_cast<int>(value.get<long long>());
}

std::string RequireString(const nlohmann::json& value, const std::string& origin,
                          const std::string& where) {
  if (!value.is_string()) {
    throw InputError(origin, 0, 0, where + ": expected a string, got " + value.dump());
  }
  return value.get<std::string>();
}

}  // namespace clustersim
