// corral_strip_types FILE: the TypeScript stripper on one file, for the
// oracle test (tests/e2e/typescript.test.mjs compares its output with what
// the TypeScript compiler's own type erasure gives).
//   exit 0: the JavaScript on stdout
//   exit 2: refused; "LINE:COL: MESSAGE" on stderr
//   exit 3: not read as TypeScript; "LINE:COL: REASON" on stderr
//   exit 1: FILE could not be read
#include <fstream>
#include <iostream>
#include <sstream>

#include "sandbox/typescript/strip.hpp"

int main(int argc, char** argv) {
  using corral::sandbox::typescript::StripResult;
  if (argc != 2) {
    std::cerr << "usage: corral_strip_types FILE\n";
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream source;
  source << in.rdbuf();
  const StripResult result = corral::sandbox::typescript::strip_types(source.str());
  if (result.status == StripResult::Status::stripped) {
    std::cout << result.code;
    return 0;
  }
  std::cerr << result.line << ":" << result.column << ": " << result.reason << "\n";
  return result.status == StripResult::Status::refused ? 2 : 3;
}
