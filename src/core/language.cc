#include <stdexcept>
#include <string>

#include "corral/language.hpp"

namespace corral {

Language parse_language(std::string_view text) {
  if (text == "javascript") return Language::javascript;
  if (text == "ruby") return Language::ruby;
  throw std::invalid_argument("language must be javascript or ruby, not \"" + std::string(text) +
                              "\"");
}

std::string_view to_string(Language language) noexcept {
  return language == Language::ruby ? "ruby" : "javascript";
}

}  // namespace corral
