#include "report/html_page.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "report/svg.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1240px;padding:0 16px;color:#1d2433;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.context{color:#566;margin:0 0 12px}.note{color:#566;font-size:12.5px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.card{border:1px solid #dde2ea;border-radius:6px;padding:8px 12px;min-width:130px}
.card b{display:block;font-size:18px}.card span{color:#566;font-size:12px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border-bottom:1px solid #e4e8ee;padding:3px 10px;text-align:left}
table.num td{text-align:right}table.num td:first-child{text-align:left}
th{background:#f3f5f8}
svg{display:block;max-width:100%;height:auto;margin:6px 0}
svg text{font-size:11px;fill:#334}
svg .title{font-size:13px;font-weight:600}
svg .end{text-anchor:end}svg .middle{text-anchor:middle}
svg .grid{stroke:#e8ebf0}svg .axis{stroke:#99a}
svg .ref{stroke:#c0392b;stroke-dasharray:5 4}svg .note{fill:#c0392b;font-size:10.5px}
svg .series{fill:none;stroke-width:1.6}
svg .peak{fill:#c0392b;stroke:#fff;stroke-width:1.5}
svg .track{fill:#f6f7f9}
.f{fill:#4e79a7}.b{fill:#f28e2b}.bi{fill:#e15759}.bw{fill:#edc948}.s{fill:#59a14f}.r{fill:#76b7b2}
.a{fill:#b07aa1}.o{fill:#9c755f}.x{fill:#bab0ac}.exp{fill:url(#hatch)}.agg{opacity:.75}
.s0{stroke:#4e79a7;fill:#4e79a7}.s1{stroke:#f28e2b;fill:#f28e2b}.s2{stroke:#59a14f;fill:#59a14f}
.s3{stroke:#e15759;fill:#e15759}.s4{stroke:#76b7b2;fill:#76b7b2}.s5{stroke:#edc948;fill:#edc948}
.s6{stroke:#b07aa1;fill:#b07aa1}.s7{stroke:#9c755f;fill:#9c755f}
svg .series.s0,svg .series.s1,svg .series.s2,svg .series.s3,svg .series.s4,svg .series.s5,svg .series.s6,svg .series.s7{fill:none}
.bk0{fill:#4e79a7}.bk1{fill:#a0cbe8}.bk2{fill:#e15759}.bk3{fill:#f1ce63}.bk4{fill:#d4d4d4}
.bar{fill:#a0cbe8}.bar.hi{fill:#4e79a7}
.heat text{font-size:11px}.box{fill:#a0cbe8;stroke:#4e79a7}.whisker{stroke:#4e79a7}.median{stroke:#1d2433;stroke-width:2}
.stage-box{fill:#f3f5f8;stroke:#99a}.replica{fill:#a0cbe8;stroke:#4e79a7}.arrow{stroke:#566;stroke-width:1.5}.arrowhead{fill:#566}
.charts{display:flex;flex-wrap:wrap;gap:4px 16px}.heat .light{fill:#fff}
.legend{display:flex;flex-wrap:wrap;gap:12px;font-size:12px;color:#445;margin:4px 0}
.legend svg{display:inline;vertical-align:middle;margin:0}
#tip{position:absolute;display:none;background:#1d2433;color:#fff;padding:3px 7px;border-radius:4px;font-size:12px;pointer-events:none;white-space:nowrap;z-index:9}
footer{margin-top:32px;color:#889;font-size:12px}
)";

// Hover details, and the markers a headless browser test reads back from the DOM:
// data-js-error on any script error, data-ready once the script has run.
constexpr const char* kScript = R"(//<![CDATA[
window.onerror=function(m){document.body.setAttribute('data-js-error',String(m));};
(function(){
var tip=document.getElementById('tip');
document.addEventListener('mousemove',function(e){
var t=e.target,text=(t.getAttribute&&t.getAttribute('data-tip'))||'';
var g=t.closest?t.closest('svg.gantt'):null;
if(g){var r=g.getBoundingClientRect(),vb=g.viewBox.baseVal,x=(e.clientX-r.left)*vb.width/r.width,x0=+g.getAttribute('data-x0');
if(x>=x0){var ms=(x-x0)*(+g.getAttribute('data-spp'))*1e3;text=(text?text+' \u00b7 ':'')+'t = '+ms.toFixed(3)+' ms';}}
if(text){tip.textContent=text;tip.style.left=(e.pageX+12)+'px';tip.style.top=(e.pageY+12)+'px';tip.style.display='block';}
else{tip.style.display='none';}});
document.body.setAttribute('data-ready','1');
})();
//]]>)";

// Patterns the style sheet refers to, defined once per page.
constexpr const char* kDefs =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\" "
    "style=\"position:absolute\"><defs><pattern id=\"hatch\" width=\"4\" height=\"4\" "
    "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"4\" "
    "height=\"4\" fill=\"#fbe3e1\"/><rect width=\"2\" height=\"4\" fill=\"#c0392b\"/></pattern>"
    "</defs></svg>";

}  // namespace

HtmlPage::HtmlPage(std::string title, std::string context)
    : title_(std::move(title)), context_(std::move(context)) {}

void HtmlPage::add_section(const std::string& heading, const std::string& body) {
  body_ += "<section><h2>" + escape_xml(heading) + "</h2>" + body + "</section>\n";
}

std::string HtmlPage::render() const {
  return "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
         "<meta charset=\"utf-8\"/><title>" +
         escape_xml(title_) + "</title><style>" + kStyle + "</style></head>\n<body>" + kDefs +
         "<h1>" + escape_xml(title_) + "</h1>" + paragraph_html(context_, "context") + "\n" +
         body_ +
         "<footer>Written by pipetwin. One file, no network: inline SVG and CSS, a few lines "
         "of script for hover details.</footer><div id=\"tip\"></div><script>" +
         kScript + "</script></body></html>\n";
}

std::string headline_html(const std::vector<std::pair<std::string, std::string>>& numbers) {
  std::string html = "<div class=\"cards\">";
  for (const auto& [label, value] : numbers) {
    html += "<div class=\"card\" data-label=\"" + escape_xml(label) + "\"><b>" + escape_xml(value) +
            "</b><span>" + escape_xml(label) + "</span></div>";
  }
  return html + "</div>";
}

std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, bool numeric) {
  std::string html = numeric ? "<table class=\"num\"><tr>" : "<table><tr>";
  for (const std::string& cell : header) html += "<th>" + escape_xml(cell) + "</th>";
  html += "</tr>";
  for (const auto& row : rows) {
    html += "<tr>";
    for (const std::string& cell : row) html += "<td>" + escape_xml(cell) + "</td>";
    html += "</tr>";
  }
  return html + "</table>";
}

std::string paragraph_html(const std::string& text, const std::string& css_class) {
  if (text.empty()) return "";
  return (css_class.empty() ? "<p>" : "<p class=\"" + css_class + "\">") + escape_xml(text) +
         "</p>";
}

void check_report_path(const std::string& path) {
  const std::string probe = path + ".tmp";
  const bool writable = static_cast<bool>(std::ofstream(probe));
  std::remove(probe.c_str());
  if (!writable) throw InputError("--report " + path + ": cannot write there");
}

void write_html_report(const std::string& path, const HtmlPage& page) {
  const std::string html = page.render();
  try {
    write_file_atomically(path, [&](std::ostream& out) { out << html; });
  } catch (const std::runtime_error& e) {
    throw InputError(std::string("--report: ") + e.what());
  }
}

}  // namespace pipetwin
