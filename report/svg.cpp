#include "report/svg.h"

#include <cmath>
#include <cstdio>

namespace pipetwin {

std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters are not XML 1.0; nothing we write needs them.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string svg_number(double value) {
  if (!std::isfinite(value)) return "0";
  const double rounded = std::round(value * 10) / 10;
  char buffer[32];
  if (rounded == std::floor(rounded)) {
    std::snprintf(buffer, sizeof buffer, "%.0f", rounded == 0 ? 0.0 : rounded);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1f", rounded);
  }
  return buffer;
}

SvgWriter::SvgWriter(double width, double height, const std::string& css_class,
                     SvgAttributes extra) {
  out_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + svg_number(width) + " " +
         svg_number(height) + "\" width=\"" + svg_number(width) + "\" height=\"" +
         svg_number(height) + "\" class=\"" + escape_xml(css_class) + "\"";
  attributes(extra);
  out_ += ">";
}

void SvgWriter::attributes(SvgAttributes list) {
  for (const auto& [name, value] : list) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    out_ += escape_xml(value);
    out_ += '"';
  }
}

void SvgWriter::open(const char* tag, SvgAttributes list) {
  out_ += '<';
  out_ += tag;
  attributes(list);
  out_ += '>';
}

void SvgWriter::close(const char* tag) {
  out_ += "</";
  out_ += tag;
  out_ += '>';
}

void SvgWriter::element(const char* tag, SvgAttributes list, const std::string& text) {
  out_ += '<';
  out_ += tag;
  attributes(list);
  if (text.empty()) {
    out_ += "/>";
    return;
  }
  out_ += '>';
  out_ += escape_xml(text);
  close(tag);
}

void SvgWriter::rect(double x, double y, double width, double height, const std::string& css_class,
                     const std::string& tip) {
  out_ += "<rect x=\"" + svg_number(x) + "\"";
  if (y != 0) out_ += " y=\"" + svg_number(y) + "\"";
  out_ += " width=\"" + svg_number(width) + "\" height=\"" + svg_number(height) + "\"";
  if (!css_class.empty()) out_ += " class=\"" + css_class + "\"";
  if (!tip.empty()) out_ += " data-tip=\"" + escape_xml(tip) + "\"";
  out_ += "/>";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, const std::string& css_class) {
  out_ += "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" +
          svg_number(x2) + "\" y2=\"" + svg_number(y2) + "\" class=\"" + css_class + "\"/>";
}

void SvgWriter::text(double x, double y, const std::string& text, const std::string& css_class) {
  out_ += "<text x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\"";
  if (!css_class.empty()) out_ += " class=\"" + css_class + "\"";
  out_ += '>';
  out_ += escape_xml(text);
  out_ += "</text>";
}

std::string SvgWriter::finish() {
  out_ += "</svg>";
  return std::move(out_);
}

}  // namespace pipetwin
