#include "mcp/budget.hpp"

#include "core/utf8.hpp"

namespace corral::mcp {

namespace {

constexpr std::size_t kMarker = 40;  // room kept for a marker

std::size_t utf8_prefix(std::string_view text, std::size_t max) {
  return core::utf8_cut(text, max);
}

std::size_t json_size(std::string_view text) {
  return json::serialize(json::string_view(text.data(), text.size())).size();
}

json::value shrink(const json::value& value, std::size_t allowance, bool& cut) {
  const std::size_t size = json::serialize(value).size();
  if (size <= allowance) return value;
  cut = true;
  if (value.is_string()) {
    const json::string& s = value.get_string();
    const std::size_t keep = utf8_prefix(s, allowance > kMarker ? allowance - kMarker : 0);
    return json::string(std::string(s.data(), keep) + "[cut: " + std::to_string(s.size() - keep) +
                        " more bytes]");
  }
  const std::size_t room = allowance > kMarker ? allowance - kMarker : 0;
  if (value.is_array()) {
    const json::array& a = value.get_array();
    json::array out;
    std::size_t used = 2;
    std::size_t i = 0;
    for (; i < a.size(); ++i) {
      const std::size_t s = json::serialize(a[i]).size() + 1;
      if (used + s <= room) {
        out.push_back(a[i]);
        used += s;
      } else if (out.empty() && room > used + kMarker) {
        json::value part = shrink(a[i], room - used, cut);
        used += json::serialize(part).size() + 1;
        out.push_back(std::move(part));
      } else {
        break;
      }
    }
    if (i < a.size()) out.emplace_back("[cut: " + std::to_string(a.size() - i) + " more items]");
    return out;
  }
  if (value.is_object()) {
    const json::object& o = value.get_object();
    json::object out;
    std::size_t used = 2;
    std::size_t kept = 0;
    for (const auto& [key, v] : o) {
      const std::size_t s = key.size() + 4 + json::serialize(v).size();
      if (used + s <= room) {
        out[key] = v;
        used += s;
      } else if (out.empty() && room > used + key.size() + 4 + kMarker) {
        json::value part = shrink(v, room - used - key.size() - 4, cut);
        used += key.size() + 4 + json::serialize(part).size();
        out[key] = std::move(part);
      } else {
        break;
      }
      ++kept;
    }
    if (kept < o.size()) out["[cut]"] = std::to_string(o.size() - kept) + " more keys";
    return out;
  }
  return value;  // numbers, booleans, null are short
}

}  // namespace

Cut cut_to_budget(const json::value& value, std::size_t budget) {
  Cut result;
  result.value = shrink(value, budget, result.cut);
  return result;
}

std::string cut_text(std::string_view text, std::size_t budget, bool& cut) {
  if (text.size() <= budget) return std::string(text);
  cut = true;
  const std::size_t keep = utf8_prefix(text, budget > kMarker ? budget - kMarker : 0);
  return std::string(text.substr(0, keep)) + "\n[cut: " + std::to_string(text.size() - keep) +
         " more bytes]";
}

}  // namespace corral::mcp

namespace corral::mcp {

std::string cut_json_string(std::string_view text, std::size_t allowance, bool& cut) {
  if (json_size(text) <= allowance) return std::string(text);
  cut = true;
  auto make = [&](std::size_t keep) {
    std::string out(text.substr(0, keep));
    out += "\n[cut: ";
    out += std::to_string(text.size() - keep);
    out += " more bytes]";
    return out;
  };
  // The longest prefix whose JSON (a newline is two bytes there, a control
  // character six) fits with its marker: a binary search over its length.
  std::size_t lo = 0;
  std::size_t hi = std::min(text.size(), allowance);
  while (lo < hi) {
    const std::size_t mid = utf8_prefix(text, lo + (hi - lo + 1) / 2);
    if (mid <= lo) {
      break;
    } else if (json_size(make(mid)) <= allowance) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return make(utf8_prefix(text, lo));
}

}  // namespace corral::mcp
