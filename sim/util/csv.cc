#include "sim/util/csv.h"

#include <algorithm>

#include "sim/util/error.h"

namespace clustersim {

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

const std::vector<CsvField>& CsvSplitter::Split(std::string_view line, const std::string& path,
                                                int64_t line_number) {
  fields_.clear();
  unquoted_.clear();
  // Views into unquoted_ must stay valid while it grows: reserve the most it can hold.
  unquoted_.reserve(line.size());
  size_t i = 0;
  while (true) {
    size_t start = i;
    while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
    if (start < line.size() && line[start] == '"') {
      const int column = static_cast<int>(start) + 1;
      const size_t begin = unquoted_.size();
      i = start + 1;
      while (true) {
        if (i >= line.size()) {
          throw InputError(path, static_cast<int>(line_number), column,
                           "unterminated quoted field: expected a closing '\"'");
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            unquoted_.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        unquoted_.push_back(line[i++]);
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != separator_) {
        throw InputError(path, static_cast<int>(line_number), static_cast<int>(i) + 1,
                         std::string("expected '") + separator_ + "' after a quoted field");
      }
      fields_.push_back(
          {std::string_view(unquoted_.data() + begin, unquoted_.size() - begin), column});
    } else {
      const size_t end = std::min(line.find(separator_, i), line.size());
      fields_.push_back({TrimBlanks(line.substr(i, end - i)), static_cast<int>(i) + 1});
      i = end;
    }
    if (i >= line.size()) return fields_;
    ++i;  // the separator
  }
}

}  // namespace clustersim
