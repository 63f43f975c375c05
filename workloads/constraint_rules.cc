#include "workloads/constraint_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

#include "sim/util/error.h"

namespace clustersim {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// The stream of draws of one key: seeded by (seed, key, a salt per rule).
struct Draws {
  Draws(uint64_t seed, std::string_view key, uint64_t salt) : state(seed ^ Fnv1a(key) ^ salt) {
    SplitMix64(state);  // decorrelate nearby seeds
  }
  double Uniform() { return static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53; }
  uint64_t Below(uint64_t n) { return SplitMix64(state) % n; }  // bias < n / 2^64
  uint64_t state;
};

constexpr uint64_t kDeadlineSalt = 0xDEAD11E5ull;
constexpr uint64_t kDataSalt = 0xDA7A0DE5ull;

// "key=value,key=value" -> map; throws naming `option` on a malformed item or a repeated key.
std::map<std::string, std::string> Items(const std::string& text, const std::string& option,
                                         const std::string& expected) {
  std::map<std::string, std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || !out.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      throw InputError(option + " \"" + text + "\": expected " + expected);
    }
    begin = end + 1;
  }
  return out;
}

bool ParseNumber(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && std::isfinite(*value);
}

}  // namespace

DeadlineRule ParseDeadlineRule(const std::string& text) {
  const std::string expected = "factor=LO:HI[,share=S] (deadline = lambda x duration after the "
                               "submission, lambda uniform in [LO, HI], 0 <= LO <= HI; S in [0, 1] "
                               "the share of jobs with a deadline), e.g. factor=1.5:4";
  const auto items = Items(text, "--deadlines", expected);
  DeadlineRule rule;
  bool has_factor = false;
  for (const auto& [key, value] : items) {
    if (key == "factor") {
      has_factor = true;
      const size_t colon = value.find(':');
      const std::string lo = value.substr(0, colon);
      const std::string hi = colon == std::string::npos ? lo : value.substr(colon + 1);
      if (!ParseNumber(lo, &rule.low) || !ParseNumber(hi, &rule.high) || rule.low < 0 ||
          rule.high < rule.low) {
        throw InputError("--deadlines \"" + text + "\": factor: expected " + expected);
      }
    } else if (key == "share") {
      if (!ParseNumber(value, &rule.share) || rule.share < 0 || rule.share > 1) {
        throw InputError("--deadlines \"" + text + "\": share: expected a fraction in [0, 1]");
      }
    } else {
      throw InputError("--deadlines \"" + text + "\": unknown key \"" + key +
                       "\"; expected factor or share");
    }
  }
  if (!has_factor) throw InputError("--deadlines \"" + text + "\": expected " + expected);
  return rule;
}

int64_t AssignDeadlines(Trace* trace, const DeadlineRule& rule, uint64_t seed) {
  int64_t given = 0;
  for (Job& job : trace->jobs) {
    const JobConstraints* c = trace->ConstraintsOf(job);
    if (c != nullptr && c->has_deadline()) continue;
    Draws draws(seed, job.id, kDeadlineSalt);
    const bool has = draws.Uniform() < rule.share;
    const double lambda = rule.low + (rule.high - rule.low) * draws.Uniform();
    if (!has) continue;
    trace->MutableConstraintsOf(job).deadline = lambda * job.duration;
    ++given;
  }
  return given;
}

DataNodeRule ParseDataNodeRule(const std::string& text) {
  const std::string expected =
      "replicas=R[,by=vc|user|job] (each virtual cluster, user or job has its data on R nodes "
      "drawn at random), e.g. replicas=3";
  const auto items = Items(text, "--data-nodes", expected);
  DataNodeRule rule;
  bool has_replicas = false;
  for (const auto& [key, value] : items) {
    if (key == "replicas") {
      double r = 0;
      if (!ParseNumber(value, &r) || r < 1 || r != std::floor(r) || r > 1e6) {
        throw InputError("--data-nodes \"" + text + "\": replicas: expected an integer >= 1");
      }
      rule.replicas = static_cast<int>(r);
      has_replicas = true;
    } else if (key == "by") {
      if (value == "vc") {
        rule.by = DataNodeRule::Key::kVc;
      } else if (value == "user") {
        rule.by = DataNodeRule::Key::kUser;
      } else if (value == "job") {
        rule.by = DataNodeRule::Key::kJob;
      } else {
        throw InputError("--data-nodes \"" + text + "\": by: expected vc, user or job");
      }
    } else {
      throw InputError("--data-nodes \"" + text + "\": unknown key \"" + key +
                       "\"; expected replicas or by");
    }
  }
  if (!has_replicas) throw InputError("--data-nodes \"" + text + "\": expected " + expected);
  return rule;
}

int64_t AssignDataNodes(Trace* trace, int node_count, const DataNodeRule& rule, uint64_t seed) {
  if (rule.replicas > node_count) {
    throw InputError("--data-nodes replicas=" + std::to_string(rule.replicas) +
                     ": the cluster has " + std::to_string(node_count) + " nodes");
  }
  std::map<std::string, Symbol> by_key;  // key -> its nodes' text
  std::vector<int> nodes(node_count);
  int64_t given = 0;
  for (Job& job : trace->jobs) {
    const JobConstraints* c = trace->ConstraintsOf(job);
    if (c != nullptr && !c->data_nodes.empty()) continue;
    std::string key;
    switch (rule.by) {
      case DataNodeRule::Key::kVc:
        key = "vc:" + job.vc.str();
        break;
      case DataNodeRule::Key::kUser:
        key = "user:" + job.user.str();
        break;
      case DataNodeRule::Key::kJob:
        key = "job:" + job.id;
        break;
    }
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      // A partial Fisher-Yates shuffle: the first R of a random permutation of the nodes.
      Draws draws(seed, key, kDataSalt);
      for (int i = 0; i < node_count; ++i) nodes[i] = i;
      for (int i = 0; i < rule.replicas; ++i) {
        const int j = i + static_cast<int>(draws.Below(node_count - i));
        std::swap(nodes[i], nodes[j]);
      }
      std::vector<int> chosen(nodes.begin(), nodes.begin() + rule.replicas);
      std::sort(chosen.begin(), chosen.end());
      std::string text;
      for (int n : chosen) text += (text.empty() ? "" : "|") + std::to_string(n);
      it = by_key.emplace(key, Symbol(text)).first;
    }
    trace->MutableConstraintsOf(job).data_nodes = it->second;
    ++given;
  }
  return given;
}

}  // namespace clustersim
