// Code mode's finder: word search over the callables' names and
// descriptions, and one callable's declaration, for compact mode.
#include "mcp/finder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"

namespace corral::mcp {

namespace {

// The words of a lowered query: split at spaces, punctuation and the
// separators names use (`git_status`, `git-status`, `git.status`), at most
// Finder::kMaxWords, each once.
std::vector<std::string> words_of(std::string_view query) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && words.size() < Finder::kMaxWords &&
        std::find(words.begin(), words.end(), word) == words.end())
      words.push_back(word);
    word.clear();
  };
  for (char c : query) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return words;
}

// The input a guest passed, parsed; a string stands for {key: string}.
// Undefined or null (a call with no argument) is an empty object.
json::object input_object(std::string_view input_json, std::string_view function,
                          std::string_view key) {
  if (input_json.empty() || input_json == "undefined") return {};
  boost::system::error_code ec;
  json::value v = json::parse(input_json, ec);
  if (ec)
    throw FinderError(fmt::format("invalid_request: codemode.{}: the input is not JSON ({})",
                                  function, ec.message()));
  if (v.is_null()) return {};
  if (v.is_string()) return json::object{{key, std::move(v)}};
  if (!v.is_object())
    throw FinderError(fmt::format("invalid_request: codemode.{}: pass a string or {{{}: string}}",
                                  function, key));
  return std::move(v.as_object());
}

std::size_t count_of(const json::object& input, std::string_view key, std::size_t fallback,
                     std::size_t least, std::size_t max) {
  const json::value* v = input.if_contains(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_number() || v->to_number<double>() < static_cast<double>(least))
    throw FinderError(fmt::format(
        "invalid_request: codemode.search: `{}` must be a number of at least {}", key, least));
  const double d = v->to_number<double>();
  return d >= static_cast<double>(max) ? max : static_cast<std::size_t>(d);
}

}  // namespace

std::string finder_member(std::string_view path, std::string_view example) {
  if (path == kSearchPath)
    return fmt::format(
        "  /** Functions whose names or descriptions hold the query's words, best first (a word "
        "in the name ranks higher); an empty query lists them all in order. At most `limit` "
        "(default {}, at most {}) from `offset`. */\n"
        "  search(query: string | {{ query?: string; limit?: number; offset?: number }}): "
        "Promise<{{ name: string; description: string }}[]>;\n",
        Finder::kDefaultLimit, Finder::kMaxLimit);
  if (path == kDescribePath)
    return fmt::format(
        "  /** The TypeScript declaration of one function, e.g. describe(\"codemode.{}\"). */\n"
        "  describe(name: string): Promise<string>;\n",
        example);
  return {};
}

Finder::Finder(std::vector<DeclaredTool> tools) : tools_(std::move(tools)) {
  for (const DeclaredTool& t : tools_) {
    std::string path;
    for (const std::string& segment : t.path) path += (path.empty() ? "" : ".") + segment;
    lowered_paths_.push_back(core::ascii_lower(path));
    lowered_described_.push_back(core::ascii_lower(t.description));
    paths_.push_back(std::move(path));
  }
}

std::string Finder::search(std::string_view input_json) const {
  const json::object input = input_object(input_json, kSearchPath, "query");
  std::string query;
  if (const json::value* q = input.if_contains("query"); q && !q->is_null()) {
    if (!q->is_string())
      throw FinderError("invalid_request: codemode.search: `query` must be a string");
    query = q->get_string();
  }
  if (query.size() > kMaxQueryBytes)
    throw FinderError(fmt::format(
        "invalid_request: codemode.search: the query is {} bytes, more than the {} it may be",
        query.size(), kMaxQueryBytes));
  for (const auto& [key, v] : input)
    if (key != "query" && key != "limit" && key != "offset")
      throw FinderError(
          fmt::format("invalid_request: codemode.search: unknown field `{}` (query, limit, "
                      "offset)",
                      std::string_view(key)));
  const std::size_t limit = count_of(input, "limit", kDefaultLimit, 1, kMaxLimit);
  const std::size_t offset = count_of(input, "offset", 0, 0, tools_.size());
  const std::vector<std::string> words = words_of(core::ascii_lower(query));

  // A word in the name counts three, in the description one; every hit
  // holds at least one word somewhere.
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (score, index)
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    std::size_t score = words.empty() ? 1 : 0;
    for (const std::string& w : words) {
      if (lowered_paths_[i].find(w) != std::string::npos) {
        score += 3;
      } else if (lowered_described_[i].find(w) != std::string::npos) {
        score += 1;
      }
    }
    if (score > 0) scored.emplace_back(score, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  json::array hits;
  for (std::size_t k = offset; k < scored.size() && hits.size() < limit; ++k) {
    const DeclaredTool& t = tools_[scored[k].second];
    std::string description = t.description;
    if (description.size() > kHitDescriptionBytes) {
      description.resize(core::utf8_cut(description, kHitDescriptionBytes));
      description += "...";
    }
    hits.push_back(json::object{{"name", "codemode." + paths_[scored[k].second]},
                                {"description", std::move(description)}});
  }
  return json::serialize(hits);
}

std::string Finder::describe(std::string_view input_json) const {
  const json::object input = input_object(input_json, kDescribePath, "name");
  for (const auto& [key, v] : input)
    if (key != "name")
      throw FinderError(fmt::format("invalid_request: codemode.describe: unknown field `{}` (name)",
                                    std::string_view(key)));
  const json::value* n = input.if_contains("name");
  if (!n || !n->is_string())
    throw FinderError(
        "invalid_request: codemode.describe: pass a function's name, e.g. "
        "codemode.describe(\"codemode.x\")");
  std::string_view name = n->get_string();
  if (name.starts_with("codemode.")) name.remove_prefix(std::string_view("codemode.").size());
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    if (paths_[i] == name) return json::serialize(json::string(declarations({tools_[i]})));
  }
  if (name == kSearchPath || name == kDescribePath)
    return json::serialize(json::string(
        "declare const codemode: {\n" +
        finder_member(name, paths_.empty() ? std::string_view("search") : paths_.front()) + "};"));
  const std::size_t shown = core::utf8_cut(name, 200);
  throw FinderError(
      fmt::format("no_such_tool: no function codemode.{}{}; codemode.search(query) finds them",
                  name.substr(0, shown), shown < name.size() ? "..." : ""));
}

}  // namespace corral::mcp
