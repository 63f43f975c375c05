// Splitting CSV lines into fields that keep their column, for every CSV the project reads (trace
// readers, workloads/trace_csv.h; the model validation data, sim/models/validation.h). Fields are
// separated by a separator character and may be double-quoted ("" escapes a quote; no newline
// inside a field); blanks around a field are removed. A malformed quoted field is an InputError
// naming the file, line and column.
#ifndef CLUSTERSIM_SIM_UTIL_CSV_H_
#define CLUSTERSIM_SIM_UTIL_CSV_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// Returns `text` without leading and trailing spaces and tabs.
std::string_view TrimBlanks(std::string_view text);

struct CsvField {
  std::string_view text;  // unquoted, surrounding blanks removed
  int column = 1;         // 1-based character position of the field in its line
};

// Splits CSV lines: fields separated by `separator`, optionally double-quoted ("" escapes a quote).
// Reuses its buffers, so a caller splitting millions of lines allocates nothing per line.
class CsvSplitter {
 public:
  explicit CsvSplitter(char separator = ',') : separator_(separator) {}
  // Splits `line`; the fields stay valid until the next call. Throws InputError naming the
  // column of an unterminated or malformed quoted field.
  const std::vector<CsvField>& Split(std::string_view line, const std::string& path,
                                     int64_t line_number);

 private:
  char separator_;
  std::vector<CsvField> fields_;
  std::string unquoted_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_CSV_H_
