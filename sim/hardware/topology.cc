#include "sim/hardware/topology.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <queue>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// ---- Tunable constants -------------------------------------------------------------------------
//
// Per-edge latencies. No datasheet gives per-link latencies; these are plausible figures, chosen so
// that GPU-to-GPU P2P lands near what microbenchmarks report (about 1 us over NVLink, a few us over
// PCIe across sockets). Path latency is the sum over its edges.
// Direct GPU-GPU NVLink edge (hybrid cube-mesh): one NVLink hop.
constexpr double kNvlinkLatencySeconds = 0.7e-6;
// GPU-NVSwitch edge: half an NVLink hop, so GPU -> NVSwitch -> GPU is 0.7 us like a direct link.
constexpr double kNvSwitchEdgeLatencySeconds = 0.35e-6;
// Every PCIe edge (GPU-switch, switch-socket, NIC-switch): GPU -> switch -> GPU is 1 us.
constexpr double kPcieEdgeLatencySeconds = 0.5e-6;
// The socket-socket edge (QPI/UPI): 1 us.
constexpr double kSocketLinkLatencySeconds = 1e-6;
// Network edges (NIC-leaf, leaf-spine) each take network.latency_us / 4, so NIC -> leaf -> spine
// -> leaf -> NIC (the longest inter-node route) is network.latency_us and a same-rack
// NIC -> leaf -> NIC is half of it.
constexpr double kNetworkEdgeShareOfLatency = 0.25;

// Ring orders over at most this many GPUs of one node are searched exhaustively ((k-1)! cyclic,
// k! open orders, pruned by the best bandwidth found so far). 8 covers a whole DGX; each distinct
// (node kind, GPU subset) is searched once and cached. 9 would multiply the worst case by 9.
constexpr int kMaxExhaustiveGpus = 8;

// PCIe x16 bandwidth per direction, GB/s (PCI-SIG base specifications): gen1 2.5 GT/s and gen2
// 5 GT/s with 8b/10b encoding; gen3 8 GT/s, gen4 16 GT/s, gen5 32 GT/s with 128b/130b:
// 8 GT/s x 16 lanes x 128/130 / 8 bits = 15.75 GB/s, doubling per generation. Generations outside
// 1..5 are clamped.
double PcieX16GbpsPerDirection(int generation) {
  static constexpr double kByGeneration[] = {4.0, 8.0, 15.75, 31.5, 63.0};
  return kByGeneration[std::clamp(generation, 1, 5) - 1];
}

// Socket-to-socket bandwidth per direction, GB/s, by the platform era of the GPU's PCIe generation.
// A QPI/UPI link carries 2 bytes per transfer in each direction (Intel: 9.6 GT/s QPI = 19.2 GB/s
// per direction, 10.4 GT/s UPI = 20.8 GB/s).
// - PCIe gen3 and older (V100 era): Xeon E5-2698 v4 (Broadwell-EP, as in DGX-1), 2 QPI links at
//   9.6 GT/s (Intel ARK): 2 x 9.6 x 2 = 38.4 GB/s.
// - PCIe gen4 (A100 era): Xeon Platinum 8380 (Ice Lake-SP, Intel's first PCIe 4.0 server CPU),
//   3 UPI links at 11.2 GT/s (Intel ARK): 3 x 11.2 x 2 = 67.2 GB/s. (DGX A100 itself uses AMD
//   EPYC 7742 with xGMI; the Intel figure stands in for the era.)
// - PCIe gen5 and newer (H100 era): Xeon Platinum 8480C (Sapphire Rapids, as in DGX H100),
//   4 UPI links at 16 GT/s (Intel ARK): 4 x 16 x 2 = 128 GB/s.
double CpuInterconnectGbpsPerDirection(int pcie_generation) {
  if (pcie_generation <= 3) return 38.4;
  if (pcie_generation == 4) return 67.2;
  return 128.0;
}

// DGX-1V hybrid cube-mesh: NVLink2 links between GPU pairs, as `nvidia-smi topo -m` reports on a
// DGX-1V (NV2 = two links, NV1 = one). Each V100 has 6 links; the constructor checks the sums.
struct CubeMeshPair {
  int a;
  int b;
  int links;
};
constexpr CubeMeshPair kCubeMesh[] = {
    {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 5, 2}, {2, 3, 2}, {4, 7, 2}, {5, 6, 2}, {6, 7, 2},
    {0, 1, 1}, {0, 2, 1}, {1, 3, 1}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {5, 7, 1},
};
constexpr int kCubeMeshGpus = 8;
constexpr int kNvlinksPerV100 = 6;

}  // namespace

// Everything the ring queries need besides the Boost graph. Links are numbered in the order their
// graph edges were added; each node's vertices and links form contiguous ranges built in the same
// order for every node, so nodes of one kind share widest paths expressed in local numbers.
// A directed link is 2 * link + (0 if traversed from `u` to `v`, else 1).
struct Topology::Routing {
  struct Link {
    int u = 0;
    int v = 0;
    double gbps = 0;
    double latency_seconds = 0;
  };
  // A widest path between two vertices of a node, in the node's local link numbers.
  struct Route {
    std::vector<int> directed_links;
    double gbps = 0;
    double latency_seconds = 0;
  };
  // A ring order (cyclic) or path order (open) over some of a node's GPUs, local indices.
  struct Order {
    std::vector<int> local_gpus;
    double gbps = kInfinity;
  };
  // Nodes with the same GPU type, GPU count, topology and NIC have identical wiring.
  struct Kind {
    int gpu_count = 0;
    std::vector<double> link_gbps;                // by local link
    std::vector<Route> gpu_routes;                // [from * gpu_count + to]
    std::vector<double> gpu_nic_latency_seconds;  // by local GPU, GPU <-> NIC path
    double gpu_pcie_gbps = 0;                     // one GPU's PCIe x16 link
    // Guarded by Routing::mutex. Keyed by the sorted local GPU indices.
    std::map<std::vector<int>, Order> cyclic_orders;
    std::map<std::vector<int>, Order> open_orders;

    const Route& route(int from, int to) const { return gpu_routes[from * gpu_count + to]; }
  };
  struct NodeLayout {
    int kind = 0;
    int vertex_base = 0;
    int vertex_count = 0;
    int link_base = 0;
    int link_count = 0;
    int nic_leaf_link = 0;  // global link, u = NIC
  };
  struct Ring {
    double gbps = kInfinity;
    double hop_latency_seconds = 0;
  };

  std::vector<Link> links;
  std::vector<NodeLayout> nodes;
  std::vector<int> rack_uplink;  // global link of rack r's leaf -> spine edge, u = leaf
  std::vector<Kind> kinds;
  std::mutex mutex;

  void BuildKind(const TopologyGraph& graph, const NodeLayout& layout, Kind& kind) const;
  Ring MakeRing(const Cluster& cluster, std::span<const int> gpus);
  const Order& CachedBestOrder(Kind& kind, const std::vector<int>& local, bool cyclic);
  static Order BestOrder(const Kind& kind, const std::vector<int>& local, bool cyclic);
  static Order IndexOrder(const Kind& kind, const std::vector<int>& local, bool cyclic);
  static double OrderLatencySeconds(const Kind& kind, const std::vector<int>& order, bool cyclic);
};

namespace {

// Counts directed-link uses of a ring under construction, keeping the running minimum of
// bandwidth / uses so that adding a hop costs only the hop's path length.
class LinkShare {
 public:
  explicit LinkShare(const std::vector<double>& link_gbps)
      : link_gbps_(link_gbps), uses_(2 * link_gbps.size(), 0) {}

  // Adds one hop's path; returns the ring's bandwidth given `current` before the hop.
  double Add(const std::vector<int>& directed_links, double current) {
    for (int d : directed_links) current = std::min(current, link_gbps_[d / 2] / ++uses_[d]);
    return current;
  }
  void Remove(const std::vector<int>& directed_links) {
    for (int d : directed_links) --uses_[d];
  }

 private:
  const std::vector<double>& link_gbps_;
  std::vector<int> uses_;
};

}  // namespace

void Topology::Routing::BuildKind(const TopologyGraph& graph, const NodeLayout& layout,
                                  Kind& kind) const {
  const int n = layout.vertex_count;
  const int base = layout.vertex_base;
  kind.link_gbps.resize(layout.link_count);
  std::map<std::pair<int, int>, int> local_link;  // (local u, local v), both orders
  for (int l = 0; l < layout.link_count; ++l) {
    const Link& link = links[layout.link_base + l];
    kind.link_gbps[l] = link.gbps;
    local_link[{link.u - base, link.v - base}] = l;
    local_link[{link.v - base, link.u - base}] = l;
  }
  struct Arc {
    int to;
    int link;
    double gbps;
    double latency_seconds;
  };
  std::vector<std::vector<Arc>> arcs(n);
  std::vector<bool> is_gpu(n);
  int nic = -1;
  for (int v = 0; v < n; ++v) {
    is_gpu[v] = graph[base + v].kind == VertexKind::kGpu;
    if (graph[base + v].kind == VertexKind::kNic) nic = v;
    for (auto [e, end] = boost::out_edges(base + v, graph); e != end; ++e) {
      const int to = static_cast<int>(boost::target(*e, graph)) - base;
      if (to < 0 || to >= n) continue;  // the NIC's edge to its leaf
      arcs[v].push_back(
          {to, local_link.at({v, to}), graph[*e].gbps_per_direction, graph[*e].latency_seconds});
    }
    // Visiting neighbours by vertex index makes the tie-breaking below depend on indices only.
    std::sort(arcs[v].begin(), arcs[v].end(),
              [](const Arc& x, const Arc& y) { return x.to < y.to; });
  }
  CHECK(nic >= 0, "node without a NIC vertex");

  const int g = kind.gpu_count;
  kind.gpu_routes.assign(static_cast<size_t>(g) * g, Route{});
  kind.gpu_nic_latency_seconds.assign(g, 0);
  for (int source = 0; source < g; ++source) {
    // Widest (maximum-bottleneck) Dijkstra. Bottleneck labels are monotone under extension, so
    // the greedy order is exact for the width; fewest hops among widest paths is found after, by
    // a BFS restricted to edges at least that wide (lexicographic labels are not isotone, so
    // Dijkstra on (width, hops) could miss them). GPUs other than the source are never expanded:
    // no path between GPUs forwards through a third GPU.
    std::vector<double> width(n, 0);
    std::vector<bool> done(n, false);
    width[source] = kInfinity;
    std::priority_queue<std::pair<double, int>> queue;  // (width, -vertex)
    queue.push({kInfinity, -source});
    while (!queue.empty()) {
      const int v = -queue.top().second;
      queue.pop();
      if (done[v]) continue;
      done[v] = true;
      if (v != source && is_gpu[v]) continue;
      for (const Arc& arc : arcs[v]) {
        const double w = std::min(width[v], arc.gbps);
        if (w > width[arc.to]) {
          width[arc.to] = w;
          queue.push({w, -arc.to});
        }
      }
    }
    std::vector<int> targets;
    for (int t = 0; t < g; ++t) {
      if (t != source) targets.push_back(t);
    }
    targets.push_back(nic);
    std::vector<double> widths;
    for (int t : targets) widths.push_back(width[t]);
    std::sort(widths.begin(), widths.end());
    widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
    for (double bottleneck : widths) {
      CHECK(bottleneck > 0, "a node's GPUs are not all connected");
      std::vector<int> parent_arc_from(n, -1);
      std::vector<const Arc*> parent_arc(n, nullptr);
      std::vector<bool> seen(n, false);
      std::queue<int> bfs;
      bfs.push(source);
      seen[source] = true;
      while (!bfs.empty()) {
        const int v = bfs.front();
        bfs.pop();
        if (v != source && is_gpu[v]) continue;
        for (const Arc& arc : arcs[v]) {
          if (arc.gbps < bottleneck || seen[arc.to]) continue;
          seen[arc.to] = true;
          parent_arc_from[arc.to] = v;
          parent_arc[arc.to] = &arc;
          bfs.push(arc.to);
        }
      }
      for (int t : targets) {
        if (width[t] != bottleneck) continue;
        Route route;
        route.gbps = bottleneck;
        for (int v = t; v != source; v = parent_arc_from[v]) {
          const Arc& arc = *parent_arc[v];
          const Link& link = links[layout.link_base + arc.link];
          const bool forward = link.u - base == parent_arc_from[v];
          route.directed_links.push_back(2 * arc.link + (forward ? 0 : 1));
          route.latency_seconds += arc.latency_seconds;
        }
        std::reverse(route.directed_links.begin(), route.directed_links.end());
        if (t == nic) {
          kind.gpu_nic_latency_seconds[source] = route.latency_seconds;
        } else {
          kind.gpu_routes[source * g + t] = std::move(route);
        }
      }
    }
  }
}

Topology::Topology(const Cluster& cluster)
    : cluster_(&cluster), routing_(std::make_shared<Routing>()) {
  Routing& routing = *routing_;
  const double network_edge_latency_seconds =
      cluster.spec().network.latency_us * 1e-6 * kNetworkEdgeShareOfLatency;

  auto add_vertex = [&](VertexKind kind, int node, int index, std::string label) {
    // add_vertex(graph_) then assign: add_vertex(property, graph_) trips a GCC 12
    // -Wmaybe-uninitialized false positive in Boost's named_graph under sanitizers.
    const auto v = boost::add_vertex(graph_);
    graph_[v] = TopologyVertex{kind, node, index, std::move(label)};
    return static_cast<int>(v);
  };
  auto add_link = [&](int u, int v, double gbps, double latency_seconds) {
    CHECK(gbps > 0, "link " + graph_[u].label + " -- " + graph_[v].label + " has no bandwidth");
    boost::add_edge(u, v, TopologyEdge{gbps, latency_seconds}, graph_);
    routing.links.push_back({u, v, gbps, latency_seconds});
    return static_cast<int>(routing.links.size()) - 1;
  };

  gpu_vertex_.assign(cluster.total_gpus(), -1);
  std::vector<int> nic_vertex;
  std::map<std::tuple<int, int, NodeTopology, double>, int> kind_of;
  std::vector<int> representative;  // a node of each kind
  for (const Node& node : cluster.nodes()) {
    const GpuSpec& gpu = cluster.catalog().gpu(node.gpu_type);
    const double pcie_gbps = PcieX16GbpsPerDirection(gpu.pcie_generation);
    const double nvlink_gbps_per_direction = gpu.nvlink_gbps / 2;
    const std::string prefix = "n" + std::to_string(node.index) + "/";
    Routing::NodeLayout layout;
    layout.vertex_base = static_cast<int>(boost::num_vertices(graph_));
    layout.link_base = static_cast<int>(routing.links.size());

    std::vector<int> gpus;
    for (int i = 0; i < node.gpu_count; ++i) {
      gpus.push_back(add_vertex(VertexKind::kGpu, node.index, node.first_gpu + i,
                                prefix + "gpu" + std::to_string(i)));
      gpu_vertex_[node.first_gpu + i] = gpus.back();
    }
    // NVLink. A GPU type without NVLink gets none, whatever the spec's topology says.
    if (node.topology == NodeTopology::kNvSwitch && nvlink_gbps_per_direction > 0) {
      const int nvswitch = add_vertex(VertexKind::kNvSwitch, node.index, 0, prefix + "nvswitch");
      for (int v : gpus) {
        add_link(v, nvswitch, nvlink_gbps_per_direction, kNvSwitchEdgeLatencySeconds);
      }
    } else if (node.topology == NodeTopology::kHybridCubeMesh && nvlink_gbps_per_direction > 0) {
      CHECK(node.gpu_count == kCubeMeshGpus,
            "hybrid-cube-mesh node " + std::to_string(node.index) + " does not have 8 GPUs");
      int links_per_gpu[kCubeMeshGpus] = {};
      for (const CubeMeshPair& pair : kCubeMesh) {
        links_per_gpu[pair.a] += pair.links;
        links_per_gpu[pair.b] += pair.links;
        // V100: 300 / 2 / 6 = 25 GB/s per link per direction.
        add_link(gpus[pair.a], gpus[pair.b],
                 pair.links * nvlink_gbps_per_direction / kNvlinksPerV100, kNvlinkLatencySeconds);
      }
      for (int links : links_per_gpu) CHECK(links == kNvlinksPerV100, "cube-mesh table is wrong");
    }
    // Host: two sockets, one PCIe switch per two GPUs, the first half under socket 0.
    const int socket0 = add_vertex(VertexKind::kCpuSocket, node.index, 0, prefix + "cpu0");
    const int socket1 = add_vertex(VertexKind::kCpuSocket, node.index, 1, prefix + "cpu1");
    add_link(socket0, socket1, CpuInterconnectGbpsPerDirection(gpu.pcie_generation),
             kSocketLinkLatencySeconds);
    const int switch_count = (node.gpu_count + 1) / 2;
    const int switches_under_socket0 = (switch_count + 1) / 2;
    int first_switch = -1;
    for (int k = 0; k < switch_count; ++k) {
      const int pcie_switch =
          add_vertex(VertexKind::kPcieSwitch, node.index, k, prefix + "pcie" + std::to_string(k));
      if (k == 0) first_switch = pcie_switch;
      add_link(pcie_switch, k < switches_under_socket0 ? socket0 : socket1, pcie_gbps,
               kPcieEdgeLatencySeconds);
      for (int i = 2 * k; i < std::min(2 * k + 2, node.gpu_count); ++i) {
        add_link(gpus[i], pcie_switch, pcie_gbps, kPcieEdgeLatencySeconds);
      }
    }
    // The NIC last: BuildKind relies on nothing after it within the node.
    nic_vertex.push_back(add_vertex(VertexKind::kNic, node.index, 0, prefix + "nic"));
    add_link(nic_vertex.back(), first_switch, node.nic_gbps / 8, kPcieEdgeLatencySeconds);

    layout.vertex_count = static_cast<int>(boost::num_vertices(graph_)) - layout.vertex_base;
    layout.link_count = static_cast<int>(routing.links.size()) - layout.link_base;
    const auto key = std::make_tuple(node.gpu_type, node.gpu_count, node.topology, node.nic_gbps);
    auto [it, inserted] = kind_of.try_emplace(key, static_cast<int>(representative.size()));
    if (inserted) representative.push_back(node.index);
    layout.kind = it->second;
    routing.nodes.push_back(layout);
  }

  // Network: one leaf per rack, one spine.
  std::vector<int> leaf;
  for (int r = 0; r < cluster.rack_count(); ++r) {
    leaf.push_back(add_vertex(VertexKind::kLeaf, -1, r, "rack" + std::to_string(r) + "/leaf"));
  }
  const int spine = add_vertex(VertexKind::kSpine, -1, 0, "spine");
  std::vector<double> rack_nic_gbps(cluster.rack_count(), 0);
  for (const Node& node : cluster.nodes()) {
    routing.nodes[node.index].nic_leaf_link = add_link(
        nic_vertex[node.index], leaf[node.rack], node.nic_gbps / 8, network_edge_latency_seconds);
    rack_nic_gbps[node.rack] += node.nic_gbps / 8;
  }
  for (int r = 0; r < cluster.rack_count(); ++r) {
    routing.rack_uplink.push_back(
        add_link(leaf[r], spine, rack_nic_gbps[r] / cluster.spec().network.oversubscription,
                 network_edge_latency_seconds));
  }

  routing.kinds.resize(representative.size());
  for (size_t k = 0; k < representative.size(); ++k) {
    const Node& node = cluster.node(representative[k]);
    Routing::Kind& kind = routing.kinds[k];
    kind.gpu_count = node.gpu_count;
    kind.gpu_pcie_gbps =
        PcieX16GbpsPerDirection(cluster.catalog().gpu(node.gpu_type).pcie_generation);
    routing.BuildKind(graph_, routing.nodes[node.index], kind);
  }
}

Topology::Routing::Order Topology::Routing::IndexOrder(const Kind& kind,
                                                       const std::vector<int>& local, bool cyclic) {
  Order order{local, kInfinity};
  LinkShare share(kind.link_gbps);
  const int k = static_cast<int>(local.size());
  for (int i = 0; i + 1 < k; ++i) {
    order.gbps = share.Add(kind.route(local[i], local[i + 1]).directed_links, order.gbps);
  }
  if (cyclic && k >= 2) {
    order.gbps = share.Add(kind.route(local[k - 1], local[0]).directed_links, order.gbps);
  }
  return order;
}

// Exhaustive search in lexicographic order of local indices (a cyclic order starts at the lowest
// GPU). Adding a hop never raises a ring's bandwidth, so a prefix no better than the best complete
// order is cut; only strictly better orders replace the best, so ties keep the first found.
Topology::Routing::Order Topology::Routing::BestOrder(const Kind& kind,
                                                      const std::vector<int>& local, bool cyclic) {
  const int k = static_cast<int>(local.size());
  Order best{local, -1};
  if (k < 2) return Order{local, kInfinity};
  LinkShare share(kind.link_gbps);
  std::vector<int> order(k);
  std::vector<bool> used(k, false);
  auto search = [&](auto& self, int position, double gbps) -> void {
    if (position == k) {
      if (cyclic) {
        const auto& closing = kind.route(order[k - 1], order[0]).directed_links;
        gbps = share.Add(closing, gbps);
        share.Remove(closing);
      }
      if (gbps > best.gbps) best = Order{order, gbps};
      return;
    }
    for (int i = 0; i < k; ++i) {
      if (used[i]) continue;
      order[position] = local[i];
      used[i] = true;
      if (position == 0) {
        self(self, 1, kInfinity);
      } else {
        const auto& hop = kind.route(order[position - 1], local[i]).directed_links;
        const double with_hop = share.Add(hop, gbps);
        if (with_hop > best.gbps) self(self, position + 1, with_hop);
        share.Remove(hop);
      }
      used[i] = false;
      if (cyclic && position == 0) break;  // the first GPU is fixed
    }
  };
  search(search, 0, kInfinity);
  return best;
}

const Topology::Routing::Order& Topology::Routing::CachedBestOrder(Kind& kind,
                                                                   const std::vector<int>& local,
                                                                   bool cyclic) {
  auto& cache = cyclic ? kind.cyclic_orders : kind.open_orders;
  auto it = cache.find(local);
  if (it == cache.end()) it = cache.emplace(local, BestOrder(kind, local, cyclic)).first;
  return it->second;
}

double Topology::Routing::OrderLatencySeconds(const Kind& kind, const std::vector<int>& order,
                                              bool cyclic) {
  double latency = 0;
  const int k = static_cast<int>(order.size());
  for (int i = 0; i + 1 < k; ++i) {
    latency = std::max(latency, kind.route(order[i], order[i + 1]).latency_seconds);
  }
  if (cyclic && k >= 2) {
    latency = std::max(latency, kind.route(order[k - 1], order[0]).latency_seconds);
  }
  return latency;
}

Topology::Routing::Ring Topology::Routing::MakeRing(const Cluster& cluster,
                                                    std::span<const int> gpus) {
  std::vector<int> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    CHECK(sorted[i] >= 0 && sorted[i] < cluster.total_gpus(),
          "GPU " + std::to_string(sorted[i]) + " out of range");
    CHECK(i == 0 || sorted[i] != sorted[i - 1],
          "GPU " + std::to_string(sorted[i]) + " listed twice in a ring");
  }
  Ring ring;
  if (sorted.size() < 2) return ring;

  // Node-major GPU numbering: sorted GPUs come in ascending node order, each node contiguous.
  struct Segment {
    int node;
    std::vector<int> local;  // sorted local GPU indices, then the chosen order
  };
  std::vector<Segment> segments;
  for (int gpu : sorted) {
    const int node = cluster.NodeOfGpu(gpu);
    if (segments.empty() || segments.back().node != node) segments.push_back({node, {}});
    segments.back().local.push_back(gpu - cluster.node(node).first_gpu);
  }

  std::lock_guard<std::mutex> lock(mutex);
  const bool cyclic = segments.size() == 1;
  for (Segment& segment : segments) {
    Kind& kind = kinds[nodes[segment.node].kind];
    Order order = static_cast<int>(segment.local.size()) <= kMaxExhaustiveGpus
                      ? CachedBestOrder(kind, segment.local, cyclic)
                      : IndexOrder(kind, segment.local, cyclic);
    ring.gbps = std::min(ring.gbps, order.gbps);
    ring.hop_latency_seconds =
        std::max(ring.hop_latency_seconds, OrderLatencySeconds(kind, order.local_gpus, cyclic));
    segment.local = std::move(order.local_gpus);
  }
  if (cyclic) return ring;

  // Hops between nodes: last GPU of a node to the first GPU of the next, the last node wrapping
  // to the first. Their links (rails, NIC-leaf, leaf-spine) are disjoint from the intra-node
  // links, so sharing is counted separately. A rail is a pseudo-link per node and direction: the
  // node's ring GPUs' PCIe x16 links together (see topology.h), numbered after the real links.
  const int64_t rail_base = static_cast<int64_t>(links.size());
  std::map<int64_t, int> uses;  // directed link -> hops crossing it
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& from = segments[s];
    const Segment& to = segments[(s + 1) % segments.size()];
    const NodeLayout& from_layout = nodes[from.node];
    const NodeLayout& to_layout = nodes[to.node];
    ++uses[2 * (rail_base + from.node)];    // out of `from`
    ++uses[2 * from_layout.nic_leaf_link];  // NIC -> leaf
    double latency = kinds[from_layout.kind].gpu_nic_latency_seconds[from.local.back()] +
                     links[from_layout.nic_leaf_link].latency_seconds;
    const int from_rack = cluster.node(from.node).rack;
    const int to_rack = cluster.node(to.node).rack;
    if (from_rack != to_rack) {
      ++uses[2 * rack_uplink[from_rack]];    // leaf -> spine
      ++uses[2 * rack_uplink[to_rack] + 1];  // spine -> leaf
      latency += links[rack_uplink[from_rack]].latency_seconds +
                 links[rack_uplink[to_rack]].latency_seconds;
    }
    ++uses[2 * to_layout.nic_leaf_link + 1];  // leaf -> NIC
    ++uses[2 * (rail_base + to.node) + 1];    // into `to`
    latency += links[to_layout.nic_leaf_link].latency_seconds +
               kinds[to_layout.kind].gpu_nic_latency_seconds[to.local.front()];
    ring.hop_latency_seconds = std::max(ring.hop_latency_seconds, latency);
  }
  for (const auto& [directed, count] : uses) {
    const int64_t link = directed / 2;
    double gbps = 0;
    if (link >= rail_base) {
      const Segment& segment =
          *std::find_if(segments.begin(), segments.end(),
                        [&](const Segment& x) { return x.node == link - rail_base; });
      gbps =
          static_cast<double>(segment.local.size()) * kinds[nodes[segment.node].kind].gpu_pcie_gbps;
    } else {
      gbps = links[link].gbps;
    }
    ring.gbps = std::min(ring.gbps, gbps / count);
  }
  return ring;
}

double Topology::RingBandwidthGbps(std::span<const int> gpus) const {
  return routing_->MakeRing(*cluster_, gpus).gbps;
}

double Topology::RingHopLatencySeconds(std::span<const int> gpus) const {
  return routing_->MakeRing(*cluster_, gpus).hop_latency_seconds;
}

void Topology::WriteDot(std::ostream& out) const {
  const Cluster& cluster = *cluster_;
  auto bandwidth = [&](const TopologyGraph::edge_descriptor& e) {
    std::ostringstream gbps;
    gbps << graph_[e].gbps_per_direction;
    return gbps.str() + " GB/s";
  };
  auto vertex_line = [&](int v, const char* indent) {
    const TopologyVertex& vertex = graph_[v];
    const char* style = "";
    switch (vertex.kind) {
      case VertexKind::kGpu:
        style = ", shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"";
        break;
      case VertexKind::kLeaf:
      case VertexKind::kSpine:
        style = ", shape=box, style=filled, fillcolor=\"#fce5cd\"";
        break;
      default:
        style = ", shape=box";
    }
    out << indent << "v" << v << " [label=\"" << vertex.label << "\"" << style << "];\n";
  };
  // Vertices and edges inside one node go into that node's cluster; the rest (NIC to leaf, leaf
  // to spine) are drawn between clusters.
  std::vector<std::vector<int>> node_vertices(cluster.node_count());
  std::vector<int> leaf_of_rack(cluster.rack_count(), -1);
  std::vector<int> outside;
  for (auto [v, end] = boost::vertices(graph_); v != end; ++v) {
    const TopologyVertex& vertex = graph_[*v];
    if (vertex.node >= 0) {
      node_vertices[vertex.node].push_back(static_cast<int>(*v));
    } else if (vertex.kind == VertexKind::kLeaf) {
      leaf_of_rack[vertex.index] = static_cast<int>(*v);
    } else {
      outside.push_back(static_cast<int>(*v));
    }
  }
  std::vector<std::vector<TopologyGraph::edge_descriptor>> node_edges(cluster.node_count());
  std::vector<TopologyGraph::edge_descriptor> between;
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    const int a = graph_[boost::source(*e, graph_)].node;
    const int b = graph_[boost::target(*e, graph_)].node;
    if (a >= 0 && a == b) {
      node_edges[a].push_back(*e);
    } else {
      between.push_back(*e);
    }
  }
  // layout=fdp: the force-directed engine packs the rack and node boxes in two dimensions;
  // dot's layered layout puts every GPU of the cluster on one rank, a strip tens of thousands of
  // pixels wide. `dot -Tpng` honours the attribute.
  out << "graph topology {\n"
      << "  // clustersim cluster topology: one box per rack and per node; edges give each "
         "link's bandwidth per direction. Render: dot -Tpng FILE -o topology.png\n"
      << "  graph [layout=fdp, fontname=\"Helvetica\", fontsize=12];\n"
      << "  node [fontname=\"Helvetica\", fontsize=9, margin=\"0.04,0.02\", height=0.25];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=7];\n";
  for (int v : outside) vertex_line(v, "  ");
  for (int rack = 0; rack < cluster.rack_count(); ++rack) {
    out << "  subgraph cluster_rack" << rack << " {\n"
        << "    label=\"rack " << rack << "\"; style=rounded; color=\"#999999\";\n";
    if (leaf_of_rack[rack] >= 0) vertex_line(leaf_of_rack[rack], "    ");
    for (int n = 0; n < cluster.node_count(); ++n) {
      const Node& node = cluster.node(n);
      if (node.rack != rack) continue;
      out << "    subgraph cluster_node" << n << " {\n"
          << "      label=\"node " << n << ": " << node.gpu_count << " x "
          << cluster.catalog().gpu(node.gpu_type).name << " (" << NodeTopologyName(node.topology)
          << ")\"; style=solid; color=\"#4a86e8\";\n";
      for (int v : node_vertices[n]) vertex_line(v, "      ");
      for (const auto& e : node_edges[n]) {
        out << "      v" << boost::source(e, graph_) << " -- v" << boost::target(e, graph_)
            << " [label=\"" << bandwidth(e) << "\"];\n";
      }
      out << "    }\n";
    }
    out << "  }\n";
  }
  for (const auto& e : between) {
    out << "  v" << boost::source(e, graph_) << " -- v" << boost::target(e, graph_) << " [label=\""
        << bandwidth(e) << "\"];\n";
  }
  out << "}\n";
}

}  // namespace clustersim
