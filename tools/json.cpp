// JSON spelling shared by the --json outputs of inspect, compile and compare.
#include "tools/json.h"

#include <cmath>
#include <cstdio>

namespace onnxc::tools {

std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else {
      r += c;
    }
  }
  return r + "\"";
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

namespace {

std::string fused_json(const std::vector<passes::FusedEntry>& fired) {
  std::string out;
  for (size_t i = 0; i < fired.size(); ++i) {
    const passes::FusedEntry& e = fired[i];
    out += std::string(i ? "," : "") + "\n  {\"rule\": " + json_str(e.rule) + ", \"family\": " + json_str(e.family) +
           ", \"nodes_replaced\": " + std::to_string(e.nodes_replaced) + ", \"where\": " + json_str(e.where) + "}";
  }
  return out;
}

}  // namespace

std::string fusion_report_json(const passes::FusionReport& r, bool canonical) {
  std::string out = "{\"fused\": [" + fused_json(r.fused);
  if (canonical) out += "],\n \"canonical\": [" + fused_json(r.canonical);
  out += "],\n \"near_misses\": [";
  std::vector<passes::NearMiss> misses = r.ranked_near_misses();
  for (size_t i = 0; i < misses.size(); ++i) {
    const passes::NearMiss& e = misses[i];
    out += std::string(i ? "," : "") + "\n  {\"rule\": " + json_str(e.rule) + ", \"family\": " + json_str(e.family) +
           ", \"matched_nodes\": " + std::to_string(e.matched) + ", \"where\": " + json_str(e.where) +
           ", \"reason\": " + json_str(e.reason) + "}";
  }
  out += "],\n \"counts\": {";
  bool first = true;
  for (const auto& [family, n] : r.counts()) {
    out += (first ? "" : ", ") + json_str(family) + ": " + std::to_string(n);
    first = false;
  }
  return out + "}}";
}

}  // namespace onnxc::tools
