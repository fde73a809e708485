#include "sim/network/expert_exchange.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "sim/network/network_model.h"

namespace pipetwin {
namespace {

// The group's members by NVLink domain, in group order; empty when the domains hold
// different numbers of members (the pairwise all-to-all serves those).
std::vector<std::vector<int32_t>> members_by_domain(const ClusterSpec& cluster,
                                                    std::span<const int32_t> group) {
  std::map<int32_t, size_t> index;  // domain -> its row
  std::vector<std::vector<int32_t>> domains;
  for (int32_t d : group) {
    const int32_t domain = cluster.devices[d].node / cluster.nvlink_domain_nodes;
    const auto [it, added] = index.emplace(domain, domains.size());
    if (added) domains.emplace_back();
    domains[it->second].push_back(d);
  }
  for (const auto& members : domains) {
    if (members.size() != domains.front().size()) return {};
  }
  return domains;
}

}  // namespace

double expected_domains_touched(const ExpertDispatch& dispatch, int32_t domains) {
  const double experts = dispatch.experts, per_domain = experts / domains;
  // The chance that none of the k experts is in a given domain: C(E - E/D, k) / C(E, k).
  double none = 1;
  for (int32_t i = 0; i < dispatch.top_k; ++i) {
    none *= std::max(0.0, (experts - per_domain - i) / (experts - i));
  }
  const double touched = domains * (1 - none);
  return dispatch.max_nodes_per_token > 0 ? std::min<double>(touched, dispatch.max_nodes_per_token)
                                          : touched;
}

CollectiveSchedule expert_exchange_flows(const ClusterSpec& cluster, std::span<const int32_t> group,
                                         int64_t bytes, int32_t count,
                                         const ExpertDispatch& dispatch) {
  if (dispatch.kind == ExpertDispatch::Kind::kAllGather) {
    // Each exchange gathers one copy of every member's tokens (its buffer over top_k) from the
    // whole group: an all-gather whose result is n of them; the combine's reduce-scatter of
    // that result costs as much on a ring and in NCCL's model alike.
    const int64_t gathered = (bytes + count - 1) / count / std::max(1, dispatch.top_k) *
                             static_cast<int64_t>(group.size());
    return collective_flows(cluster, kProgramAllGather, group, gathered * count, count);
  }
  const bool deep_ep = dispatch.kind == ExpertDispatch::Kind::kDeepEp;
  const bool textbook = cluster.collectives.model == CollectivesSpec::Model::kTextbook;
  const std::vector<std::vector<int32_t>> domains = members_by_domain(cluster, group);
  if ((!deep_ep && textbook) || domains.size() < 2) {
    return collective_flows(cluster, kProgramAllToAll, group, bytes, count);
  }
  const int32_t steps = static_cast<int32_t>(domains.size()) - 1;
  const double n = static_cast<double>(group.size());
  const double local = static_cast<double>(domains.front().size());
  const double buffer = static_cast<double>((bytes + count - 1) / count);
  double network = buffer * (n - local) / n, nvlink = buffer * (local - 1) / n;
  if (deep_ep) {
    const double copies = std::max(1, dispatch.top_k);
    const double d = static_cast<double>(domains.size());
    network = buffer / copies * expected_domains_touched(dispatch, domains.size()) * (d - 1) / d;
    nvlink = buffer * (local - 1) / local;
  }
  const int64_t network_step = std::llround(network / steps);
  const int64_t nvlink_step = std::llround(nvlink / steps);
  const size_t rail = domains.front().size();
  CollectiveSchedule schedule;
  for (int32_t s = 1; s <= steps; ++s) {
    FlowPhase phase;
    for (size_t a = 0; a < domains.size(); ++a) {
      const std::vector<int32_t>& to = domains[(a + s) % domains.size()];
      for (size_t l = 0; l < rail; ++l) {
        if (network_step > 0) phase.flows.push_back({domains[a][l], to[l], network_step});
        if (rail > 1 && nvlink_step > 0) {
          const size_t peer = (l + 1 + (s - 1) % (rail - 1)) % rail;
          phase.flows.push_back({domains[a][l], domains[a][peer], nvlink_step});
        }
      }
    }
    schedule.push_back(std::move(phase));
  }
  repeat_phases(schedule, count);
  return schedule;
}

double expert_exchange_seconds(const ClusterSpec& cluster, std::span<const int32_t> group,
                               int64_t bytes, int32_t count, const ExpertDispatch& dispatch) {
  return lock_step_seconds(cluster, expert_exchange_flows(cluster, group, bytes, count, dispatch));
}

}  // namespace pipetwin
