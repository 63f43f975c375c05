// Shared by the node-aware placement strategies (first-fit, best-fit, topology, frag-aware;
// docs/policies.md#placement). A job of n GPUs on a partition of G GPUs per node: if n <= G it
// takes one node; if n > G it takes floor(n/G) completely free nodes (lowest positions) plus, if
// n mod G > 0, one other node chosen by the strategy's rule for the remainder. Multi-node jobs stay
// in one partition.
//
// Host resources (docs/resources.md): when Resources::host_limited(), a node is a candidate only if
// the job's host charge there (HostChargeOn) fits its free CPUs and memory; the search goes on to
// the next node of the index otherwise, so each node refused for its CPUs or memory costs one more
// O(log nodes) step. best-fit's search for a job that states its CPUs walks each free-GPU bucket
// through the partition's index of free CPUs (Partition::cpu_by_free), so it never stops at a node
// of the bucket with fewer free CPUs than the job's charge there. Without host limits nothing
// changes and no node is looked at twice.
//
// GPU-type choice (docs/resources.md, TypeOrder): every node-aware strategy takes the parameter
// type_order=listed|fastest|cheapest|least-loaded. `listed` (the default) is the strategy's own
// rule over all allowed types at once, as before the setting existed (for first-fit and pool that
// is the order the cluster spec lists the node groups); the others try one GPU type at a time in
// their order, per job, and the first type where the job fits wins.
#ifndef CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_
#define CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/engine/placement.h"
#include "sim/util/params.h"

namespace clustersim {

enum class NodeRule { kFirstFit, kBestFit };

// Returns the position in `part` of the node the rule picks for `gpus` GPUs (lowest position with
// enough free for first-fit; fewest free that still fits, ties lowest, for best-fit), skipping
// positions in `exclude` (ascending); -1 if none. Sets *free_count to that node's free GPUs.
// This form ignores host resources.
int PickNode(const Partition& part, int gpus, NodeRule rule, const std::vector<int>& exclude,
             int* free_count);
// The same, skipping also nodes where `gpus` of a job of `request` spread over `allocation_gpus`
// GPUs do not fit the free host resources (Resources::HostFitsJob).
int PickNode(const Resources& resources, const Partition& part, int gpus, NodeRule rule,
             const std::vector<int>& exclude, const PlacementRequest& request, int allocation_gpus,
             int* free_count);

// A CPU-only request (no GPUs, a CPU or host-memory demand; docs/resources.md#cpu-only-jobs): the
// node `rule` picks among those of an allowed type whose free CPUs and memory take the demand
// (CpuOnlyFits): the lowest index for first-fit; for best-fit the one its charge leaves with the
// fewest free CPUs, then the least free memory, ties to the lowest index (the tightest fit, as
// best-fit packs GPUs). Fills `out` with no GPUs and `node` set; false if no node fits (or the
// run does not limit host resources). O(nodes): a scan, as no index orders nodes by free CPUs.
bool PlaceCpuOnly(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out);

// Places `request` under `rule`: single-node over all allowed partitions with G >= n (the best
// candidate across partitions: lowest node index for first-fit, (fewest free, lowest index) for
// best-fit), else multi-node in the first allowed partition with G < n where it fits.
bool PlaceOnNodes(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out);

// The multi-node part of the above for a request larger than a node, with the remainder node
// chosen by `pick_remainder(part, remainder, chosen)`: a position in `part` not in `chosen` (the
// whole free nodes taken, ascending positions) whose host resources take the remainder, or -1 if
// none fits. Whole nodes are the lowest positions whose host resources take G of the job's GPUs.
// First allowed partition with G < n where it fits; false if none.
using RemainderPicker =
    std::function<int(const Partition& part, int remainder, const std::vector<int>& chosen)>;
bool PlaceAcrossNodes(const Resources& resources, const PlacementRequest& request,
                      const RemainderPicker& pick_remainder, Allocation* out);

// The GPU-type order of a placement (parameter type_order). Per job:
// - listed: no order; the strategy compares candidates of every allowed type at once.
// - fastest: allowed types by decreasing rate of the job under the run's runtime model, on the
//   allocation first-fit would give it on the empty cluster restricted to that type (the job's
//   best case there); ties in listed order.
// - cheapest: by increasing cost of the job's work: price per GPU-hour x GPUs / that rate.
// - least-loaded: by increasing share of the type's GPUs not free now (busy or down).
// Types the job may not use, or where it cannot fit even on the empty cluster, are left out.
// Owned by one placement object (single-threaded, like Find); caches rates per (model, GPUs,
// share, type).
//
// The parameter spot=allow|avoid|prefer (docs/autoscaling.md#spot-placement) comes first in
// every order: with prefer the spot groups' GPU types (Cluster::SpotTypes) are tried before the
// others, with avoid after them; allow (the default) leaves spot and on-demand types alike.
class TypeOrder {
 public:
  enum class Kind { kListed, kFastest, kCheapest, kLeastLoaded };
  // Reads `type_order` and `spot` from `params`; throws InputError naming the valid values
  // otherwise, and for spot=avoid|prefer on a cluster without spot groups.
  TypeOrder(const PlacementEnv& env, const Params& params);

  Kind kind() const { return kind_; }
  static const char* Name(Kind kind);
  // `listed` without a spot preference: the strategy compares candidates of every allowed type
  // at once (its single-node fast paths apply).
  bool plain() const { return kind_ == Kind::kListed && spot_first_ == 0; }

  // Runs `find(request', out)` with request' restricted to one GPU type at a time in this order
  // and returns the first success; with `listed`, `find(request, out)` once (with a spot
  // preference: once on the preferred side's types, then once on the others).
  template <typename Find>
  bool Place(const Resources& resources, const PlacementRequest& request, Allocation* out,
             Find&& find) const {
    if (plain()) return find(request, out);
    if (kind_ == Kind::kListed) {
      PlacementRequest side = request;
      for (const uint64_t types : {spot_first_, ~spot_first_}) {
        side.type_mask = request.type_mask & types;
        if (side.type_mask != 0 && find(side, out)) return true;
      }
      out->gpus.clear();
      out->gpu_type = -1;
      return false;
    }
    Order(resources, request, &order_);
    PlacementRequest one = request;
    for (int type : order_) {
      one.type_mask = uint64_t{1} << type;
      if (find(one, out)) return true;
    }
    out->gpus.clear();
    out->gpu_type = -1;
    return false;
  }

  // The allowed types of `request` in this order (see the class comment).
  void Order(const Resources& resources, const PlacementRequest& request,
             std::vector<int>* types) const;
  // The job's rate on `type` on its best allocation there (0 if it cannot fit there at all).
  double Rate(const PlacementRequest& request, int type) const;

 private:
  Kind kind_ = Kind::kListed;
  // The GPU types tried first: the spot types (prefer) or the others (avoid); 0 = allow.
  uint64_t spot_first_ = 0;
  PlacementEnv env_;
  mutable std::optional<Resources> empty_;  // the empty cluster, built on first use
  mutable std::map<std::tuple<uint32_t, int, int, int>, double> rates_;
  mutable std::vector<int> order_;
  mutable std::vector<std::pair<double, int>> keyed_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_
