// Placement: which GPUs a job gets, separate from ordering (docs/policies.md#placement). A
// placement strategy answers one question on a Resources state — "where would this request fit
// now?" — and never changes it; the engine allocates what a policy decides to start.
#ifndef CLUSTERSIM_SIM_ENGINE_PLACEMENT_H_
#define CLUSTERSIM_SIM_ENGINE_PLACEMENT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/resources.h"
#include "sim/engine/wait_reasons.h"

namespace clustersim {

class Topology;
class RuntimeModel;
class ModelRuntime;
struct TaskClass;

struct Job;

struct PlacementRequest {
  int gpus = 0;
  // A share of one GPU in thousandths (1..999; then gpus == 1), asked for when the trace gives a
  // fractional request (Job::gpu_milli) and the run's placement shares GPUs; 0 = whole GPUs.
  int milli = 0;
  // Host demands of the whole job (CPUs, host memory; 0 = not stated), split over its nodes by
  // HostChargeOn (resources.h). They limit placement only when Resources::host_limited().
  HostDemand host;
  uint64_t type_mask = ~uint64_t{0};  // bit t set = catalog GPU type t allowed
  const Job* job = nullptr;           // the job asking, for strategies that score with a model
  int job_id = -1;                    // its JobId (index in the trace), -1 = unknown
  // The job holds whole nodes (an exclusive QoS, Policy::WholeNodes): ceil(gpus / G) nodes of one
  // partition with nothing else on them, all their GPUs allocated to it (PlaceWholeNodes).
  bool whole_nodes = false;
  // The job's class of placement constraints (sim/engine/placement_constraints.h: data locality,
  // a node limit); 0 = none. Jobs of one class have the same limits, so a cache keyed by a
  // request's shape stays exact when it adds the class. (In the padding after whole_nodes.)
  uint16_t constraint = 0;
  bool AllowsType(int type) const { return (type_mask >> type) & 1; }
};

// `request` restricted to GPU type `type` (a policy that chose the type places, and judges a
// fit, with this copy; a type the request does not allow leaves it no type).
inline PlacementRequest OnType(PlacementRequest request, int type) {
  request.type_mask &= uint64_t{1} << type;
  return request;
}

// GPUs of one tensor-parallel group of the request (its job's Job::tensor_parallel), which must
// share a node (an NVLink domain; PlaceTensorGroups); 0 or 1 = no constraint. Requests for whole
// nodes, GPU shares or without a job have none. (Read from the job, so that PlacementRequest
// keeps its size.)
int TensorGroup(const PlacementRequest& request);

// Everything of a request that decides whether Placement::Find can place it (not where): its GPUs
// or share, allowed types, host demands, whole nodes, constraint class, and its job's
// tensor-parallel group and MIG profile. Two requests of one shape fit or not alike on the same
// resources, so a policy may skip a job whose shape did not fit until something is freed.
// (Placements that read a job's model choose among fitting nodes by it; none refuses by it.)
using RequestShape = std::tuple<int, int, uint64_t, int32_t, int32_t, bool, uint16_t, int, int>;
RequestShape ShapeOf(const PlacementRequest& request);

// The vector first, then the 4-byte fields: no padding inside (an ActiveRun holds one per
// queued or running job).
struct Allocation {
  std::vector<int> gpus;  // global GPU indices, ascending
  int gpu_type = -1;
  // 0: the GPUs are held whole. 1..999: this share of each listed GPU (GPU sharing); the other
  // shares may hold other jobs (Resources::free_milli).
  int16_t milli = 0;
  // A MIG instance (docs/mig.md): the profile (an index into MigProfilesOf of gpu_type) and the
  // memory slice it starts at on its one GPU; -1 = not a MIG instance. milli is then the
  // instance's compute share (MigMilli, sim/engine/mig.h). (In milli's padding.)
  int8_t mig_profile = -1;
  int8_t mig_start = -1;
  // Per-GPU micro-batch the job runs with; 0 = its current batch (ModelRun::batch). Only an
  // elastic policy (Policy::Elastic) chooses it.
  int batch = 0;
  // The node of a CPU-only job (no GPUs, a CPU or host-memory demand;
  // docs/resources.md#cpu-only-jobs), which holds only its host charge there; -1 for a job holding
  // GPUs. gpu_type is then the node's GPU type.
  int node = -1;
  bool empty() const { return gpus.empty() && node < 0; }
};

// What a strategy may consult besides the free state (all outlive the strategy).
struct PlacementEnv {
  const Cluster* cluster = nullptr;
  const Topology* topology = nullptr;
  const RuntimeModel* runtime = nullptr;
  // The run's workload as task classes (sim/engine/fragmentation.h, WorkloadClasses), for
  // strategies that score against the size distribution (frag-aware); nullptr = unknown. The vector
  // may be filled after the strategy is made (`run` reads the trace later) but before the first
  // Find.
  const std::vector<TaskClass>* workload = nullptr;
  // The run's model information (sim/engine/model_runtime.h), for strategies that check GPU
  // memory: *models is filled once the trace is read (nullptr when the run is not model-aware);
  // models itself may be nullptr.
  const ModelRuntime* const* models = nullptr;
  // The run's seed, for strategies that draw at random (random-fit).
  int64_t seed = 0;
};

class Placement {
 public:
  virtual ~Placement() = default;
  // Returns true and fills `out` (cleared first, GPUs ascending) if `request` fits on
  // `resources` now; false otherwise. Deterministic: ties go to the lowest index.
  virtual bool Find(const Resources& resources, const PlacementRequest& request,
                    Allocation* out) const = 0;
  // True if the strategy places fractional requests (PlacementRequest::milli > 0) on shares of
  // GPUs; otherwise a fractional job is given a whole GPU.
  virtual bool SharesGpus() const { return false; }
  // True if the strategy ignores nodes: a request fits wherever enough GPUs of one allowed type
  // are free, any of them (`pool`). Planning policies then count GPUs per type; otherwise they
  // plan per node (policies/conservative.cc).
  virtual bool IgnoresNodes() const { return false; }
  // True if Find places CPU-only requests (gpus == 0 with a host demand, under host limits) on
  // one node: `out` then has no GPUs and `node` set (docs/resources.md#cpu-only-jobs). Otherwise
  // such a request never fits and the engine rejects the job with a reason.
  virtual bool PlacesCpuOnly() const { return false; }
  // True if Find reads Resources::job_kinds (the kinds of the jobs running on each node): the
  // engine then has them counted.
  virtual bool CountsJobKinds() const { return false; }
  // How Find picks the node of a request that fits on one node of every partition it may use,
  // when that rule alone decides (planners then find the node without asking Find on a scratch
  // copy of the cluster): the lowest-index node with enough free GPUs, or the one with the fewest
  // (ties: lowest index); kOther for any other strategy.
  enum class SingleNodeRule { kOther, kLowestIndex, kFewestFree };
  virtual SingleNodeRule single_node_rule() const { return SingleNodeRule::kOther; }
  // True if Find draws random numbers (random-fit): nobody but the policy may call it then, or
  // the run's draws would change (wait reasons do not ask it; sim/engine/wait_reasons.h).
  virtual bool DrawsRandomNumbers() const { return false; }
  // Why `request`, which does not fit on `resources` although enough GPUs of its allowed types
  // are free in number, does not fit, when the strategy knows a reason of its own (a MIG layout
  // without the slice it needs: WaitReason::kFragmentationMig); nullopt otherwise, and the
  // engine names the dimension (docs/metrics.md#wait-reasons).
  virtual std::optional<WaitReason> NoFitReason(const Resources& /*resources*/,
                                                const PlacementRequest& /*request*/) const {
    return std::nullopt;
  }
};

// Whether `request` is a CPU-only request (no GPUs, some host demand).
inline bool IsCpuOnly(const PlacementRequest& request) {
  return request.gpus <= 0 && request.milli <= 0 && !request.host.empty();
}

// The most free whole GPUs of one type `request` allows. A whole-GPU allocation is of one type
// and of free GPUs only (the engine checks both), so a request for more cannot be placed now.
inline int MostFreeOfOneType(const Resources& resources, const PlacementRequest& request) {
  int most = 0;
  for (int type : resources.cluster().gpu_types()) {
    if (request.AllowsType(type)) most = std::max(most, resources.free_of_type(type));
  }
  return most;
}

// Whether a CPU-only `request` may go to `node`: the node's type is allowed and its free CPUs and
// memory take the demand. Every placement that places CPU-only jobs chooses among these nodes,
// and the engine rejects a CPU-only job for which no node of the empty cluster is one.
inline bool CpuOnlyFits(const Resources& resources, int node, const PlacementRequest& request) {
  return request.AllowsType(resources.cluster().node(node).gpu_type) &&
         resources.HostFitsCpuOnly(node, request.host);
}

// What `allocation` holds for a job of `request` (its GPUs or shares, its host charges, the one
// node of a CPU-only job, its place in its anti-affinity group's domains), taken from or given
// back to `resources`: what a policy planning on a copy of the free state does at each start or
// stop it plans, as the engine does on its own state (Resources::AllocateJob).
inline void TakeAllocation(Resources& resources, const PlacementRequest& request,
                           const Allocation& allocation) {
  resources.AllocateJob(request.host, allocation.gpus, allocation.milli, allocation.node,
                        request.constraint, allocation.mig_profile,
                        allocation.mig_start);
}
inline void GiveBackAllocation(Resources& resources, const PlacementRequest& request,
                               const Allocation& allocation) {
  resources.ReleaseJob(request.host, allocation.gpus, allocation.milli, allocation.node,
                       request.constraint, allocation.mig_profile,
                        allocation.mig_start);
}
// True if `allocation` is free on `resources` for a job of host demand `host`: its GPUs (or
// shares) free and the host charges fitting every node it spans (a CPU-only job: its node).
bool AllocationFits(const Resources& resources, const HostDemand& host,
                    const Allocation& allocation);

// Whole-node placement (docs/engine.md#whole-nodes): the first partition, in cluster order, of an
// allowed type with ceil(request.gpus / G) completely free nodes; the lowest-index such nodes,
// every GPU of them (so `out` holds a multiple of G >= request.gpus GPUs), if the job's host
// demand fits them (Resources::HostFitsGpus), else the next partition. The engine answers
// every request with `whole_nodes` set this way, whatever the run's placement strategy.
// O(partitions + nodes taken x log nodes).
bool PlaceWholeNodes(const Resources& resources, const PlacementRequest& request, Allocation* out);

// Tensor-parallel placement (docs/reliability.md#model-parallelism-in-traces): a request of G
// GPUs in groups of T = TensorGroup(request) (T divides G) gets G / T groups, each on one node: in
// the first partition, in cluster order, of an allowed type with at least T GPUs per node where
// enough groups fit, the nodes with at least T free GPUs in index order, each giving as many groups
// as its free GPUs hold (its lowest free GPUs), if the host demand fits them; else the next
// partition. O(partitions + nodes visited x log nodes).
bool PlaceTensorGroups(const Resources& resources, const PlacementRequest& request,
                       Allocation* out);

// MIG placement (docs/mig.md, sim/engine/mig.cc): a request of a job naming a MIG profile gets
// one instance of it, first fit by node, GPU and start slice (all ascending) among the GPUs in MIG
// mode of an allowed type that offers the profile. IsMigRequest: the request's job names one.
bool IsMigRequest(const PlacementRequest& request);

// True if the request is placed by a rule of its own beside its GPU count (whole nodes, a
// tensor-parallel group, a MIG instance): counting free GPUs, or taking GPUs node by node, does
// not decide where or whether it fits.
inline bool HasGroupRule(const PlacementRequest& request) {
  return request.whole_nodes || TensorGroup(request) > 1 || IsMigRequest(request);
}
bool PlaceMig(const Resources& resources, const PlacementRequest& request, Allocation* out);

// The run's placement with whole-node requests answered by PlaceWholeNodes, tensor-parallel
// ones by PlaceTensorGroups and MIG ones by PlaceMig; what the engine hands to policies when some
// job holds whole nodes, states a tensor-parallel degree above 1 or names a MIG profile.
class WholeNodePlacement final : public Placement {
 public:
  explicit WholeNodePlacement(const Placement& inner) : inner_(inner) {}
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    if (request.whole_nodes) return PlaceWholeNodes(resources, request, out);
    if (IsMigRequest(request)) return PlaceMig(resources, request, out);
    out->milli = 0;  // the inner strategies know nothing of MIG: no field of a PlaceMig left over
    out->mig_profile = -1;
    out->mig_start = -1;
    if (TensorGroup(request) > 1) return PlaceTensorGroups(resources, request, out);
    return inner_.Find(resources, request, out);
  }
  bool SharesGpus() const override { return inner_.SharesGpus(); }
  bool IgnoresNodes() const override { return inner_.IgnoresNodes(); }
  bool PlacesCpuOnly() const override { return inner_.PlacesCpuOnly(); }
  bool CountsJobKinds() const override { return inner_.CountsJobKinds(); }
  bool DrawsRandomNumbers() const override { return inner_.DrawsRandomNumbers(); }
  std::optional<WaitReason> NoFitReason(const Resources& resources,
                                        const PlacementRequest& request) const override {
    if (IsMigRequest(request)) return std::optional<WaitReason>(WaitReason::kFragmentationMig);
    return request.whole_nodes ? std::nullopt : inner_.NoFitReason(resources, request);
  }

 private:
  const Placement& inner_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_PLACEMENT_H_
