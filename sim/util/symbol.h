// Symbol: an interned string (user, virtual cluster, GPU type list, model, trace status). A job
// carries a few of these; interning keeps the Job record small (these fields repeat across
// millions of jobs) and makes equality an integer comparison. The pool is process-wide and only
// grows; interning is thread-safe and str() is lock-free. The empty string is Symbol().
#ifndef CLUSTERSIM_SIM_UTIL_SYMBOL_H_
#define CLUSTERSIM_SIM_UTIL_SYMBOL_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace clustersim {

class Symbol {
 public:
  Symbol() = default;
  Symbol(std::string_view text);  // NOLINT: implicit, so `job.user = "alice"` reads naturally
  Symbol(const char* text) : Symbol(std::string_view(text)) {}         // NOLINT
  Symbol(const std::string& text) : Symbol(std::string_view(text)) {}  // NOLINT

  // The interned text; the reference stays valid for the life of the process.
  const std::string& str() const;
  bool empty() const { return id_ == 0; }
  uint32_t id() const { return id_; }

  friend bool operator==(Symbol a, Symbol b) { return a.id_ == b.id_; }
  friend bool operator==(Symbol a, std::string_view b) { return a.str() == b; }
  friend bool operator==(Symbol a, const char* b) { return a.str() == b; }
  friend bool operator<(Symbol a, Symbol b) { return a.str() < b.str(); }

 private:
  uint32_t id_ = 0;
};

std::ostream& operator<<(std::ostream& out, Symbol s);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_SYMBOL_H_
