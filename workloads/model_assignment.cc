#include "workloads/model_assignment.h"

#include <algorithm>
#include <string_view>

namespace clustersim {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

double Uniform01(uint64_t& state) {
  return static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;
}

int Log2(int power_of_two) {
  int n = 0;
  while ((1 << (n + 1)) <= power_of_two) ++n;
  return n;
}

int DrawBatch(const ModelChoice& choice, uint64_t& state, UserBatchRule rule) {
  const double u = Uniform01(state);
  switch (rule) {
    case UserBatchRule::kReference:
      return choice.recipe_batch;
    case UserBatchRule::kRecipe:
      if (u < 0.25) return std::max(1, choice.recipe_batch / 2);
      if (u < 0.75) return choice.recipe_batch;
      return 2 * choice.recipe_batch;
    case UserBatchRule::kUniform:
      break;
  }
  const int lo = Log2(choice.min_batch), hi = Log2(choice.max_batch);
  const int steps = hi - lo + 1;
  int k = static_cast<int>(u * steps);
  if (k >= steps) k = steps - 1;
  return 1 << (lo + k);
}

uint64_t JobState(const Job& job, uint64_t seed) {
  uint64_t state = seed ^ Fnv1a(job.id);
  SplitMix64(state);  // decorrelate nearby seeds
  return state;
}

}  // namespace

const std::vector<GpuTimeClass>& ModelAssignmentClasses() {
  static const std::vector<GpuTimeClass> classes = {
      {"small", 1.0, {{"ResNet-50", 0.5, 32, 512, 256}, {"BERT-base", 0.5, 16, 256, 32}}},
      {"medium",
       16.0,
       {{"ResNet-50", 0.3, 32, 512, 256},
        {"BERT-large", 0.4, 8, 128, 64},
        {"ViT-L/16", 0.3, 8, 128, 32}}},
      {"large", 256.0, {{"BERT-large", 0.4, 8, 128, 64}, {"GPT-2-1.5B", 0.6, 1, 32, 8}}},
      {"huge", 0.0, {{"LLaMA-7B", 0.7, 1, 16, 1}, {"LLaMA-13B", 0.3, 1, 16, 1}}},
  };
  return classes;
}

std::optional<UserBatchRule> ParseUserBatchRule(const std::string& text) {
  if (text == "recipe") return UserBatchRule::kRecipe;
  if (text == "reference") return UserBatchRule::kReference;
  if (text == "uniform") return UserBatchRule::kUniform;
  return std::nullopt;
}

const char* UserBatchRuleName(UserBatchRule rule) {
  switch (rule) {
    case UserBatchRule::kRecipe:
      return "recipe";
    case UserBatchRule::kReference:
      return "reference";
    case UserBatchRule::kUniform:
      return "uniform";
  }
  return "?";
}

ModelAssignment AssignModel(const Job& job, uint64_t seed, UserBatchRule rule,
                            const HoldsModel& holds) {
  const double gpu_hours = job.gpus * job.duration / 3600.0;
  const auto& classes = ModelAssignmentClasses();
  size_t cls = classes.size() - 1;
  for (size_t c = 0; c + 1 < classes.size(); ++c) {
    if (gpu_hours < classes[c].max_gpu_hours) {
      cls = c;
      break;
    }
  }
  uint64_t state = JobState(job, seed);
  const double u = Uniform01(state);
  // The class's choice at u among the choices that `holds` admits (weights renormalized); none:
  // nullptr.
  auto draw = [&](const GpuTimeClass& c, bool filtered) -> const ModelChoice* {
    double total = 0;
    for (const ModelChoice& choice : c.choices) {
      if (!filtered || holds(job, choice.model)) total += choice.weight;
    }
    if (!(total > 0)) return nullptr;
    double r = u * total;
    const ModelChoice* last = nullptr;
    for (const ModelChoice& choice : c.choices) {
      if (filtered && !holds(job, choice.model)) continue;
      last = &choice;
      if (r < choice.weight) return &choice;
      r -= choice.weight;
    }
    return last;
  };
  const ModelChoice* choice = draw(classes[cls], false);
  if (holds && !holds(job, choice->model)) {
    // The drawn model cannot hold one sample on the job's GPUs: the same draw among the class's
    // models that can, else among a smaller class's; if none can, the drawn one stays (and the
    // engine rejects the job naming why).
    for (size_t c = cls + 1; c-- > 0;) {
      if (const ModelChoice* fits = draw(classes[c], true)) {
        choice = fits;
        break;
      }
    }
  }
  return {choice->model, DrawBatch(*choice, state, rule)};
}

int64_t AssignModels(std::span<Job> jobs, uint64_t seed, UserBatchRule rule,
                     const HoldsModel& holds) {
  int64_t changed = 0;
  for (Job& job : jobs) {
    // A job without GPUs (a CPU-only job, docs/resources.md#cpu-only-jobs) trains no model.
    if (job.gpus <= 0 && job.gpu_milli <= 0) continue;
    if (job.model.empty()) {
      const ModelAssignment a = AssignModel(job, seed, rule, holds);
      job.model = a.model;
      job.batch_size = a.batch_size;
      ++changed;
    } else if (job.batch_size == 0) {
      for (const GpuTimeClass& c : ModelAssignmentClasses()) {
        for (const ModelChoice& choice : c.choices) {
          if (job.model.str() == choice.model && job.batch_size == 0) {
            uint64_t state = JobState(job, seed);
            Uniform01(state);  // the model draw of AssignModel, so batches line up
            job.batch_size = DrawBatch(choice, state, rule);
            ++changed;
          }
        }
      }
    }
  }
  return changed;
}

}  // namespace clustersim
