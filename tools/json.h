// JSON text for the CLI's --json outputs (inspect, compile, compare), which scripts and the Python
// package read: string and number spelling and the fusion report, written once so every command agrees.
#pragma once

#include <string>

#include "passes/pass_context.h"

namespace onnxc::tools {

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_str(const std::string& s);
// A JSON number; NaN and infinities, which JSON lacks, become null.
std::string json_num(double v);
// {"fused": [...], "near_misses": [...], "counts": {...}}: what `inspect --fusions --json` prints.
// With `canonical`, also "canonical": [...], the canonicalization rules that fired (same fields).
std::string fusion_report_json(const passes::FusionReport& r, bool canonical = false);

}  // namespace onnxc::tools
