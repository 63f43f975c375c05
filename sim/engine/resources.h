// Resources: which GPUs of a Cluster are free, with the indexes placement strategies query.
// The engine owns the live instance and is the only one that allocates and releases on it;
// policies may copy it to plan on a scratch copy. Every query is O(log nodes) or O(GPUs of one
// node) so placement never scans the whole cluster per job.
//
// Partitions: nodes of the same GPU type and GPUs per node, in the order of their first node.
// Multi-node placements stay within one partition.
//
// GPU sharing (docs/engine.md#gpu-sharing): a GPU may also be held in shares of thousandths
// ("milli", as Alibaba's gpu_milli). free_milli(g) is 1000 for a whole free GPU and 0 for one held
// whole or fully shared. A GPU with any share taken is not free in the whole-GPU indexes above (so
// whole-GPU placement never lands on a shared GPU); it returns to them when its last share is
// released. shared_gpus() holds the GPUs with 0 < free_milli < 1000, for placements that share.
//
// MIG (docs/mig.md): a GPU of a node in MIG mode holds instances of its type's profiles
// (sim/hardware/mig.h), each on a range of its 8 memory slices. mig_used(g) is the mask of the
// occupied slices. A GPU holding any instance is busy in the whole-GPU indexes (free_milli 0), so
// whole-GPU and share placements never land on it; it returns to them when its last instance is
// released.
//
// Host resources (docs/resources.md): a node's CPUs (thousandths of a core) and host memory (MiB)
// are tracked only after EnableHostLimits(), which the engine calls when some job of the run
// states a CPU or memory demand. A job then holds on each of its nodes the charge HostChargeOn
// gives, and placements skip nodes where the charge does not fit (HostFits). Without it
// host_limited() is false, nothing is tracked and placement is GPU-only: a job that states no
// demand is charged each node's CPUs and memory in proportion to the GPUs it holds there, which
// can never exceed a node's capacity while every job is charged that way.
#ifndef CLUSTERSIM_SIM_ENGINE_RESOURCES_H_
#define CLUSTERSIM_SIM_ENGINE_RESOURCES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "sim/engine/job.h"
#include "sim/hardware/cluster.h"
#include "sim/hardware/mig.h"
#include "sim/util/index_set.h"

namespace clustersim {

// Host demands of a whole job (docs/resources.md): CPUs in thousandths of a core and host memory
// in MiB; 0 = not stated. Also what one job holds of one node (a HostCharge).
struct HostDemand {
  int32_t cpu_milli = 0;
  int32_t memory_mib = 0;
  bool empty() const { return cpu_milli == 0 && memory_mib == 0; }
};
using HostCharge = HostDemand;

// The anti-affinity rule of a placement-constraint class (PlacementRequest::constraint;
// docs/spreading.md): no two running jobs of `group` in one `domain`. group < 0 = no rule.
struct SpreadRule {
  int group = -1;
  SpreadDomain domain = SpreadDomain::kNone;
  bool empty() const { return group < 0; }
};

// A node's host capacities: cpus x 1000 milli-cores and floor(host_memory_gib x 1024) MiB; 0 =
// not declared in the cluster spec, and then never a limit.
int32_t NodeCpuMilli(const Node& node);
int32_t NodeMemoryMib(const Node& node);

// The charge of a job on `node` where it holds `gpus_on_node` of its `allocation_gpus` GPUs
// (whole), or a share of `milli` thousandths of one GPU (milli > 0; then both counts are 1):
// a stated demand D (per dimension) is split over the nodes as
// ceil(D x gpus_on_node / allocation_gpus); an unstated one (0) is the node's capacity x
// gpus_on_node / its GPUs (x milli / 1000 for a share), rounded down. A dimension the node does
// not declare is charged 0. A CPU-only job (both counts 0, milli 0) is charged D in full and 0
// for an unstated dimension.
HostCharge HostChargeOn(const Node& node, const HostDemand& demand, int gpus_on_node,
                        int allocation_gpus, int milli);
// What a job holds of `node` where `on_node` of its `allocation_gpus` GPUs are: HostChargeOn
// for whole GPUs; for shares of `milli` (> 0) on several GPUs of the node, one share's charge
// per GPU.
HostCharge JobHostChargeOn(const Node& node, const HostDemand& demand, int on_node,
                           int allocation_gpus, int milli);

// The MIG profiles of GPU `gpu`'s type (empty for a type without MIG).
std::span<const MigProfile> GpuMigProfiles(const Cluster& cluster, int gpu);

// Calls visit(node, GPUs of `gpus` on it) for each node `gpus` (ascending) spans, in order.
template <typename Visit>
void ForEachNode(const Cluster& cluster, std::span<const int> gpus, Visit visit) {
  size_t i = 0;
  while (i < gpus.size()) {
    const int node = cluster.NodeOfGpu(gpus[i]);
    int on_node = 0;
    for (; i < gpus.size() && cluster.NodeOfGpu(gpus[i]) == node; ++i) ++on_node;
    visit(node, on_node);
  }
}

struct Partition {
  int gpu_type = 0;
  int gpus_per_node = 0;
  std::vector<int> nodes;          // global node indices, ascending
  std::vector<IndexSet> by_free;   // by_free[f] = positions of nodes with exactly f free GPUs
  std::vector<int> by_free_count;  // by_free[f].count(), kept for O(G) fragmentation sums
  MaxTree free_tree;               // free GPUs per position
  // With host limits only (empty otherwise): cpu_by_free[f] holds, at the position of each node
  // with exactly f free GPUs, its free CPUs (milli; kUndeclaredCpu if it declares none, as its
  // CPUs never bind), and 0 at the others: a search for nodes of f free GPUs with at least c
  // free CPUs steps over the others in O(log nodes) (PickNode, policies/node_placement.h).
  std::vector<MaxTree> cpu_by_free;
  static constexpr int kUndeclaredCpu = 0x7fffffff;
};

class Resources {
 public:
  explicit Resources(const Cluster& cluster);

  const Cluster& cluster() const { return *cluster_; }
  int free_gpus(int node) const { return node_free_[node]; }
  int free_of_type(int type) const { return type_free_[type]; }
  int total_free() const { return total_free_; }
  // False only if no job needing a GPU can start: no GPU wholly free, none shared with room left,
  // none in MIG mode (whose free slices only a placement judges).
  bool AnyGpuRoom() const { return total_free_ > 0 || !shared_gpus_.empty() || any_mig(); }
  bool IsGpuFree(int gpu) const { return (free_bits_[gpu >> 6] >> (gpu & 63)) & 1; }
  // Changes (grows) whenever anything in this free state changes: a planner can tell that a
  // copy derived from it is still current. A copy starts from the version of its original.
  uint64_t version() const { return version_; }
  // Bits of GPUs 64 * word .. 64 * word + 63, bit i set = GPU 64 * word + i free.
  uint64_t free_word(int word) const { return free_bits_[word]; }

  // REQUIRES: every GPU in `gpus` is free (resp. busy); CHECKed.
  void Allocate(std::span<const int> gpus);
  void Release(std::span<const int> gpus);

  // Shares. REQUIRES 0 < milli < 1000 and free_milli(gpu) >= milli (resp. the share is held).
  int free_milli(int gpu) const { return free_milli_[gpu]; }
  void AllocateShare(int gpu, int milli);
  void ReleaseShare(int gpu, int milli);
  // GPUs partly shared (0 < free_milli < 1000), as an IndexSet over global GPU indices.
  const IndexSet& shared_gpus() const { return shared_gpus_; }

  // MIG instances. mig_enabled(g): g's node is in MIG mode. mig_used(g): its occupied memory
  // slices (0 for a GPU without instances or not in MIG mode). MigFits: an instance of profile
  // `profile` (an index into MigProfilesOf(g's type)) may start at memory slice `start` of g now:
  // g is in MIG mode, either free whole or holding instances, `start` is one of the profile's
  // documented starts and its slices are free.
  bool mig_enabled(int gpu) const { return !mig_enabled_.empty() && mig_enabled_[gpu] != 0; }
  uint8_t mig_used(int gpu) const { return mig_used_.empty() ? 0 : mig_used_[gpu]; }
  bool any_mig() const { return !mig_enabled_.empty(); }
  bool MigFits(int gpu, int profile, int start) const;
  // REQUIRES MigFits (resp. the instance is held); CHECKed.
  void AllocateMig(int gpu, int profile, int start);
  void ReleaseMig(int gpu, int profile, int start);

  // Appends the `count` lowest-index free GPUs of `node`. REQUIRES free_gpus(node) >= count.
  void AppendLowestFreeGpus(int node, int count, std::vector<int>* out) const;

  // Host resources (see the header comment). REQUIRES for EnableHostLimits: nothing allocated
  // yet (CHECKed).
  void EnableHostLimits();
  bool host_limited() const { return !free_cpu_milli_.empty(); }
  // REQUIRES host_limited().
  int32_t free_cpu_milli(int node) const { return free_cpu_milli_[node]; }
  int32_t free_memory_mib(int node) const { return free_memory_mib_[node]; }
  // True if `charge` fits what `node` has free (always true when not host_limited()).
  bool HostFits(int node, const HostCharge& charge) const {
    return !host_limited() || (charge.cpu_milli <= free_cpu_milli_[node] &&
                               charge.memory_mib <= free_memory_mib_[node]);
  }
  // True if a job of `demand` holding `gpus_on_node` of its `allocation_gpus` GPUs (or a share
  // of `milli`) fits `node`'s free host resources.
  bool HostFitsJob(int node, const HostDemand& demand, int gpus_on_node, int allocation_gpus,
                   int milli = 0) const {
    return !host_limited() || HostFits(node, HostChargeOn(cluster_->node(node), demand,
                                                          gpus_on_node, allocation_gpus, milli));
  }
  // True if the job fits the host resources of every node `gpus` (ascending) spans.
  bool HostFitsGpus(const HostDemand& demand, std::span<const int> gpus, int milli = 0) const;
  // Take (or give back) the host charges of a job of `demand` on `gpus` (ascending; each a share
  // of `milli` when > 0) on every node they span. No-ops when not host_limited(). REQUIRES
  // (CHECKed) for AllocateHost: every charge fits.
  void AllocateHost(const HostDemand& demand, std::span<const int> gpus, int milli);
  void ReleaseHost(const HostDemand& demand, std::span<const int> gpus, int milli);
  // A CPU-only job (no GPUs; docs/resources.md#cpu-only-jobs) on `node`: its charge there is
  // its stated demand in full (HostChargeOn with no GPUs; an unstated dimension charges 0).
  // HostFitsCpuOnly is false when not host_limited() (nothing tracks what such a job holds).
  // REQUIRES (CHECKed) for AllocateHostOn: the charge fits.
  bool HostFitsCpuOnly(int node, const HostDemand& demand) const {
    return host_limited() && HostFitsJob(node, demand, 0, 0);
  }
  void AllocateHostOn(int node, const HostDemand& demand);
  void ReleaseHostOn(int node, const HostDemand& demand);
  // No job holds anything on `node`: all its GPUs are free and, under host limits, all its CPUs
  // and memory (a CPU-only job holds no GPU).
  bool NodeIdle(int node) const;
  // A node out of service (a pool node off, a spot node being replaced) holds out its whole host
  // under host limits, as a CPU-only job of all its CPUs and memory would, and is marked so;
  // HoldOutHost REQUIRES its host free. BringInHost gives it back. ReleaseHeldOutHosts gives
  // back every such host, on a copy that asks what would fit with the nodes out of service back
  // (wait reasons: nodes_down). No-ops without host limits.
  void HoldOutHost(int node);
  void BringInHost(int node);
  void ReleaseHeldOutHosts();
  bool any_host_held_out() const { return held_out_hosts_ > 0; }
  // A job's GPUs, host charges and kind together: Allocate (or AllocateShare per GPU when
  // milli > 0) + AllocateHost + its kind counted, and the reverse; for a CPU-only job (no GPUs,
  // `cpu_only_node` >= 0), AllocateHostOn that node. What the engine does at every start and
  // stop, and what policies planning on a copy do, so that two planned jobs never count the same
  // CPUs.
  // `constraint` is the job's placement-constraint class (PlacementRequest::constraint): with
  // spread rules enabled, the job is counted in its group's domains (below).
  // A MIG instance (mig_profile >= 0, one GPU, `milli` its compute share for the host charge):
  // AllocateMig / ReleaseMig instead of the whole GPU or a share.
  void AllocateJob(const HostDemand& demand, std::span<const int> gpus, int milli,
                   int cpu_only_node = -1, uint16_t constraint = 0, int mig_profile = -1,
                   int mig_start = -1);
  void ReleaseJob(const HostDemand& demand, std::span<const int> gpus, int milli,
                  int cpu_only_node = -1, uint16_t constraint = 0, int mig_profile = -1,
                  int mig_start = -1);

  // Anti-affinity (docs/spreading.md). After EnableSpread (REQUIRES: nothing allocated yet) with
  // the rule of each constraint class, AllocateJob and ReleaseJob count the running jobs of each
  // group per domain (a node, or a rack), so that copies planners make know them too.
  void EnableSpread(std::shared_ptr<const std::vector<SpreadRule>> rules);
  // The rule of constraint class `constraint` (empty when none or spread is not enabled).
  const SpreadRule& spread_rule(uint16_t constraint) const {
    static const SpreadRule kNone;
    return spread_rules_ && constraint < spread_rules_->size() ? (*spread_rules_)[constraint]
                                                               : kNone;
  }
  // The domain of `node` under `domain`: the node's index, or its rack.
  int SpreadDomainOf(SpreadDomain domain, int node) const {
    return domain == SpreadDomain::kRack ? cluster_->node(node).rack : node;
  }
  // Running jobs of `group` in domain `domain_index`.
  int spread_count(int group, int domain_index) const {
    auto it = spread_count_.find({group, domain_index});
    return it == spread_count_.end() ? 0 : it->second;
  }
  // True if a job of `rule` may hold GPUs on `node`: no job of its group runs in its domain.
  bool SpreadAllowsNode(const SpreadRule& rule, int node) const {
    return rule.empty() || spread_count(rule.group, SpreadDomainOf(rule.domain, node)) == 0;
  }
  // Takes `from`'s spread rules and counts: for a planner whose copy counts GPUs per node rather
  // than jobs (policies/conservative.cc), so that its placements honour what runs now.
  void CopySpreadFrom(const Resources& from) {
    spread_rules_ = from.spread_rules_;
    spread_count_ = from.spread_count_;
    running_of_group_ = from.running_of_group_;
  }
  // True if some job of the rule's group runs (only then can the rule refuse a node).
  bool SpreadGroupRunning(const SpreadRule& rule) const {
    return !rule.empty() && running_of_group_.contains(rule.group);
  }

  // The kinds of the running jobs on each node, for the FGD paper's gpu-clustering placement
  // (policies/share_baselines.cc), as its artifact labels pods: kind 0 = a share of one GPU,
  // n > 0 = a job of n whole GPUs (the artifact's "share" and "n-gpu"; CPU-only jobs have no
  // kind). Counted only after EnableJobKinds (REQUIRES: nothing allocated yet), by AllocateJob
  // and ReleaseJob.
  void EnableJobKinds();
  // The kind of a job holding `gpus` GPUs (shares of `milli` thousandths each when milli > 0).
  static int JobKind(size_t gpus, int milli) { return milli > 0 ? 0 : static_cast<int>(gpus); }
  // (kind, running jobs > 0) pairs on `node`, in no particular order; none when kinds are not
  // counted (the engine counts them on its state whenever its placement reads them).
  const std::vector<std::pair<int, int>>& job_kinds(int node) const {
    static const std::vector<std::pair<int, int>> kNone;
    return job_kinds_.empty() ? kNone : job_kinds_[node];
  }

  const std::vector<Partition>& partitions() const { return partitions_; }
  int partition_of(int node) const { return node_partition_[node]; }
  int position_of(int node) const { return node_position_[node]; }
  // Nodes of catalog type `type` (ascending) and the positions among them with free GPUs.
  const std::vector<int>& type_nodes(int type) const { return type_nodes_[type]; }
  const IndexSet& type_nodes_with_free(int type) const { return type_nonempty_[type]; }

 private:
  // Adds `delta` (+1 or -1) jobs of the kind of (gpus, milli) on every node `gpus` (ascending)
  // spans. No-op when kinds are not counted or `gpus` is empty.
  void CountJobKind(std::span<const int> gpus, int milli, int delta);

  void SetNodeFree(int node, int free);
  // Puts node's free CPUs in its partition's cpu_by_free (host limits only).
  void IndexFreeCpu(int node);
  // Adds `delta` (+1 or -1) to the counts of the class's group in every domain the job spans
  // (its GPUs' nodes, or `cpu_only_node`). No-op without a rule.
  void CountSpread(uint16_t constraint, std::span<const int> gpus, int cpu_only_node, int delta);

  const Cluster* cluster_;
  std::vector<uint64_t> free_bits_;  // bit g set = GPU g free
  uint64_t version_ = 0;             // see version()
  std::vector<int16_t> free_milli_;  // per GPU, thousandths free
  IndexSet shared_gpus_;
  std::vector<int> node_free_;
  std::vector<int> type_free_;
  int total_free_ = 0;
  std::vector<Partition> partitions_;
  std::vector<int> node_partition_;
  std::vector<int> node_position_;       // position within its partition
  std::vector<int> node_type_position_;  // position within type_nodes_
  std::vector<std::vector<int>> type_nodes_;
  std::vector<IndexSet> type_nonempty_;
  std::vector<int32_t> free_cpu_milli_;  // per node; empty = host resources not tracked
  std::vector<int32_t> free_memory_mib_;
  std::vector<uint8_t> host_held_out_;  // per node, once one is held out (HoldOutHost)
  int held_out_hosts_ = 0;
  std::vector<std::vector<std::pair<int, int>>> job_kinds_;  // per node; empty = not counted
  std::shared_ptr<const std::vector<SpreadRule>> spread_rules_;  // by class; null = no rules
  std::map<std::pair<int, int>, int> spread_count_;  // (group, domain) -> running jobs > 0
  std::map<int, int> running_of_group_;              // group -> running jobs > 0
  std::vector<uint8_t> mig_enabled_;  // per GPU; empty = no node in MIG mode
  std::vector<uint8_t> mig_used_;     // per GPU, occupied memory slices (bit s = slice s)
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_RESOURCES_H_
