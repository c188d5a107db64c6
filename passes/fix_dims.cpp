#include "passes/fix_dims.h"

#include <set>
#include <sstream>

#include "ir/error.h"

namespace onnxc::passes {
namespace {

void substitute(ir::Type& t, const std::map<std::string, ir::Dim>& binding) {
  if (t.shape)
    for (ir::Dim& d : *t.shape) d = d.substitute(binding);
  if (t.elem) {
    auto elem = std::make_shared<ir::Type>(*t.elem);  // types may share their element
    substitute(*elem, binding);
    t.elem = elem;
  }
}

void substitute(ir::Graph& g, const std::map<std::string, ir::Dim>& binding, std::set<ir::Value*>& done) {
  auto fix = [&](ir::Value* v) {
    if (!v || !done.insert(v).second) return;
    ir::Type t = v->type();
    substitute(t, binding);
    v->set_type(std::move(t));
  };
  for (ir::Value* v : g.inputs()) fix(v);
  for (ir::Value* v : g.outputs()) fix(v);
  for (auto& [name, t] : g.value_info()) substitute(t, binding);
  for (ir::Node* n : g.nodes()) {
    for (ir::Value* v : n->outputs()) fix(v);
    for (ir::Graph* sub : n->subgraphs()) substitute(*sub, binding, done);
  }
}

}  // namespace

void fix_dims(ir::Model& model, const std::map<std::string, int64_t>& dims) {
  if (dims.empty()) return;
  std::set<std::string> symbols;
  for (const ir::Value* v : model.graph->inputs())
    if (v->shape())
      for (const ir::Dim& d : *v->shape()) d.collect_symbols(symbols);
  std::map<std::string, ir::Dim> binding;
  for (const auto& [name, value] : dims) {
    if (!symbols.count(name)) {
      std::ostringstream known;
      for (const std::string& s : symbols) known << (known.tellp() ? ", " : "") << s;
      throw UserError(model.source_path + ": --fix-dims: no input of the model has the symbolic dim '" + name +
                      "' (its inputs' symbols: " + (symbols.empty() ? std::string("none") : known.str()) + ")");
    }
    user_check(value >= 1) << model.source_path << ": --fix-dims: " << name << "=" << value << " (a size must be >= 1)";
    binding.emplace(name, ir::Dim(value));
  }
  std::set<ir::Value*> done;
  substitute(*model.graph, binding, done);
}

std::map<std::string, int64_t> parse_fix_dims(const std::string& list) {
  std::map<std::string, int64_t> dims;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    const std::string name = item.substr(0, eq == std::string::npos ? 0 : eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    user_check(!name.empty() && used == value.size() && used > 0)
        << "--fix-dims: '" << item << "' is not SYM=N (e.g. --fix-dims batch=1,h=224,w=224)";
    user_check(dims.emplace(name, n).second) << "--fix-dims: " << name << " given twice";
  }
  return dims;
}

}  // namespace onnxc::passes
