// `pipetwin compare A.timeline B.timeline [--trace both.json] [--report FILE.html] [--labels A,B]
//                  [--json]`
//
// Span-by-span comparison of two saved timelines (analysis/timeline_comparison.h): A is the
// reference, errors are B - A. Exit codes: 2 when a file cannot be read as a timeline (the
// message names it) or the options are wrong, 1 when no span of one has a partner in the
// other (the timelines are of different programs: there is nothing to compare), else 0.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "analysis/stacked_timeline.h"
#include "analysis/timeline_comparison.h"
#include "app/compare_run.h"
#include "app/measured_timeline.h"
#include "cli/cli_app.h"
#include "report/compare_page.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

struct CompareArgs {
  std::string path_a;
  std::string path_b;
  std::string trace_path;
  std::string report_path;
  std::string labels = "A,B";
  bool json = false;
};

Timeline read_input(const std::string& path) { return read_any_timeline(path); }

std::pair<std::string, std::string> parse_labels(const std::string& text) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    throw InputError("--labels " + text + ": expected two labels separated by a comma");
  }
  std::string a = text.substr(0, comma), b = text.substr(comma + 1);
  if (a.empty() || b.empty() || a == b) {
    throw InputError("--labels " + text + ": the two labels must be non-empty and different");
  }
  return {a, b};
}

std::string percent(double ratio) { return format_number("%.2f%%", 100 * ratio); }

// B's duration against A's, signed: "+10.00%".
std::string signed_relative(const SpanDifference& d) {
  if (d.duration_a_s != 0) return format_signed_percent(d.duration_error_s() / d.duration_a_s);
  return d.duration_error_s() == 0 ? format_signed_percent(0) : "n/a";
}

std::string error_text(double seconds, double rel) {
  return format_seconds(seconds) + " (" + percent(rel) + ")";
}

std::string unmatched_text(const std::vector<UnmatchedSpan>& first, int64_t count) {
  std::string text;
  for (const UnmatchedSpan& s : first) {
    text += (text.empty() ? "" : ", ") + s.name + " [" + std::to_string(s.range_lo) + "," +
            std::to_string(s.range_hi) + ") on " + s.device_name + " (iteration " +
            std::to_string(s.iteration) + ")";
  }
  const int64_t rest = count - static_cast<int64_t>(first.size());
  if (rest > 0) text += ", and " + std::to_string(rest) + " more";
  return text;
}

void print_comparison(std::ostream& out, const TimelineComparison& c, const CompareArgs& args,
                      const std::pair<std::string, std::string>& labels, const Timeline& a,
                      const Timeline& b) {
  const std::string& la = labels.first;
  const std::string& lb = labels.second;
  const size_t label_width = std::max<size_t>(la.size(), lb.size()) + 2;
  out << pad(la, label_width) << args.path_a << " (" << a.source << ", " << c.spans_a << " spans)\n"
      << pad(lb, label_width) << args.path_b << " (" << b.source << ", " << c.spans_b << " spans)\n"
      << c.matched << " spans matched, " << c.unmatched_a << " only in " << la << ", "
      << c.unmatched_b << " only in " << lb << "\n";
  if (c.unmatched_a > 0) {
    out << "  only in " << la << ": " << unmatched_text(c.first_unmatched_a, c.unmatched_a) << "\n";
  }
  if (c.unmatched_b > 0) {
    out << "  only in " << lb << ": " << unmatched_text(c.first_unmatched_b, c.unmatched_b) << "\n";
  }
  if (c.duplicate_keys_a + c.duplicate_keys_b > 0) {
    // Expected where one pass has several collectives of one kind (gradient buckets, ZeRO-3's
    // gathers); suspicious where the two timelines count them differently.
    out << "  note: " << c.duplicate_keys_a << " spans of " << la << " and " << c.duplicate_keys_b
        << " of " << lb
        << " repeat a key (device, op, stage, range, iteration) of an earlier span; such spans"
           " pair in start order\n";
  }

  const size_t col = std::max<size_t>(14, label_width + 2);
  out << "\n"
      << pad("", 10) << pad(la, col) << pad(lb, col) << lb << " vs " << la << "\n"
      << pad("makespan", 10) << pad(format_seconds(c.makespan_a_s), col)
      << pad(format_seconds(c.makespan_b_s), col) << format_signed_percent(c.makespan_error) << "\n"
      << pad("bubble", 10) << pad(format_number("%.1f%%", 100 * c.bubble_a), col)
      << pad(format_number("%.1f%%", 100 * c.bubble_b), col)
      << format_number("%+.1f points", 100 * (c.bubble_b - c.bubble_a)) << "\n";
  for (const TimelineComparison::PeakMemory& p : c.peak_memory) {
    out << pad("mem dev" + std::to_string(p.device), 10) << pad(format_bytes(p.a_bytes), col)
        << pad(format_bytes(p.b_bytes), col)
        << (p.a_bytes > 0 ? format_signed_percent(p.b_bytes / p.a_bytes - 1) : std::string("-"))
        << "\n";
  }

  const std::string error_header = "|" + lb + " - " + la + "|";
  const size_t first = std::max<size_t>(12, error_header.size() + 2);
  out << "\n" << pad(error_header, first) << pad("median", 22) << pad("p90", 22) << "worst\n";
  const auto stats_row = [&](const char* name, const ErrorStats& s) {
    out << pad(name, first) << pad(error_text(s.median_s, s.median_rel), 22)
        << pad(error_text(s.p90_s, s.p90_rel), 22) << error_text(s.worst_s, s.worst_rel) << "\n";
  };
  stats_row("duration", c.duration_error);
  stats_row("start", c.start_error);
  out << "(durations relative to " << la << "'s span, starts to " << la
      << "'s makespan; starts count from each timeline's first span)\n";

  out << "\n"
      << pad("op", 11) << pad("spans", 7) << pad("median duration error", 26)
      << pad("median start error", 20) << "total " << lb << " vs " << la << "\n";
  for (const OpComparison& op : c.per_op) {
    const double total = op.total_a_s != 0 ? op.total_b_s / op.total_a_s - 1 : 0;
    out << pad(op.op, 11) << pad(std::to_string(op.matched), 7)
        << pad(error_text(op.median_duration_error_s, op.median_duration_error_rel), 26)
        << pad(format_seconds(op.median_start_error_s), 20) << format_signed_percent(total) << "\n";
  }

  out << "\n"
      << pad("worst durations", 17) << pad("device", 8) << pad("iteration", 11) << pad(la, col)
      << pad(lb, col) << lb << " - " << la << "\n";
  for (const SpanDifference& d : c.worst_duration) {
    out << pad(d.name, 17) << pad(d.device_name, 8) << pad(std::to_string(d.iteration), 11)
        << pad(format_seconds(d.duration_a_s), col) << pad(format_seconds(d.duration_b_s), col)
        << format_signed_seconds(d.duration_error_s()) << " (" << signed_relative(d) << ")\n";
  }
  out << "\n"
      << pad("worst starts", 17) << pad("device", 8) << pad("iteration", 11) << pad(la, col)
      << pad(lb, col) << lb << " - " << la << "\n";
  for (const SpanDifference& d : c.worst_start) {
    out << pad(d.name, 17) << pad(d.device_name, 8) << pad(std::to_string(d.iteration), 11)
        << pad(format_seconds(d.start_a_s), col) << pad(format_seconds(d.start_b_s), col)
        << format_signed_seconds(d.start_error_s()) << "\n";
  }
}

void run_compare(const CompareArgs& args) {
  const auto labels = parse_labels(args.labels);
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const Timeline a = read_input(args.path_a);
  const Timeline b = read_input(args.path_b);
  const TimelineComparison c = compare_or_fail(a, args.path_a, b, args.path_b);
  if (!args.trace_path.empty()) {
    Timeline stacked;
    try {
      stacked = stack_timelines(a, labels.first, b, labels.second);
    } catch (const std::invalid_argument& e) {  // ids of the files that cannot be stacked
      throw InputError(args.path_a + ", " + args.path_b + ": " + e.what());
    }
    write_file_atomically(args.trace_path,
                          [&](std::ostream& out) { write_chrome_trace(stacked, out); });
  }
  if (!args.report_path.empty()) {
    write_compare_report(args.report_path, c, labels, a, args.path_a, b, args.path_b);
  }
  if (args.json) {
    std::cout << comparison_json(c, args.path_a, args.path_b, labels, a, b).dump(2) << "\n";
  } else {
    print_comparison(std::cout, c, args, labels, a, b);
    if (!args.trace_path.empty()) {
      std::cout << "\nboth timelines written to " << args.trace_path
                << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
    }
    if (!args.report_path.empty()) {
      std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
    }
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "compare two timelines span by span (A is the reference: errors are B - A)");
  cmd->add_option("a", args->path_a, "reference timeline file (e.g. simulated)")->required();
  cmd->add_option("b", args->path_b, "timeline file to compare with it (e.g. measured)")
      ->required();
  cmd->add_option("--trace", args->trace_path,
                  "write both timelines, stacked, as one Chrome/Perfetto trace (JSON)");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report with both timelines and the errors");
  cmd->add_option("--labels", args->labels, "names of A and B in the report and trace: A,B")
      ->default_val("A,B");
  cmd->add_flag("--json", args->json, "print one JSON object instead of the report");
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace pipetwin
