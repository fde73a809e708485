// Writing SVG and XHTML text: escaping, compact numbers, and an element builder. Every
// report is well-formed XML (XHTML), so a strict XML parser reads it as a browser does.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

namespace pipetwin {

// Text for an XML attribute or element: & < > " ' escaped.
std::string escape_xml(const std::string& text);

// A coordinate with at most one decimal and no trailing ".0": 12, 12.5, -3.2.
std::string svg_number(double value);

// An attribute list: {{"x", "10"}, {"class", "f"}}; values are escaped when written.
using SvgAttributes = std::initializer_list<std::pair<const char*, std::string>>;

// Appends elements to a string. Every open() must be matched by close().
class SvgWriter {
 public:
  // An <svg> root with a viewBox of width x height, `css_class` on it, plus `extra`.
  SvgWriter(double width, double height, const std::string& css_class, SvgAttributes extra = {});

  void open(const char* tag, SvgAttributes attributes = {});
  void close(const char* tag);
  // A childless element, or one with escaped `text` inside.
  void element(const char* tag, SvgAttributes attributes, const std::string& text = "");
  // <rect> with its geometry (the hottest path: a Gantt writes many).
  void rect(double x, double y, double width, double height, const std::string& css_class,
            const std::string& tip = "");
  void line(double x1, double y1, double x2, double y2, const std::string& css_class);
  void text(double x, double y, const std::string& text, const std::string& css_class = "");
  // Raw, already well-formed markup.
  void raw(const std::string& markup) { out_ += markup; }

  // The document, with </svg> appended.
  std::string finish();

 private:
  void attributes(SvgAttributes list);
  std::string out_;
};

}  // namespace pipetwin
