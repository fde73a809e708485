#include "app/sweep_merge.h"

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "sim/spec/errors.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

struct CsvRecord {
  std::vector<std::string> fields;
  std::string text;  // as written, ready to be written again
  int line = 0;      // where it starts
};

// Records of `text` as `write_sweep_csv` writes them: quoted fields may hold commas,
// doubled quotes and line breaks.
std::vector<CsvRecord> read_records(const std::string& text, const std::string& path) {
  std::vector<CsvRecord> records;
  size_t pos = 0;
  int line = 1;
  while (pos < text.size()) {
    CsvRecord record;
    record.line = line;
    const size_t start = pos;
    std::string field;
    bool quoted = false;
    for (; pos < text.size(); ++pos) {
      const char c = text[pos];
      if (quoted) {
        if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
          field += '"';
          ++pos;
        } else if (c == '"') {
          quoted = false;
        } else {
          if (c == '\n') ++line;
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        record.fields.push_back(std::move(field));
        field.clear();
      } else if (c == '\n') {
        break;
      } else {
        field += c;
      }
    }
    if (quoted) throw InputError(path + ":" + std::to_string(record.line) + ": unclosed quote");
    record.fields.push_back(std::move(field));
    record.text = text.substr(start, pos - start) + "\n";
    ++pos;  // the line break
    ++line;
    records.push_back(std::move(record));
  }
  return records;
}

int64_t whole_number(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  throw InputError(where + ": '" + text + "' is not a point index");
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string merge_sweep_csvs(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("sweep merge: give the CSVs of the shards");
  std::string header;
  int64_t grid_points = -1;
  std::map<int64_t, std::pair<std::string, std::string>> rows;  // index -> (text, where)
  for (const std::string& path : paths) {
    const std::vector<CsvRecord> records = read_records(read_file_text(path), path);
    if (records.empty() || records[0].fields.size() < 2 || records[0].fields[0] != "point" ||
        records[0].fields[1] != "points") {
      throw InputError(path + ":1: not the CSV of a sweep (it starts with point,points)");
    }
    if (header.empty()) header = records[0].text;
    if (records[0].text != header) {
      throw InputError(path + ":1: another sweep's columns than " + paths[0] + "'s");
    }
    for (size_t r = 1; r < records.size(); ++r) {
      const CsvRecord& record = records[r];
      const std::string where = path + ":" + std::to_string(record.line);
      if (record.fields.size() != records[0].fields.size()) {
        throw InputError(where + ": " + std::to_string(record.fields.size()) + " fields, the " +
                         "header has " + std::to_string(records[0].fields.size()));
      }
      const int64_t index = whole_number(record.fields[0], where);
      const int64_t points = whole_number(record.fields[1], where);
      if (grid_points < 0) grid_points = points;
      if (points != grid_points) {
        throw InputError(where + ": a grid of " + std::to_string(points) + " points, not " +
                         std::to_string(grid_points) + ": another sweep's rows");
      }
      if (index >= points) {
        throw InputError(where + ": point " + std::to_string(index) + " is past the grid");
      }
      const auto [it, added] = rows.emplace(index, std::make_pair(record.text, where));
      if (!added) {
        throw InputError(where + ": point " + std::to_string(index) + " again (first at " +
                         it->second.second + ")");
      }
    }
  }
  if (grid_points < 0) grid_points = 0;
  for (int64_t index = 0; index < grid_points; ++index) {
    if (!rows.count(index)) {
      throw InputError("sweep merge: no row for point " + std::to_string(index) + " of " +
                       std::to_string(grid_points) + ": a shard is missing");
    }
  }
  std::string merged = header;
  for (const auto& [index, row] : rows) merged += row.first;
  return merged;
}

CLI::App* add_sweep_merge_command(CLI::App& sweep) {
  struct MergeArgs {
    std::vector<std::string> inputs;
    std::string output;
  };
  auto args = std::make_shared<MergeArgs>();
  CLI::App* merge = sweep.add_subcommand(
      "merge", "join the CSVs of a sharded sweep into the whole grid's, in grid order");
  merge->add_option("csv", args->inputs, "the shards' CSV files")->required();
  merge->add_option("-o,--output", args->output, "the merged CSV (default: stdout)");
  merge->callback([args] {
    const std::string merged = merge_sweep_csvs(args->inputs);
    if (args->output.empty()) {
      std::cout << merged;
      return;
    }
    write_file_atomically(args->output, [&](std::ostream& out) { out << merged; });
    std::cerr << "merged CSV written to " << args->output << "\n";
  });
  return merge;
}

}  // namespace pipetwin
