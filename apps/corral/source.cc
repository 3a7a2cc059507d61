// How `corral run` and `corral exec` read the script they run.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "subcommands.hpp"

namespace corral::app {

std::string read_source(const std::string& file) {
  if (file == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

sandbox::Language language_of(const std::string& flag, const std::string& file) {
  if (!flag.empty()) return sandbox::parse_language(flag);
  const bool rb = file.size() > 3 && file.compare(file.size() - 3, 3, ".rb") == 0;
  return rb ? sandbox::Language::ruby : sandbox::Language::javascript;
}

}  // namespace corral::app
