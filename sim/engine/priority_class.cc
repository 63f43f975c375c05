#include "sim/engine/priority_class.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr int kLevelLimit = 1'000'000'000;

struct BuiltIn {
  const char* name;
  int level;
};
constexpr BuiltIn kBuiltIn[] = {
    {"low", 0}, {"medium", 1},    {"high", 2}, {"urgent", 3},
    {"be", 0},  {"burstable", 1}, {"ls", 2},   {"guaranteed", 3},
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string Trim(const std::string& text) {
  size_t first = 0;
  size_t last = text.size();
  while (first < last && text[first] == ' ') ++first;
  while (last > first && text[last - 1] == ' ') --last;
  return text.substr(first, last - first);
}

std::optional<int> ParseLevel(const std::string& text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      value < -kLevelLimit || value > kLevelLimit) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

PriorityMap ParsePriorityMap(const std::string& text, const std::string& option) {
  PriorityMap map;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? "" : Trim(item.substr(0, eq));
    const std::optional<int> level =
        eq == std::string::npos ? std::nullopt : ParseLevel(Trim(item.substr(eq + 1)));
    if (name.empty() || !level) {
      throw InputError(option + ": \"" + item +
                       "\": expected NAME=LEVEL with an integer level (higher = more urgent), "
                       "e.g. BE=0,LS=2");
    }
    if (!map.emplace(Lower(name), *level).second) {
      throw InputError(option + ": class \"" + name + "\" given twice");
    }
    begin = end + 1;
  }
  return map;
}

std::optional<int> PriorityLevelOf(const std::string& name, const PriorityMap& overrides) {
  const std::string key = Lower(Trim(name));
  if (auto it = overrides.find(key); it != overrides.end()) return it->second;
  for (const BuiltIn& entry : kBuiltIn) {
    if (key == entry.name) return entry.level;
  }
  return std::nullopt;
}

const char* PriorityLevelName(int level) {
  for (const BuiltIn& entry : kBuiltIn) {
    if (entry.level == level) return entry.name;  // the generic names come first
  }
  return "";
}

std::set<int> ParsePriorityLevels(const std::string& text, const std::string& key) {
  std::set<int> levels;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = Trim(text.substr(begin, end - begin));
    std::optional<int> level = ParseLevel(item);
    if (!level) level = PriorityLevelOf(item);
    if (!level) {
      throw InputError("parameter " + key + "=" + text + ": \"" + item +
                       "\" is neither an integer level nor a class name (low, medium, high, "
                       "urgent, BE, Burstable, LS, Guaranteed)");
    }
    levels.insert(*level);
    begin = end + 1;
  }
  return levels;
}

}  // namespace clustersim
