// One self-contained report page: XHTML with inline SVG, a style sheet, and a few lines
// of script for hover details only. No network, no external file: it opens from disk.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipetwin {

class HtmlPage {
 public:
  // `title` heads the page; `context` (one line, e.g. the scenario and schedule) is below it.
  HtmlPage(std::string title, std::string context);

  // A section: <section><h2>heading</h2>body</section>; `body` is well-formed XHTML.
  void add_section(const std::string& heading, const std::string& body);

  std::string render() const;

 private:
  std::string title_, context_, body_;
};

// The headline numbers as cards: (label, value as the text report prints it).
std::string headline_html(const std::vector<std::pair<std::string, std::string>>& numbers);

// A table with escaped cells; `numeric` right-aligns every column but the first.
std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, bool numeric = true);

// An escaped paragraph, with `css_class` when not empty.
std::string paragraph_html(const std::string& text, const std::string& css_class = "");

// Fails early, before the work, when `path` cannot be written: throws InputError naming it.
void check_report_path(const std::string& path);

// Writes the page whole or not at all (traces/atomic_file.h); InputError when it cannot.
void write_html_report(const std::string& path, const HtmlPage& page);

}  // namespace pipetwin
