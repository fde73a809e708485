#include "app/sweep_summary.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "report/sweep_page.h"

namespace pipetwin {
namespace {

// The shortest text that reads back as the same double: unrounded, yet no noise digits.
std::string exact(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

void print_sweep_table(std::ostream& out, const std::vector<std::string>& paths,
                       const std::vector<SweepRow>& rows) {
  const SweepTable table = sweep_table(paths, rows);
  const std::vector<std::string>& header = table.header;
  const std::vector<std::vector<std::string>>& cells = table.cells;
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  const auto print_line = [&](const std::vector<std::string>& line) {
    for (size_t c = 0; c + 1 < line.size(); ++c) {
      out << line[c] << std::string(width[c] - line[c].size() + 2, ' ');
    }
    out << line.back() << "\n";  // the status is last, so long errors pad nothing
  };
  print_line(header);
  for (const auto& line : cells) print_line(line);
}

nlohmann::json sweep_json(const std::vector<SweepRow>& rows) {
  nlohmann::json array = nlohmann::json::array();
  for (const SweepRow& row : rows) {
    nlohmann::json point = nlohmann::json::object();
    for (const auto& [path, value] : row.point.settings) point[path] = value;
    const PointResult& r = row.result;
    const auto metric = [&](double value) {
      return r.failed() ? nlohmann::json(nullptr) : nlohmann::json(value);
    };
    array.push_back({{"point", point},
                     {"index", row.index},
                     {"iteration_time_s", metric(r.iteration_time_s)},
                     {"throughput_samples_per_s", metric(r.throughput_samples_per_s)},
                     {"bubble_ratio", metric(r.bubble_ratio)},
                     {"peak_memory_bytes", metric(r.peak_memory_bytes)},
                     {"out_of_memory", r.out_of_memory},
                     {"status", status_name(r.status)},
                     {"error_kind", error_kind_name(r.status)},
                     {"error", r.error}});
  }
  return array;
}

void write_sweep_csv(std::ostream& out, const std::vector<std::string>& paths,
                     const std::vector<SweepRow>& rows) {
  out << "point,points,";
  for (const std::string& path : paths) out << csv_field(path) << ",";
  out << "iteration_time_s,throughput_samples_per_s,bubble_ratio,peak_memory_bytes,"
         "out_of_memory,status,error_kind,error\n";
  for (const SweepRow& row : rows) {
    out << row.index << "," << row.grid_points << ",";
    for (const auto& setting : row.point.settings) out << csv_field(setting.second) << ",";
    const PointResult& r = row.result;
    for (const double value :
         {r.iteration_time_s, r.throughput_samples_per_s, r.bubble_ratio, r.peak_memory_bytes}) {
      out << (r.failed() ? "" : exact(value)) << ",";
    }
    out << (r.out_of_memory ? "true" : "false") << "," << status_name(r.status) << ","
        << error_kind_name(r.status) << "," << csv_field(r.error) << "\n";
  }
}

}  // namespace pipetwin
