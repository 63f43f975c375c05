#include "sim/util/json_file.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/util/error.h"

namespace clustersim {

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  throw InternalError(std::string("internal check failed at ") + file + ":" + std::to_string(line) +
                      ": " + condition + ": " + message);
}

std::string InputError::Format(const std::string& file, int line, int column,
                               const std::string& what) {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) out.append(":").append(std::to_string(line));
  if (column > 0) out.append(":").append(std::to_string(column));
  out.append(": ").append(what);
  return out;
}

namespace {

// Builds the document as nlohmann::json::parse does, but keeps every parse error as a value with
// its byte offset instead of throwing: besides syntax errors, nlohmann reports a number that
// does not fit a double (1e400) as out_of_range 406, an exception type parse() callers do not
// expect from bad text.
class DomParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  explicit DomParser(nlohmann::json* result) : json_sax_dom_parser(*result, false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    failed_ = true;
    position_ = position;
    token_ = token;
    message_ = e.what();
    return false;
  }

  bool failed() const { return failed_; }
  std::size_t position() const { return position_; }  // bytes read, the offending one included
  const std::string& token() const { return token_; }
  // The library's message from "syntax error" on (its line and column count differently), or
  // without its "[json.exception.<kind>.<id>] " prefix.
  std::string message() const {
    if (const auto at = message_.find("syntax error"); at != std::string::npos) {
      return message_.substr(at);
    }
    const auto end = message_.find("] ");
    return message_.rfind("[json.exception", 0) == 0 && end != std::string::npos
               ? message_.substr(end + 2)
               : message_;
  }

 private:
  bool failed_ = false;
  std::size_t position_ = 0;
  std::string token_;
  std::string message_;
};

}  // namespace

nlohmann::json ParseJsonText(const std::string& text, const std::string& origin) {
  if (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0) {
    throw InputError(origin, 1, 1,
                     "the file is UTF-16 text (it starts with a UTF-16 byte-order mark): expected "
                     "UTF-8 JSON; convert it, e.g. iconv -f UTF-16 -t UTF-8");
  }
  nlohmann::json doc;
  DomParser parser(&doc);
  nlohmann::json::sax_parse(text, &parser);
  if (!parser.failed()) return doc;
  // The position counts the bytes read up to and including the offending one (for a number
  // that overflows, the byte after it); turn the start of the offending token into line and
  // column.
  std::string what = parser.message();
  size_t end = std::min<size_t>(parser.position() == 0 ? 0 : parser.position() - 1, text.size());
  if (what.rfind("number overflow", 0) == 0) {
    end = end >= parser.token().size() ? end - parser.token().size() : 0;
    what = "number out of range: " + parser.token() + " (expected a number a double can hold)";
  }
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw InputError(origin, line, column, "invalid JSON: " + what);
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
    throw InputError(
        origin, 0, 0,
        where + ": expected a positive integer (at most 100000000), got " + value.dump());
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
