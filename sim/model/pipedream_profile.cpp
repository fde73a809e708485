// PipeDream profiler graph.txt -> ModelSpec. The file is the real-measurement input of the
// twin, so the parser is strict about numbers (a typo must not silently become a zero-cost
// layer) and lenient about layout (descriptions are free text, blank lines and unknown
// metric keys are tolerated). Format: scenarios/profiles/README.md.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/model/model_sources.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr std::string_view kSep = " -- ";

struct Node {
  std::string id;
  std::string description;
  int line = 0;
  double fwd_ms = 0;
  double bwd_ms = 0;
  double activation_bytes = 0;
  double parameter_bytes = 0;
};

struct Edge {
  std::string from;
  std::string to;
  int line = 0;
};

std::string_view trim_field(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t pos; (pos = s.find(sep, start)) != std::string_view::npos; start = pos + sep.size()) {
    parts.push_back(s.substr(start, pos - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

constexpr double kLargestValue = 1e15;

class Parser {
 public:
  explicit Parser(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(source_ + ":" + std::to_string(line) + ": " + what);
  }

  // A finite, non-negative decimal number; anything else names the key at fault.
  double number(std::string_view text, std::string_view key, int line) const {
    const std::string s(trim_field(text));
    char* end = nullptr;
    errno = 0;
    const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) {
      fail(line, std::string(key) + ": '" + s + "' is not a number");
    }
    if (v < 0) fail(line, std::string(key) + ": negative value " + s);
    // 1e15 ms is 30,000 years and 1e15 bytes a petabyte: past that a value is a typo, and
    // sums of such values overflow to infinity in the simulated times.
    if (v > kLargestValue) fail(line, std::string(key) + ": " + s + " is larger than 1e15");
    return v;
  }

  // Multi-output layers (LSTMs in GNMT) list one size per output: "[a; b; c]". All of
  // them leave the layer, so the bytes add up.
  double sizes(std::string_view text, std::string_view key, int line) const {
    text = trim_field(text);
    if (text.empty() || text.front() != '[') return number(text, key, line);
    if (text.back() != ']') fail(line, std::string(key) + ": unterminated list");
    double total = 0;
    for (std::string_view item : split(text.substr(1, text.size() - 2), ";")) {
      total += number(item, key, line);
    }
    return total;
  }

  Node node(std::string_view text, int line) const {
    // The description is free text: the id is the first segment and the metrics the last,
    // whatever separators the description itself may contain.
    const size_t first = text.find(kSep);
    const size_t last = text.rfind(kSep);
    if (first == std::string_view::npos || first == last ||
        text.find('=', last) == std::string_view::npos) {
      fail(line,
           "malformed line, expected 'nodeN -- description -- forward_compute_time=..., "
           "backward_compute_time=..., activation_size=..., parameter_size=...'");
    }
    Node n;
    n.line = line;
    n.id = std::string(trim_field(text.substr(0, first)));
    n.description =
        std::string(trim_field(text.substr(first + kSep.size(), last - first - kSep.size())));
    if (n.id.empty() || n.id.find_first_of(" \t") != std::string::npos) {
      fail(line, "malformed node id '" + n.id + "'");
    }
    std::map<std::string, double> metrics;
    for (std::string_view item : split(text.substr(last + kSep.size()), ",")) {
      item = trim_field(item);
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        fail(line, "malformed metric '" + std::string(item) + "', expected key=value");
      }
      const std::string key(trim_field(item.substr(0, eq)));
      metrics[key] = sizes(item.substr(eq + 1), key, line);
    }
    const auto get = [&](const char* key) {
      const auto it = metrics.find(key);
      if (it == metrics.end()) fail(line, std::string("missing ") + key + " for " + n.id);
      return it->second;
    };
    n.fwd_ms = get("forward_compute_time");
    n.bwd_ms = get("backward_compute_time");
    n.activation_bytes = get("activation_size");
    n.parameter_bytes = get("parameter_size");
    return n;
  }

 private:
  const std::string& source_;
};

// Tie-break key of Kahn's algorithm: PipeDream numbers its nodes in creation order, so
// "smallest node number first" reproduces the profiler's own order where the DAG allows.
std::pair<long long, int> order_key(const std::string& id, int appearance) {
  if (id.size() > 4 && id.starts_with("node") &&
      std::all_of(id.begin() + 4, id.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      id.size() < 4 + 18) {
    return {std::stoll(id.substr(4)), appearance};
  }
  return {std::numeric_limits<long long>::max(), appearance};
}

// Kahn's algorithm stopped early: every node left has a predecessor that is also left, so
// walking predecessors from any of them must come back to a node seen before. That loop is
// a real cycle (nodes merely downstream of one are not named); report its first edge line.
[[noreturn]] void report_cycle(const Parser& parser, const std::vector<Node>& nodes,
                               const std::vector<Edge>& edges,
                               const std::map<std::string, int>& index,
                               const std::vector<int>& position) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> pred(n, -1);
  std::map<std::pair<int, int>, int> edge_line;
  for (const Edge& e : edges) {
    const int a = index.at(e.from), b = index.at(e.to);
    if (position[a] >= 0 || position[b] >= 0) continue;
    pred[b] = a;
    edge_line.emplace(std::pair{a, b}, e.line);
  }
  int start = 0;
  while (position[start] >= 0) ++start;
  std::vector<int> seen_at(n, -1);
  std::vector<int> walk;
  int v = start;
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<int>(walk.size());
    walk.push_back(v);
    v = pred[v];
  }
  // walk[seen_at[v]..] follows edges backwards; reverse it to read in edge direction.
  std::vector<int> cycle(walk.begin() + seen_at[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string path;
  int line = std::numeric_limits<int>::max();
  for (size_t k = 0; k < cycle.size(); ++k) {
    const int a = cycle[k], b = cycle[(k + 1) % cycle.size()];
    line = std::min(line, edge_line.at({a, b}));
    path += nodes[a].id + " -> ";
  }
  path += nodes[cycle.front()].id;
  parser.fail(line, "cycle in the layer graph: " + path);
}

}  // namespace

ModelSpec model_from_pipedream(const std::string& text, int profile_batch, bool input_cost,
                               const std::string& source_name) {
  const Parser parser(source_name);
  if (profile_batch <= 0) {
    throw InputError(source_name + ": model.profile_batch must be positive, got " +
                     std::to_string(profile_batch));
  }

  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::map<std::string, int> index;  // id -> position in `nodes`
  int line_no = 0;
  for (std::string_view line : split(text, "\n")) {
    ++line_no;
    const std::string_view body = trim_field(line);
    if (body.empty()) continue;
    const std::vector<std::string_view> parts = split(body, kSep);
    // Edges are the tab-indented "nodeA -- nodeB" lines; a two-part line without any
    // metric is an edge wherever it is indented.
    const bool indented = line.front() == '\t' || line.front() == ' ';
    if (indented || (parts.size() == 2 && body.find('=') == std::string_view::npos)) {
      if (parts.size() != 2 || trim_field(parts[0]).empty() || trim_field(parts[1]).empty()) {
        parser.fail(line_no, "malformed edge line, expected 'nodeA -- nodeB'");
      }
      edges.push_back(
          {std::string(trim_field(parts[0])), std::string(trim_field(parts[1])), line_no});
      continue;
    }
    Node node = parser.node(body, line_no);
    const auto [it, inserted] = index.emplace(node.id, static_cast<int>(nodes.size()));
    if (!inserted) {
      parser.fail(line_no, "duplicate node " + node.id + " (first defined on line " +
                               std::to_string(nodes[it->second].line) + ")");
    }
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) parser.fail(1, "empty profile: no node lines");

  const int n = static_cast<int>(nodes.size());
  std::vector<std::vector<int>> succ(n);
  std::vector<int> indegree(n, 0);
  for (const Edge& e : edges) {
    const auto from = index.find(e.from);
    const auto to = index.find(e.to);
    if (from == index.end() || to == index.end()) {
      parser.fail(e.line, "edge names unknown node " + (from == index.end() ? e.from : e.to));
    }
    std::vector<int>& out = succ[from->second];
    // A repeated edge is the same dependency, not a second one.
    if (std::find(out.begin(), out.end(), to->second) != out.end()) continue;
    out.push_back(to->second);
    ++indegree[to->second];
  }

  // Kahn's algorithm, smallest node number first.
  using Entry = std::pair<std::pair<long long, int>, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push({order_key(nodes[i].id, i), i});
  }
  std::vector<int> order;
  std::vector<int> position(n, -1);
  while (!ready.empty()) {
    const int i = ready.top().second;
    ready.pop();
    position[i] = static_cast<int>(order.size());
    order.push_back(i);
    for (int j : succ[i]) {
      if (--indegree[j] == 0) ready.push({order_key(nodes[j].id, j), j});
    }
  }
  if (static_cast<int>(order.size()) < n) report_cycle(parser, nodes, edges, index, position);

  ModelSpec spec;
  spec.layers.reserve(n);
  const double batch = profile_batch;
  for (int i : order) {
    const Node& node = nodes[i];
    ModelLayer layer;
    layer.name = node.id + " " + node.description;
    // Input nodes stand for data loading, which PipeDream's optimizer leaves out.
    const bool free = !input_cost && node.description.starts_with("Input");
    if (!free) {
      layer.fwd.seconds_per_sample = node.fwd_ms * 1e-3 / batch;
      layer.bwd.seconds_per_sample = node.bwd_ms * 1e-3 / batch;
    }
    layer.activation_bytes_per_sample = node.activation_bytes / batch;
    layer.stash_bytes_per_sample = layer.activation_bytes_per_sample;
    // Weights are per model, not per sample.
    layer.parameter_bytes = std::llround(node.parameter_bytes);
    for (int j : succ[i]) layer.consumers.push_back(position[j]);
    std::sort(layer.consumers.begin(), layer.consumers.end());
    spec.layers.push_back(std::move(layer));
  }
  return spec;
}

}  // namespace pipetwin
