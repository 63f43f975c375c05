#include "sim/util/json_file.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "sim/util/duration.h"
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

nlohmann::json ParseJsonFile(const std::string& path) {
  return ParseJsonText(ReadFileText(path), path);
}

namespace {

// One step of a path: a member name or an array index.
struct PathStep {
  bool is_index = false;
  std::string name;
  size_t index = 0;
  bool operator==(const PathStep& o) const {
    return is_index == o.is_index && (is_index ? index == o.index : name == o.name);
  }
};

// Splits "a.b[2].c" into steps; returns false if `where` is not such a path.
bool ParsePath(const std::string& where, std::vector<PathStep>* steps) {
  size_t i = 0;
  while (i < where.size()) {
    if (where[i] == '[') {
      const size_t close = where.find(']', i);
      if (close == std::string::npos || close == i + 1) return false;
      PathStep step;
      step.is_index = true;
      for (size_t k = i + 1; k < close; ++k) {
        if (where[k] < '0' || where[k] > '9') return false;
        step.index = step.index * 10 + static_cast<size_t>(where[k] - '0');
      }
      steps->push_back(step);
      i = close + 1;
      continue;
    }
    if (where[i] == '.') {
      if (steps->empty()) return false;
      ++i;
    }
    const size_t end = std::min(where.find('.', i), where.find('[', i));
    if (end == i) return false;
    PathStep step;
    step.name = where.substr(i, end == std::string::npos ? std::string::npos : end - i);
    steps->push_back(std::move(step));
    i = end == std::string::npos ? where.size() : end;
  }
  return true;
}

// The iterator nlohmann reads `text` through; it notes how far the parser has read, so a SAX
// event knows the bytes consumed up to its token (and at most one byte of look-ahead).
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* at, const char** furthest) : at_(at), furthest_(furthest) {}
  reference operator*() const { return *at_; }
  TrackingIterator& operator++() {
    ++at_;
    if (at_ > *furthest_) *furthest_ = at_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& o) const { return at_ == o.at_; }
  bool operator!=(const TrackingIterator& o) const { return at_ != o.at_; }

 private:
  const char* at_;
  const char** furthest_;
};

// Walks the document keeping the path of the current value; notes where each value whose path is
// `target` starts. A value starts at the first byte after the previous event that is not
// blank, ',' or ':' (tokens between events are only those).
class PathLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  PathLocator(const std::string& text, std::vector<PathStep> target, const char** furthest)
      : text_(text), target_(std::move(target)), furthest_(furthest) {}

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override {
    Value();
    frames_.push_back({false, 0});
    return true;
  }
  bool key(string_t& name) override {
    Mark();
    path_.resize(frames_.size() - 1);
    PathStep step;
    step.name = name;
    path_.push_back(std::move(step));
    return true;
  }
  bool end_object() override { return End(); }
  bool start_array(std::size_t) override {
    Value();
    frames_.push_back({true, 0});
    return true;
  }
  bool end_array() override { return End(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  size_t found() const { return found_; }  // offset + 1 of the match, 0 = none

 private:
  struct Frame {
    bool is_array;
    size_t next_index;
  };

  // Skips what lies between the previous event's token and this one's.
  size_t Mark() {
    size_t at = previous_end_;
    if (at == 0 && text_.rfind("\xEF\xBB\xBF", 0) == 0) at = 3;
    while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t' || text_[at] == '\n' ||
                                 text_[at] == '\r' || text_[at] == ',' || text_[at] == ':')) {
      ++at;
    }
    previous_end_ = static_cast<size_t>(*furthest_ - text_.data());
    return at;
  }

  bool Value() {
    const size_t start = Mark();
    if (!frames_.empty() && frames_.back().is_array) {
      path_.resize(frames_.size() - 1);
      PathStep step;
      step.is_index = true;
      step.index = frames_.back().next_index++;
      path_.push_back(step);
    }
    if (path_.size() == frames_.size() && path_ == target_) found_ = start + 1;
    return true;
  }

  bool End() {
    Mark();
    frames_.pop_back();
    path_.resize(frames_.size());
    return true;
  }

  const std::string& text_;
  std::vector<PathStep> target_;
  const char** furthest_;
  std::vector<Frame> frames_;
  std::vector<PathStep> path_;
  size_t previous_end_ = 0;
  size_t found_ = 0;
};

}  // namespace

std::pair<int, int> FindJsonValue(const std::string& text, const std::string& where,
                                  const std::string& root_name) {
  std::vector<PathStep> target;
  if (where.empty() || !ParsePath(where, &target)) return {0, 0};
  if (!root_name.empty() && !target.empty() && !target.front().is_index &&
      target.front().name == root_name) {
    // The name stands for the root only where the root is not an object holding it.
    const size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (first != std::string::npos && text[first] == '[') target.erase(target.begin());
  }
  const char* furthest = text.data();
  PathLocator locator(text, std::move(target), &furthest);
  nlohmann::json::sax_parse(TrackingIterator(text.data(), &furthest),
                            TrackingIterator(text.data() + text.size(), &furthest), &locator);
  if (locator.found() == 0) return {0, 0};
  int line = 1;
  int column = 1;
  for (size_t i = 0; i + 1 < locator.found(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

InputError AtJsonPosition(const JsonValueError& e, const std::string& origin,
                          const std::string& text, const std::string& root_name) {
  if (e.file() != origin) return e;
  const auto [line, column] = FindJsonValue(text, e.where(), root_name);
  return InputError(e.file(), line, column, e.what_expected());
}

const nlohmann::json& RequireMember(const nlohmann::json& object, const std::string& key,
                                    const std::string& origin, const std::string& where) {
  if (!object.is_object()) throw JsonValueError(origin, where, "expected an object");
  auto it = object.find(key);
  if (it == object.end()) {
    throw JsonValueError(origin, where, "missing required key \"" + key + "\"");
  }
  return *it;
}

double RequireNumber(const nlohmann::json& value, const std::string& origin,
                     const std::string& where) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    throw JsonValueError(origin, where, "expected a number, got " + value.dump());
  }
  return value.get<double>();
}

int RequirePositiveInt(const nlohmann::json& value, const std::string& origin,
                       const std::string& where) {
  if (!value.is_number_integer() || value.get<long long>() <= 0 ||
      value.get<long long>() > 100'000'000) {
    throw JsonValueError(origin, where,
                         "expected a positive integer (at most 100000000), got " + value.dump());
  }
  return static_cast<int>(value.get<long long>());
}

double RequireDuration(const nlohmann::json& value, const std::string& origin,
                       const std::string& where, double plain_unit_seconds) {
  if (value.is_string()) {
    double seconds = 0;
    std::string error;
    if (!TryParseDuration(value.get<std::string>(), plain_unit_seconds, &seconds, &error)) {
      throw JsonValueError(origin, where, error + ", got " + value.dump());
    }
    return seconds;
  }
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    throw JsonValueError(
        origin, where,
        "expected a duration (a number of " +
            std::string(plain_unit_seconds == kSecondsPerHour ? "hours" : "seconds") +
            ", or a string such as \"30min\" or \"1.5h\"), got " + value.dump());
  }
  return value.get<double>() * plain_unit_seconds;
}

std::string RequireString(const nlohmann::json& value, const std::string& origin,
                          const std::string& where) {
  if (!value.is_string()) {
    throw JsonValueError(origin, where, "expected a string, got " + value.dump());
  }
  return value.get<std::string>();
}

}  // namespace clustersim
