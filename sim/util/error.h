// Errors in clustersim come in two kinds.
//
// InputError: outside data (a trace, a cluster spec, a catalog, a command-line value) is wrong.
// It names the file, line and column (1-based; 0 = not applicable) and what was expected. It is
// the one exception type for bad input and is caught only in main, which prints it and exits
// non-zero.
//
// CHECK: a broken invariant inside the simulator is a bug. CHECK is always on (never compiled out)
// and throws InternalError, which main reports as a failed run.
#ifndef CLUSTERSIM_SIM_UTIL_ERROR_H_
#define CLUSTERSIM_SIM_UTIL_ERROR_H_

#include <stdexcept>
#include <string>

namespace clustersim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, const std::string& what_expected)
      : std::runtime_error(Format(file, line, column, what_expected)),
        file_(std::move(file)),
        line_(line),
        column_(column),
        what_expected_(what_expected) {}
  explicit InputError(const std::string& message)
      : std::runtime_error(message), what_expected_(message) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  // The message without the "file:line:column: " prefix.
  const std::string& what_expected() const { return what_expected_; }

 private:
  static std::string Format(const std::string& file, int line, int column, const std::string& what);

  std::string file_;
  int line_ = 0;
  int column_ = 0;
  std::string what_expected_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

}  // namespace clustersim

// Always-on invariant check. The message may use operator+ on std::string.
#define CHECK(condition, message)                                                           \
  do {                                                                                      \
    if (!(condition)) ::clustersim::CheckFailed(__FILE__, __LINE__, #condition, (message)); \
  } while (false)

#endif  // CLUSTERSIM_SIM_UTIL_ERROR_H_
