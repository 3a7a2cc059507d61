#include <stdexcept>
#include <string>

#include "corral/language.hpp"

namespace corral {

Language parse_language(std::string_view text) {
  if (text == "javascript") return Language::javascript;
  if (text == "ruby") return Language::ruby;
  if (text == "typescript") return Language::typescript;
  throw std::invalid_argument("language must be javascript, typescript or ruby, not \"" +
                              std::string(text) + "\"");
}

std::string_view to_string(Language language) noexcept {
  switch (language) {
    case Language::ruby:
      return "ruby";
    case Language::typescript:
      return "typescript";
    case Language::javascript:
      break;
  }
  return "javascript";
}

}  // namespace corral
