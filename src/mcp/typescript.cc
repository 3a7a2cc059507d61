#include "mcp/typescript.hpp"

#include <algorithm>
#include <map>

namespace corral::mcp {

namespace {

std::string pad(int indent) { return std::string(static_cast<std::size_t>(indent) * 2, ' '); }

bool is_plain_key(std::string_view key) {
  if (key.empty()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// One-line JSDoc text: no comment terminator, no newlines.
std::string doc_text(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      out += ' ';
    } else if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "* /";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string literal(const json::value& v) {
  if (v.is_string() || v.is_number() || v.is_bool() || v.is_null()) return json::serialize(v);
  return "unknown";
}

std::string join(const std::vector<std::string>& parts, std::string_view separator,
                 std::string_view none) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(separator)) + p;
  return out.empty() ? std::string(none) : out;
}

std::string join_union(const std::vector<std::string>& parts) {
  return join(parts, " | ", "never");
}

// One rendering: the schema `$ref`s resolve against, and how many more
// `$ref`s may be followed (a schema whose references fan out would otherwise
// render exponentially; past the budget a reference is `unknown`).
struct Render {
  const json::value* root;
  int refs_left = 64;
};

std::string to_typescript(const json::value& schema, int indent, Render& render);

// `#`, `#/$defs/Name`, `#/definitions/a~1b/0`: a JSON Pointer into the root.
const json::value* resolve(std::string_view ref, const json::value& root) {
  if (ref.empty() || ref[0] != '#') return nullptr;  // remote references are not fetched
  ref.remove_prefix(1);
  const json::value* at = &root;
  while (!ref.empty()) {
    if (ref[0] != '/') return nullptr;
    ref.remove_prefix(1);
    const std::size_t end = std::min(ref.find('/'), ref.size());
    std::string token;
    for (std::size_t i = 0; i < end; ++i) {
      if (ref[i] == '~' && i + 1 < end && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
        token += ref[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += ref[i];
      }
    }
    ref.remove_prefix(end);
    if (const json::object* o = at->if_object()) {
      at = o->if_contains(token);
    } else if (const json::array* a = at->if_array()) {
      std::size_t index = 0;
      if (token.empty() || token.size() > 9 ||
          !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return nullptr;
      index = std::stoul(token);
      at = index < a->size() ? &(*a)[index] : nullptr;
    } else {
      return nullptr;
    }
    if (!at) return nullptr;
  }
  return at;
}

// A property's JSDoc: its description, and its `format` (which TypeScript
// cannot say: "date-time", "email", "uri").
std::string property_doc(const json::object& schema) {
  std::string doc;
  if (const json::value* d = schema.if_contains("description"); d && d->is_string())
    doc = doc_text(d->get_string());
  if (const json::value* f = schema.if_contains("format"); f && f->is_string()) {
    // Appended piece by piece: GCC 12's -Wrestrict misreads `"literal" +
    // std::string&&` at -O3 (a false positive that -Werror turns into a
    // failed Release build).
    if (!doc.empty()) doc += ' ';
    doc += "(format: ";
    doc += doc_text(f->get_string());
    doc += ')';
  }
  return doc;
}

std::string object_type(const json::object& schema, int indent, Render& render) {
  const json::value* props = schema.if_contains("properties");
  std::map<std::string, bool> required;
  if (const json::value* r = schema.if_contains("required"); r && r->is_array()) {
    for (const auto& name : r->get_array())
      if (name.is_string()) required[std::string(name.get_string())] = true;
  }
  std::string out = "{\n";
  if (props && props->is_object()) {
    for (const auto& [key, sub] : props->get_object()) {
      if (const json::object* o = sub.if_object()) {
        if (const std::string doc = property_doc(*o); !doc.empty())
          out += pad(indent + 1) + "/** " + doc + " */\n";
      }
      const std::string name =
          is_plain_key(key) ? std::string(key) : json::serialize(json::string(key));
      out += pad(indent + 1) + name + (required.count(std::string(key)) ? "" : "?") + ": " +
             to_typescript(sub, indent + 1, render) + ";\n";
    }
  }
  const json::value* extra = schema.if_contains("additionalProperties");
  if (extra && extra->is_object()) {
    out += pad(indent + 1) + "[key: string]: " + to_typescript(*extra, indent + 1, render) + ";\n";
  } else if ((!props || !props->is_object() || props->get_object().empty()) &&
             !(extra && extra->is_bool() && !extra->get_bool()) && !schema.contains("allOf")) {
    out += pad(indent + 1) + "[key: string]: unknown;\n";
  }
  if (out == "{\n") return "{}";
  return out + pad(indent) + "}";
}

std::string typed(std::string_view type, const json::object& schema, int indent, Render& render) {
  if (type == "string") return "string";
  if (type == "number" || type == "integer") return "number";
  if (type == "boolean") return "boolean";
  if (type == "null") return "null";
  if (type == "array") {
    const json::value* items = schema.if_contains("items");
    std::string item = items ? to_typescript(*items, indent, render) : "unknown";
    if (item.find(' ') != std::string::npos && item.front() != '{') item = "(" + item + ")";
    return item + "[]";
  }
  if (type == "object") return object_type(schema, indent, render);
  return "unknown";
}

// The schema without `allOf`: what its own keywords say.
std::string own_type(const json::object& o, int indent, Render& render) {
  if (const json::value* c = o.if_contains("const")) return literal(*c);
  if (const json::value* e = o.if_contains("enum"); e && e->is_array()) {
    std::vector<std::string> parts;
    for (const auto& v : e->get_array()) parts.push_back(literal(v));
    return join_union(parts);
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (const json::value* alts = o.if_contains(key); alts && alts->is_array()) {
      std::vector<std::string> parts;
      for (const auto& alt : alts->get_array()) parts.push_back(to_typescript(alt, indent, render));
      return join_union(parts);
    }
  }
  const json::value* type = o.if_contains("type");
  if (type && type->is_string()) return typed(type->get_string(), o, indent, render);
  if (type && type->is_array()) {
    // Each type once: a list that repeats "object" or "array" would render
    // the same subschema once per entry, at every level (exponential in the
    // nesting: 860 bytes of schema kept a core busy for good).
    std::vector<std::string> seen;
    std::vector<std::string> parts;
    for (const auto& t : type->get_array()) {
      if (!t.is_string()) continue;
      std::string name(t.get_string());
      if (name == "integer") name = "number";
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      seen.push_back(name);
      parts.push_back(typed(name, o, indent, render));
    }
    return join_union(parts);
  }
  if (o.contains("properties")) return object_type(o, indent, render);
  return o.contains("allOf") ? "" : "unknown";
}

std::string to_typescript(const json::value& schema, int indent, Render& render) {
  if (indent > 12) return "unknown";  // deeply nested or recursive schemas
  const json::object* o = schema.if_object();
  if (!o) return schema.is_bool() && !schema.get_bool() ? "never" : "unknown";
  if (const json::value* ref = o->if_contains("$ref"); ref && ref->is_string()) {
    const json::value* target = resolve(ref->get_string(), *render.root);
    if (!target || render.refs_left <= 0) return "unknown";
    --render.refs_left;
    return to_typescript(*target, indent, render);
  }
  std::string own = own_type(*o, indent, render);
  const json::value* all = o->if_contains("allOf");
  if (!all || !all->is_array()) return own;
  // allOf: every part at once, an intersection.
  std::vector<std::string> parts;
  if (!own.empty() && own != "unknown") parts.push_back(own);
  for (const auto& part : all->get_array()) {
    std::string t = to_typescript(part, indent, render);
    if (t == "unknown") continue;
    if (t.find(" | ") != std::string::npos) t = "(" + t + ")";
    parts.push_back(std::move(t));
  }
  return join(parts, " & ", "unknown");
}

}  // namespace

std::string schema_to_typescript(const json::value& schema, int indent) {
  Render render{&schema};
  return to_typescript(schema, indent, render);
}

std::string js_identifier(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  if (out.size() > 128) out.resize(128);
  return out;
}

namespace {

struct Node {
  const DeclaredTool* tool = nullptr;
  std::map<std::string, Node> children;
};

void render(const std::string& name, const Node& node, int indent, std::string& out) {
  if (node.tool) {
    const DeclaredTool& t = *node.tool;
    if (!t.description.empty()) out += pad(indent) + "/** " + doc_text(t.description) + " */\n";
    std::string input =
        t.input_schema.is_null() ? "unknown" : schema_to_typescript(t.input_schema, indent);
    std::string output =
        t.output_schema.is_null() ? "unknown" : schema_to_typescript(t.output_schema, indent);
    out += pad(indent) + name + "(input: " + input + "): Promise<" + output + ">;\n";
    return;
  }
  out += pad(indent) + name + ": {\n";
  for (const auto& [child, sub] : node.children) render(child, sub, indent + 1, out);
  out += pad(indent) + "};\n";
}

}  // namespace

std::string declarations(const std::vector<DeclaredTool>& tools) {
  Node root;
  for (const DeclaredTool& tool : tools) {
    Node* node = &root;
    for (const std::string& segment : tool.path) node = &node->children[segment];
    node->tool = &tool;
  }
  std::string out = "declare const codemode: {\n";
  for (const auto& [name, node] : root.children) render(name, node, 1, out);
  return out + "};\n";
}

}  // namespace corral::mcp
