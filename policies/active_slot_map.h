// A policy's value per job from the job's arrival to its end, stored by the engine's slot of the
// job's ActiveRun (JobRun::active).
//
// A job keeps its slot from its arrival to its end (queued, running, requeued); the slot then
// goes to a later arrival. Indexing by it makes a lookup one read of the job's JobRun and one of
// a dense vector, where a hash map by JobId costs a cache miss or two per lookup once tens of
// thousands of jobs are waiting or running, and the vector is as long as the most jobs active at
// once, not the trace. A slot's entry also records its job, so a job that ended (slot -1, or the
// slot of a later job) has no value.

#ifndef CLUSTERSIM_POLICIES_ACTIVE_SLOT_MAP_H_
#define CLUSTERSIM_POLICIES_ACTIVE_SLOT_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/policy.h"
#include "sim/util/error.h"

namespace clustersim {

template <typename T>
class ActiveSlotMap {
 public:
  // Job id's value, or nullptr if it has none.
  T* Find(const SchedulingContext& context, JobId id) {
    const int32_t slot = context.run(id).active;
    if (slot < 0 || static_cast<size_t>(slot) >= entries_.size()) return nullptr;
    Entry& entry = entries_[slot];
    return entry.id == id ? &entry.value : nullptr;
  }
  // Job id's value; CHECKs that it has one.
  T& At(const SchedulingContext& context, JobId id) {
    T* value = Find(context, id);
    CHECK(value != nullptr, "a policy asked for a value its job does not have");
    return *value;
  }
  // Gives job id a value and returns it. It holds what the slot held last (its storage, such as
  // a vector's capacity, is kept for reuse): the caller assigns every field. REQUIRES (CHECKed):
  // the job has arrived and not ended, and no other job's value is in its slot (a value is
  // erased before its job ends).
  T& Insert(const SchedulingContext& context, JobId id) {
    const int32_t slot = context.run(id).active;
    CHECK(slot >= 0, "a policy kept a value for a job that is not active");
    if (static_cast<size_t>(slot) >= entries_.size()) entries_.resize(slot + 1);
    Entry& entry = entries_[slot];
    CHECK(entry.id == kNoJob || entry.id == id, "a policy kept a value past its job's end");
    entry.id = id;
    return entry.value;
  }
  // The value in `slot` (JobRun::active of the job that has it). REQUIRES: that job has a value.
  T& OfSlot(int32_t slot) { return entries_[slot].value; }
  // Takes job id's value away (its storage stays for the slot's next job); no-op without one.
  void Erase(const SchedulingContext& context, JobId id) {
    const int32_t slot = context.run(id).active;
    if (slot >= 0 && static_cast<size_t>(slot) < entries_.size() && entries_[slot].id == id) {
      entries_[slot].id = kNoJob;
    }
  }

 private:
  struct Entry {
    JobId id = kNoJob;
    T value{};
  };
  std::vector<Entry> entries_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_ACTIVE_SLOT_MAP_H_
